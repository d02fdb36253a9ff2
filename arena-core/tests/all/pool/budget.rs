//! Budgets enforced inside `Pool` and `SoaPool` themselves: one Fail-policy test per allocating
//! method (typed error carrying the `BudgetExceeded`, the value handed back, usage unchanged, the
//! panicking form panics with the budget text), plus the Warn and Panic policies and a budget set
//! below the current usage.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;

use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::pool::Pool;
use arena_kit_core::soa::SoaPool;
use arena_kit_core::tags::{Budget, BudgetGate, Budgeted, MemoryUsage, Owner};
use soa_rows::{Enemy, enemy};

/// The panic message of `f`, which must panic.
fn panic_text(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

/// The allocating methods of a pool, each refused by a Fail budget that holds `FIT` values:
/// `try_insert`, `insert`, `insert_with`, `try_insert_with` (on a fixed pool), and `try_insert`,
/// `insert` on a pool that must first take a free slot or grow a chunk (the growable
/// constructor, and reuse of a freed slot). `$make` builds a pool under a budget; `$value`
/// makes the n-th value.
macro_rules! pool_fail_policy_tests {
    ($make:expr, $value:expr, $size:expr) => {
        const FIT: usize = 3;

        fn budget() -> Budget {
            Budget::fail(FIT * $size)
        }

        fn full_budget() -> _Pool {
            let mut pool = ($make)(budget());
            for i in 0..FIT {
                pool.insert(($value)(i));
            }
            pool
        }

        #[test]
        fn try_insert() {
            let mut pool = full_budget();
            let before = pool.usage();
            let refused = pool.try_insert(($value)(99)).unwrap_err();
            let e = *refused.budget_exceeded().expect("refused by the budget");
            assert_eq!(
                (e.budget, e.current, e.requested),
                (FIT * $size, FIT * $size, $size)
            );
            assert!(
                refused.to_string().contains("memory budget exceeded"),
                "{refused}"
            );
            let _value_back = refused.into_inner();
            assert_eq!(pool.usage(), before);
        }

        #[test]
        fn insert() {
            let mut pool = full_budget();
            let before = pool.usage();
            let text = panic_text(|| {
                pool.insert(($value)(99));
            });
            assert!(text.contains("memory budget exceeded"), "{text}");
            assert_eq!(pool.usage(), before);
        }

        #[test]
        fn insert_with() {
            let mut pool = full_budget();
            let before = pool.usage();
            let text = panic_text(|| {
                pool.insert_with(|_| ($value)(99));
            });
            assert!(text.contains("memory budget exceeded"), "{text}");
            assert_eq!(pool.usage(), before);
        }

        #[test]
        fn try_insert_with() {
            let mut pool = full_budget();
            let before = pool.usage();
            let mut called = false;
            assert!(
                pool.try_insert_with(|_| {
                    called = true;
                    ($value)(99)
                })
                .is_none()
            );
            assert!(!called, "the value is not made when the budget refuses it");
            assert_eq!(pool.usage(), before);
        }

        #[test]
        fn insert_into_a_freed_slot_under_a_lowered_budget() {
            let mut pool = ($make)(Budget::fail(usize::MAX));
            let hs: Vec<_> = (0..FIT + 1).map(|i| pool.insert(($value)(i))).collect();
            pool.remove(hs[0]);
            // FIT values live, a free slot ready on the inlined path; the budget now allows FIT.
            pool.set_budget(Some(budget().into()));
            let before = pool.usage();
            assert!(
                pool.try_insert(($value)(99))
                    .unwrap_err()
                    .budget_exceeded()
                    .is_some()
            );
            let text = panic_text(|| {
                pool.insert(($value)(99));
            });
            assert!(text.contains("memory budget exceeded"), "{text}");
            assert_eq!(pool.usage(), before);
            pool.remove(hs[1]);
            pool.insert(($value)(7)); // back within the budget: reuse works
            assert_eq!(pool.len(), FIT);
        }

        #[test]
        fn warn_lifts_and_rearms_after_removes() {
            let mut pool = ($make)(Budget::warn(FIT * $size));
            let hs: Vec<_> = (0..FIT + 1).map(|i| pool.insert(($value)(i))).collect();
            assert_eq!(pool.len(), FIT + 1, "Warn lets the value in");
            assert_eq!(
                Budgeted::budget(&pool).unwrap().limit(),
                usize::MAX,
                "and lifts the clamp"
            );
            pool.remove(hs[0]);
            pool.remove(hs[1]);
            assert_eq!(
                Budgeted::budget(&pool).unwrap().limit(),
                FIT * $size,
                "armed again"
            );
            pool.insert(($value)(8));
            assert_eq!(
                Budgeted::budget(&pool).unwrap().limit(),
                FIT * $size,
                "still under"
            );
            pool.insert(($value)(9));
            assert_eq!(
                Budgeted::budget(&pool).unwrap().limit(),
                usize::MAX,
                "crossed again"
            );
        }

        #[test]
        fn panic_policy_panics_in_the_try_form_too() {
            let mut pool = ($make)(Budget::panic(FIT * $size));
            for i in 0..FIT {
                pool.insert(($value)(i));
            }
            let before = pool.usage();
            let text = panic_text(|| {
                let _ = pool.try_insert(($value)(99));
            });
            assert!(text.contains("memory budget exceeded"), "{text}");
            assert_eq!(pool.usage(), before);
        }

        #[test]
        fn the_error_names_the_owner() {
            let mut pool = ($make)(Budget::fail(usize::MAX));
            let gate = BudgetGate::new(budget(), Owner::new("bullets", "Gameplay"));
            Budgeted::set_budget(&mut pool, Some(gate));
            for i in 0..FIT {
                pool.insert(($value)(i));
            }
            let text = pool.try_insert(($value)(9)).unwrap_err().to_string();
            assert!(text.contains("`bullets` (tag Gameplay)"), "{text}");
        }
    };
}

mod pool_fixed {
    use super::*;
    type _Pool = Pool<[u64; 4]>;
    pool_fail_policy_tests!(
        |b: Budget| {
            let mut p = Pool::with_capacity(16);
            p.set_budget(Some(b.into()));
            p
        },
        |i: usize| [i as u64; 4],
        32
    );
}

mod pool_growable {
    use super::*;
    type _Pool = Pool<[u64; 4]>;
    // One-slot chunks: every insert past the first grows the pool, so the budget is checked on
    // the growth path.
    pool_fail_policy_tests!(
        |b: Budget| {
            let mut p = Pool::growable(1);
            p.set_budget(Some(b.into()));
            p
        },
        |i: usize| [i as u64; 4],
        32
    );

    #[test]
    fn a_refused_insert_grows_nothing() {
        let mut p: Pool<u64> = Pool::growable(1);
        p.set_budget(Some(Budget::fail(8).into()));
        p.insert(1);
        assert!(p.try_insert(2).is_err());
        assert_eq!(p.stats().blocks, 1);
    }
}

mod soa_pool_fixed {
    use super::*;
    type _Pool = SoaPool<Enemy>;
    pool_fail_policy_tests!(
        |b: Budget| {
            let mut p = SoaPool::with_capacity(16);
            p.set_budget(Some(b.into()));
            p
        },
        |i: usize| enemy(i as i32),
        size_of::<Enemy>()
    );
}

mod soa_pool_growable {
    use super::*;
    type _Pool = SoaPool<Enemy>;
    pool_fail_policy_tests!(
        |b: Budget| {
            let mut p = SoaPool::growable(1);
            p.set_budget(Some(b.into()));
            p
        },
        |i: usize| enemy(i as i32),
        size_of::<Enemy>()
    );
}

#[test]
fn without_a_budget_nothing_changes() {
    let mut p: Pool<u64> = Pool::with_capacity(2);
    assert!(p.budget().is_none());
    p.insert(1);
    p.insert(2);
    let full = p.try_insert(3).unwrap_err();
    assert!(full.budget_exceeded().is_none());
    assert!(full.to_string().contains("pool is full"), "{full}");
}

/// The same list through `Tracked`: the pools' own methods, reached through `Deref`, with the
/// budget set on the wrapper.
mod tracked_pool {
    use super::*;
    use arena_kit_core::tags::Tracked;
    type _Pool = Tracked<Pool<[u64; 4]>, &'static str>;
    pool_fail_policy_tests!(
        |b: Budget| Tracked::new(Pool::growable(1), "bullets", "Gameplay").with_budget(b),
        |i: usize| [i as u64; 4],
        32
    );
}

mod tracked_soa_pool {
    use super::*;
    use arena_kit_core::tags::Tracked;
    type _Pool = Tracked<SoaPool<Enemy>, &'static str>;
    pool_fail_policy_tests!(
        |b: Budget| Tracked::new(SoaPool::with_capacity(16), "bullets", "Gameplay").with_budget(b),
        |i: usize| enemy(i as i32),
        size_of::<Enemy>()
    );
}

/// A growable `SoaPool` whose insert both crosses a `Warn` budget and must grow its columns warns
/// once: the slot is claimed once, then the columns grow, then the value goes in. (A version
/// that claimed a slot only to check it, dropped the claim and claimed again warned twice: the
/// dropped claim left usage at the budget, which re-armed it.)
#[cfg(feature = "log")]
#[test]
fn a_soa_pool_growing_its_columns_past_a_warn_budget_warns_once() {
    let budget_warnings = |logs: &[(log::Level, String, String)]| {
        logs.iter()
            .filter(|(_, target, _)| target == "arena_kit::budget")
            .count()
    };
    // Whatever the columns' growth steps are, some budget of `fit` values is crossed by the
    // insert that also grows them.
    for fit in 0..12 {
        let mut pool = SoaPool::growable(1);
        pool.set_budget(Some(Budget::warn(fit * size_of::<Enemy>()).into()));
        for i in 0..fit {
            pool.insert(enemy(i as i32));
        }
        let (_, logs) = crate::support::logged(|| pool.insert(enemy(-1)));
        assert_eq!(
            budget_warnings(&logs),
            1,
            "budget of {fit} values: {logs:?}"
        );
        assert_eq!(pool.len(), fit + 1);
    }
}

/// A full pool refuses an insert as full before any budget sees it: the insert cannot happen,
/// so a `Panic` budget does not panic, a `Fail` budget is not named as the reason, and a `Warn`
/// budget is neither crossed nor lifted, in the try form and for both pool kinds.
mod full_before_budget {
    use super::*;

    /// A pool of 2 slots with room in its budget for 1 value, holding 2 (the second let in by
    /// a `Warn` budget, then the budget replaced by `policy`'s).
    fn full_pool(budget: impl Fn(usize) -> Budget) -> Pool<u64> {
        let mut p: Pool<u64> = Pool::with_capacity(2);
        p.set_budget(Some(Budget::warn(usize::MAX).into()));
        p.insert(1);
        p.insert(2);
        p.set_budget(Some(budget(8).into()));
        p
    }

    #[test]
    fn a_panic_budget_does_not_panic_for_an_insert_a_full_pool_refuses() {
        let mut p = full_pool(Budget::panic);
        let refused = p.try_insert(3).unwrap_err();
        assert!(refused.budget_exceeded().is_none(), "{refused}");
        assert_eq!(refused.into_inner(), 3);
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn a_fail_budget_is_not_the_reason_a_full_pool_gives() {
        let mut p = full_pool(Budget::fail);
        let refused = p.try_insert(3).unwrap_err();
        assert!(refused.budget_exceeded().is_none(), "{refused}");
    }

    #[test]
    fn a_warn_budget_is_not_crossed_by_an_insert_a_full_pool_refuses() {
        let mut p = full_pool(Budget::warn);
        let limit = Budgeted::budget(&p).unwrap().limit();
        assert!(p.try_insert(3).is_err());
        assert_eq!(Budgeted::budget(&p).unwrap().limit(), limit);
    }

    #[test]
    fn a_full_soa_pool_refuses_as_full_under_a_panic_budget() {
        let mut p: SoaPool<Enemy> = SoaPool::with_capacity(1);
        p.insert(enemy(1));
        p.set_budget(Some(Budget::panic(1).into()));
        let refused = p.try_insert(enemy(2)).unwrap_err();
        assert!(refused.budget_exceeded().is_none(), "{refused}");
    }
}
