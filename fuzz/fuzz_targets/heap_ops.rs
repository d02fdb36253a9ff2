//! Arbitrary operations on a `FreeListHeap`, checked after every step. See `fuzz/README.md`.
#![no_main]

use arbitrary::Arbitrary;
use arena_kit_core::heap::{Fit, FreeListHeap, RequestError};
use core::alloc::Layout;
use core::ptr::NonNull;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    Alloc { size: u16, align_log: u8 },
    Free(u16),
    Realloc { idx: u16, size: u16, align_log: u8 },
    DoubleFree(u16),
    Interior { idx: u16, delta: u16 },
    Foreign,
}

#[derive(Arbitrary, Debug)]
struct Input {
    fit: u8,
    capacity_kib: u8,
    ops: Vec<Op>,
}

#[derive(Clone, Copy)]
struct Live {
    ptr: NonNull<u8>,
    size: usize,
    fill: u8,
}

fn layout(size: u16, align_log: u8) -> Option<Layout> {
    Layout::from_size_align(usize::from(size), 1 << (align_log % 14)).ok()
}

fn intact(b: &Live) -> bool {
    // SAFETY: `b` is a live block of `b.size` bytes.
    unsafe { core::slice::from_raw_parts(b.ptr.as_ptr(), b.size) }
        .iter()
        .all(|&x| x == b.fill)
}

fn fill(b: &Live) {
    // SAFETY: `b` is a live block of `b.size` bytes.
    unsafe { b.ptr.as_ptr().write_bytes(b.fill, b.size) }
}

fuzz_target!(|input: Input| {
    let fit = [Fit::Segregated, Fit::First, Fit::Best][usize::from(input.fit % 3)];
    let capacity = 1024 * (1 + usize::from(input.capacity_kib % 64));
    let mut heap = FreeListHeap::with_capacity(capacity).with_fit(fit);
    let mut live: Vec<Live> = Vec::new();
    let mut freed: Vec<NonNull<u8>> = Vec::new();
    let foreign = [0u8; 16];
    let mut next_fill = 0u8;
    for op in input.ops.iter().take(2000) {
        match *op {
            Op::Alloc { size, align_log } => {
                let Some(l) = layout(size, align_log) else {
                    continue;
                };
                match heap.try_alloc(l) {
                    Ok(ptr) => {
                        assert_eq!(ptr.as_ptr().addr() % l.align(), 0);
                        next_fill = next_fill.wrapping_add(1);
                        let b = Live {
                            ptr,
                            size: l.size(),
                            fill: next_fill,
                        };
                        fill(&b);
                        live.push(b);
                    }
                    Err(e) => assert!(
                        l.size() == 0
                            || l.align() > 4096
                            || matches!(
                                e,
                                RequestError::OutOfMemory { .. } | RequestError::TooLarge { .. }
                            ),
                        "{e:?}"
                    ),
                }
            }
            Op::Free(i) if !live.is_empty() => {
                let b = live.swap_remove(usize::from(i) % live.len());
                assert!(intact(&b));
                heap.free(b.ptr).unwrap();
                freed.push(b.ptr);
            }
            Op::Realloc {
                idx,
                size,
                align_log,
            } if !live.is_empty() => {
                let Some(l) = layout(size, align_log) else {
                    continue;
                };
                let i = usize::from(idx) % live.len();
                let old = live[i];
                if let Ok(ptr) = heap.try_realloc(old.ptr, l) {
                    assert_eq!(ptr.as_ptr().addr() % l.align(), 0);
                    let kept = Live {
                        ptr,
                        size: old.size.min(l.size()),
                        fill: old.fill,
                    };
                    assert!(intact(&kept), "realloc lost contents");
                    next_fill = next_fill.wrapping_add(1);
                    live[i] = Live {
                        ptr,
                        size: l.size(),
                        fill: next_fill,
                    };
                    fill(&live[i]);
                    if ptr != old.ptr {
                        freed.push(old.ptr);
                    }
                }
            }
            Op::DoubleFree(i) if !freed.is_empty() => {
                let ptr = freed[usize::from(i) % freed.len()];
                if !live.iter().any(|b| b.ptr == ptr) {
                    assert!(heap.free(ptr).is_err());
                }
            }
            Op::Interior { idx, delta } if !live.is_empty() => {
                let b = live[usize::from(idx) % live.len()];
                let delta = usize::from(delta);
                if delta > 0 && delta < b.size {
                    // SAFETY: `delta < b.size`: inside the live block.
                    assert!(heap.free(unsafe { b.ptr.add(delta) }).is_err());
                }
            }
            Op::Foreign => assert!(heap.free(NonNull::from(&foreign).cast()).is_err()),
            _ => {}
        }
        heap.check().unwrap();
        let mut spans: Vec<_> = live
            .iter()
            .map(|b| (b.ptr.as_ptr().addr(), b.size))
            .collect();
        spans.sort_unstable();
        assert!(
            spans.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0),
            "overlap"
        );
        assert!(live.iter().all(intact));
        assert_eq!(heap.stats().live_blocks, live.len());
    }
    for b in live {
        heap.free(b.ptr).unwrap();
    }
    heap.check().unwrap();
    assert_eq!(heap.stats().free_blocks, 1);
});
