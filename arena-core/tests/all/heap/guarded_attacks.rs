//! `GuardedHeap` attacked through its edges: blocks the wrapped heap handed out before it was
//! guarded, double frees of them, and block starts that sit under a guarded value.
use arena_kit_core::heap::{FreeError, FreeListHeap, GuardedHeap, MAX_ALIGN, RequestError};
use core::alloc::Layout;
use core::ptr::NonNull;

use crate::support::{Rng, miri_or};

fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).unwrap()
}

/// A heap with live blocks is wrapped: those blocks are still the caller's, and freeing them
/// through the guarded heap frees them (they carry no guards to check), once; a guarded
/// allocation's block start is still refused, and nothing else changes.
#[test]
fn blocks_made_before_the_heap_was_guarded_are_freed_through_it_once() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let early = [
        heap.alloc(layout(24, 8)),
        heap.alloc(layout(64, 64)),
        heap.alloc(layout(1, 1)),
    ];
    let mut guarded = GuardedHeap::new(heap);
    let late = guarded.alloc(layout(40, 16));
    let late_block = late.as_ptr().wrapping_sub(16);
    assert_eq!(guarded.stats().live_blocks, 4);
    for (i, &p) in early.iter().enumerate() {
        guarded
            .free(p)
            .unwrap_or_else(|e| panic!("early block {i} ({p:p}): {e}"));
        assert_eq!(guarded.stats().live_blocks, 3 - i);
        let twice = guarded.free(p).unwrap_err();
        assert!(matches!(twice, FreeError::NotAllocated { .. }), "{twice:?}");
        guarded.check().unwrap();
        guarded.check_guards().unwrap();
    }
    if guarded.contains(NonNull::new(late_block).unwrap()) {
        let under = guarded.free(NonNull::new(late_block).unwrap()).unwrap_err();
        assert!(matches!(under, FreeError::NotAllocated { .. }), "{under:?}");
    }
    assert_eq!(guarded.stats().live_blocks, 1);
    guarded.free(late).unwrap();
    assert_eq!(guarded.stats().live_blocks, 0);
    guarded.check().unwrap();
}

/// An alignment past `MAX_ALIGN` is refused as such, as the plain heap refuses it, at every
/// size: never as a request "larger than the whole heap" because the guards in front of a huge
/// alignment made the block's layout overflow.
#[test]
fn an_alignment_past_the_heaps_is_named_as_such_with_guards_too() {
    let mut plain = FreeListHeap::with_capacity(4096);
    let mut guarded = GuardedHeap::new(FreeListHeap::with_capacity(4096));
    let before = (guarded.to_string(), guarded.stats());
    for shift in [13, 20, 40, 61, 62, 63] {
        let align = 1usize << shift;
        for size in [1, 100, 1 << 20] {
            let Ok(l) = Layout::from_size_align(size, align) else {
                continue; // not a layout at all
            };
            let expected = RequestError::AlignmentTooLarge {
                align,
                max: MAX_ALIGN,
            };
            assert_eq!(plain.try_alloc(l), Err(expected.clone()), "{l:?}");
            assert_eq!(guarded.try_alloc(l), Err(expected), "{l:?}");
            assert_eq!((guarded.to_string(), guarded.stats()), before, "{l:?}");
        }
    }
}

/// One pointer the model knows: a live allocation (from before the guard or through it), or
/// one that was freed.
struct Known {
    ptr: NonNull<u8>,
    size: usize,
    /// Guard bytes in front of it; `None` for a block made before the heap was guarded.
    front: Option<usize>,
    live: bool,
}

/// Random allocations and frees over a heap that had blocks before it was guarded, against a
/// model: every live pointer frees once, a freed one never again, and a guarded allocation's
/// block start, an interior pointer or a guard byte never frees anything. After each step the
/// heap checks clean, every guard is whole and the live count is the model's.
#[test]
fn frees_of_early_guarded_and_bogus_pointers_match_a_model() {
    for run in 0..miri_or(24, 1) as u64 {
        let mut rng = Rng(run);
        let mut heap = FreeListHeap::with_capacity(miri_or(1 << 13, 1 << 11));
        let mut known = Vec::new();
        for _ in 0..rng.between(1, 6) {
            let l = small_layout(&mut rng);
            known.push(Known {
                ptr: heap.alloc(l),
                size: l.size(),
                front: None,
                live: true,
            });
        }
        let mut guarded = GuardedHeap::new(heap);
        for step in 0..miri_or(120, 16) {
            let context = format!("run {run}, step {step}");
            match rng.below(4) {
                0 => {
                    let l = small_layout(&mut rng);
                    if let Ok(ptr) = guarded.try_alloc(l) {
                        // SAFETY: `ptr` holds `l.size()` bytes of its own.
                        unsafe { ptr.write_bytes(0xA5, l.size()) };
                        // An address freed before is this allocation's now.
                        known.retain(|k| k.live || k.ptr != ptr);
                        known.push(Known {
                            ptr,
                            size: l.size(),
                            front: Some(8usize.next_multiple_of(l.align())),
                            live: true,
                        });
                    }
                }
                1 | 2 if !known.is_empty() => {
                    let i = rng.below(known.len());
                    let k = &mut known[i];
                    let freed = guarded.free(k.ptr);
                    assert_eq!(freed.is_ok(), k.live, "{context}: free {:p}", k.ptr);
                    if !k.live {
                        assert!(
                            matches!(freed, Err(FreeError::NotAllocated { .. })),
                            "{context}: {freed:?}"
                        );
                    }
                    k.live = false;
                }
                _ if !known.is_empty() => {
                    let k = &known[rng.below(known.len())];
                    let before = (guarded.to_string(), guarded.stats());
                    let bad: Vec<NonNull<u8>> = [
                        k.front.map(|f| k.ptr.as_ptr().wrapping_sub(f)),
                        Some(k.ptr.as_ptr().wrapping_add(1)),
                        Some(k.ptr.as_ptr().wrapping_add(k.size)),
                        Some(k.ptr.as_ptr().wrapping_sub(1)),
                    ]
                    .into_iter()
                    .flatten()
                    .filter_map(NonNull::new)
                    .filter(|&p| !known.iter().any(|o| o.live && o.ptr == p))
                    .collect();
                    for p in bad {
                        assert!(guarded.free(p).is_err(), "{context}: freed {p:p}");
                        assert_eq!(
                            (guarded.to_string(), guarded.stats()),
                            before,
                            "{context}: {p:p}"
                        );
                    }
                }
                _ => {}
            }
            guarded.check().unwrap_or_else(|e| panic!("{context}: {e}"));
            guarded
                .check_guards()
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            let live = known.iter().filter(|k| k.live).count();
            assert_eq!(guarded.stats().live_blocks, live, "{context}");
        }
        for k in known.iter().filter(|k| k.live) {
            guarded.free(k.ptr).unwrap();
        }
        assert_eq!(guarded.stats().live_blocks, 0);
    }
}

fn small_layout(rng: &mut Rng) -> Layout {
    let align = [1, 2, 8, 16, 64, 256][rng.below(6)];
    layout(1 + rng.below(200), align)
}

/// A damaged guard is reported at the allocation's offset in the heap's block space, the offset
/// the heap's other errors give (here: one byte before the offset of a pointer one past the
/// allocation's start, which is not an allocation), never at its address.
#[test]
fn a_damaged_guard_is_reported_at_the_offset_the_heaps_errors_use() {
    if !arena_kit_core::poison::ENABLED {
        return; // no guard bytes to damage (release build without `debug-checks`)
    }
    let mut guarded = GuardedHeap::new(FreeListHeap::with_capacity(4096));
    let _before = guarded.alloc(layout(100, 8));
    let p = guarded.alloc(layout(24, 8));
    let inside = NonNull::new(p.as_ptr().wrapping_add(1)).unwrap();
    let FreeError::NotAllocated { offset } = guarded.free(inside).unwrap_err() else {
        panic!("an interior pointer is not an allocation");
    };
    // SAFETY: the byte just past the 24-byte allocation is its back guard, inside its block.
    unsafe { p.as_ptr().add(24).write(0) };
    let damaged = guarded.check_guards().unwrap_err();
    assert_eq!(damaged.offset, offset - 1, "{damaged}");
    assert!(damaged.offset < guarded.capacity(), "{damaged}");
    assert!(
        damaged
            .to_string()
            .contains(&format!("at offset {}", offset - 1))
    );
    let FreeError::GuardDamaged(on_free) = guarded.free(p).unwrap_err() else {
        panic!("the damaged allocation is refused");
    };
    assert_eq!(on_free, damaged);
}

/// An allocation whose guard was damaged can still be freed, once looked at: the damage comes
/// back, the block returns to the heap, and a second free of it (either way) is refused as a
/// double free. Pointers that are not guarded allocations are refused as by `free`.
#[test]
fn an_allocation_with_a_damaged_guard_can_be_freed_despite_it() {
    if !arena_kit_core::poison::ENABLED {
        return; // no guard bytes to damage (release build without `debug-checks`)
    }
    let mut guarded = GuardedHeap::new(FreeListHeap::with_capacity(4096));
    let keep = guarded.alloc(layout(8, 8));
    let p = guarded.alloc(layout(24, 8));
    // SAFETY: the byte just before the allocation is its front guard, inside its block.
    unsafe { p.as_ptr().sub(1).write(0x11) };
    let refused = guarded.free(p).unwrap_err();
    let FreeError::GuardDamaged(seen) = refused else {
        panic!("{refused:?}");
    };
    assert_eq!(guarded.stats().live_blocks, 2);
    let damage = guarded.free_despite_guards(p).unwrap();
    assert_eq!(damage, Some(seen));
    assert_eq!(guarded.stats().live_blocks, 1);
    guarded.check().unwrap();
    guarded.check_guards().unwrap();
    for again in [guarded.free(p), guarded.free_despite_guards(p).map(drop)] {
        assert!(
            matches!(again, Err(FreeError::NotAllocated { .. })),
            "{again:?}"
        );
    }
    let inside = NonNull::new(keep.as_ptr().wrapping_add(4)).unwrap();
    let interior = guarded.free_despite_guards(inside).unwrap_err();
    assert!(
        matches!(interior, FreeError::NotAllocated { .. }),
        "{interior:?}"
    );
    assert_eq!(guarded.free_despite_guards(keep).unwrap(), None);
    assert_eq!(guarded.stats().live_blocks, 0);
}
