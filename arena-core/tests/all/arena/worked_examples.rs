//! Worked examples as tests: a linear allocator trace, a stack allocator trace with markers, a
//! double-buffered frame allocator, and the allocation arithmetic of a per-frame telemetry log.

use core::alloc::Layout;
use core::mem::MaybeUninit;

use arena_kit_core::arena::{Arena, ArenaError};

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size, 8).unwrap()
}

#[test]
fn linear_trace_offsets_0_40_72_then_0_after_reset() {
    let mut arena = Arena::with_capacity(256);
    let a = arena.alloc_layout(layout(40));
    let b = arena.alloc_layout(layout(30));
    let c = arena.alloc_layout(layout(60));
    assert_eq!(arena.offset_of(a.as_ptr()), Some(0));
    assert_eq!(arena.offset_of(b.as_ptr()), Some(40));
    assert_eq!(
        arena.offset_of(c.as_ptr()),
        Some(72),
        "70 is padded up to 72"
    );
    assert_eq!(arena.used(), 132);
    arena.reset();
    let d = arena.alloc_layout(layout(10));
    assert_eq!(arena.offset_of(d.as_ptr()), Some(0));
}

#[test]
fn linear_trace_on_a_user_buffer() {
    #[repr(align(16))]
    struct Buffer([MaybeUninit<u8>; 256]);
    let mut buffer = Buffer([MaybeUninit::uninit(); 256]);
    let mut arena = Arena::from_buffer(&mut buffer.0);
    let offsets: Vec<_> = [40, 30, 60]
        .iter()
        .map(|&n| {
            arena
                .offset_of(arena.alloc_layout(layout(n)).as_ptr())
                .unwrap()
        })
        .collect();
    assert_eq!(offsets, [0, 40, 72]);
    arena.reset();
    assert_eq!(
        arena.offset_of(arena.alloc_layout(layout(10)).as_ptr()),
        Some(0)
    );
    assert_eq!(
        arena.system_bytes(),
        0,
        "a buffer arena never calls the system allocator"
    );
}

#[test]
fn stack_trace_marker_64_then_112_then_back_to_64() {
    let mut arena = Arena::with_capacity(256);
    let level = arena.alloc_layout(layout(64));
    let frame_mark = arena.mark();
    assert_eq!(frame_mark.used(), 64);
    let path = arena.alloc_layout(layout(48));
    assert_eq!(arena.offset_of(path.as_ptr()), Some(64));
    assert_eq!(arena.used(), 112, "offset with pathBuffer alive");
    arena.rewind(frame_mark).unwrap();
    assert_eq!(arena.used(), 64, "offset after FreeToMarker");
    let next = arena.alloc_layout(layout(20));
    assert_eq!(
        arena.offset_of(next.as_ptr()),
        Some(64),
        "nextFrameBuffer reuses pathBuffer's bytes"
    );
    assert_eq!(arena.offset_of(level.as_ptr()), Some(0));
}

#[test]
fn stack_trace_with_a_scope() {
    let mut arena = Arena::with_capacity(256);
    arena.alloc([0u8; 64]);
    {
        let scope = arena.scope();
        let path = scope.alloc([0u8; 48]);
        assert_eq!(scope.offset_of(path), Some(64));
        assert_eq!(scope.used(), 112);
    }
    assert_eq!(arena.used(), 64);
    let next = arena.alloc([0u8; 20]);
    assert_eq!(arena.offset_of(next), Some(64));
}

#[test]
fn telemetry_record_at_offset_10_align_8_10_align_8_lands_at_16_and_ends_at_24() {
    let arena = Arena::with_capacity(100);
    arena.alloc_layout(Layout::from_size_align(10, 1).unwrap());
    let p = arena.alloc_layout(layout(8));
    assert_eq!(arena.offset_of(p.as_ptr()), Some(16));
    assert_eq!(arena.used(), 24);
}

#[test]
fn fixed_arena_out_of_space_is_a_typed_error_and_changes_nothing() {
    let arena = Arena::with_capacity(64);
    arena.alloc([0u8; 60]);
    let before = arena.stats();
    let err = arena.try_alloc_layout(layout(8)).unwrap_err();
    assert_eq!(
        err,
        ArenaError::Full {
            requested: 8,
            remaining: 4,
            capacity: 64
        }
    );
    assert_eq!(arena.stats(), before);
    assert!(
        err.to_string()
            .contains("requested 8 bytes but only 4 of 64 remain")
    );
}
