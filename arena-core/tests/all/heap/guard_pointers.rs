//! Freeing (or reallocating) anything that is not exactly the start of a live allocation is a
//! `FreeError` and changes nothing: pointers into guards, one byte off, a neighbour's guard, a
//! block's real start under a guarded value, another heap's pointers. Under Miri `check` (which
//! walks every free list: about 0.2 s there) runs once after a loop of refused frees rather than
//! after each; the stats and the block walk are still compared after each, and since every free
//! in between is refused, `check` still finds whatever any of them left behind.
use arena_kit_core::heap::{BlockInfo, FreeError, FreeListHeap, HeapStats};
use arena_kit_core::tags::{GuardedHeap, Tracked};
use core::alloc::Layout;
use core::ptr::NonNull;

fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).unwrap()
}

/// `p` moved by `delta` bytes, keeping its provenance (no dereference happens).
fn shifted(p: NonNull<u8>, delta: isize) -> NonNull<u8> {
    NonNull::new(p.as_ptr().wrapping_offset(delta)).unwrap()
}

/// Every pointer near `p` that is not `p` itself: one byte either side, the guard's start and
/// the block's header, the first byte after the value (its back guard) and a granule off.
fn near_misses(p: NonNull<u8>, size: usize, align: usize) -> Vec<NonNull<u8>> {
    let front = 8usize.next_multiple_of(align) as isize;
    let mut v: Vec<NonNull<u8>> = [1, -1, -8, -16, 8, 16, -front, -front - 8, size as isize]
        .into_iter()
        .map(|d| shifted(p, d))
        .collect();
    v.dedup();
    v
}

/// Every block (offset, size, state) in address order, which the layout line prints (equal
/// walks print equal lines, and the walk is a fifth of the line's cost under Miri), and the stats.
fn snapshot(heap: &FreeListHeap<'_>) -> (Vec<BlockInfo>, HeapStats) {
    (heap.blocks().collect(), heap.stats())
}

#[test]
fn guarded_free_of_any_pointer_but_the_value_is_an_error_and_changes_nothing() {
    for align in [1, 8, 16, 64] {
        let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(4096));
        let a = heap.try_alloc(layout(24, align)).unwrap();
        let b = heap.try_alloc(layout(40, align)).unwrap();
        let before = snapshot(&heap);
        for bad in near_misses(a, 24, align)
            .into_iter()
            .chain(near_misses(b, 40, align))
        {
            let err = heap.free(bad).unwrap_err();
            // Without guards (release builds) the first value sits 16 bytes into the block
            // space, so 16 bytes before it is outside.
            let expected = if heap.contains(bad) {
                matches!(err, FreeError::NotAllocated { .. })
            } else {
                matches!(err, FreeError::ForeignPointer { .. })
            };
            assert!(
                expected,
                "align {align}: free({bad:p}) near {a:p}/{b:p}: {err:?}"
            );
            assert_eq!(snapshot(&heap), before, "align {align}: free({bad:p})");
            if !cfg!(miri) {
                heap.check().unwrap();
            }
            heap.check_guards().unwrap();
        }
        heap.check().unwrap();
        heap.free(a).unwrap();
        heap.free(b).unwrap();
        assert_eq!(heap.stats().live_blocks, 0);
        heap.check().unwrap();
    }
}

#[test]
fn rejected_guard_free_leaves_the_original_registered_and_the_reuser_alone() {
    let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(4096));
    let l = layout(24, 8);
    let a = heap.try_alloc(l).unwrap();
    // The front guard's first byte is the start of the heap block holding `a`.
    assert!(heap.free(shifted(a, -8)).is_err());
    assert_eq!(heap.stats().live_blocks, 1);
    // An allocation now must not reuse `a`'s block, and freeing `a` frees `a` only.
    let c = heap.try_alloc(l).unwrap();
    assert_ne!(c, a);
    heap.free(a).unwrap();
    assert!(heap.free(a).is_err(), "a double free is an error");
    assert_eq!(heap.stats().live_blocks, 1, "`c` is still live");
    heap.check_guards().unwrap();
    heap.free(c).unwrap();
    heap.check().unwrap();
}

#[test]
fn guarded_free_of_another_heaps_pointers_is_foreign() {
    let mut one = GuardedHeap::new(FreeListHeap::with_capacity(1024));
    let mut two = GuardedHeap::new(FreeListHeap::with_capacity(1024));
    let a = one.try_alloc(layout(24, 8)).unwrap();
    let x = two.try_alloc(layout(24, 8)).unwrap();
    let before = snapshot(&one);
    for bad in [x, shifted(x, -8), shifted(x, 1)] {
        let err = one.free(bad).unwrap_err();
        assert!(
            matches!(err, FreeError::ForeignPointer { .. }),
            "free({bad:p}): {err:?}"
        );
        assert_eq!(snapshot(&one), before);
    }
    one.free(a).unwrap();
    two.free(x).unwrap();
}

#[test]
fn tracked_guarded_free_of_a_guard_pointer_is_an_error() {
    let mut heap = Tracked::new(
        GuardedHeap::new(FreeListHeap::with_capacity(1024)),
        "level assets",
        "Assets",
    );
    let a = heap.try_alloc(layout(24, 8)).unwrap();
    assert!(heap.free(shifted(a, -8)).is_err());
    assert_eq!(heap.usage().allocations, 1);
    heap.free(a).unwrap();
    assert_eq!(heap.usage().allocations, 0);
}

#[test]
fn plain_free_and_realloc_reject_every_near_miss_and_foreign_pointer() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let mut other = FreeListHeap::with_capacity(1024);
    let a = heap.try_alloc(layout(24, 8)).unwrap();
    let b = heap.try_alloc(layout(40, 8)).unwrap();
    let x = other.try_alloc(layout(24, 8)).unwrap();
    let before = snapshot(&heap);
    let mut bad: Vec<_> = near_misses(a, 24, 8)
        .into_iter()
        .chain(near_misses(b, 40, 8))
        .collect();
    bad.extend([x, shifted(x, -8), shifted(x, 1)]);
    for p in bad {
        assert!(heap.free(p).is_err(), "free({p:p})");
        assert!(
            heap.try_realloc(p, layout(100, 8)).is_err(),
            "realloc({p:p})"
        );
        assert!(heap.try_realloc(p, layout(8, 8)).is_err(), "shrink({p:p})");
        assert_eq!(snapshot(&heap), before, "{p:p}");
        if !cfg!(miri) {
            heap.check().unwrap();
        }
    }
    heap.check().unwrap();
    heap.free(a).unwrap();
    heap.free(b).unwrap();
    other.free(x).unwrap();
}
