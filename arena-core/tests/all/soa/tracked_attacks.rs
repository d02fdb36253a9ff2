//! Change tracking over tiled rows (`TrackedSoaTiles`) with user code that panics at every call
//! it makes (a value's `Drop`, an iterator in `extend`): afterwards the rows are consistent, every
//! value is dropped once, and every row whose value differs from the snapshot taken when the
//! tick closed is reported (a wrapper marks before it forwards, so a panic can only leave it
//! claiming more than was written, never less). `TrackedSoaPool`'s disjoint borrow that is
//! refused lends nothing and leaves the pool as it was.

use std::collections::HashSet;

use arena_kit_core::soa::{TrackedSoaPool, TrackedSoaTiles};
use arena_kit_derive::Soa;

use crate::panic_harness::{Tracked, at_every_call, tick};

#[derive(Debug, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Tile {
    value: Tracked,
    key: u32,
}

fn tile(key: u32) -> Tile {
    Tile {
        value: Tracked::new(),
        key,
    }
}

const ROWS: u32 = if cfg!(miri) { 7 } else { 70 };

type State = (TrackedSoaTiles<Tile, 4>, u64, Vec<u32>);

fn setup() -> State {
    let mut t: TrackedSoaTiles<Tile, 4> = (0..ROWS).map(tile).collect();
    let since = t.tick();
    let keys = t.iter().map(|r| *r.key).collect();
    (t, since, keys)
}

/// Every value live and in one row; every row whose key is not the snapshot's reported in
/// both fields.
fn check((t, since, keys): &State) {
    let mut ids = HashSet::new();
    assert_eq!(t.iter().count(), t.len());
    for (row, r) in t.iter().enumerate() {
        r.value.assert_live();
        assert!(ids.insert(r.value.id()), "a value in two rows");
        if keys.get(row) != Some(r.key) {
            for field in 0..2 {
                assert!(
                    t.is_changed_since(field, row, *since),
                    "row {row} (key {}) changed unreported",
                    r.key
                );
            }
        }
    }
}

fn case(name: &str, op: impl Fn(&mut TrackedSoaTiles<Tile, 4>)) {
    at_every_call(name, setup, |(t, _, _)| op(t), check);
}

#[test]
fn tracked_soa_tiles_stay_consistent_and_marked_after_a_panic_at_every_user_call() {
    let last = ROWS as usize - 1;
    case("push", |t| t.push(tile(99)));
    case("insert", |t| t.insert(1, tile(99)));
    case("remove", |t| drop(t.remove(1)));
    case("swap_remove", |t| drop(t.swap_remove(0)));
    case("pop", |t| drop(t.pop()));
    case("truncate", |t| t.truncate(2));
    case("clear", |t| t.clear());
    case("swap", |t| {
        t.swap(0, last);
        tick();
    });
    case("extend", |t| {
        t.extend((0..3).map(|k| {
            tick();
            tile(100 + k)
        }))
    });
    case("write through get_mut", |t| {
        let row = t.get_mut(last).unwrap();
        *row.key += 1000;
        tick();
    });
    case("write through tail_mut", |t| {
        let tail = t.tail_mut();
        if let Some(k) = tail.key.first_mut() {
            *k += 1000;
        }
        tick();
    });
    case("replace a value through get_mut", |t| {
        let row = t.get_mut(0).unwrap();
        *row.value = Tracked::new(); // drops the old value: a user call
        *row.key += 1000;
    });
}

#[derive(Debug, Soa)]
#[soa(crate = arena_kit_core)]
struct Unit {
    value: Tracked,
    key: u32,
}

/// A refused disjoint borrow (a repeated or a removed handle) lends nothing; the values and
/// the recorded handles are as before, and a later write is still reported.
#[test]
fn a_refused_disjoint_borrow_of_a_tracked_pool_lends_nothing_and_changes_nothing() {
    crate::panic_harness::reset();
    let mut pool = TrackedSoaPool::with_capacity(4);
    let hs: Vec<_> = (0..4)
        .map(|key| {
            pool.insert(Unit {
                value: Tracked::new(),
                key,
            })
        })
        .collect();
    let gone = hs[3];
    drop(pool.remove(gone));
    let since = pool.tick();
    assert!(pool.get_disjoint_mut([hs[0], hs[0]]).is_none());
    assert!(pool.get_disjoint_mut([hs[1], gone]).is_none());
    assert_eq!(pool.len(), 3);
    assert_eq!(pool.removed_since(since).unwrap().count(), 0);
    let [a, b] = pool.get_disjoint_mut([hs[0], hs[2]]).unwrap();
    std::mem::swap(a.value, b.value);
    let changed: Vec<usize> = pool.changed_since(since).map(|c| c.field).collect();
    assert_eq!(changed, [0, 1], "the swapped rows' block is reported");
    drop(pool);
    crate::panic_harness::assert_each_dropped_once("tracked pool");
}
