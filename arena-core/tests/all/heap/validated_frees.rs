//! The heap validates a freed pointer once (range, granule, live-start bit, tag sizes) and then
//! touches the block's tags and its neighbours' without further bounds checks. These tests drive
//! only the safe API at the edges of block space: every offset of small heaps over buffers of
//! each base alignment, blocks that reach the first and last byte of block space, coalescing at
//! both ends, large alignments (gap blocks), each fit policy, realloc in place and by moving,
//! the guarded heap and the allocator interface. After every step `check` must pass, and every
//! pointer that is not a live block's start must be refused without changing anything.
use core::alloc::Layout;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use arena_kit_core::heap::{Fit, HeapError};
use arena_kit_core::heap::{FreeError, FreeListHeap, GuardedHeap};

fn bytes(n: usize) -> Layout {
    Layout::from_size_align(n, 8).unwrap()
}

const FITS: [Fit; 3] = [Fit::Segregated, Fit::First, Fit::Best];

/// `p` moved by `by` bytes, keeping its provenance (it need not stay in bounds).
fn shifted(p: NonNull<u8>, by: isize) -> NonNull<u8> {
    NonNull::new(p.as_ptr().wrapping_offset(by)).unwrap()
}

/// Every byte offset from 64 below `live[0]` to 64 past the last byte of `span` bytes, except
/// the live starts themselves, is refused, and the heap is unchanged.
fn refuses_every_other_offset(heap: &mut FreeListHeap<'_>, live: &[NonNull<u8>], span: usize) {
    let before = (heap.stats(), heap.to_string());
    let live_addrs: Vec<usize> = live.iter().map(|p| p.as_ptr().addr()).collect();
    let base = live[0];
    // Under Miri a stride of 7 bytes, which still meets every residue modulo 16.
    let stride = if cfg!(miri) { 7 } else { 1 };
    for by in (-64..(span as isize + 64)).step_by(stride) {
        let p = shifted(base, by);
        if live_addrs.contains(&p.as_ptr().addr()) {
            continue;
        }
        assert!(heap.free(p).is_err(), "freed a non-start at {by}");
        assert!(
            heap.free_sized(p, bytes(8)).is_err(),
            "freed a non-start by size at {by}"
        );
        assert!(
            heap.try_realloc(p, bytes(8)).is_err(),
            "reallocated a non-start at {by}"
        );
    }
    assert_eq!(heap.stats(), before.0);
    assert_eq!(heap.to_string(), before.1);
    heap.check().unwrap();
}

#[test]
#[cfg_attr(
    miri,
    ignore = "a sweep of safe calls, minutes under Miri; the other tests here reach the same unsafe paths"
)]
fn frees_of_non_starts_are_refused_over_every_base_alignment() {
    // Block space of 1056..1072 bytes: the live-start bitmap has two words, and the last blocks
    // use bits of the second.
    let mut buf = [MaybeUninit::<u8>::uninit(); 1200];
    let shifts: &[usize] = if cfg!(miri) {
        &[0, 9]
    } else {
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    };
    for &shift in shifts {
        let mut heap = FreeListHeap::from_buffer(&mut buf[shift..shift + 1100]);
        let cap = heap.capacity();
        // Fill block space exactly with 32-byte blocks (16 payload bytes).
        let mut live = Vec::new();
        while let Ok(p) = heap.try_alloc(bytes(16)) {
            live.push(p);
        }
        assert_eq!(live.len(), cap / 32, "block space filled at shift {shift}");
        // The last block keeps a tail too small to split off: block space is full.
        assert_eq!(heap.stats().used, cap);
        let span = cap - 8;
        refuses_every_other_offset(&mut heap, &live, span);
        // Free every other block, then the rest: coalescing on both sides, the last one at the
        // end of block space.
        for p in live.iter().step_by(2) {
            heap.free(*p).unwrap();
            heap.check().unwrap();
        }
        // Stale pointers: double frees are refused.
        for p in live.iter().step_by(2) {
            assert!(matches!(heap.free(*p), Err(FreeError::NotAllocated { .. })));
        }
        for p in live.iter().skip(1).step_by(2) {
            heap.free(*p).unwrap();
            heap.check().unwrap();
        }
        assert_eq!(heap.stats().used, 0);
        assert_eq!(heap.stats().free_blocks, 1);
        for p in &live {
            assert!(heap.free(*p).is_err());
        }
    }
}

#[test]
fn the_smallest_heap_frees_its_only_block() {
    let mut buf = [MaybeUninit::<u8>::uninit(); 128];
    for shift in (0..16).step_by(if cfg!(miri) { 5 } else { 1 }) {
        let Ok(mut heap) = FreeListHeap::try_from_buffer(&mut buf[shift..shift + 48]) else {
            continue;
        };
        for fit in FITS {
            heap.set_fit(fit);
            let cap = heap.capacity();
            let p = heap.try_alloc(bytes(cap - 16)).unwrap();
            assert!(heap.try_alloc(bytes(1)).is_err());
            refuses_every_other_offset(&mut heap, &[p], cap);
            let p = heap.try_realloc(p, bytes(1)).unwrap();
            heap.check().unwrap();
            let p = heap.try_realloc(p, bytes(cap - 16)).unwrap();
            assert!(heap.try_realloc(p, bytes(cap)).is_err());
            heap.free(p).unwrap();
            assert!(heap.free(p).is_err());
            heap.check().unwrap();
        }
    }
}

#[test]
fn large_alignments_leave_gap_blocks_that_coalesce_at_both_ends() {
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096 + 600];
    for fit in FITS {
        let shifts: &[usize] = if cfg!(miri) { &[0, 8] } else { &[0, 1, 8, 15] };
        for &shift in shifts {
            let mut heap = FreeListHeap::from_buffer(&mut buf[shift..shift + 4096 + 512]);
            heap.set_fit(fit);
            let mut live = Vec::new();
            for align in [32usize, 64, 256, 1024, 4096, 4096] {
                let layout = Layout::from_size_align(24, align).unwrap();
                if let Ok(p) = heap.try_alloc(layout) {
                    assert_eq!(p.as_ptr().addr() % align, 0);
                    live.push(p);
                    // Under Miri (`check` walks every free list: about 0.2 s there) once,
                    // after the last of them.
                    if !cfg!(miri) {
                        heap.check().unwrap();
                    }
                }
            }
            heap.check().unwrap();
            // Alignments past the maximum and sizes past the heap are refused.
            assert!(
                heap.try_alloc(Layout::from_size_align(8, 8192).unwrap())
                    .is_err()
            );
            assert!(
                heap.try_alloc(Layout::from_size_align(isize::MAX as usize - 4095, 4096).unwrap())
                    .is_err()
            );
            // Fill what is left with small blocks, so the gap blocks have live neighbours.
            while let Ok(p) = heap.try_alloc(bytes(40)) {
                live.push(p);
            }
            heap.check().unwrap();
            // Free from the end back and from the front forward, alternating.
            let mut flip = false;
            while !live.is_empty() {
                let p = if flip {
                    live.remove(0)
                } else {
                    live.pop().unwrap()
                };
                flip = !flip;
                heap.free(p).unwrap();
                // A full check per free makes the loop quadratic: under Miri, every 16th (the
                // counts after the loop still show that every block coalesced).
                if !cfg!(miri) || live.len() % 16 == 0 {
                    heap.check().unwrap();
                }
                assert!(heap.free(p).is_err());
            }
            assert_eq!(heap.stats().used, 0);
            assert_eq!(heap.stats().free_blocks, 1);
        }
    }
}

#[test]
fn reallocs_at_the_end_of_block_space_grow_shrink_and_move() {
    let mut buf = [MaybeUninit::<u8>::uninit(); 700];
    for fit in FITS {
        let mut heap = FreeListHeap::from_buffer(&mut buf[3..]);
        heap.set_fit(fit);
        let cap = heap.capacity();
        let a = heap.try_alloc(bytes(16)).unwrap();
        let b = heap.try_alloc(bytes(16)).unwrap();
        // `c` takes the rest: its block ends at the end of block space.
        let c = heap.try_alloc(bytes(cap - 64 - 16)).unwrap();
        assert!(heap.try_alloc(bytes(1)).is_err());
        // Shrink at the end: a free tail up to the end of block space.
        let c = heap.try_realloc(c, bytes(16)).unwrap();
        heap.check().unwrap();
        // Grow `b` cannot happen in place (`c` is next); it moves past `c`, and the freed
        // `b` coalesces with nothing live around it except `a` and `c`.
        let b2 = heap.try_realloc(b, bytes(100)).unwrap();
        assert_ne!(b2, b);
        assert!(heap.free(b).is_err());
        heap.check().unwrap();
        // Grow `c` into `b2`'s side: refused past the capacity, the old block untouched.
        assert!(matches!(
            heap.try_realloc(c, bytes(cap)),
            Err(HeapError::Request(_))
        ));
        heap.check().unwrap();
        // Free `a` (coalescing with `b`'s old block), then grow `c` backwards is impossible:
        // it moves to the front.
        heap.free(a).unwrap();
        let c2 = heap.try_realloc(c, bytes(40)).unwrap();
        heap.check().unwrap();
        let b3 = heap.try_realloc(b2, bytes(cap - 64 - 16)).unwrap_or(b2);
        heap.check().unwrap();
        heap.free(c2).unwrap();
        heap.free(b3).unwrap();
        heap.check().unwrap();
        assert_eq!(heap.stats().used, 0);
        assert_eq!(heap.stats().free_blocks, 1);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "a sweep of safe calls, minutes under Miri; the other tests here reach the same unsafe paths"
)]
fn a_random_sequence_of_safe_calls_keeps_the_heap_consistent() {
    let mut buf = [MaybeUninit::<u8>::uninit(); 2100];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let steps = if cfg!(miri) { 120 } else { 20_000 };
    for fit in FITS {
        let shift = next(16);
        let mut heap = FreeListHeap::from_buffer(&mut buf[shift..shift + 2048]);
        heap.set_fit(fit);
        let mut live: Vec<(NonNull<u8>, usize)> = Vec::new();
        let mut dead: Vec<NonNull<u8>> = Vec::new();
        for step in 0..steps {
            match next(6) {
                0 | 1 => {
                    let align = 1 << next(13);
                    let size = 1 + next(300);
                    if let Ok(p) = heap.try_alloc(Layout::from_size_align(size, align).unwrap()) {
                        // SAFETY: `p` is a fresh block of at least `size` bytes.
                        unsafe { p.as_ptr().write_bytes(0xA5, size) };
                        live.push((p, size));
                    }
                }
                2 if !live.is_empty() => {
                    let (p, _) = live.swap_remove(next(live.len()));
                    heap.free(p).unwrap();
                    dead.push(p);
                }
                3 if !live.is_empty() => {
                    let i = next(live.len());
                    let size = 1 + next(400);
                    let align = 1 << next(8);
                    let layout = Layout::from_size_align(size, align).unwrap();
                    if let Ok(p) = heap.try_realloc(live[i].0, layout) {
                        if p != live[i].0 {
                            dead.push(live[i].0);
                        }
                        // SAFETY: `p` is a live block of at least `size` bytes.
                        unsafe { p.as_ptr().write_bytes(0x5A, size) };
                        live[i] = (p, size);
                    }
                }
                4 if !dead.is_empty() => {
                    // A stale or interior pointer: refused unless it is (again) a live start.
                    let p = shifted(dead[next(dead.len())], next(48) as isize - 24);
                    if !live.iter().any(|&(q, _)| q == p) {
                        let before = heap.stats();
                        assert!(heap.free(p).is_err(), "step {step}");
                        assert!(heap.try_realloc(p, bytes(8)).is_err(), "step {step}");
                        assert_eq!(heap.stats(), before);
                    }
                }
                _ => {
                    if next(4) == 0 {
                        heap.set_fit(FITS[next(3)]);
                    }
                }
            }
            if cfg!(miri) || step % 16 == 0 {
                heap.check().unwrap();
            }
        }
        for (p, _) in live {
            heap.free(p).unwrap();
        }
        heap.check().unwrap();
        assert_eq!(heap.stats().used, 0);
        assert_eq!(heap.stats().free_blocks, 1);
    }
}

#[test]
fn the_guarded_heap_refuses_block_starts_and_interior_pointers() {
    let mut guarded = GuardedHeap::new(FreeListHeap::with_capacity(1024));
    let mut live = Vec::new();
    while let Ok(p) = guarded.try_alloc(bytes(24)) {
        live.push(p);
    }
    assert!(!live.is_empty());
    for &p in &live {
        for by in [-24isize, -16, -8, -1, 1, 8, 16] {
            assert!(guarded.free(shifted(p, by)).is_err());
        }
    }
    for p in live.iter().rev() {
        guarded.free(*p).unwrap();
        assert!(guarded.free(*p).is_err());
    }
    guarded.check_guards().unwrap();
    assert_eq!(guarded.stats().used, 0);
}

#[cfg(feature = "allocator-api2")]
#[test]
fn collections_grow_and_shrink_to_the_end_of_a_small_heap() {
    use allocator_api2::vec::Vec as AVec;
    use arena_kit_core::heap::HeapCell;

    let cell = HeapCell::new(FreeListHeap::with_capacity(1024));
    for round in 0..3 {
        let mut a: AVec<u8, _> = AVec::new_in(&cell);
        let mut b: AVec<u64, _> = AVec::new_in(&cell);
        for i in 0..2000usize {
            if i % 3 == 0 {
                if b.try_reserve(1).is_err() {
                    break;
                }
                b.push(i as u64);
            } else {
                if a.try_reserve(1).is_err() {
                    break;
                }
                a.push(i as u8);
            }
        }
        cell.check().unwrap();
        a.shrink_to_fit();
        b.truncate(round + 1);
        b.shrink_to_fit();
        cell.check().unwrap();
        assert!(b.iter().enumerate().all(|(i, &v)| v == 3 * i as u64));
        drop(a);
        drop(b);
        cell.check().unwrap();
        assert_eq!(cell.stats().used, 0);
    }
}
