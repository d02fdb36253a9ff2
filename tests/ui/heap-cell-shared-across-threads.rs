// `HeapCell` is single-threaded (a `RefCell` inside): it cannot be shared with another thread.
// Use `LockedHeap` for that.
use arena_kit::heap::HeapCell;
use arena_kit::prelude::*;

/// What `std::thread::scope`'s `spawn` asks of a closure that borrows the cell.
fn share_with_another_thread<T: Sync>(_: &T) {}

fn main() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(1024));
    share_with_another_thread(&cell);
}
