//! Panic safety of every `SoaVec`, `SoaPool` and arena SoA operation that runs user code: each
//! is run once per user call it makes (`Clone`, `Drop`, the row's and a nested field's `Soa`
//! conversions, closures, comparators, iterators with lying size hints), panicking at exactly
//! that call; afterwards the container must be consistent and every value dropped exactly once.
#![allow(missing_docs)] // test-only row types

use crate::panic_harness;

use std::cmp::Reverse;
use std::collections::HashSet;

use arena_kit_core::arena::Arena;
use arena_kit_core::pool::Handle;
use arena_kit_core::soa::{SoaPool, SoaVec};
use panic_harness::{Row, at_every_call, check_row, tick};

const ROWS: u32 = if cfg!(miri) { 3 } else { 5 };

fn rows(n: u32) -> SoaVec<Row> {
    let mut v = SoaVec::with_capacity(n as usize);
    for k in 0..n {
        v.push(Row::new(k));
    }
    v
}

/// Every row is live and intact, no value appears in two rows, all columns have `len` values.
#[track_caller]
fn check_vec(v: &SoaVec<Row>) {
    let mut ids = HashSet::new();
    let mut n = 0;
    for row in v.iter() {
        check_row(row);
        assert!(
            ids.insert(row.0.id()) && ids.insert(row.1.0.id()),
            "a value in two rows"
        );
        n += 1;
    }
    assert_eq!(n, v.len());
    let (a, (b, ns), keys) = v.slices();
    assert!(
        [a.len(), b.len(), ns.len(), keys.len()]
            .iter()
            .all(|&l| l == v.len())
    );
}

fn vec_case(name: &str, len: u32, op: impl Fn(&mut SoaVec<Row>)) -> usize {
    at_every_call(name, || rows(len), op, check_vec)
}

#[test]
fn soa_vec_push_survives_a_panic_at_every_user_call() {
    vec_case("push", ROWS, |v| v.push(Row::new(99)));
    // At capacity: the push grows the block.
    vec_case("push growing", ROWS, |v| {
        v.shrink_to_fit();
        v.push(Row::new(99));
    });
}

#[test]
fn soa_vec_insert_survives_a_panic_at_every_user_call() {
    for at in [0, 1, ROWS as usize] {
        vec_case(&format!("insert at {at}"), ROWS, |v| {
            v.insert(at, Row::new(99))
        });
    }
}

#[test]
fn soa_vec_remove_survives_a_panic_at_every_user_call() {
    for at in [0, 1, ROWS as usize - 1] {
        let n = vec_case(&format!("remove at {at}"), ROWS, |v| drop(v.remove(at)));
        assert!(
            n >= 4,
            "rebuilding a row and its nested field are user calls"
        );
    }
}

#[test]
fn soa_vec_swap_remove_survives_a_panic_at_every_user_call() {
    for at in [0, 1, ROWS as usize - 1] {
        vec_case(&format!("swap_remove at {at}"), ROWS, |v| {
            drop(v.swap_remove(at))
        });
    }
}

#[test]
fn soa_vec_pop_truncate_and_clear_survive_a_panic_at_every_user_call() {
    vec_case("pop", ROWS, |v| drop(v.pop()));
    vec_case("truncate", ROWS, |v| v.truncate(1));
    vec_case("clear", ROWS, SoaVec::clear);
}

#[test]
fn soa_vec_retain_survives_a_panicking_predicate_or_drop() {
    vec_case("retain", ROWS, |v| {
        v.retain(|r| {
            tick();
            r.2 % 2 == 0
        })
    });
}

#[test]
fn soa_vec_sorts_survive_a_panicking_comparator_or_key() {
    vec_case("sort_by", ROWS, |v| {
        v.sort_by(|a, b| {
            tick();
            b.2.cmp(a.2)
        })
    });
    vec_case("sort_by_key", ROWS, |v| {
        v.sort_by_key(|r| {
            tick();
            Reverse(*r.2)
        })
    });
    vec_case("slice sort_by", ROWS, |v| {
        v.as_soa_slice_mut().sort_by(|a, b| {
            tick();
            b.2.cmp(a.2)
        })
    });
}

#[test]
fn soa_vec_into_iter_survives_a_panic_while_partly_consumed() {
    vec_case("into_iter", ROWS, |v| {
        let mut it = std::mem::take(v).into_iter();
        drop(it.next());
        drop(it.next_back());
        drop(it);
    });
    vec_case("into_vec", ROWS, |v| drop(std::mem::take(v).into_vec()));
    vec_case("drop", ROWS, |v| drop(std::mem::take(v)));
}

/// Yields `n` rows (each `next` a user call) while claiming `hint` in `size_hint`.
struct Lying {
    left: u32,
    hint: (usize, Option<usize>),
}

impl Iterator for Lying {
    type Item = Row;
    fn next(&mut self) -> Option<Row> {
        tick();
        self.left = self.left.checked_sub(1)?;
        Some(Row::new(100 + self.left))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.hint
    }
}

#[test]
fn soa_vec_extend_survives_lying_size_hints_and_panics() {
    // A lower bound of 2^40 rows is a reservation the allocator refuses natively; Miri would
    // try to back it with real memory, so it is skipped there.
    let huge = if cfg!(miri) { 2 } else { 1 << 40 };
    for hint in [
        (0, Some(0)),
        (huge, None),
        (usize::MAX, Some(usize::MAX)),
        (2, Some(2)),
    ] {
        vec_case(&format!("extend with hint {hint:?}"), ROWS, |v| {
            v.extend(Lying { left: 3, hint })
        });
    }
    vec_case("from_iter", 0, |v| {
        *v = Lying {
            left: 3,
            hint: (huge, None),
        }
        .collect()
    });
}

#[test]
fn soa_vec_clone_survives_a_panicking_clone() {
    at_every_call(
        "clone",
        || (rows(ROWS), None),
        |(v, copy): &mut (SoaVec<Row>, Option<SoaVec<Row>>)| *copy = Some(v.clone()),
        |(v, copy)| {
            check_vec(v);
            if let Some(c) = copy {
                check_vec(c);
                assert_eq!(c.len(), v.len());
            }
        },
    );
}

#[test]
fn soa_vec_retain_mut_and_dedup_survive_a_panicking_callback_or_drop() {
    vec_case("retain_mut", ROWS, |v| {
        v.retain_mut(|r| {
            tick();
            *r.2 += 10;
            *r.1.1 += 10; // the nested column keeps step with the key
            *r.2 % 4 != 1
        })
    });
    vec_case("dedup_by_key", ROWS, |v| {
        v.dedup_by_key(|r| {
            tick();
            *r.2 / 2
        })
    });
    /// A key whose `PartialEq` is a user call.
    struct Key(u32);
    impl PartialEq for Key {
        fn eq(&self, other: &Key) -> bool {
            tick();
            self.0 == other.0
        }
    }
    vec_case("dedup_by_key with a panicking key compare", ROWS, |v| {
        v.dedup_by_key(|r| Key(*r.2 / 2))
    });
}

#[test]
fn soa_vec_drain_survives_a_panic_while_partly_consumed() {
    vec_case("drain all", ROWS, |v| drop(v.drain(..)));
    vec_case("drain middle, both ends taken", ROWS, |v| {
        let mut d = v.drain(1..ROWS as usize - 1);
        drop(d.next());
        drop(d.next_back());
    });
    vec_case("drain collected", ROWS, |v| {
        drop(v.drain(2..).collect::<Vec<_>>())
    });
}

#[test]
fn soa_vec_append_split_off_resize_and_extend_from_slice_survive_panics() {
    at_every_call(
        "append",
        || (rows(ROWS), rows(2)),
        |(a, b)| a.append(b),
        |(a, b)| {
            check_vec(a);
            check_vec(b);
        },
    );
    at_every_call(
        "split_off",
        || (rows(ROWS), None),
        |(a, tail): &mut (SoaVec<Row>, Option<SoaVec<Row>>)| *tail = Some(a.split_off(2)),
        |(a, tail)| {
            check_vec(a);
            if let Some(t) = tail {
                check_vec(t);
            }
        },
    );
    vec_case("resize_with growing", ROWS, |v| {
        let mut k = 50;
        v.resize_with(ROWS as usize + 2, || {
            tick();
            k += 1;
            Row::new(k)
        })
    });
    vec_case("resize_with shrinking", ROWS, |v| {
        v.resize_with(1, || unreachable!())
    });
    at_every_call(
        "extend_from_slice",
        || (rows(ROWS), rows(2)),
        |(a, b)| a.extend_from_slice(b.slice(..)),
        |(a, b)| {
            check_vec(a);
            check_vec(b);
        },
    );
}

#[test]
fn soa_vec_unstable_sorts_survive_a_panicking_comparator_or_key() {
    vec_case("sort_unstable_by", ROWS, |v| {
        v.sort_unstable_by(|a, b| {
            tick();
            b.2.cmp(a.2)
        })
    });
    vec_case("sort_unstable_by_key", ROWS, |v| {
        v.sort_unstable_by_key(|r| {
            tick();
            Reverse(*r.2)
        })
    });
    vec_case("slice sort_unstable_by", ROWS, |v| {
        v.slice_mut(1..).sort_unstable_by(|a, b| {
            tick();
            b.2.cmp(a.2)
        })
    });
}

// -------------------------------------------------------------------------------------------
// SoaPool

type Fixture = (SoaPool<Row>, Vec<(Handle<Row>, u32)>);

fn pool(n: u32) -> Fixture {
    let mut p = SoaPool::with_capacity(n as usize + 1);
    let hs = (0..n).map(|k| (p.insert(Row::new(k)), k)).collect();
    (p, hs)
}

/// Every listed handle is either gone or finds its own row; iteration and `len` agree.
#[track_caller]
fn check_pool((p, hs): &Fixture) {
    let mut live = 0;
    for &(h, key) in hs {
        if let Some(row) = p.get(h) {
            assert_eq!(check_row(row), key, "{h:?} finds another row");
            live += 1;
        }
    }
    let mut seen = HashSet::new();
    for (h, row) in p.iter() {
        check_row(row);
        assert!(seen.insert(h), "{h:?} twice");
        assert!(p.contains(h));
    }
    assert_eq!(seen.len(), p.len());
    assert!(live <= p.len());
    assert_eq!(p.slices().0.len(), p.len());
}

#[test]
fn soa_pool_remove_survives_a_panic_at_every_user_call() {
    for at in [0, 1, ROWS as usize - 1] {
        at_every_call(
            &format!("SoaPool::remove of handle {at}"),
            || pool(ROWS),
            |(p, hs)| drop(p.remove(hs[at].0)),
            check_pool,
        );
    }
}

#[test]
fn soa_pool_insert_and_drop_survive_a_panic_at_every_user_call() {
    at_every_call(
        "SoaPool::insert",
        || pool(ROWS),
        |(p, hs)| {
            let h = p.insert(Row::new(77));
            hs.push((h, 77));
        },
        check_pool,
    );
    at_every_call(
        "SoaPool::try_insert on a full pool",
        || pool(ROWS),
        |(p, _)| {
            p.insert(Row::new(77));
            let back = p.try_insert(Row::new(78)).unwrap_err();
            drop(back.into_inner());
        },
        check_pool,
    );
    at_every_call(
        "SoaPool drop",
        || pool(ROWS),
        |(p, hs)| {
            hs.clear();
            drop(std::mem::replace(p, SoaPool::with_capacity(0)))
        },
        check_pool,
    );
}

// -------------------------------------------------------------------------------------------
// Arena SoA

/// Claims `len` in `ExactSizeIterator` but yields `left` rows.
struct LyingExact {
    left: u32,
    len: usize,
}

impl Iterator for LyingExact {
    type Item = Row;
    fn next(&mut self) -> Option<Row> {
        tick();
        self.left = self.left.checked_sub(1)?;
        Some(Row::new(self.left))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}
impl ExactSizeIterator for LyingExact {}

fn check_arena_rows(rows: &arena_kit_core::soa::SoaSliceMut<'_, Row>) {
    let mut n = 0;
    for row in rows.as_soa_slice().iter() {
        check_row(row);
        n += 1;
    }
    assert_eq!(n, rows.len());
}

#[test]
fn arena_alloc_soa_survives_a_panic_at_every_user_call() {
    let setup = || Arena::with_capacity(4096);
    at_every_call(
        "alloc_soa",
        setup,
        |a| {
            let rows = a.alloc_soa(ROWS as usize, |i| {
                tick();
                Row::new(i as u32)
            });
            check_arena_rows(&rows);
        },
        |_| {},
    );
    for (left, len) in [(3, 3), (2, 4), (4, 2), (1, 1 << 20)] {
        at_every_call(
            &format!("alloc_soa_from_iter yielding {left} of a claimed {len}"),
            setup,
            |a| {
                if let Ok(rows) = a.try_alloc_soa_from_iter(LyingExact { left, len }) {
                    check_arena_rows(&rows);
                    assert!(rows.len() <= left as usize);
                }
            },
            |_| {},
        );
    }
    at_every_call(
        "arena reset dropping rows",
        || {
            let a = Arena::with_capacity(4096);
            a.alloc_soa(ROWS as usize, |i| Row::new(i as u32));
            a
        },
        Arena::reset,
        |a| assert!(a.try_alloc_soa(1, |_| Row::new(5)).is_ok()),
    );
}
