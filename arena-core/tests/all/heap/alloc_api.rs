//! `FreeListHeap` behind the standard allocator interfaces: collections in a `HeapCell`, and a
//! `LockedHeap` shared between threads.
use crate::support;

use allocator_api2::alloc::{Allocator, Layout};
use allocator_api2::vec::Vec as HeapVec;
use arena_kit_core::heap::{FreeListHeap, HeapCell, LockedHeap, MIN_LOCKED_HEAP};
use core::alloc::GlobalAlloc;
use support::miri_or;

#[test]
fn collections_live_in_the_heap_and_give_everything_back() {
    let heap = HeapCell::new(FreeListHeap::with_capacity(256 * 1024));
    {
        let mut numbers = HeapVec::new_in(&heap);
        for i in 0..miri_or(5000, 200) {
            numbers.push(i as u64);
            if i % 64 == 0 {
                heap.check().unwrap();
            }
        }
        let mut map = hashbrown::HashMap::new_in(&heap);
        for i in 0..miri_or(1000, 50) {
            map.insert(i, i * 2);
        }
        assert_eq!(map[&7], 14);
        assert_eq!(
            numbers.iter().sum::<u64>(),
            (0..numbers.len() as u64).sum::<u64>()
        );
        numbers.truncate(10);
        numbers.shrink_to_fit();
        assert_eq!(heap.stats().live_blocks, 2);
        heap.check().unwrap();
    }
    let stats = heap.stats();
    assert_eq!((stats.live_blocks, stats.free_blocks), (0, 1));
    assert!(stats.peak_used > 0);
}

#[test]
fn zero_size_allocations_never_touch_the_heap() {
    let heap = HeapCell::new(FreeListHeap::with_capacity(1024));
    let layout = Layout::from_size_align(0, 64).unwrap();
    let p = (&heap).allocate(layout).unwrap();
    assert_eq!(p.cast::<u8>().as_ptr().addr() % 64, 0);
    // SAFETY: `p` came from this allocator with `layout`.
    unsafe { (&heap).deallocate(p.cast(), layout) };
    assert_eq!(heap.stats().allocations, 0);
    let v: HeapVec<(), _> = HeapVec::with_capacity_in(10, &heap);
    drop(v);
    assert_eq!(heap.into_inner().stats().allocations, 0);
}

#[test]
fn grow_in_place_keeps_the_address() {
    let heap = HeapCell::new(FreeListHeap::with_capacity(64 * 1024));
    let mut v: HeapVec<u8, _> = HeapVec::with_capacity_in(100, &heap);
    v.extend(0..100u8);
    let before = v.as_ptr();
    v.reserve_exact(10_000);
    assert_eq!(
        v.as_ptr(),
        before,
        "the free neighbour lets the vector grow in place"
    );
    assert!(v.iter().copied().eq(0..100u8));
}

#[test]
fn locked_heap_serves_threads() {
    static HEAP: LockedHeap<{ 1 << 20 }> = LockedHeap::new();
    let layout = Layout::from_size_align(48, 16).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u8 {
            s.spawn(move || {
                for _ in 0..miri_or(500, 10) {
                    // SAFETY: non-zero size; the block is written within its 48 bytes and freed
                    // with the same layout after growing through `realloc`.
                    unsafe {
                        let p = HEAP.alloc(layout);
                        assert!(!p.is_null());
                        p.write_bytes(t, 48);
                        let q = HEAP.realloc(p, layout, 96);
                        assert!(!q.is_null());
                        assert!(core::slice::from_raw_parts(q, 48).iter().all(|&b| b == t));
                        HEAP.dealloc(q, Layout::from_size_align(96, 16).unwrap());
                    }
                }
            });
        }
    });
    let stats = HEAP.with(|h| (h.check(), h.stats())).unwrap();
    assert_eq!(stats.0, Ok(()));
    assert_eq!((stats.1.live_blocks, stats.1.free_blocks), (0, 1));
}

#[test]
fn the_smallest_locked_heap_serves_a_block() {
    static TINY: LockedHeap<MIN_LOCKED_HEAP> = LockedHeap::new();
    let stats = TINY.stats().unwrap();
    assert!(stats.capacity >= 32, "{stats}");
    let l = Layout::from_size_align(stats.largest_request(), 16).unwrap();
    // SAFETY: non-zero size; freed with the same layout.
    unsafe {
        let p = TINY.alloc(l);
        assert!(!p.is_null());
        assert!(TINY.alloc(Layout::new::<u8>()).is_null(), "full");
        TINY.dealloc(p, l);
    }
    TINY.check().unwrap();
}

/// A `LockedHeap` may move between uses (its region moves with it; pointers from before the
/// move are the caller's to give up). After a move the heap must serve and free from its new
/// place: every address it keeps follows the region.
#[test]
fn a_moved_locked_heap_serves_and_frees_from_its_new_place() {
    let heap: LockedHeap<4096> = LockedHeap::new();
    let l = Layout::from_size_align(48, 8).unwrap();
    // SAFETY: non-zero size; freed with the same layout before the move.
    unsafe {
        let p = heap.alloc(l);
        assert!(!p.is_null());
        heap.dealloc(p, l);
    }
    // Into a box: the region now lives at another address.
    let moved = Box::new(heap);
    // SAFETY: as above, all while `moved` stays where it is.
    unsafe {
        let p = moved.alloc(l);
        assert!(!p.is_null());
        let start = core::ptr::from_ref(&*moved).cast::<u8>();
        let offset = p.cast_const().offset_from(start);
        assert!((0..4096 + 64).contains(&offset), "{offset}");
        assert_eq!(moved.stats().unwrap().live_blocks, 1);
        moved.dealloc(p, l);
    }
    let stats = moved.stats().unwrap();
    assert_eq!((stats.live_blocks, stats.free_blocks), (0, 1), "{stats}");
    moved.check().unwrap();
}
