//! A scope's end when nothing inside it needs dropping or checking only moves the bump pointer
//! back. These tests pin what it must still do: give back exactly the scope's bytes and count,
//! keep the peak, poison in debug builds, re-clamp a budget, and hand every case that needs
//! more (values to drop, guard bytes, another page) to the full rewind.

use core::alloc::Layout;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use arena_kit_core::arena::Arena;
use arena_kit_core::poison;
use arena_kit_core::tags::{Budget, Budgeted};

fn bytes(arena: &Arena, n: usize) -> *mut u8 {
    arena
        .alloc_layout(Layout::from_size_align(n, 1).unwrap())
        .as_ptr()
}

#[test]
fn a_scope_of_plain_values_gives_back_its_bytes_and_count_and_keeps_the_peak() {
    let mut arena = Arena::with_capacity(1024);
    bytes(&arena, 10);
    {
        let scope = arena.scope();
        for _ in 0..5 {
            scope.alloc([7u8; 100]);
        }
        assert_eq!((scope.used(), scope.allocation_count()), (510, 6));
    }
    assert_eq!((arena.used(), arena.allocation_count()), (10, 1));
    assert_eq!(arena.high_water(), 510);
    let next = bytes(&arena, 1);
    assert_eq!(
        arena.offset_of(next),
        Some(10),
        "the next value takes the scope's first byte"
    );
}

#[test]
fn clearing_a_scope_twice_and_ending_it_leaves_the_arena_as_it_began() {
    let mut arena = Arena::with_capacity(512);
    bytes(&arena, 3);
    {
        let mut scope = arena.scope();
        scope.alloc(1u64);
        scope.clear();
        assert_eq!((scope.used(), scope.allocation_count()), (3, 1));
        scope.alloc([0u8; 200]);
        scope.clear();
        scope.clear();
        assert_eq!(scope.used(), 3);
    }
    assert_eq!(
        (arena.used(), arena.allocation_count(), arena.high_water()),
        (3, 1, 203)
    );
}

#[test]
fn the_bytes_a_scope_frees_are_poisoned_in_debug_builds() {
    let mut arena = Arena::with_capacity(256);
    let p = {
        let scope = arena.scope();
        let p = bytes(&scope, 32);
        // SAFETY: 32 bytes at `p` were just handed out; a raw write keeps no borrow alive.
        unsafe { p.write_bytes(0x11, 32) };
        p
    };
    // SAFETY: the memory is still the arena's (the page is kept); only raw reads.
    let after = unsafe { core::slice::from_raw_parts(p, 32) }.to_vec();
    if poison::ENABLED {
        assert_eq!(after, [poison::FREED; 32]);
    } else {
        assert_eq!(after, [0x11; 32], "release builds do not touch freed bytes");
    }
}

#[test]
fn a_fail_budget_spent_inside_a_scope_is_spendable_again_after_it() {
    let mut arena = Arena::with_capacity(4096);
    arena.set_budget(Some(Budget::fail(256).into()));
    bytes(&arena, 56);
    for _ in 0..3 {
        let scope = arena.scope();
        bytes(&scope, 200);
        assert!(
            scope
                .try_alloc_layout(Layout::from_size_align(1, 1).unwrap())
                .is_err()
        );
    }
    assert_eq!(arena.used(), 56);
    bytes(&arena, 200); // exactly the budget again
    assert!(
        arena
            .try_alloc_layout(Layout::from_size_align(1, 1).unwrap())
            .is_err()
    );
}

struct Counted(Arc<AtomicU32>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn count(c: &AtomicU32) -> u32 {
    c.load(Ordering::Relaxed)
}

#[test]
fn values_to_drop_before_and_inside_scopes_are_dropped_once_each_at_the_right_end() {
    let [before, inner, outer] = [(); 3].map(|()| Arc::new(AtomicU32::new(0)));
    let mut arena = Arena::with_capacity(4096);
    arena.alloc(Counted(before.clone()));
    {
        let mut scope = arena.scope();
        {
            let nested = scope.scope();
            nested.alloc(Counted(inner.clone()));
            nested.alloc(Counted(inner.clone()));
        }
        assert_eq!(count(&inner), 2);
        // The nested scope ran its drops; the outer one has nothing left of its own.
    }
    assert_eq!((count(&before), count(&inner)), (0, 2));
    {
        let scope = arena.scope();
        scope.alloc([0u8; 16]);
        scope.alloc(Counted(outer.clone()));
    }
    assert_eq!((count(&before), count(&outer)), (0, 1));
    arena.reset();
    assert_eq!((count(&before), count(&inner), count(&outer)), (1, 2, 1));
}

#[test]
fn a_scope_that_moved_on_to_new_pages_comes_back_to_its_own() {
    let mut arena = Arena::chained(256);
    bytes(&arena, 40);
    let first_capacity = arena.capacity();
    for round in 0..3 {
        {
            let scope = arena.scope();
            for _ in 0..6 {
                scope.alloc([round as u8; 120]);
            }
            assert!(scope.page_count() > 1);
        }
        assert_eq!((arena.used(), arena.allocation_count()), (40, 1));
        let before_probe = arena.mark();
        let next = bytes(&arena, 1);
        assert_eq!(arena.offset_of(next), Some(40));
        arena.rewind(before_probe).unwrap();
    }
    assert!(arena.capacity() >= first_capacity);
}

#[test]
fn a_guarded_scope_still_checks_the_guards_of_what_it_frees() {
    if !poison::ENABLED {
        return; // guard bytes are a debug-build and `debug-checks` feature
    }
    let mut arena = Arena::with_capacity(4096).with_guards();
    bytes(&arena, 8);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let scope = arena.scope();
        let p = bytes(&scope, 12);
        // SAFETY: the write lands in the allocation's back guard, memory of the same page: an
        // overrun by one byte without undefined behaviour.
        unsafe { p.add(12).write(0xAB) };
    }));
    let text = *r
        .expect_err("the scope's end reports the damaged guard")
        .downcast::<String>()
        .unwrap();
    assert!(text.contains("guard bytes after"), "{text}");
    assert_eq!(
        arena.allocation_count(),
        1,
        "the rewind completed before reporting"
    );
    assert_eq!(arena.check_guards(), Ok(()));
}

/// Zero-sized, with a destructor.
struct Token(Arc<AtomicU32>);
impl Drop for Token {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn zero_sized_values_with_a_destructor_are_dropped_at_the_scope_end() {
    let dropped = Arc::new(AtomicU32::new(0));
    let mut arena = Arena::with_capacity(256);
    let used = arena.used();
    {
        let scope = arena.scope();
        for _ in 0..3 {
            scope.alloc(Token(dropped.clone()));
        }
        assert_eq!(count(&dropped), 0);
    }
    assert_eq!(count(&dropped), 3);
    assert_eq!((arena.pending_drops(), arena.allocation_count()), (0, 0));
    assert_eq!(arena.used(), used, "the drop records are freed too");
}

/// SoA rows that need dropping: the columns and a drop record, taken in one bump.
use super::review_findings::Labelled;

#[test]
fn a_soa_with_a_drop_record_refused_inside_a_scope_leaves_the_scope_end_nothing_to_do() {
    let probe = Arena::with_capacity(4096);
    probe.alloc_soa(8, |i| Labelled {
        id: i as u32,
        label: String::new(),
    });
    let mut arena = Arena::with_capacity(4096);
    bytes(&arena, 16);
    // One byte short of the columns and drop record once the scope's first value is in: the
    // request is refused, allocating nothing.
    arena.set_budget(Some(Budget::fail(16 + 8 + probe.used() - 1).into()));
    {
        let scope = arena.scope();
        scope.alloc(1u64);
        let before = (
            scope.used(),
            scope.allocation_count(),
            scope.pending_drops(),
        );
        let refused = scope.try_alloc_soa(8, |i| Labelled {
            id: i as u32,
            label: format!("{i}"),
        });
        assert!(refused.is_err());
        assert_eq!(
            (
                scope.used(),
                scope.allocation_count(),
                scope.pending_drops()
            ),
            before
        );
    }
    assert_eq!(
        (
            arena.used(),
            arena.allocation_count(),
            arena.pending_drops()
        ),
        (16, 1, 0)
    );
    // One byte more and both parts fit at the same place: the refusal was the record's.
    arena.set_budget(Some(Budget::fail(16 + 8 + probe.used()).into()));
    let scope = arena.scope();
    scope.alloc(1u64);
    let rows = scope.alloc_soa(8, |i| Labelled {
        id: i as u32,
        label: format!("{i}"),
    });
    assert_eq!(rows.len(), 8);
    assert_eq!(scope.used(), 16 + 8 + probe.used());
}
