//! Budgets enforced inside `SoaVec` itself: one Fail-policy test per row-adding method (typed
//! error carrying the `BudgetExceeded`, the row handed back, usage unchanged, the panicking form
//! panics with the budget text), the Warn and Panic policies, and the exactness of the check
//! (rows already reserved are not a way around it).
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;

use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::soa::SoaVec;
use arena_kit_core::tags::{Budget, Budgeted, MemoryUsage};
use soa_rows::{Enemy, enemy};

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

const ROW: usize = size_of::<Enemy>();
const FIT: usize = 3;

/// The row-adding methods of a `SoaVec`: `try_push`, `push`, `try_insert`, `insert`, `extend`
/// (`reserve`/`try_reserve` are not counted: the budget counts rows). `$make` builds a vector
/// under a budget.
macro_rules! soa_vec_fail_policy_tests {
    ($make:expr) => {
        fn full_budget() -> V {
            let mut v = ($make)(Budget::fail(FIT * ROW));
            for i in 0..FIT {
                v.push(enemy(i as i32));
            }
            v
        }

        #[test]
        fn try_push() {
            let mut v = full_budget();
            let before = v.usage();
            let refused = v.try_push(enemy(99)).unwrap_err();
            let e = *refused.budget_exceeded().expect("refused by the budget");
            assert_eq!(
                (e.budget, e.current, e.requested),
                (FIT * ROW, FIT * ROW, ROW)
            );
            assert!(refused.alloc_error().is_none());
            assert!(
                refused.to_string().contains("memory budget exceeded"),
                "{refused}"
            );
            assert_eq!(refused.into_inner().id, 99);
            assert_eq!(v.usage(), before);
        }

        #[test]
        fn push() {
            let mut v = full_budget();
            let before = v.usage();
            let text = panic_text(|| v.push(enemy(99)));
            assert!(text.contains("memory budget exceeded"), "{text}");
            assert_eq!(v.usage(), before);
        }

        #[test]
        fn try_insert() {
            let mut v = full_budget();
            let before = v.usage();
            let refused = v.try_insert(0, enemy(99)).unwrap_err();
            assert!(refused.budget_exceeded().is_some());
            assert_eq!(refused.into_inner().id, 99);
            assert_eq!(v.usage(), before);
            assert_eq!(*v.get(0).unwrap().id, 0, "no row moved");
        }

        #[test]
        fn insert() {
            let mut v = full_budget();
            let before = v.usage();
            let text = panic_text(|| v.insert(1, enemy(99)));
            assert!(text.contains("memory budget exceeded"), "{text}");
            assert_eq!(v.usage(), before);
        }

        #[test]
        fn extend() {
            let mut v = ($make)(Budget::fail(FIT * ROW));
            v.push(enemy(0));
            let text = panic_text(|| v.extend((1..10).map(enemy)));
            assert!(text.contains("memory budget exceeded"), "{text}");
            // The rows that fit were pushed, the first one over was refused.
            assert_eq!(v.len(), FIT);
            assert_eq!(v.usage().current, FIT * ROW);
        }

        #[test]
        fn append_resize_with_and_extend_from_slice() {
            let src: SoaVec<Enemy> = (1..10).map(enemy).collect();
            for op in ["append", "resize_with", "extend_from_slice"] {
                let mut v = ($make)(Budget::fail(FIT * ROW));
                v.push(enemy(0));
                let mut other = src.clone();
                let text = panic_text(|| match op {
                    "append" => v.append(&mut other),
                    "resize_with" => v.resize_with(10, || enemy(5)),
                    _ => v.extend_from_slice(src.as_soa_slice()),
                });
                assert!(text.contains("memory budget exceeded"), "{op}: {text}");
                // The rows that fit were added, the first one over was refused.
                assert_eq!(v.len(), FIT, "{op}");
                assert_eq!(v.usage().current, FIT * ROW, "{op}");
                if op == "append" {
                    assert!(other.is_empty(), "the rows past the budget were dropped");
                }
            }
        }

        #[test]
        fn warn_lifts_and_rearms_after_pops() {
            let mut v = ($make)(Budget::warn(FIT * ROW));
            for i in 0..=FIT {
                v.push(enemy(i as i32));
            }
            assert_eq!(v.len(), FIT + 1);
            assert_eq!(Budgeted::budget(&v).unwrap().limit(), usize::MAX);
            v.pop();
            v.pop();
            assert_eq!(
                Budgeted::budget(&v).unwrap().limit(),
                FIT * ROW,
                "armed again"
            );
            v.push(enemy(8));
            v.push(enemy(9));
            assert_eq!(
                Budgeted::budget(&v).unwrap().limit(),
                usize::MAX,
                "crossed again"
            );
        }

        #[test]
        fn panic_policy_panics_in_the_try_form_too() {
            let mut v = ($make)(Budget::panic(FIT * ROW));
            for i in 0..FIT {
                v.push(enemy(i as i32));
            }
            let text = panic_text(|| {
                let _ = v.try_push(enemy(99));
            });
            assert!(text.contains("memory budget exceeded"), "{text}");
            assert_eq!(v.len(), FIT);
        }

        #[test]
        fn a_budget_below_usage_refuses_the_next_row() {
            let mut v = ($make)(Budget::fail(usize::MAX));
            for i in 0..FIT + 2 {
                v.push(enemy(i as i32));
            }
            v.set_budget(Some(Budget::fail(FIT * ROW).into()));
            assert!(v.try_push(enemy(99)).is_err());
            v.truncate(FIT - 1);
            v.push(enemy(5));
            assert!(v.try_push(enemy(6)).is_err());
        }
    };
}

mod unreserved {
    use super::*;
    type V = SoaVec<Enemy>;
    soa_vec_fail_policy_tests!(|b: Budget| {
        let mut v = SoaVec::new();
        v.set_budget(Some(b.into()));
        v
    });
}

mod reserved {
    use super::*;
    type V = SoaVec<Enemy>;
    // Room for far more rows than the budget allows: the check must not depend on growth.
    soa_vec_fail_policy_tests!(|b: Budget| {
        let mut v = SoaVec::with_capacity(64);
        v.set_budget(Some(b.into()));
        v
    });

    #[test]
    fn reserving_is_not_counted() {
        let mut v: SoaVec<Enemy> = SoaVec::new();
        v.set_budget(Some(Budget::fail(ROW).into()));
        v.reserve(100);
        assert!(v.capacity() >= 100);
        v.push(enemy(1));
        assert!(v.try_push(enemy(2)).is_err());
    }
}

/// The same list through `Tracked`: the vector's own methods, reached through `Deref`, with the
/// budget set on the wrapper.
mod tracked {
    use super::*;
    use arena_kit_core::tags::Tracked;
    type V = Tracked<SoaVec<Enemy>, &'static str>;
    soa_vec_fail_policy_tests!(|b: Budget| {
        Tracked::new(SoaVec::new(), "enemies", "Gameplay").with_budget(b)
    });
}
