//! Review checks for the heap family: every refused operation leaves the heap exactly as it
//! was (stats equal, `check` passes), under budgets of each policy, with huge sizes and
//! alignments, through the plain heap, the guarded heap and the allocator interface.
#![cfg(all(feature = "std", feature = "allocator-api2"))]

use core::alloc::Layout;
use core::fmt::Display;
use core::ptr::NonNull;

use arena_kit_core::heap::{BlockInfo, FreeListHeap, GuardedHeap, HeapStats};
use arena_kit_core::tags::{Budget, Budgeted, MemoryUsage};

use crate::support::{Rng, miri_or};

/// A layout: mostly small, sometimes huge, with alignments up to past the heap's maximum.
fn layout(rng: &mut Rng) -> Layout {
    let align = 1usize << rng.below(15);
    let size = match rng.below(10) {
        0 => 0,
        1 => isize::MAX as usize - (align - 1),
        2 => isize::MAX as usize / 2 + rng.below(1000),
        _ => 1 + rng.below(700),
    };
    Layout::from_size_align(size, align).unwrap()
}

/// No budget, or a `Warn` or `Fail` budget of up to 3,000 bytes.
fn budget(rng: &mut Rng) -> Option<Budget> {
    let bytes = rng.below(3000);
    match rng.below(4) {
        0 => None,
        1 => Some(Budget::warn(bytes)),
        _ => Some(Budget::fail(bytes)),
    }
}

/// The stats and every block (offset, size, state) in address order: equal walks print equal
/// layout lines, and the walk costs a fifth of the line under Miri (no formatting).
type Snap = (HeapStats, Vec<BlockInfo>);

fn snap(heap: &FreeListHeap<'_>) -> Snap {
    (heap.stats(), heap.blocks().collect())
}

/// Stats and block walk as in `before`, and `check` passes. Under Miri `check` (about 0.2 s
/// there: it walks every free list) is left to the `check` each step ends with, which sees
/// whatever a refused call left behind: every call after it in the step is refused too.
/// (`what` is formatted only on failure.)
#[track_caller]
fn unchanged(heap: &FreeListHeap<'_>, before: &Snap, what: impl Display) {
    assert_eq!(heap.stats(), before.0, "{what}: stats changed on error");
    let now: Vec<BlockInfo> = heap.blocks().collect();
    assert_eq!(
        now, before.1,
        "{what}: block layout changed on error, now {heap}"
    );
    if !cfg!(miri) {
        heap.check().unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

#[test]
fn every_refused_heap_operation_changes_nothing() {
    for seed in 1..miri_or(40, 2) as u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut heap = FreeListHeap::with_capacity(4096);
        let mut live: Vec<(NonNull<u8>, Layout)> = Vec::new();
        let mut freed: Vec<NonNull<u8>> = Vec::new();
        for step in 0..miri_or(400, 30) {
            let before = snap(&heap);
            match rng.below(6) {
                0 => heap.set_budget(budget(&mut rng).map(Into::into)),
                1 | 2 => {
                    let l = layout(&mut rng);
                    match heap.try_alloc(l) {
                        Ok(p) => live.push((p, l)),
                        Err(e) => unchanged(
                            &heap,
                            &before,
                            format_args!("{seed}/{step} alloc {l:?}: {e}"),
                        ),
                    }
                }
                3 if !live.is_empty() => {
                    let i = rng.below(live.len());
                    let l = layout(&mut rng);
                    match heap.try_realloc(live[i].0, l) {
                        Ok(p) => live[i] = (p, l),
                        Err(e) => unchanged(
                            &heap,
                            &before,
                            format_args!("{seed}/{step} realloc {l:?}: {e}"),
                        ),
                    }
                }
                4 if !live.is_empty() => {
                    let (p, _) = live.swap_remove(rng.below(live.len()));
                    heap.free(p).unwrap();
                    freed.push(p);
                }
                _ => {
                    // A pointer that is not a live block's start: freed, interior, or foreign.
                    let bad = match (rng.below(3), freed.last(), live.first()) {
                        (0, Some(&p), _) if !live.iter().any(|&(q, _)| q == p) => p,
                        // SAFETY: 8 bytes into a live block of at least 16 payload bytes.
                        (1, _, Some(&(p, _))) => unsafe { p.add(8) },
                        _ => NonNull::from(&before).cast(),
                    };
                    if heap.free(bad).is_ok() {
                        panic!("{seed}/{step}: freeing {bad:?} succeeded");
                    }
                    unchanged(&heap, &before, format_args!("{seed}/{step} free"));
                }
            }
            heap.check()
                .unwrap_or_else(|e| panic!("{seed}/{step}: {e}"));
            let usage = heap.usage();
            assert_eq!(usage.allocations, live.len());
        }
    }
}

#[test]
fn every_refused_guarded_heap_operation_changes_nothing() {
    for seed in 1..miri_or(40, 2) as u64 {
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(4096));
        let mut live: Vec<NonNull<u8>> = Vec::new();
        for step in 0..miri_or(400, 30) {
            let before = snap(&heap);
            match rng.below(5) {
                0 => heap.set_budget(budget(&mut rng).map(Into::into)),
                1 | 2 => {
                    let l = layout(&mut rng);
                    match heap.try_alloc(l) {
                        Ok(p) => {
                            assert!((p.as_ptr() as usize).is_multiple_of(l.align()));
                            live.push(p)
                        }
                        Err(e) => unchanged(
                            &heap,
                            &before,
                            format_args!("{seed}/{step} alloc {l:?}: {e}"),
                        ),
                    }
                }
                3 if !live.is_empty() => {
                    let p = live.swap_remove(rng.below(live.len()));
                    heap.free(p).unwrap();
                    // Freed again: an error, nothing changes.
                    let before = snap(&heap);
                    assert!(heap.free(p).is_err());
                    unchanged(&heap, &before, "double free");
                }
                _ => {
                    if let Some(&p) = live.first() {
                        // A block's own start lies before the value: never an allocation.
                        for off in [1usize, 8, 16] {
                            // SAFETY: the guarded value sits at least 16 bytes into its
                            // block (tags and front guard), so these stay inside the heap.
                            let bad = unsafe { p.sub(off) };
                            assert!(heap.free(bad).is_err(), "{seed}/{step}: interior free");
                            unchanged(&heap, &before, "interior free");
                        }
                    }
                }
            }
            heap.check()
                .unwrap_or_else(|e| panic!("{seed}/{step}: {e}"));
            heap.check_guards().unwrap();
        }
    }
}

/// The guarded heap answers as the heap it wraps: a zero-size request is refused in every build
/// (guards on or off), not handed a block only while guards are on.
#[test]
fn a_guarded_heap_refuses_zero_size_like_the_heap() {
    use arena_kit_core::heap::RequestError;
    let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(1024));
    let before = snap(&heap);
    assert_eq!(
        heap.try_alloc(Layout::new::<()>()),
        Err(RequestError::ZeroSize)
    );
    unchanged(&heap, &before, "zero size");
    heap.check().unwrap();
}
