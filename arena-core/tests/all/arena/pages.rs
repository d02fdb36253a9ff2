//! Chained pages, byte limits, checked sizes, alignment, markers, debug guards and poison.

use core::alloc::Layout;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::arena::{Arena, ArenaError, GuardSide, MarkerError};
use arena_kit_core::poison;

#[test]
fn chained_arena_takes_pages_and_keeps_them_across_resets() {
    let mut arena = Arena::chained(256);
    assert_eq!(
        arena.page_count(),
        0,
        "no memory until the first allocation"
    );
    for i in 0..100u64 {
        arena.alloc(i);
    }
    let pages = arena.page_count();
    assert!(pages > 1);
    let bytes = arena.system_bytes();
    for _ in 0..3 {
        arena.reset();
        for i in 0..100u64 {
            arena.alloc(i);
        }
        assert_eq!(arena.page_count(), pages);
        assert_eq!(arena.system_bytes(), bytes);
    }
    assert_eq!(arena.allocation_count(), 100);
    assert_eq!(arena.used(), 800);
    assert!(arena.high_water() >= 800);
}

#[test]
fn a_request_larger_than_a_page_gets_a_page_of_its_own_between_kept_pages() {
    let mut arena = Arena::chained(512);
    let frame = |arena: &Arena| {
        let small = arena.alloc([1u8; 100]);
        let big = arena.alloc_slice_fill_with(4000, |i| i as u8);
        let after = arena.alloc([2u8; 100]);
        assert_eq!(big.len(), 4000);
        assert_eq!(big[3999], (3999 % 256) as u8);
        assert_eq!((small[0], after[0]), (1, 2));
    };
    frame(&arena);
    let (pages, bytes) = (arena.page_count(), arena.system_bytes());
    assert_eq!(
        pages, 3,
        "small page, the big request's own page, then a fresh page"
    );
    for _ in 0..3 {
        arena.reset();
        frame(&arena);
        assert_eq!(
            (arena.page_count(), arena.system_bytes()),
            (pages, bytes),
            "steady state"
        );
    }
}

#[test]
fn byte_limit_is_honoured_exactly_not_per_page() {
    let limit = 1000;
    let arena = Arena::chained(400).with_limit(limit);
    let mut got = 0;
    while arena
        .try_alloc_layout(Layout::from_size_align(8, 8).unwrap())
        .is_ok()
    {
        got += 8;
    }
    assert_eq!(
        arena.system_bytes(),
        limit,
        "the last page is shrunk to fill the limit"
    );
    assert!(got > 0);
    let err = arena
        .try_alloc_layout(Layout::from_size_align(8, 8).unwrap())
        .unwrap_err();
    assert!(
        matches!(
            err,
            ArenaError::LimitReached {
                requested: 8,
                limit: 1000,
                ..
            }
        ),
        "{err:?}"
    );
    // A request that can never fit under the limit fails without taking anything.
    let fresh = Arena::chained(400).with_limit(300);
    assert!(
        fresh
            .try_alloc_layout(Layout::from_size_align(400, 1).unwrap())
            .is_err()
    );
    assert_eq!(fresh.system_bytes(), 0);
    assert_eq!(fresh.limit(), Some(300));
}

#[test]
fn huge_slice_lengths_are_errors_not_wrapped_sizes() {
    let arena = Arena::chained(256);
    let err = arena
        .try_alloc_slice_fill_with(usize::MAX / 4, |_| 0u64)
        .unwrap_err();
    assert_eq!(
        err,
        ArenaError::SizeOverflow {
            elem_size: 8,
            count: usize::MAX / 4
        }
    );
    assert_eq!(arena.used(), 0);
    let fixed = Arena::with_capacity(64);
    assert!(
        fixed
            .try_alloc_layout(Layout::from_size_align(isize::MAX as usize - 64, 1).unwrap())
            .is_err()
    );
    let r = catch_unwind(AssertUnwindSafe(|| {
        fixed.alloc_slice_fill_with(usize::MAX / 2, |_| 0u32)
    }));
    let msg = r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("overflows"), "{msg}");
}

#[test]
fn the_infallible_form_panics_with_the_error_text() {
    let arena = Arena::with_capacity(16);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc([0u8; 32]);
    }));
    let msg = r.unwrap_err().downcast::<String>().unwrap();
    assert_eq!(
        *msg,
        ArenaError::Full {
            requested: 32,
            remaining: 16,
            capacity: 16
        }
        .to_string()
    );
}

#[test]
fn every_power_of_two_alignment_and_zero_sized_types() {
    let arena = Arena::chained(1024);
    for shift in 0..13 {
        let align = 1usize << shift;
        let p = arena.alloc_layout(Layout::from_size_align(3, align).unwrap());
        assert_eq!(p.as_ptr() as usize % align, 0, "align {align}");
    }
    #[repr(align(64))]
    struct Wide(#[allow(dead_code)] u8);
    let w = arena.alloc(Wide(1));
    assert_eq!(w as *mut Wide as usize % 64, 0);
    let before = arena.used();
    let unit = arena.alloc(());
    let empty: &mut [u64] = arena.alloc_slice_copy(&[]);
    let zero = arena.alloc_layout(Layout::from_size_align(0, 32).unwrap());
    assert_eq!((*unit, empty.len()), ((), 0));
    assert_eq!(zero.as_ptr() as usize % 32, 0);
    assert_eq!(arena.used(), before, "zero-sized allocations use no space");
    assert_eq!(arena.alloc_str("héllo"), "héllo");
}

#[test]
fn markers_from_other_arenas_or_from_before_a_reset_are_refused() {
    let mut a = Arena::with_capacity(256);
    let mut b = Arena::with_capacity(256);
    a.alloc(1u64);
    let ma = a.mark();
    assert_eq!(b.rewind(ma), Err(MarkerError::Foreign));
    a.reset();
    assert_eq!(a.rewind(ma), Err(MarkerError::Stale));
    a.alloc(1u64);
    let m2 = a.mark();
    a.alloc(2u64);
    let m3 = a.mark();
    a.rewind(m2).unwrap();
    assert_eq!(a.rewind(m3), Err(MarkerError::Stale), "rewound past it");
    a.rewind(m2).unwrap(); // the same marker again is fine
    assert_eq!(a.used(), 8);
    assert!(MarkerError::Stale.to_string().contains("take a new marker"));
}

#[test]
fn markers_work_across_pages() {
    let mut arena = Arena::chained(256);
    arena.alloc([0u8; 100]);
    let m = arena.mark();
    for _ in 0..20 {
        arena.alloc([0u8; 100]);
    }
    assert!(arena.page_count() > 5);
    arena.rewind(m).unwrap();
    assert_eq!(arena.used(), 100);
    assert_eq!(arena.allocation_count(), 1);
    let next = arena.alloc([0u8; 8]);
    assert_eq!(arena.offset_of(next), Some(100));
}

#[test]
fn freed_and_rewound_memory_is_poisoned_in_debug_builds() {
    if !poison::ENABLED {
        return;
    }
    let mut arena = Arena::with_capacity(64);
    let m = arena.mark();
    let p = arena.alloc_layout(Layout::from_size_align(16, 8).unwrap());
    // SAFETY: 16 bytes at `p` belong to the arena; raw writes and reads keep no borrow alive.
    unsafe { p.write_bytes(0x11, 16) };
    arena.rewind(m).unwrap();
    // SAFETY: the memory is still the arena's (pages are kept); it was rewritten with FREED.
    let after = unsafe { core::slice::from_raw_parts(p.as_ptr(), 16) }.to_vec();
    assert_eq!(after, [poison::FREED; 16]);
    let fresh = arena.alloc_layout(Layout::from_size_align(16, 8).unwrap());
    // SAFETY: just allocated, filled with FRESH in debug builds.
    let bytes = unsafe { core::slice::from_raw_parts(fresh.as_ptr(), 16) }.to_vec();
    assert_eq!(bytes, [poison::FRESH; 16]);
}

#[test]
fn guard_bytes_report_an_overrun_with_size_and_position() {
    if !poison::ENABLED {
        return;
    }
    let mut arena = Arena::chained(1024).with_guards();
    let a = arena.alloc_layout(Layout::from_size_align(12, 4).unwrap());
    let b = arena.alloc_layout(Layout::from_size_align(12, 4).unwrap());
    assert_eq!(arena.check_guards(), Ok(()));
    let b_offset = arena.offset_of(b.as_ptr()).unwrap();
    // The bug: healthArray[3] = 999 on a 3-int array, one element past the end.
    // SAFETY: the write lands in `b`'s back guard, memory of the same page, so it is in bounds
    // of the page allocation; this simulates an overrun without undefined behaviour.
    unsafe { b.add(12).cast::<u32>().write_unaligned(999) };
    let v = arena.check_guards().unwrap_err();
    assert_eq!(
        (v.size, v.offset, v.side, v.byte),
        (12, b_offset, GuardSide::Back, 0)
    );
    let text = v.to_string();
    assert!(text.contains("12-byte allocation at offset"), "{text}");
    let _ = a;
    let r = catch_unwind(AssertUnwindSafe(|| arena.reset()));
    assert!(
        r.unwrap_err()
            .downcast::<String>()
            .unwrap()
            .contains("guard bytes after")
    );
    assert_eq!(arena.used(), 0, "the reset completed before reporting");
    assert_eq!(arena.check_guards(), Ok(()));
}

#[test]
fn guarded_arenas_still_drop_and_rewind() {
    let mut arena = Arena::chained(512).with_guards();
    let m = arena.mark();
    let v = arena.alloc(String::from("guarded"));
    v.push('!');
    let s = arena.alloc_slice_fill_with(3, |i| vec![i; 2]);
    assert_eq!(s[2], [2, 2]);
    assert_eq!(arena.pending_drops(), 2);
    arena.rewind(m).unwrap();
    assert_eq!(arena.pending_drops(), 0);
    assert_eq!(arena.allocation_count(), 0);
}

#[test]
fn stats_add_up() {
    let mut arena = Arena::with_capacity(128);
    arena.alloc(1u32);
    arena.alloc(2u64);
    let s = arena.stats();
    assert_eq!(
        (s.used, s.remaining, s.capacity, s.allocations, s.pages),
        (16, 112, 128, 2, 0)
    );
    arena.reset();
    assert_eq!(arena.high_water(), 16);
    assert_eq!(arena.used(), 0);
}
