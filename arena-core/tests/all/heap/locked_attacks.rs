//! `LockedHeap` shared by threads that allocate, grow, shrink and free at once (under Miri this
//! is where a data race in the lock or the heap's bookkeeping would show), and heaps whose
//! inline size is not a round number: every block is aligned, inside the heap, disjoint from
//! every other live block, and keeps its bytes through a `realloc`; the heap checks clean after.

use core::alloc::{GlobalAlloc, Layout};

use arena_kit_core::heap::LockedHeap;

use crate::support::miri_or;

/// A block pointer that crosses to the thread that made it (the test keeps it on one thread).
struct Block(*mut u8, Layout, u8);

#[test]
fn threads_growing_and_shrinking_blocks_at_once_keep_their_bytes() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let rounds = miri_or(60, 6);
    std::thread::scope(|s| {
        for t in 0..3u8 {
            s.spawn(move || {
                let mut live: Vec<Block> = Vec::new();
                for round in 0..rounds {
                    let size = 16 + (round * 37 + usize::from(t) * 11) % 200;
                    let align = 1 << (round % 6);
                    let l = Layout::from_size_align(size, align).unwrap();
                    let fill = t.wrapping_mul(40).wrapping_add(round as u8) | 1;
                    // SAFETY: non-zero size; the block is written within `size` bytes only.
                    let p = unsafe { HEAP.alloc(l) };
                    if p.is_null() {
                        continue; // full for now: the other threads hold the rest
                    }
                    assert_eq!(p.addr() % align, 0);
                    // SAFETY: `p` is a fresh block of `size` bytes.
                    unsafe { p.write_bytes(fill, size) };
                    live.push(Block(p, l, fill));
                    if round % 3 == 2 {
                        // Grow or shrink the oldest block, then check what it kept.
                        let Block(p, l, fill) = live.remove(0);
                        let new_size = if round % 2 == 0 {
                            l.size() * 2
                        } else {
                            l.size() / 2
                        };
                        // SAFETY: `p` is live with `l`; `new_size` is non-zero.
                        let q = unsafe { HEAP.realloc(p, l, new_size) };
                        let kept = l.size().min(new_size);
                        let (q, l) = if q.is_null() {
                            (p, l) // refused: `p` is still live and unchanged
                        } else {
                            (q, Layout::from_size_align(new_size, l.align()).unwrap())
                        };
                        // SAFETY: `q` is live for at least `kept` bytes.
                        let bytes = unsafe { core::slice::from_raw_parts(q, kept) };
                        assert!(
                            bytes.iter().all(|&b| b == fill),
                            "thread {t}: realloc lost bytes"
                        );
                        // SAFETY: `q` is live for `l.size()` bytes.
                        unsafe { q.write_bytes(fill, l.size()) };
                        live.push(Block(q, l, fill));
                    }
                    std::thread::yield_now();
                    for Block(p, l, fill) in &live {
                        // SAFETY: each block in `live` is live for `l.size()` bytes.
                        let bytes = unsafe { core::slice::from_raw_parts(*p, l.size()) };
                        assert!(
                            bytes.iter().all(|b| b == fill),
                            "thread {t}: another thread wrote into this block"
                        );
                    }
                }
                for Block(p, l, _) in live {
                    // SAFETY: live with `l`, freed once.
                    unsafe { HEAP.dealloc(p, l) };
                }
            });
        }
    });
    HEAP.check().unwrap();
    assert_eq!(HEAP.stats().unwrap().live_blocks, 0);
}

/// Fills a heap of `N` inline bytes with blocks of mixed sizes and alignments until it refuses,
/// checking each is aligned, inside the heap and disjoint from the others, then frees them all.
fn fill_and_empty<const N: usize>() {
    let heap = LockedHeap::<N>::new();
    let start = core::ptr::from_ref(&heap).addr();
    let end = start + size_of::<LockedHeap<N>>();
    let mut live: Vec<(*mut u8, Layout)> = Vec::new();
    let mut misses = 0;
    let mut i = 0usize;
    while misses < 8 {
        let l = Layout::from_size_align(1 + (i * 13) % 90, 1 << (i % 7)).unwrap();
        i += 1;
        // SAFETY: non-zero size.
        let p = unsafe { heap.alloc(l) };
        if p.is_null() {
            misses += 1;
            continue;
        }
        let at = p.addr();
        assert_eq!(at % l.align(), 0, "N = {N}: {l:?}");
        assert!(
            at >= start && at + l.size() <= end,
            "N = {N}: outside the heap"
        );
        for &(other, ol) in &live {
            let other = other.addr();
            assert!(
                at + l.size() <= other || other + ol.size() <= at,
                "N = {N}: two live blocks overlap"
            );
        }
        // SAFETY: a fresh block of `l.size()` bytes.
        unsafe { p.write_bytes(0xA5, l.size()) };
        live.push((p, l));
    }
    heap.check().unwrap();
    for (p, l) in live {
        // SAFETY: `p` is a live block of `heap` with layout `l`, freed once.
        unsafe { heap.dealloc(p, l) };
    }
    heap.check().unwrap();
    assert_eq!(heap.stats().unwrap().live_blocks, 0);
}

#[test]
fn heaps_of_odd_inline_sizes_hand_out_aligned_disjoint_blocks_inside_themselves() {
    fill_and_empty::<64>();
    fill_and_empty::<65>();
    fill_and_empty::<100>();
    fill_and_empty::<127>();
    fill_and_empty::<1000>();
    fill_and_empty::<4097>();
    fill_and_empty::<4160>();
}

/// A heap moved while it still has live blocks (allowed: only the old pointers go stale, and
/// nothing here uses them) keeps its bookkeeping: it checks clean, walks the same blocks, and its
/// new blocks are aligned at the new place up to `MAX_ALIGN` (the region's own alignment, 4096);
/// a larger alignment is refused (null) rather than aligned to where the heap happens to be.
#[test]
fn a_heap_moved_with_live_blocks_checks_clean_and_aligns_new_blocks_at_its_new_place() {
    const N: usize = 1 << 16;
    let first = Box::new(LockedHeap::<N>::new());
    let layouts = [
        Layout::from_size_align(40, 4096).unwrap(),
        Layout::from_size_align(24, 8).unwrap(),
        Layout::from_size_align(300, 4096).unwrap(),
    ];
    for l in layouts {
        // SAFETY: non-zero size; the block is never used after the move (it goes stale).
        let p = unsafe { first.alloc(l) };
        assert!(!p.is_null() && p.addr().is_multiple_of(l.align()), "{l:?}");
    }
    let too_aligned = Layout::from_size_align(40, 8192).unwrap();
    // SAFETY: non-zero size; refused.
    assert!(unsafe { first.alloc(too_aligned) }.is_null());
    let before = first.stats().unwrap();
    let walk_before: Vec<_> = first
        .with(|h| h.blocks().map(|b| format!("{b:?}")).collect())
        .unwrap();
    // Move it: to a stack slot with another offset modulo 8192, then to a new box.
    let padded = (0u8, *first);
    let second = Box::new(padded.1);
    second.check().unwrap();
    let after = second.stats().unwrap();
    assert_eq!(after.live_blocks, before.live_blocks);
    let walk_after: Vec<_> = second
        .with(|h| h.blocks().map(|b| format!("{b:?}")).collect())
        .unwrap();
    assert_eq!(
        walk_after, walk_before,
        "the block walk moved with the heap"
    );
    for l in layouts {
        // SAFETY: non-zero size; freed below with the same layout.
        let p = unsafe { second.alloc(l) };
        if p.is_null() {
            continue; // no aligned room left at the new place
        }
        assert!(p.addr().is_multiple_of(l.align()), "{l:?} at the new place");
        let at = core::ptr::from_ref(&*second).addr();
        assert!((at..at + size_of::<LockedHeap<N>>()).contains(&p.addr()));
        // SAFETY: `p` is a fresh block of `l.size()` bytes, then freed once.
        unsafe {
            p.write_bytes(0x5A, l.size());
            second.dealloc(p, l);
        }
        second.check().unwrap();
    }
    // SAFETY: non-zero size; refused at the new place too.
    assert!(unsafe { second.alloc(too_aligned) }.is_null());
    assert_eq!(second.stats().unwrap().live_blocks, before.live_blocks);
}
