//! Model-based property tests for `FreeListHeap`: random allocations, frees, reallocations,
//! double frees, interior and foreign pointers, against a plain list of live blocks. After every
//! step: `check()` passes, live blocks are aligned and do not overlap, their contents are intact,
//! and the counters agree with the model.
use crate::support;

use arena_kit_core::heap::{Fit, FreeError, FreeListHeap, HeapError, RequestError};
use core::alloc::Layout;
use core::ptr::NonNull;
use proptest::prelude::*;
use support::{miri_or, proptest_config};

#[derive(Clone, Debug)]
enum Op {
    Alloc {
        size: usize,
        align_log: u32,
    },
    Free(usize),
    /// `free_sized` with the block's size, or when `off` is not 0 with another (refused).
    FreeSized {
        idx: usize,
        off: isize,
    },
    Realloc {
        idx: usize,
        size: usize,
        align_log: u32,
    },
    DoubleFree(usize),
    Interior {
        idx: usize,
        delta: usize,
    },
    Foreign,
}

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 1usize..=64, 3 => 1usize..=600, 1 => 600usize..=3000]
}

fn align_log() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 0u32..=4, 2 => 5u32..=8, 1 => 9u32..=12]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (size(), align_log()).prop_map(|(size, align_log)| Op::Alloc { size, align_log }),
        4 => any::<usize>().prop_map(Op::Free),
        2 => (any::<usize>(), prop_oneof![3 => Just(0isize), 1 => -17isize..=17])
            .prop_map(|(idx, off)| Op::FreeSized { idx, off }),
        3 => (any::<usize>(), size(), align_log())
            .prop_map(|(idx, size, align_log)| Op::Realloc { idx, size, align_log }),
        1 => any::<usize>().prop_map(Op::DoubleFree),
        1 => (any::<usize>(), 1usize..4096).prop_map(|(idx, delta)| Op::Interior { idx, delta }),
        1 => Just(Op::Foreign),
    ]
}

fn fit() -> impl Strategy<Value = Fit> {
    prop_oneof![Just(Fit::Segregated), Just(Fit::First), Just(Fit::Best)]
}

/// A live block in the model: where, how big, and the byte it is filled with.
#[derive(Clone, Copy, Debug)]
struct Live {
    ptr: NonNull<u8>,
    size: usize,
    align: usize,
    fill: u8,
}

fn write(block: &Live) {
    // SAFETY: the heap handed out `block.ptr` for `block.size` bytes and it is still live.
    unsafe { block.ptr.as_ptr().write_bytes(block.fill, block.size) }
}

fn intact(block: &Live, len: usize) -> bool {
    // SAFETY: as in `write`; `len <= block.size`.
    let bytes = unsafe { core::slice::from_raw_parts(block.ptr.as_ptr(), len) };
    bytes.iter().all(|&b| b == block.fill)
}

fn verify(heap: &FreeListHeap<'_>, live: &[Live]) {
    heap.check()
        .unwrap_or_else(|e| panic!("check failed: {e}\n{heap}"));
    let mut spans: Vec<(usize, usize)> = live
        .iter()
        .map(|b| (b.ptr.as_ptr().addr(), b.size))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "live blocks overlap: {w:?}");
    }
    for b in live {
        assert_eq!(b.ptr.as_ptr().addr() % b.align, 0, "misaligned block {b:?}");
        assert!(heap.contains(b.ptr));
        assert!(intact(b, b.size), "contents of {b:?} changed");
    }
    let stats = heap.stats();
    assert_eq!(stats.live_blocks, live.len());
    assert_eq!(stats.requested, live.iter().map(|b| b.size).sum::<usize>());
    assert_eq!(stats.used + stats.free, stats.capacity);
}

fn run(fit: Fit, capacity: usize, ops: &[Op]) {
    let mut heap = FreeListHeap::with_capacity(capacity).with_fit(fit);
    let mut live: Vec<Live> = Vec::new();
    let mut freed: Vec<NonNull<u8>> = Vec::new();
    let foreign = Box::new([0u8; 64]);
    let mut fill = 0u8;
    for op in ops {
        let before = heap.to_string();
        match *op {
            Op::Alloc { size, align_log } => {
                let layout = Layout::from_size_align(size, 1 << align_log).unwrap();
                match heap.try_alloc(layout).map_err(HeapError::from) {
                    Ok(ptr) => {
                        fill = fill.wrapping_add(1);
                        let block = Live {
                            ptr,
                            size,
                            align: layout.align(),
                            fill,
                        };
                        write(&block);
                        live.push(block);
                    }
                    Err(HeapError::Request(
                        RequestError::OutOfMemory { .. } | RequestError::TooLarge { .. },
                    )) => {
                        assert_eq!(heap.to_string(), before, "a failed alloc changed the heap");
                    }
                    Err(e) => panic!("unexpected {e:?}"),
                }
            }
            Op::Free(i) if !live.is_empty() => {
                let block = live.swap_remove(i % live.len());
                heap.free(block.ptr).unwrap();
                freed.push(block.ptr);
            }
            Op::FreeSized { idx, off } if !live.is_empty() => {
                let i = idx % live.len();
                let block = live[i];
                let given = block.size.saturating_add_signed(off);
                let layout = Layout::from_size_align(given, block.align).unwrap();
                if given == block.size {
                    heap.free_sized(block.ptr, layout).unwrap();
                    live.swap_remove(i);
                    freed.push(block.ptr);
                } else {
                    let refused = heap.free_sized(block.ptr, layout);
                    assert!(
                        matches!(refused, Err(FreeError::SizeMismatch { allocated, given: g, .. })
                            if allocated == block.size && g == given),
                        "{refused:?}"
                    );
                    assert_eq!(
                        heap.to_string(),
                        before,
                        "a refused sized free changed the heap"
                    );
                }
            }
            Op::Realloc {
                idx,
                size,
                align_log,
            } if !live.is_empty() => {
                let i = idx % live.len();
                let old = live[i];
                let layout = Layout::from_size_align(size, 1 << align_log).unwrap();
                match heap.try_realloc(old.ptr, layout) {
                    Ok(ptr) => {
                        let moved = Live {
                            ptr,
                            size,
                            align: layout.align(),
                            fill: old.fill,
                        };
                        assert!(intact(&moved, old.size.min(size)), "realloc lost contents");
                        fill = fill.wrapping_add(1);
                        live[i] = Live { fill, ..moved };
                        write(&live[i]);
                        if ptr != old.ptr {
                            freed.push(old.ptr);
                        }
                    }
                    Err(HeapError::Request(
                        RequestError::OutOfMemory { .. } | RequestError::TooLarge { .. },
                    )) => {
                        assert_eq!(
                            heap.to_string(),
                            before,
                            "a failed realloc changed the heap"
                        );
                    }
                    Err(e) => panic!("unexpected {e:?}"),
                }
            }
            Op::DoubleFree(i) if !freed.is_empty() => {
                let ptr = freed[i % freed.len()];
                if !live.iter().any(|b| b.ptr == ptr) {
                    assert!(matches!(
                        heap.free(ptr),
                        Err(FreeError::NotAllocated { .. })
                    ));
                    assert_eq!(heap.to_string(), before, "a double free changed the heap");
                }
            }
            Op::Interior { idx, delta } if !live.is_empty() => {
                let block = live[idx % live.len()];
                let delta = 1 + delta % block.size.max(2).saturating_sub(1).max(1);
                if delta < block.size {
                    // SAFETY: `delta < block.size`, so the pointer stays inside the live block.
                    let inner = unsafe { block.ptr.add(delta) };
                    assert!(heap.free(inner).is_err());
                    assert!(heap.try_realloc(inner, Layout::new::<u8>()).is_err());
                    assert_eq!(
                        heap.to_string(),
                        before,
                        "an interior free changed the heap"
                    );
                }
            }
            Op::Foreign => {
                let ptr = NonNull::from(&foreign[0]);
                assert!(matches!(
                    heap.free(ptr),
                    Err(FreeError::ForeignPointer { .. })
                ));
            }
            _ => {}
        }
        verify(&heap, &live);
    }
    for block in live.drain(..) {
        heap.free(block.ptr).unwrap();
    }
    heap.check().unwrap();
    assert_eq!(
        heap.stats().free_blocks,
        1,
        "everything freed coalesces into one block"
    );
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn heap_matches_model(
        fit in fit(),
        ops in proptest::collection::vec(op(), 1..miri_or(200, 30)),
    ) {
        run(fit, miri_or(32 * 1024, 8 * 1024), &ops);
    }

    #[test]
    fn small_heap_runs_out_cleanly(
        fit in fit(),
        ops in proptest::collection::vec(op(), 1..miri_or(100, 20)),
    ) {
        run(fit, 2048, &ops);
    }
}

#[test]
fn from_buffer_at_every_misalignment() {
    let mut buf = vec![core::mem::MaybeUninit::<u8>::uninit(); 1024 + 16];
    for shift in 0..16 {
        let mut heap = FreeListHeap::from_buffer(&mut buf[shift..shift + 1024]);
        let a = heap
            .try_alloc(Layout::from_size_align(40, 16).unwrap())
            .unwrap();
        assert_eq!(a.as_ptr().addr() % 16, 0);
        let b = heap.try_alloc(Layout::from_size_align(100, 256).unwrap());
        if let Ok(b) = b {
            assert_eq!(b.as_ptr().addr() % 256, 0);
            heap.free(b).unwrap();
        }
        heap.free(a).unwrap();
        heap.check().unwrap();
        assert_eq!(heap.stats().free_blocks, 1);
    }
}
