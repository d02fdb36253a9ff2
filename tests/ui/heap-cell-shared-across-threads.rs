// `HeapCell` is single-threaded (a `RefCell` inside): it cannot be shared with another thread.
// Use `LockedHeap` for that.
use arena_kit::heap::HeapCell;
use arena_kit::prelude::*;

fn main() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(1024));
    std::thread::scope(|s| {
        s.spawn(|| cell.stats());
    });
}
