//! A `LockedHeap` as this test binary's `#[global_allocator]`, used by thread-local destructors
//! while their threads end: they allocate, grow, free and format (the heap's own `Debug`
//! included) after the thread's main function returned. The lock tells threads apart by a
//! thread-local token, which must still work then; without `std` (`--no-default-features
//! --features alloc`) it only knows what holds it, and that must not hang either.
//!
//! A file of its own: `global_locked_heap.rs` compares the heap's numbers before and after its
//! workload, which a second test of the same binary (its thread, its captured output) would
//! change. Not built under Miri, for the reason given there.
#![cfg(not(miri))]
use arena_kit_core::heap::LockedHeap;
use std::collections::BTreeMap;

#[global_allocator]
static HEAP: LockedHeap<{ 1 << 22 }> = LockedHeap::new();

/// What a thread does before it ends: enough allocation for its destructor to find the heap
/// busy with the other threads.
fn workload(thread: usize) -> usize {
    let mut sum = 0;
    for round in 0..20 {
        let words: Vec<String> = (0..50).map(|i| format!("{thread}:{round}:{i}")).collect();
        sum += words.iter().map(String::len).sum::<usize>();
    }
    sum
}

/// Allocates, grows and frees through the global allocator (this `LockedHeap`) when its thread
/// ends, and formats the heap itself there; sends back what it built.
struct AllocatesAtExit(std::sync::mpsc::Sender<String>);

impl Drop for AllocatesAtExit {
    fn drop(&mut self) {
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!("{i},"));
        }
        let table: BTreeMap<usize, Vec<u8>> = (0..50).map(|i| (i, vec![i as u8; i])).collect();
        let debug = format!("{HEAP:?}");
        text.push_str(&format!(
            "{}:{:?}:{}",
            table.len(),
            HEAP.stats().map(|s| s.live_blocks > 0),
            debug.starts_with("LockedHeap { bytes: 4194304, fit:")
        ));
        let _ = self.0.send(text);
    }
}

std::thread_local! {
    static AT_EXIT: std::cell::RefCell<Option<AllocatesAtExit>> =
        const { std::cell::RefCell::new(None) };
}

#[path = "support/quiet_panics.rs"]
mod quiet_panics;
use quiet_panics::report_panics_without_backtrace;

#[test]
fn thread_local_destructors_allocate_from_the_global_locked_heap_while_threads_end() {
    report_panics_without_backtrace();
    let (tx, rx) = std::sync::mpsc::channel();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                AT_EXIT.with(|slot| *slot.borrow_mut() = Some(AllocatesAtExit(tx)));
                workload(t)
            })
        })
        .collect();
    drop(tx);
    for t in threads {
        assert!(t.join().unwrap() > 0);
    }
    let texts: Vec<String> = rx.iter().collect();
    assert_eq!(texts.len(), 4, "every destructor ran to its end");
    for text in &texts {
        assert!(
            text.starts_with("0,1,2,") && text.ends_with("50:Ok(true):true"),
            "{text}"
        );
    }
    HEAP.check().unwrap();
}
