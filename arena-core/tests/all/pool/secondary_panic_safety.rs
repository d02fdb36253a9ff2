//! Panic safety of both side tables: every operation that runs user code (`Drop` of a replaced
//! or removed value, `Clone`, `retain`'s closure, an entry's default) is run once per user call,
//! panicking at exactly that call; afterwards the table must be consistent (its length, its
//! iteration and its lookups agree, every value reachable is live) and every value must be
//! dropped exactly once when the table goes.

use crate::panic_harness;

use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::pool::{Handle, Pool, SecondaryPool, SparseSecondaryPool};
use panic_harness::{Tracked, at_every_call, tick};

use crate::support::panics::planned_panic;

const N: usize = if cfg!(miri) { 3 } else { 5 };

/// `N` handles whose slots were reused once: the older and the newer handle of each slot, in
/// slot order.
fn handles() -> (Vec<Handle<()>>, Vec<Handle<()>>) {
    let mut pool = Pool::with_capacity(N);
    let old: Vec<_> = (0..N).map(|_| pool.insert(())).collect();
    for &h in &old {
        pool.remove(h);
    }
    let mut new: Vec<_> = (0..N).map(|_| pool.insert(())).collect();
    new.sort(); // by slot index, as `old` is, so `old[i]` and `new[i]` share a slot
    assert!(old.iter().zip(&new).all(|(o, n)| o.index() == n.index()));
    (old, new)
}

macro_rules! panic_tests {
    ($name:ident, $Table:ident) => {
        mod $name {
            use super::*;

            type Table = $Table<(), Tracked>;

            /// A table holding a value for each older handle, and the handles.
            struct Fixture {
                table: Table,
                old: Vec<Handle<()>>,
                new: Vec<Handle<()>>,
            }

            fn setup() -> Fixture {
                let (old, new) = handles();
                let table = old.iter().map(|&h| (h, Tracked::new())).collect();
                Fixture { table, old, new }
            }

            fn check(f: &Fixture) {
                assert_eq!(f.table.iter().count(), f.table.len());
                for (h, v) in f.table.iter() {
                    v.assert_live();
                    assert!(std::ptr::eq(f.table.get(h).unwrap(), v));
                }
                for (&old, &new) in f.old.iter().zip(&f.new) {
                    assert!(
                        !(f.table.contains(old) && f.table.contains(new)),
                        "two generations of one slot"
                    );
                }
            }

            #[test]
            fn clear() {
                at_every_call(
                    "clear",
                    setup,
                    |f| f.table.clear(),
                    |f| {
                        check(f);
                        assert!(f.table.is_empty());
                    },
                );
            }

            #[test]
            fn insert_with_a_newer_handle_drops_the_older_value() {
                at_every_call(
                    "insert (replacing an older handle's value)",
                    setup,
                    |f| {
                        for &h in &f.new {
                            assert!(f.table.insert(h, Tracked::new()).is_none());
                        }
                    },
                    check,
                );
            }

            #[test]
            fn insert_with_the_same_handle_returns_the_old_value() {
                at_every_call(
                    "insert (same handle)",
                    setup,
                    |f| {
                        for &h in &f.old {
                            drop(f.table.insert(h, Tracked::new()));
                        }
                    },
                    check,
                );
            }

            #[test]
            fn insert_with_an_older_handle_drops_the_refused_value() {
                at_every_call(
                    "insert (refused)",
                    || {
                        let mut f = setup();
                        for &h in &f.new {
                            f.table.insert(h, Tracked::new());
                        }
                        f
                    },
                    |f| {
                        for &h in &f.old {
                            assert!(f.table.insert(h, Tracked::new()).is_none());
                        }
                    },
                    check,
                );
            }

            #[test]
            fn a_vacant_entry_replacing_an_older_value() {
                at_every_call(
                    "entry().or_insert_with (replacing)",
                    setup,
                    |f| {
                        for &h in &f.new {
                            f.table.entry(h).unwrap().or_insert_with(|| {
                                tick();
                                Tracked::new()
                            });
                        }
                    },
                    check,
                );
            }

            #[test]
            fn retain() {
                at_every_call(
                    "retain",
                    setup,
                    |f| {
                        let mut n = 0;
                        f.table.retain(|_, v| {
                            tick();
                            v.assert_live();
                            n += 1;
                            n % 2 == 0
                        });
                    },
                    check,
                );
            }

            #[test]
            fn drain_consumed_in_part() {
                at_every_call(
                    "drain",
                    setup,
                    |f| {
                        let mut d = f.table.drain();
                        drop(d.next());
                    },
                    |f| {
                        check(f);
                    },
                );
            }

            #[test]
            fn into_iter_consumed_in_part() {
                at_every_call(
                    "into_iter",
                    setup,
                    |f| {
                        let mut it = std::mem::take(&mut f.table).into_iter();
                        drop(it.next());
                    },
                    check,
                );
            }

            #[test]
            fn remove_and_entry_remove() {
                at_every_call(
                    "remove",
                    setup,
                    |f| {
                        drop(f.table.remove(f.old[0]));
                        if let Some(e) = f.table.entry(f.old[1]) {
                            let _ = e.and_modify(|_| tick());
                        }
                    },
                    check,
                );
            }

            #[test]
            fn clone() {
                at_every_call(
                    "clone",
                    || (setup(), None),
                    |(f, copy): &mut (Fixture, Option<Table>)| *copy = Some(f.table.clone()),
                    |(f, copy)| {
                        check(f);
                        assert_eq!(f.table.len(), N, "the original is untouched");
                        if let Some(c) = copy {
                            assert_eq!(c.len(), N);
                            c.values().for_each(Tracked::assert_live);
                        }
                    },
                );
            }
        }
    };
}

panic_tests!(dense, SecondaryPool);
panic_tests!(sparse, SparseSecondaryPool);

#[test]
fn dropping_a_dense_table_drops_every_value_once_even_if_one_panics() {
    at_every_call(
        "drop",
        || {
            let (old, _) = handles();
            Some(
                old.iter()
                    .map(|&h| (h, Tracked::new()))
                    .collect::<SecondaryPool<(), _>>(),
            )
        },
        |t| drop(t.take()),
        |t| assert!(t.is_none()),
    );
}

#[test]
#[cfg_attr(miri, ignore = "leaks on purpose, which Miri reports")]
fn dropping_a_sparse_table_never_drops_a_value_twice() {
    // The documented limit: `HashMap`'s drop leaks the values after a panicking one.
    let (old, _) = handles();
    let table: SparseSecondaryPool<(), _> = old
        .iter()
        .map(|&h| (h, PanicsOnDrop(Box::new(1))))
        .collect();
    assert!(catch_unwind(AssertUnwindSafe(|| drop(table))).is_err());
    // Each `PanicsOnDrop` owns a box: a second drop would be a double free (Miri reports it).
}

/// Panics in its first `Drop` only, so unwinding through the others does not abort.
struct PanicsOnDrop(#[allow(dead_code)] Box<u8>);

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        use std::sync::atomic::{AtomicBool, Ordering};
        static ONCE: AtomicBool = AtomicBool::new(false);
        if !ONCE.swap(true, Ordering::Relaxed) {
            planned_panic("planned panic at user call: first drop");
        }
    }
}
