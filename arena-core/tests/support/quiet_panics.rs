//! Shared by the test binaries whose global allocator is a small `LockedHeap`
//! (`global_locked_heap.rs`, `global_locked_heap_teardown.rs`).

/// Prints a failed assertion's message without a backtrace. With `RUST_BACKTRACE` set, std's own
/// hook symbolizes one from the binary's debug information, which takes more memory than the
/// heap holds: the allocation fails and the program aborts (or hangs) before the message shows.
pub fn report_panics_without_backtrace() {
    std::panic::set_hook(Box::new(|info| eprintln!("{info}")));
}
