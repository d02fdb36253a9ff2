//! `free_sized`: a free told the block's size, as `Allocator::deallocate` and
//! `GlobalAlloc::dealloc` are. It checks what `free` checks, and refuses another size than the
//! one the block was allocated (or last resized) with, changing nothing. The size also says
//! where the block ends before its header is read; a size that is wrong, huge or from a block
//! that kept a sliver of a split must not matter to anything but speed. The allocator
//! interfaces, told a layout on every free and resize, hold the block to it the same way.
use crate::support;

use allocator_api2::alloc::{Allocator, Layout};
use arena_kit_core::heap::{FreeError, FreeListHeap, HeapCell, LockedHeap};
use core::alloc::GlobalAlloc;
use core::ptr::NonNull;

fn bytes(n: usize) -> Layout {
    Layout::from_size_align(n, 8).unwrap()
}

#[test]
fn a_sized_free_frees_the_block_as_free_does() {
    let mut heap = FreeListHeap::with_capacity(64 * 1024);
    let sizes = [1, 15, 16, 17, 100, 1000, 4096];
    let blocks: Vec<_> = sizes.iter().map(|&n| (heap.alloc(bytes(n)), n)).collect();
    assert_eq!(heap.stats().live_blocks, sizes.len());
    // Every other one first, so that the rest coalesce with free blocks on both sides.
    for &(p, n) in blocks
        .iter()
        .step_by(2)
        .chain(blocks.iter().skip(1).step_by(2))
    {
        heap.free_sized(p, bytes(n)).unwrap();
        heap.check().unwrap();
    }
    let stats = heap.stats();
    assert_eq!(
        (stats.live_blocks, stats.free_blocks, stats.requested),
        (0, 1, 0)
    );
}

#[test]
fn another_size_is_refused_and_changes_nothing() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let p = heap.alloc(bytes(100));
    let before = (heap.stats(), heap.to_string());
    // Sizes of the same block size (97..=112 share one) are refused too: the recorded size is
    // the requested one, not the block's.
    for given in [0, 1, 99, 101, 112, 4096, isize::MAX as usize - 7] {
        let refused = heap.free_sized(p, bytes(given)).unwrap_err();
        assert!(
            matches!(refused, FreeError::SizeMismatch { allocated: 100, given: g, .. } if g == given),
            "{refused:?}"
        );
        assert_eq!((heap.stats(), heap.to_string()), before);
    }
    heap.free_sized(p, bytes(100)).unwrap();
    assert_eq!(heap.stats().live_blocks, 0);
}

#[test]
fn the_mismatch_message_says_both_sizes_and_what_to_do() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let p = heap.alloc(bytes(100));
    let text = heap.free_sized(p, bytes(64)).unwrap_err().to_string();
    assert!(
        text.contains("allocated with 100 bytes but freed as 64"),
        "{text}"
    );
    assert!(
        text.contains("free it with the layout it was allocated"),
        "{text}"
    );
    assert!(text.contains("nothing was changed"), "{text}");
}

#[test]
fn pointers_that_free_refuses_are_refused_whatever_the_size() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let p = heap.alloc(bytes(64));
    let q = heap.alloc(bytes(64));
    heap.free_sized(q, bytes(64)).unwrap();
    let foreign = [0u64; 8];
    let before = (heap.stats(), heap.to_string());
    for size in [64, 0, isize::MAX as usize - 7] {
        // Freed already.
        assert!(matches!(
            heap.free_sized(q, bytes(size)),
            Err(FreeError::NotAllocated { .. })
        ));
        // Inside a live block.
        let inner = NonNull::new(p.as_ptr().wrapping_add(16)).unwrap();
        assert!(matches!(
            heap.free_sized(inner, bytes(size)),
            Err(FreeError::NotAllocated { .. })
        ));
        // Another allocation's memory.
        assert!(matches!(
            heap.free_sized(NonNull::from(&foreign).cast(), bytes(size)),
            Err(FreeError::ForeignPointer { .. })
        ));
        assert_eq!((heap.stats(), heap.to_string()), before);
    }
    heap.free_sized(p, bytes(64)).unwrap();
    heap.check().unwrap();
}

#[test]
fn after_a_resize_the_new_size_is_the_blocks() {
    let mut heap = FreeListHeap::with_capacity(64 * 1024);
    // Shrunk in place.
    let p = heap.alloc(bytes(1000));
    let p2 = heap.realloc(p, bytes(200));
    assert_eq!(p2, p);
    assert!(matches!(
        heap.free_sized(p2, bytes(1000)),
        Err(FreeError::SizeMismatch {
            allocated: 200,
            given: 1000,
            ..
        })
    ));
    // Grown by moving (a live block right after it).
    let wall = heap.alloc(bytes(16));
    let moved = heap.realloc(p2, bytes(5000));
    assert_ne!(moved, p2);
    assert!(matches!(
        heap.free_sized(p2, bytes(200)),
        Err(FreeError::NotAllocated { .. })
    ));
    heap.free_sized(moved, bytes(5000)).unwrap();
    heap.free_sized(wall, bytes(16)).unwrap();
    heap.check().unwrap();
    assert_eq!(heap.stats().live_blocks, 0);
}

/// A block that kept the sliver of a split too small to stand alone ends 16 bytes past where
/// its size says; freeing it by size is as good as by pointer.
#[test]
fn a_block_with_a_kept_sliver_frees_by_its_size() {
    let mut heap = FreeListHeap::with_capacity(4096);
    // A free block of 144 bytes between two live ones, then a request that leaves 16 of it.
    let a = heap.alloc(bytes(128));
    let hole = heap.alloc(bytes(128));
    let b = heap.alloc(bytes(16));
    heap.free(hole).unwrap();
    let p = heap.alloc(bytes(112));
    assert_eq!(p, hole, "the hole is reused");
    heap.free_sized(p, bytes(112)).unwrap();
    for (q, n) in [(a, 128), (b, 16)] {
        heap.free_sized(q, bytes(n)).unwrap();
    }
    heap.check().unwrap();
    assert_eq!(heap.stats().free_blocks, 1);
}

#[test]
fn the_allocator_interface_frees_by_size() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(16 * 1024));
    let l = bytes(300);
    let p = (&cell).allocate(l).unwrap().cast::<u8>();
    // SAFETY: `p` is live in this allocator, allocated with `l`.
    unsafe { (&cell).deallocate(p, l) };
    assert_eq!(cell.stats().live_blocks, 0);
    static LOCKED: LockedHeap<4096> = LockedHeap::new();
    // SAFETY: a non-zero size, freed with the layout it was allocated with.
    unsafe {
        let q = LOCKED.alloc(l);
        assert!(!q.is_null());
        LOCKED.dealloc(q, l);
    }
    assert_eq!(LOCKED.stats().unwrap().live_blocks, 0);
}

/// `deallocate` with a layout that is not the block's breaks its contract; the heap refuses the
/// free rather than freeing a block of another size: debug builds panic, release builds leave
/// the block live (leaked).
#[test]
fn the_allocator_interface_refuses_a_layout_that_is_not_the_blocks() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(16 * 1024));
    let p = (&cell).allocate(bytes(300)).unwrap().cast::<u8>();
    // SAFETY: none: the layout is not the one `p` was allocated with, which the heap must
    // notice. It reads only the block's tags.
    let deallocate = || unsafe { (&cell).deallocate(p, bytes(200)) };
    if cfg!(debug_assertions) {
        support::panics::panic_location(deallocate);
    } else {
        deallocate();
    }
    assert_eq!(cell.stats().live_blocks, 1);
    cell.check().unwrap();
}

/// `grow` and `shrink` are told the block's old layout; one whose size is not the block's is
/// refused (`AllocError`) and the block stays as it was, as `deallocate` refuses it, both for a
/// resize that could stay in place and for one that must move.
#[test]
fn the_allocator_interface_refuses_to_resize_by_a_wrong_old_layout() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(16 * 1024));
    let p = (&cell).allocate(bytes(300)).unwrap().cast::<u8>();
    // A live block right after it, so that growing past the block must move it.
    let wall = (&cell).allocate(bytes(16)).unwrap().cast::<u8>();
    // SAFETY: `p` is live for 300 bytes.
    unsafe { p.write_bytes(9, 300) };
    let before = cell.stats();
    // SAFETY: none for the first two: the old layout is not the block's, which the cell must
    // notice before it reads or moves anything.
    unsafe {
        assert!((&cell).shrink(p, bytes(299), bytes(100)).is_err());
        assert!((&cell).grow(p, bytes(200), bytes(4000)).is_err());
    }
    assert_eq!(cell.stats(), before);
    // SAFETY: `p` is still live for its 300 bytes.
    let kept = unsafe { core::slice::from_raw_parts(p.as_ptr(), 300) };
    assert!(kept.iter().all(|&b| b == 9));
    // SAFETY: `p` is live with `bytes(300)`, `wall` with `bytes(16)`.
    unsafe {
        let moved = (&cell)
            .grow(p, bytes(300), bytes(4000))
            .unwrap()
            .cast::<u8>();
        (&cell).deallocate(moved, bytes(4000));
        (&cell).deallocate(wall, bytes(16));
    }
    assert_eq!(cell.stats().live_blocks, 0);
    cell.check().unwrap();
}

#[test]
fn the_global_allocator_interface_refuses_to_resize_by_a_wrong_old_layout() {
    static LOCKED: LockedHeap<8192> = LockedHeap::new();
    let l = bytes(300);
    // SAFETY: a non-zero size; the second `realloc` breaks its contract (the old layout is not
    // the block's), which the heap must refuse without touching the block; the block is freed
    // with its own layout.
    unsafe {
        let p = LOCKED.alloc(l);
        assert!(!p.is_null());
        assert!(LOCKED.realloc(p, bytes(64), 32).is_null());
        assert_eq!(LOCKED.stats().unwrap().live_blocks, 1);
        let q = LOCKED.realloc(p, l, 32);
        assert!(!q.is_null());
        LOCKED.dealloc(q, bytes(32));
    }
    assert_eq!(LOCKED.stats().unwrap().live_blocks, 0);
}
