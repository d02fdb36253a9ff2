//! A boundary-tag walkthrough: allocate 100 and 200 bytes in a 1 KiB heap, free the first, free
//! the second, and watch the layout line coalesce back into one free block.
//!
//! A classic teaching allocator with a 32-byte `Block` header (size, isFree, next, prev) would
//! print `[Size: 992, Free]` at the start and `[Size: 628, Free]` for the last block. We print:
//!
//! - a live block: the bytes its caller asked for (`100`, `200`);
//! - a free block: the payload it could hand out, its size minus 16 bytes of tags (an 8-byte
//!   header and an 8-byte footer: half of that 32-byte header).
//!
//! `with_capacity(1024)` gives 1024 bytes of block space (the live-start bitmap is extra), so the
//! empty heap is one free block of 1024 - 16 = 1008. Blocks are multiples of 16 bytes with tags
//! included: 100 -> 128, 200 -> 224, leaving 1024 - 128 - 224 = 672, printed as 656. A freed
//! 100-byte block shows its 112-byte payload.
use arena_kit_core::heap::{BlockState, FreeListHeap};
use core::alloc::Layout;

fn bytes(n: usize) -> Layout {
    Layout::from_size_align(n, 8).unwrap()
}

#[test]
fn two_allocations_freed_coalesce_back_into_one_block() {
    let mut heap = FreeListHeap::with_capacity(1024);
    assert_eq!(heap.to_string(), "[Size: 1008, Free]");

    let p1 = heap.try_alloc(bytes(100)).unwrap();
    let p2 = heap.try_alloc(bytes(200)).unwrap();
    heap.check().unwrap();
    assert_eq!(
        heap.to_string(),
        "[Size: 100, Allocated] [Size: 200, Allocated] [Size: 656, Free]"
    );

    heap.free(p1).unwrap();
    heap.check().unwrap();
    assert_eq!(
        heap.to_string(),
        "[Size: 112, Free] [Size: 200, Allocated] [Size: 656, Free]"
    );

    // Freeing p2 merges it with the free block after it and the one before it.
    heap.free(p2).unwrap();
    heap.check().unwrap();
    assert_eq!(heap.to_string(), "[Size: 1008, Free]");
    let stats = heap.stats();
    assert_eq!(
        (stats.free_blocks, stats.live_blocks, stats.used),
        (1, 0, 0)
    );
    assert_eq!(stats.fragmentation(), 0.0);
}

#[test]
fn block_walk_matches_the_layout_line() {
    let mut heap = FreeListHeap::with_capacity(1024);
    heap.try_alloc(bytes(100)).unwrap();
    heap.try_alloc(bytes(200)).unwrap();
    let blocks: Vec<_> = heap.blocks().map(|b| (b.offset, b.size, b.state)).collect();
    assert_eq!(
        blocks,
        [
            (0, 128, BlockState::Allocated { requested: 100 }),
            (128, 224, BlockState::Allocated { requested: 200 }),
            (352, 672, BlockState::Free),
        ]
    );
}

/// Fills `heap` (2048 bytes) so that its only free blocks are one of 300 bytes at a low
/// address and one of 120 at a high address, separated by live blocks; returns the low one's
/// payload (where a first fit places a 100-byte request).
fn two_free_holes(heap: &mut FreeListHeap<'static>) -> core::ptr::NonNull<u8> {
    let a = heap.try_alloc(bytes(300)).unwrap();
    let _keep1 = heap.try_alloc(bytes(16)).unwrap();
    let b = heap.try_alloc(bytes(120)).unwrap();
    let _keep2 = heap.try_alloc(bytes(16)).unwrap();
    let _rest = heap
        .try_alloc(bytes(heap.stats().largest_request()))
        .unwrap();
    heap.free(a).unwrap();
    heap.free(b).unwrap();
    a
}

#[test]
fn first_and_best_fit_pick_different_blocks() {
    use arena_kit_core::heap::Fit;
    for (fit, expect_low) in [
        (Fit::First, true),
        (Fit::Best, false),
        (Fit::Segregated, false),
    ] {
        let mut heap = FreeListHeap::with_capacity(2048).with_fit(fit);
        let a = two_free_holes(&mut heap);
        let c = heap.try_alloc(bytes(100)).unwrap();
        assert_eq!(c == a, expect_low, "{fit:?}");
        heap.check().unwrap();
    }
}

/// A policy changed on a heap already in use applies from the next request on, in both
/// directions (away from the segregated fit, whose fast path must then step aside, and back).
#[test]
fn a_fit_set_later_applies_to_the_next_request() {
    use arena_kit_core::heap::Fit;
    for (fit, expect_low) in [
        (Fit::First, true),
        (Fit::Best, false),
        (Fit::Segregated, false),
    ] {
        let mut heap = FreeListHeap::with_capacity(2048).with_fit(Fit::First);
        heap.set_fit(Fit::Segregated);
        let a = two_free_holes(&mut heap);
        heap.set_fit(fit);
        let c = heap.try_alloc(bytes(100)).unwrap();
        assert_eq!(c == a, expect_low, "{fit:?}");
        heap.check().unwrap();
    }
}
