//! `GuardedHeap` attacked through its edges: blocks the wrapped heap handed out before it was
//! guarded, double frees of them, and block starts that sit under a guarded value.
use arena_kit_core::heap::{FreeError, FreeListHeap, GuardedHeap, MAX_ALIGN, RequestError};
use core::alloc::Layout;

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
    if guarded.contains(core::ptr::NonNull::new(late_block).unwrap()) {
        let under = guarded
            .free(core::ptr::NonNull::new(late_block).unwrap())
            .unwrap_err();
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
