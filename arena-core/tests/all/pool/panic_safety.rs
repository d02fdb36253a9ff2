//! Panic safety of every `Pool` operation that runs user code (closures, `Clone`, `Drop`): each
//! is run once per user call, panicking at exactly that call; afterwards the pool must be
//! consistent (length, iteration, handles) and every value dropped exactly once.

use crate::panic_harness;

use std::collections::HashSet;

use arena_kit_core::pool::{Handle, Pool};
use panic_harness::{Tracked, at_every_call, tick};

const N: usize = if cfg!(miri) { 3 } else { 5 };

type Fixture = (Pool<Tracked>, Vec<(Handle<Tracked>, usize)>);

fn fixed(n: usize) -> Fixture {
    let mut p = Pool::with_capacity(n + 2);
    let hs = (0..n)
        .map(|_| {
            let t = Tracked::new();
            let id = t.id();
            (p.insert(t), id)
        })
        .collect();
    (p, hs)
}

/// With one slot freed, so inserts take the free-list path, in a growable pool with two chunks.
fn growable(n: usize) -> Fixture {
    let mut p = Pool::growable(2);
    let mut hs: Vec<_> = (0..n)
        .map(|_| {
            let t = Tracked::new();
            let id = t.id();
            (p.insert(t), id)
        })
        .collect();
    drop(p.remove(hs.remove(1).0));
    (p, hs)
}

/// Every listed handle finds its own value or nothing; iteration, `len` and `stats` agree.
#[track_caller]
fn check((p, hs): &Fixture) {
    for &(h, id) in hs {
        if let Some(t) = p.get(h) {
            assert_eq!(t.id(), id, "{h:?} finds another value");
        }
    }
    let mut seen = HashSet::new();
    for (h, t) in p.iter() {
        t.assert_live();
        assert!(seen.insert(h));
        assert_eq!(p.get(h).map(Tracked::id), Some(t.id()));
    }
    assert_eq!(seen.len(), p.len());
    assert_eq!(p.stats().len, p.len());
    assert_eq!(p.values().count(), p.len());
}

fn case(name: &str, setup: fn(usize) -> Fixture, op: impl Fn(&mut Fixture)) {
    at_every_call(name, || setup(N), op, check);
}

fn both(name: &str, op: impl Fn(&mut Fixture) + Copy) {
    case(&format!("{name} (fixed)"), fixed, op);
    case(&format!("{name} (growable)"), growable, op);
}

#[test]
fn insert_with_survives_a_panicking_constructor() {
    both("insert_with", |(p, hs)| {
        let h = p.insert_with(|_| {
            tick();
            Tracked::new()
        });
        hs.push((h, p[h].id()));
    });
    both("try_insert_with", |(p, _)| {
        let _ = p.try_insert_with(|_| {
            tick();
            Tracked::new()
        });
    });
    both("insert", |(p, hs)| {
        let t = Tracked::new();
        let id = t.id();
        hs.push((p.insert(t), id));
    });
}

#[test]
fn remove_and_try_insert_on_a_full_pool_survive_a_panicking_drop() {
    both("remove", |(p, hs)| drop(p.remove(hs[0].0)));
    case("try_insert on a full pool", fixed, |(p, _)| {
        while p.try_insert(Tracked::new()).is_ok() {}
    });
}

#[test]
fn retain_survives_a_panicking_predicate_or_drop() {
    both("retain", |(p, _)| {
        p.retain(|_, t| {
            tick();
            t.id() % 2 == 0
        })
    });
}

#[test]
fn drain_survives_a_panicking_drop_consumed_or_not() {
    both("drain fully", |(p, _)| p.drain().for_each(drop));
    both("drain partly", |(p, _)| {
        let mut d = p.drain();
        drop(d.next());
        drop(d);
    });
    both("clear", |(p, _)| p.clear());
}

#[test]
fn clone_survives_a_panicking_clone() {
    at_every_call(
        "clone",
        || (fixed(N), None),
        |(f, copy): &mut (Fixture, Option<Pool<Tracked>>)| *copy = Some(f.0.clone()),
        |(f, copy)| {
            check(f);
            if let Some(c) = copy {
                assert_eq!(c.len(), f.0.len());
                for (h, t) in c.iter() {
                    t.assert_live();
                    assert!(f.0.contains(h), "the clone keeps every handle valid");
                }
            }
        },
    );
}

#[test]
fn into_iter_and_drop_survive_a_panicking_drop() {
    both("into_iter partly consumed", |(p, hs)| {
        hs.clear();
        let mut it = std::mem::replace(p, Pool::with_capacity(0)).into_iter();
        drop(it.next());
        drop(it);
    });
    both("drop", |(p, hs)| {
        hs.clear();
        drop(std::mem::replace(p, Pool::with_capacity(0)));
    });
}
