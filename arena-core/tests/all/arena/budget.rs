//! Budgets inside the arena family: every allocating method of `Arena` and `Frame` meets a `Fail`
//! budget with the typed error and usage unchanged, and the panicking form panics with its text;
//! `Warn` warns once, lifts the clamp and re-arms on reset or rewind; a `FrameArena` budget holds
//! per buffer; `restore_budget` works through `&self`.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;

use core::alloc::Layout;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::arena::{Arena, ArenaError, FrameArena};
use arena_kit_core::tags::{Budget, BudgetGate, Budgeted, MemoryUsage, Owner, Usage};
use arena_kit_derive::Soa;
use soa_rows::Particle;

/// The budget every fail-policy test sets.
const BUDGET: usize = 512;
/// Bytes allocated before the request: 64 bytes of headroom remain.
const FILL: usize = 448;

/// SoA rows that need dropping: the arena carves the columns and a drop record (one bump).
#[derive(Debug, Default, Soa)]
#[soa(crate = arena_kit_core)]
pub struct Named {
    id: u32,
    name: String,
}

/// Fills `used()` to exactly `FILL` bytes in 16-byte pieces (which fit pages of any size the
/// tests use, so no page tail is skipped).
fn fill(arena: &Arena) {
    for _ in 0..FILL / 16 {
        arena.alloc([0u8; 16]);
    }
    assert_eq!(arena.used(), FILL);
}

/// `e` is the budget refusal, carrying the `BudgetExceeded`.
#[track_caller]
fn assert_over_budget(e: ArenaError) {
    match e {
        ArenaError::OverBudget(exceeded) => {
            assert_eq!(exceeded.budget, BUDGET);
            assert!(exceeded.current >= FILL, "{exceeded:?}");
            assert!(
                exceeded.current + exceeded.requested > BUDGET,
                "{exceeded:?}"
            );
            assert!(e.to_string().contains("memory budget exceeded"), "{e}");
        }
        other => panic!("expected ArenaError::OverBudget, got {other:?}"),
    }
}

/// Runs the panicking form `f`: it must panic with the budget text and leave usage at `before`.
#[track_caller]
fn assert_panics_over_budget(before: Usage, usage: impl Fn() -> Usage, f: impl FnOnce()) {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the panicking form panics");
    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(text.contains("memory budget exceeded"), "{text}");
    assert_eq!(usage(), before);
}

// One `Fail`-policy test per allocating method of the arena family. `$make` turns a `Budget`
// into something that allocates like an `Arena` (an `Arena`, or a `Frame` through `Deref`).
//
// The 18 allocating methods of `Arena` (each `try_` form and its panicking form):
//   try_alloc_layout / alloc_layout                (uninitialised memory)
//   try_alloc / alloc                              (also a type needing drop, a drop run)
//   try_alloc_with / alloc_with                    (also a type needing drop)
//   try_alloc_no_drop / alloc_no_drop
//   try_alloc_slice_copy / alloc_slice_copy
//   try_alloc_str / alloc_str
//   try_alloc_slice_fill_with / alloc_slice_fill_with   (also a type needing drop)
//   try_alloc_soa / alloc_soa                      (soa/arena.rs; also rows needing drop:
//                                                   columns and drop record, one bump)
//   try_alloc_soa_from_iter / alloc_soa_from_iter  (soa/arena.rs)
// and `Allocator for &Arena` (allocator_api2): allocate, grow (in place and moving). The arena
// has no other iterator or uninit allocation methods: `alloc_slice_fill_with` and
// `alloc_soa_from_iter` are the iterator-fed forms, `alloc_layout` the uninitialised one.
macro_rules! arena_fail_policy_tests {
    ($make:expr) => {
        arena_fail_policy_tests!(@owner (), |_: &mut (), budget: Budget| ($make)(budget));
    };
    // `$make(&mut owner, budget)`, for allocators that borrow an owner (a `Frame` its
    // `FrameArena`): `$owner` builds the owner, which lives for the test.
    (@owner $owner:expr, $make:expr) => {
        use super::*;

        /// A fresh allocator with `budget`, built from `$owner` (which must outlive it).
        macro_rules! make {
            ($o:ident, $budget:expr) => {
                ($make)(&mut $o, $budget)
            };
        }

        /// A fresh allocator with a `Fail` budget, filled to `FILL`.
        macro_rules! filled {
            ($o:ident) => {{
                let a = make!($o, Budget::fail(BUDGET));
                fill(&a);
                a
            }};
        }

        /// A `try_` call and its panicking form.
        macro_rules! case {
            ($try_name:ident, $name:ident, |$a:ident| $try_call:expr, $call:expr) => {
                #[test]
                fn $try_name() {
                    let mut owner = $owner;
                    let $a = filled!(owner);
                    let before = $a.usage();
                    let e = $try_call.map(|_| ()).unwrap_err();
                    assert_over_budget(e);
                    assert_eq!($a.usage(), before);
                }

                #[test]
                fn $name() {
                    let mut owner = $owner;
                    let $a = filled!(owner);
                    let before = $a.usage();
                    assert_panics_over_budget(
                        before,
                        || $a.usage(),
                        || {
                            let _ = $call;
                        },
                    );
                }
            };
        }

        case!(
            try_alloc_layout,
            alloc_layout,
            |a| a.try_alloc_layout(Layout::from_size_align(128, 8).unwrap()),
            a.alloc_layout(Layout::from_size_align(128, 8).unwrap())
        );
        case!(
            try_alloc,
            alloc,
            |a| a.try_alloc([7u8; 128]),
            a.alloc([7u8; 128])
        );
        case!(
            try_alloc_needing_drop,
            alloc_needing_drop,
            |a| a.try_alloc(vec![String::from("x"); 1]),
            a.alloc(vec![String::from("x"); 1])
        );
        case!(
            try_alloc_with,
            alloc_with,
            |a| a.try_alloc_with(|| [7u8; 128]),
            a.alloc_with(|| [7u8; 128])
        );
        case!(
            try_alloc_with_needing_drop,
            alloc_with_needing_drop,
            |a| a.try_alloc_with(|| [String::new(), String::new(), String::new()]),
            a.alloc_with(|| [String::new(), String::new(), String::new()])
        );
        case!(
            try_alloc_no_drop,
            alloc_no_drop,
            |a| a.try_alloc_no_drop([7u8; 128]),
            a.alloc_no_drop([7u8; 128])
        );
        case!(
            try_alloc_slice_copy,
            alloc_slice_copy,
            |a| a.try_alloc_slice_copy(&[7u8; 128]),
            a.alloc_slice_copy(&[7u8; 128])
        );
        case!(
            try_alloc_str,
            alloc_str,
            |a| a.try_alloc_str(&"x".repeat(128)),
            a.alloc_str(&"x".repeat(128))
        );
        case!(
            try_alloc_slice_fill_with,
            alloc_slice_fill_with,
            |a| a.try_alloc_slice_fill_with(16, |i| i as u64),
            a.alloc_slice_fill_with(16, |i| i as u64)
        );
        case!(
            try_alloc_slice_fill_with_needing_drop,
            alloc_slice_fill_with_needing_drop,
            |a| a.try_alloc_slice_fill_with(4, |i| i.to_string()),
            a.alloc_slice_fill_with(4, |i| i.to_string())
        );
        case!(
            try_alloc_soa,
            alloc_soa,
            |a| a.try_alloc_soa(8, |_| Particle::default()),
            a.alloc_soa(8, |_| Particle::default())
        );
        case!(
            try_alloc_soa_needing_drop,
            alloc_soa_needing_drop,
            |a| a.try_alloc_soa(8, |_| Named::default()),
            a.alloc_soa(8, |_| Named::default())
        );
        case!(
            try_alloc_soa_from_iter,
            alloc_soa_from_iter,
            |a| a.try_alloc_soa_from_iter((0..8).map(|_| Particle::default())),
            a.alloc_soa_from_iter((0..8).map(|_| Particle::default()))
        );

        #[test]
        fn alloc_joining_a_drop_run() {
            let mut owner = $owner;
            let a = make!(owner, Budget::fail(BUDGET));
            // Strings back to back share one drop record; the one that would cross the budget
            // is refused although its run is open.
            while a.try_alloc(String::new()).is_ok() {}
            // Under Miri a function has several addresses, picked at random, so a `String` may
            // have needed a record where the run would have taken it: fill on until not even
            // the run's next `String` fits (or 256 tries in a row found another address).
            let mut tries = 0;
            while cfg!(miri) && tries < 256 && BUDGET - a.usage().current >= size_of::<String>() {
                let _ = a.try_alloc(String::new());
                tries += 1;
            }
            let before = a.usage();
            assert!(before.current <= BUDGET);
            let e = a.try_alloc(String::new()).unwrap_err();
            assert!(matches!(e, ArenaError::OverBudget(_)), "{e:?}");
            assert_eq!(a.usage(), before);
            assert_panics_over_budget(
                before,
                || a.usage(),
                || {
                    a.alloc(String::new());
                },
            );
        }

        #[test]
        fn soa_rows_needing_drop_refused_at_their_second_part() {
            // Some budgets admit the columns but not the drop record after them: the columns
            // are given back.
            let mut probe_owner = $owner;
            let probe = make!(probe_owner, Budget::fail(usize::MAX / 4));
            fill(&probe);
            probe.alloc_soa(8, |_| Named::default());
            let growth = probe.used() - FILL;
            // Every budget short of the columns and record; Miri takes every eighth and the last.
            let budgets = (1..growth).filter(|e| !cfg!(miri) || e % 8 == 1 || *e == growth - 1);
            for extra in budgets {
                let mut owner = $owner;
                let a = make!(owner, Budget::fail(FILL + extra));
                fill(&a);
                let before = a.usage();
                let e = a
                    .try_alloc_soa(8, |_| Named::default())
                    .map(|_| ())
                    .unwrap_err();
                assert!(matches!(e, ArenaError::OverBudget(_)), "{e:?}");
                // (a page taken for the columns may stay, kept and empty: `reserved` may grow)
                let after = a.usage();
                assert_eq!(
                    (after.current, after.peak, after.allocations),
                    (before.current, before.peak, before.allocations)
                );
                assert_eq!(a.pending_drops(), 0);
            }
        }

        #[test]
        fn allocator_allocate_and_grow() {
            use allocator_api2::alloc::Allocator;
            let mut owner = $owner;
            let a = filled!(owner);
            let arena: &Arena = &a;
            let before = a.usage();
            assert!(
                arena
                    .allocate(Layout::from_size_align(128, 8).unwrap())
                    .is_err()
            );
            assert_eq!(a.usage(), before);
            // Growing the newest block in place past the budget is refused too.
            let small = Layout::from_size_align(32, 8).unwrap();
            let block = arena.allocate(small).unwrap().cast::<u8>();
            let grown = a.usage();
            let big = Layout::from_size_align(256, 8).unwrap();
            // SAFETY: `block` came from this allocator with layout `small`.
            assert!(unsafe { arena.grow(block, small, big) }.is_err());
            assert_eq!(a.usage(), grown);
            // ... and so is an allocator_api2 Vec's reserve.
            let mut v: allocator_api2::vec::Vec<u8, &Arena> =
                allocator_api2::vec::Vec::new_in(arena);
            assert!(v.try_reserve(1024).is_err());
            assert_eq!(a.usage(), grown);
        }
    };
}

mod chained_arena {
    arena_fail_policy_tests!(|budget: Budget| {
        let mut a = Arena::chained(4096);
        a.set_budget(Some(budget.into()));
        a
    });
}

/// Small pages: the budget is crossed on the way to a new page, not inside the current one.
mod chained_arena_small_pages {
    arena_fail_policy_tests!(|budget: Budget| {
        let mut a = Arena::chained(112);
        a.set_budget(Some(budget.into()));
        a
    });
}

mod fixed_arena {
    arena_fail_policy_tests!(|budget: Budget| {
        let mut a = Arena::with_capacity(8192);
        a.set_budget(Some(budget.into()));
        a
    });
}

mod frame {
    use arena_kit_core::arena::Frame;

    fn frame_with(frames: &mut FrameArena<2>, budget: Budget) -> Frame<'_> {
        let mut frame = frames.begin_frame();
        frame.set_budget(Some(budget.into()));
        frame
    }

    arena_fail_policy_tests!(@owner FrameArena::<2>::chained(4096), frame_with);
}

#[test]
fn warn_warns_once_lifts_the_clamp_and_rearms_on_reset() {
    let mut a = Arena::chained(4096);
    a.set_budget(Some(Budget::warn(100).into()));
    a.alloc([0u8; 90]);
    a.alloc([0u8; 20]); // over: warns, lifts
    assert_eq!(a.budget().unwrap().limit(), usize::MAX);
    a.alloc([0u8; 500]); // still over: no new warning, no refusal
    assert_eq!(a.used(), 610);
    a.reset();
    assert_eq!(a.budget().unwrap().limit(), 100, "re-armed");
    let m = a.mark();
    a.alloc([0u8; 150]);
    assert_eq!(a.budget().unwrap().limit(), usize::MAX);
    a.rewind(m).unwrap();
    assert_eq!(a.budget().unwrap().limit(), 100, "re-armed by a rewind");
}

#[test]
fn a_scope_ending_rearms_a_warn_budget() {
    let mut a = Arena::chained(4096);
    a.set_budget(Some(Budget::warn(64).into()));
    {
        let s = a.scope();
        s.alloc([0u8; 100]);
        assert_eq!(s.budget().unwrap().limit(), usize::MAX);
    }
    assert_eq!(a.budget().unwrap().limit(), 64);
}

#[test]
fn a_budget_counts_padding() {
    let mut a = Arena::with_capacity(1024);
    a.set_budget(Some(Budget::fail(64).into()));
    a.alloc(1u8);
    // 7 bytes of padding + 56 = 64 bytes: exactly the budget.
    a.alloc([0u64; 7]);
    assert_eq!(a.used(), 64);
    assert!(matches!(a.try_alloc(0u8), Err(ArenaError::OverBudget(_))));
}

#[test]
fn reset_brings_the_whole_budget_back_and_removing_it_lifts_the_clamp() {
    let mut a = Arena::chained(4096);
    a.set_budget(Some(Budget::fail(256).into()));
    a.alloc([0u8; 256]);
    assert!(a.try_alloc(0u8).is_err());
    a.reset();
    a.alloc([0u8; 256]);
    a.set_budget(None);
    a.alloc([0u8; 1024]);
    assert_eq!(a.used(), 1280);
}

#[test]
fn a_budget_below_usage_frees_nothing_and_refuses_growth() {
    let mut a = Arena::chained(4096);
    a.alloc([0u8; 300]);
    a.set_budget(Some(Budget::fail(100).into()));
    assert_eq!(a.used(), 300);
    assert!(matches!(a.try_alloc(0u8), Err(ArenaError::OverBudget(_))));
    assert_eq!(a.used(), 300);
}

#[test]
fn panic_policy_panics_with_the_budget_text() {
    let mut a = Arena::chained(4096);
    a.set_budget(Some(Budget::panic(32).into()));
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _ = a.try_alloc([0u8; 64]);
    }));
    let payload = r.unwrap_err();
    let text = payload.downcast_ref::<String>().unwrap();
    assert!(text.contains("memory budget exceeded"), "{text}");
    assert_eq!(a.used(), 0);
}

#[test]
fn the_error_names_its_owner() {
    let mut a = Arena::chained(4096);
    a.set_budget(Some(BudgetGate::new(
        Budget::fail(8),
        Owner::new("particles", "Rendering"),
    )));
    let ArenaError::OverBudget(e) = a.try_alloc([0u8; 16]).unwrap_err() else {
        panic!("over budget expected")
    };
    assert_eq!(
        (e.allocator, e.tag, e.current, e.requested),
        ("particles", "Rendering", 0, 16)
    );
}

#[test]
fn restore_budget_works_through_a_shared_reference() {
    let a = Arena::chained(4096);
    let gate = BudgetGate::from(Budget::fail(32));
    a.restore_budget(&gate);
    assert_eq!(a.budget(), Some(gate));
    assert!(a.try_alloc([0u8; 40]).is_err());
    // Re-applying the same budget keeps it.
    a.restore_budget(&gate);
    assert_eq!(a.budget(), Some(gate));
}

#[test]
fn a_frame_arena_budget_applies_per_buffer() {
    let mut frames = FrameArena::<2>::chained(4096);
    frames.set_budget(Some(Budget::fail(100).into()));
    for _ in 0..4 {
        let frame = frames.begin_frame();
        frame.alloc([0u8; 100]);
        assert!(matches!(
            frame.try_alloc(0u8),
            Err(ArenaError::OverBudget(_))
        ));
    }
    // Both buffers are full to their budget: the sum is twice the budget.
    assert_eq!(frames.usage().current, 200);
    assert_eq!(frames.budget().map(|g| g.budget()), Some(Budget::fail(100)));
    frames.set_budget(None);
    frames.begin_frame().alloc([0u8; 1000]);
}

#[test]
fn a_buffer_arena_holds_its_budget() {
    let mut buffer = [core::mem::MaybeUninit::<u8>::uninit(); 256];
    let mut a = Arena::from_buffer(&mut buffer);
    a.set_budget(Some(Budget::fail(64).into()));
    a.alloc([0u8; 64]);
    assert!(matches!(a.try_alloc(0u8), Err(ArenaError::OverBudget(_))));
    a.reset();
    a.alloc([0u8; 64]);
    assert_eq!(a.budget().map(|g| g.limit()), Some(64));
}

#[test]
fn a_fixed_arena_over_its_capacity_and_under_its_budget_is_still_full() {
    let mut a = Arena::with_capacity(64);
    a.set_budget(Some(Budget::fail(1024).into()));
    assert!(matches!(
        a.try_alloc([0u8; 128]),
        Err(ArenaError::Full { .. })
    ));
}

/// The same list through `Tracked`: every method is the arena's own, reached through `Deref`, and
/// the budget set on the wrapper is the arena's.
mod tracked_arena {
    use arena_kit_core::tags::Tracked;
    arena_fail_policy_tests!(|budget: Budget| {
        Tracked::new(Arena::chained(4096), "level scratch", "Gameplay").with_budget(budget)
    });
}

/// A tracked frame arena's budget holds in each frame it begins (the frame keeps the labels).
mod tracked_frame {
    use arena_kit_core::arena::Frame;
    use arena_kit_core::tags::Tracked;

    fn frame_with<'f>(
        frames: &'f mut Tracked<FrameArena<2>, &'static str>,
        budget: Budget,
    ) -> Tracked<Frame<'f>, &'static str> {
        frames.set_budget(Some(budget));
        frames.begin_frame()
    }

    arena_fail_policy_tests!(
        @owner Tracked::new(FrameArena::<2>::chained(4096), "draw lists", "Rendering"),
        frame_with
    );
}
