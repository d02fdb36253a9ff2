//! Attacks from safe code on `SoaPool`'s row invariant: every live slot's payload is its value's
//! row, below the row count, and the back link of every row below the row count names the live
//! slot that owns it. `SoaPool::remove` (and `retain`) trust it without a check in release builds
//! (the moved row's slot is written unchecked), so a sequence that broke it would write out of
//! bounds instead of panicking. Every user callback the pool runs is turned against it: panicking
//! `Drop` and `Clone` of a row's field, panicking `retain` and `insert_with` closures, drains that
//! are dropped early or forgotten, clones, `get_disjoint_mut`, growable pools crossing a chunk,
//! `Fail` and `Panic` budgets, `clear`, and `TrackedSoaPool` on top. After every step the pool is
//! compared with a model, and at the end every value is removed through `remove` in an order
//! that moves rows, each coming back with its own contents.
#![allow(missing_docs)]

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::support::Rng;
use arena_kit_core::pool::Handle;
use arena_kit_core::soa::{SoaPool, TrackedSoaPool};
use arena_kit_core::tags::{Budget, Budgeted};
use arena_kit_derive::Soa;

const STEPS: usize = if cfg!(miri) { 70 } else { 1500 };

thread_local! {
    /// Payloads made (new and cloned) and dropped on this thread.
    static MADE: Cell<usize> = const { Cell::new(0) };
    static DROPPED: Cell<usize> = const { Cell::new(0) };
    /// The id whose next drop panics (once).
    static DROP_BOMB: Cell<Option<u64>> = const { Cell::new(None) };
    /// Clones left before one panics (`usize::MAX`: never).
    static CLONE_BOMB: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// A field with a heap block (so a value read from the wrong row or dropped twice shows under
/// Miri and usually in release), counted, whose `Drop` and `Clone` may panic on demand.
#[derive(Debug)]
struct Payload {
    id: u64,
    heap: Box<u64>,
}

impl Payload {
    fn new(id: u64) -> Self {
        MADE.with(|m| m.set(m.get() + 1));
        Payload {
            id,
            heap: Box::new(id ^ 0xA5A5),
        }
    }
}

impl Clone for Payload {
    fn clone(&self) -> Self {
        let left = CLONE_BOMB.with(Cell::get);
        if left == 0 {
            CLONE_BOMB.with(|c| c.set(usize::MAX));
            panic!("a row's clone panicked");
        }
        if left != usize::MAX {
            CLONE_BOMB.with(|c| c.set(left - 1));
        }
        Payload::new(self.id)
    }
}

impl Drop for Payload {
    fn drop(&mut self) {
        DROPPED.with(|d| d.set(d.get() + 1));
        assert_eq!(
            *self.heap,
            self.id ^ 0xA5A5,
            "a payload's block was corrupted"
        );
        if DROP_BOMB.with(Cell::get) == Some(self.id) {
            DROP_BOMB.with(|b| b.set(None));
            panic!("a row's drop panicked");
        }
    }
}

#[derive(Debug, Clone, Soa)]
#[soa(crate = arena_kit_core, plain)]
struct Unit {
    id: u64,
    payload: Payload,
    tag: u8,
}

fn unit(id: u64) -> Unit {
    Unit {
        id,
        payload: Payload::new(id),
        tag: id as u8,
    }
}

/// What the attacks need of a pool: `SoaPool` itself and `TrackedSoaPool` over it.
trait Driver: Sized {
    fn fixed(capacity: usize) -> Self;
    fn growable(chunk: usize) -> Self;
    fn pool(&self) -> &SoaPool<Unit>;
    fn pool_mut(&mut self) -> &mut SoaPool<Unit>;
    fn insert(&mut self, u: Unit) -> Handle<Unit>;
    fn try_insert(&mut self, u: Unit) -> Result<Handle<Unit>, Unit>;
    fn insert_with(&mut self, f: impl FnOnce(Handle<Unit>) -> Unit) -> Handle<Unit>;
    fn remove(&mut self, h: Handle<Unit>) -> Option<Unit>;
    fn retain(&mut self, f: impl FnMut(Handle<Unit>, UnitMut<'_>) -> bool);
    fn clear(&mut self);
    fn swap_ids(&mut self, a: Handle<Unit>, b: Handle<Unit>) -> bool;
    fn touch_all(&mut self);
    fn copy(&self) -> Self;
    /// Runs `f` on the plain pool (drains need `&mut SoaPool`).
    fn with_plain(&mut self, f: impl FnOnce(&mut SoaPool<Unit>));
}

impl Driver for SoaPool<Unit> {
    fn fixed(capacity: usize) -> Self {
        SoaPool::with_capacity(capacity)
    }
    fn growable(chunk: usize) -> Self {
        SoaPool::growable(chunk)
    }
    fn pool(&self) -> &SoaPool<Unit> {
        self
    }
    fn pool_mut(&mut self) -> &mut SoaPool<Unit> {
        self
    }
    fn insert(&mut self, u: Unit) -> Handle<Unit> {
        SoaPool::insert(self, u)
    }
    fn try_insert(&mut self, u: Unit) -> Result<Handle<Unit>, Unit> {
        SoaPool::try_insert(self, u).map_err(|e| e.into_inner())
    }
    fn insert_with(&mut self, f: impl FnOnce(Handle<Unit>) -> Unit) -> Handle<Unit> {
        SoaPool::insert_with(self, f)
    }
    fn remove(&mut self, h: Handle<Unit>) -> Option<Unit> {
        SoaPool::remove(self, h)
    }
    fn retain(&mut self, f: impl FnMut(Handle<Unit>, UnitMut<'_>) -> bool) {
        SoaPool::retain(self, f)
    }
    fn clear(&mut self) {
        SoaPool::clear(self)
    }
    fn swap_ids(&mut self, a: Handle<Unit>, b: Handle<Unit>) -> bool {
        match self.get_disjoint_mut([a, b]) {
            Some([x, y]) => {
                std::mem::swap(x.tag, y.tag);
                std::mem::swap(x.tag, y.tag);
                true
            }
            None => false,
        }
    }
    fn touch_all(&mut self) {
        for (h, row) in self.iter_mut() {
            assert_eq!(*row.id, row.payload.id, "{h:?}");
            *row.tag = row.tag.wrapping_add(0);
        }
    }
    fn copy(&self) -> Self {
        self.clone()
    }
    fn with_plain(&mut self, f: impl FnOnce(&mut SoaPool<Unit>)) {
        f(self)
    }
}

impl Driver for TrackedSoaPool<Unit> {
    fn fixed(capacity: usize) -> Self {
        TrackedSoaPool::with_capacity(capacity)
    }
    fn growable(chunk: usize) -> Self {
        TrackedSoaPool::growable(chunk)
    }
    fn pool(&self) -> &SoaPool<Unit> {
        self
    }
    fn pool_mut(&mut self) -> &mut SoaPool<Unit> {
        unreachable!("TrackedSoaPool hands out no &mut SoaPool")
    }
    fn insert(&mut self, u: Unit) -> Handle<Unit> {
        TrackedSoaPool::insert(self, u)
    }
    fn try_insert(&mut self, u: Unit) -> Result<Handle<Unit>, Unit> {
        TrackedSoaPool::try_insert(self, u).map_err(|e| e.into_inner())
    }
    fn insert_with(&mut self, f: impl FnOnce(Handle<Unit>) -> Unit) -> Handle<Unit> {
        TrackedSoaPool::insert_with(self, f)
    }
    fn remove(&mut self, h: Handle<Unit>) -> Option<Unit> {
        TrackedSoaPool::remove(self, h)
    }
    fn retain(&mut self, f: impl FnMut(Handle<Unit>, UnitMut<'_>) -> bool) {
        TrackedSoaPool::retain(self, f)
    }
    fn clear(&mut self) {
        TrackedSoaPool::clear(self)
    }
    fn swap_ids(&mut self, a: Handle<Unit>, b: Handle<Unit>) -> bool {
        match self.get_disjoint_mut([a, b]) {
            Some([x, y]) => {
                std::mem::swap(x.tag, y.tag);
                std::mem::swap(x.tag, y.tag);
                true
            }
            None => false,
        }
    }
    fn touch_all(&mut self) {
        for (h, row) in self.iter_mut() {
            assert_eq!(*row.id, row.payload.id, "{h:?}");
        }
    }
    fn copy(&self) -> Self {
        self.clone()
    }
    fn with_plain(&mut self, f: impl FnOnce(&mut SoaPool<Unit>)) {
        let empty = TrackedSoaPool::with_capacity(0);
        let mut plain = std::mem::replace(self, empty).into_inner();
        let r = catch_unwind(AssertUnwindSafe(|| f(&mut plain)));
        *self = TrackedSoaPool::from(plain);
        if let Err(p) = r {
            std::panic::resume_unwind(p);
        }
    }
}

/// The live handles and their ids, as the pool must have them.
type Model = Vec<(Handle<Unit>, u64)>;

/// The pool holds exactly `model`: the same length, every handle found with its own row (its
/// fields agree with each other), and `iter` yields every live handle once.
#[track_caller]
fn check(pool: &SoaPool<Unit>, model: &Model) {
    assert_eq!(pool.len(), model.len(), "length");
    for &(h, id) in model {
        let row = pool
            .get(h)
            .unwrap_or_else(|| panic!("{h:?} ({id}) is live"));
        assert_eq!((*row.id, row.payload.id, *row.tag), (id, id, id as u8));
        assert_eq!(*row.payload.heap, id ^ 0xA5A5);
    }
    let mut seen: Vec<(Handle<Unit>, u64)> = pool.iter().map(|(h, r)| (h, *r.id)).collect();
    let mut want = model.clone();
    let key = |&(h, id): &(Handle<Unit>, u64)| (format!("{h:?}"), id);
    seen.sort_by_key(key);
    want.sort_by_key(key);
    assert_eq!(seen, want, "iter yields every live handle once");
    let slices = pool.slices();
    assert_eq!(
        (slices.id.len(), slices.payload.len()),
        (model.len(), model.len())
    );
}

/// After a step that panicked part-way, the model keeps what the pool still has; the pool may not
/// have anything the model does not know.
fn reconcile(pool: &SoaPool<Unit>, model: &mut Model) {
    model.retain(|&(h, _)| pool.contains(h));
    check(pool, model);
}

/// Removes every live value through `remove`, in an order that moves rows (the first row first,
/// so the last row moves into it each time), each coming back with its own contents.
fn empty_through_remove<D: Driver>(pool: &mut D, model: &mut Model, rng: &mut Rng) {
    while !model.is_empty() {
        let first = pool.pool().iter().next().map(|(h, _)| h).unwrap();
        let at = if rng.below(3) == 0 {
            rng.below(model.len())
        } else {
            model.iter().position(|&(h, _)| h == first).unwrap()
        };
        let (h, id) = model.swap_remove(at);
        let got = pool.remove(h).expect("a live handle");
        assert_eq!((got.id, got.payload.id, got.tag), (id, id, id as u8));
        assert!(pool.remove(h).is_none(), "removed twice");
        check(pool.pool(), model);
    }
}

/// One random step. Steps that may panic (by design) are caught and reconciled.
fn step<D: Driver>(pool: &mut D, model: &mut Model, rng: &mut Rng, next_id: &mut u64) {
    let mut fresh = || {
        *next_id += 1;
        *next_id
    };
    let pick = |model: &Model, rng: &mut Rng| model.get(rng.below(model.len())).copied();
    match rng.below(14) {
        0 | 1 => {
            let id = fresh();
            match catch_unwind(AssertUnwindSafe(|| pool.insert(unit(id)))) {
                Ok(h) => model.push((h, id)),
                Err(_) => reconcile(pool.pool(), model), // full or over budget
            }
        }
        2 => {
            let id = fresh();
            match catch_unwind(AssertUnwindSafe(|| pool.try_insert(unit(id)))) {
                Ok(Ok(h)) => model.push((h, id)),
                Ok(Err(back)) => assert_eq!(back.id, id),
                Err(_) => {} // a Panic budget
            }
            reconcile(pool.pool(), model);
        }
        3 => {
            let id = fresh();
            let explode = rng.below(3) == 0;
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.insert_with(|_| {
                    if explode {
                        panic!("insert_with's closure panicked");
                    }
                    unit(id)
                })
            }));
            match r {
                Ok(h) => model.push((h, id)),
                Err(_) => reconcile(pool.pool(), model),
            }
        }
        4 | 5 => {
            if let Some((h, id)) = pick(model, rng) {
                model.retain(|&(m, _)| m != h);
                let bomb = rng.below(4) == 0;
                let got = pool.remove(h).expect("live");
                assert_eq!((got.id, got.payload.id), (id, id));
                if bomb {
                    DROP_BOMB.with(|b| b.set(Some(id)));
                }
                let dropped = catch_unwind(AssertUnwindSafe(|| drop(got)));
                assert_eq!(dropped.is_err(), bomb);
                assert!(pool.remove(h).is_none());
                check(pool.pool(), model);
            }
        }
        6 => {
            // retain: removes about a third; the closure may panic, or a removed value's drop.
            let stop = rng.below(model.len() + 2);
            let bomb = pick(model, rng).filter(|_| rng.below(2) == 0);
            if let Some((_, id)) = bomb {
                DROP_BOMB.with(|b| b.set(Some(id)));
            }
            let seed = rng.next();
            let mut visited = 0;
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.retain(|h, row| {
                    assert_eq!(*row.id, row.payload.id, "{h:?}");
                    visited += 1;
                    if visited == stop {
                        panic!("retain's closure panicked");
                    }
                    !(*row.id ^ seed).is_multiple_of(3)
                })
            }));
            DROP_BOMB.with(|b| b.set(None));
            if r.is_ok() {
                model.retain(|&(_, id)| !(id ^ seed).is_multiple_of(3));
                check(pool.pool(), model);
            } else {
                reconcile(pool.pool(), model);
            }
        }
        7 => {
            if rng.below(4) == 0 {
                // clear, with a value whose drop panics
                if let Some((_, id)) = pick(model, rng) {
                    DROP_BOMB.with(|b| b.set(Some(id)));
                }
                let r = catch_unwind(AssertUnwindSafe(|| pool.clear()));
                DROP_BOMB.with(|b| b.set(None));
                let _ = r;
                model.clear();
                check(pool.pool(), model);
            }
        }
        8 | 9 => {
            // a drain taken part-way, then forgotten, dropped, or dropped with a panicking drop
            let take = rng.below(model.len() + 1);
            let how = rng.below(3);
            let bomb = pick(model, rng).filter(|_| how == 2);
            if let Some((_, id)) = bomb {
                DROP_BOMB.with(|b| b.set(Some(id)));
            }
            let mut out = Vec::new();
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.with_plain(|p| {
                    let mut drain = p.drain();
                    for _ in 0..take {
                        match drain.next() {
                            Some(item) => out.push(item),
                            None => break,
                        }
                    }
                    if how == 0 {
                        std::mem::forget(drain);
                    } else {
                        drop(drain);
                    }
                })
            }));
            DROP_BOMB.with(|b| b.set(None));
            for (h, u) in out.drain(..) {
                assert_eq!(u.payload.id, u.id);
                assert!(model.iter().any(|&(m, id)| m == h && id == u.id));
                assert!(!pool.pool().contains(h), "a drained handle is stale");
                if DROP_BOMB.with(Cell::get) == Some(u.id) {
                    DROP_BOMB.with(|b| b.set(None));
                }
                drop(u);
            }
            let _ = r;
            reconcile(pool.pool(), model);
        }
        10 => {
            // a clone (its rows' clones may panic) replaces the pool or is dropped
            if rng.below(3) == 0 {
                CLONE_BOMB.with(|c| c.set(rng.below(model.len() + 1)));
            }
            let r = catch_unwind(AssertUnwindSafe(|| pool.copy()));
            CLONE_BOMB.with(|c| c.set(usize::MAX));
            if let Ok(copy) = r {
                check(copy.pool(), model);
                if rng.below(2) == 0 {
                    *pool = copy;
                }
            }
            check(pool.pool(), model);
        }
        11 => {
            if let (Some((a, _)), Some((b, _))) = (pick(model, rng), pick(model, rng)) {
                assert_eq!(pool.swap_ids(a, b), a != b);
                check(pool.pool(), model);
            }
        }
        12 => {
            pool.touch_all();
            check(pool.pool(), model);
        }
        _ => {
            // stale handles: removed ones, and handles of the model after a clear
            if let Some((h, _)) = pick(model, rng) {
                assert!(pool.pool().contains(h));
            }
            let id = fresh();
            if let Ok(h) = catch_unwind(AssertUnwindSafe(|| pool.insert(unit(id)))) {
                let got = pool.remove(h).expect("just inserted");
                assert_eq!(got.id, id);
                assert!(pool.remove(h).is_none());
                assert!(pool.pool().get(h).is_none());
            }
            reconcile(pool.pool(), model);
        }
    }
}

fn run<D: Driver>(mut pool: D, seed: u64) {
    let made = MADE.with(Cell::get);
    let dropped = DROPPED.with(Cell::get);
    let mut rng = Rng(seed);
    let mut model = Model::new();
    let mut next_id = 0;
    for _ in 0..STEPS {
        step(&mut pool, &mut model, &mut rng, &mut next_id);
    }
    empty_through_remove(&mut pool, &mut model, &mut rng);
    // Refill and churn once more: the free list and the back links after all that.
    for _ in 0..8 {
        next_id += 1;
        if let Ok(h) = catch_unwind(AssertUnwindSafe(|| pool.insert(unit(next_id)))) {
            model.push((h, next_id));
        }
    }
    check(pool.pool(), &model);
    empty_through_remove(&mut pool, &mut model, &mut rng);
    drop(pool);
    let made = MADE.with(Cell::get) - made;
    let dropped = DROPPED.with(Cell::get) - dropped;
    assert_eq!(dropped, made, "every payload dropped once");
}

#[test]
fn soa_pool_keeps_its_rows_and_handles_through_panicking_user_code() {
    // One seed under Miri: the others add native coverage of the same code.
    for &seed in &[1, 0x9E37_79B9, 0xDEAD_BEEF][..if cfg!(miri) { 1 } else { 3 }] {
        run(<SoaPool<Unit> as Driver>::fixed(24), seed);
        run(<SoaPool<Unit> as Driver>::growable(2), seed ^ 7);
    }
}

#[test]
fn tracked_soa_pool_keeps_its_rows_and_handles_through_panicking_user_code() {
    for &seed in &[3, 0x1234_5678][..if cfg!(miri) { 1 } else { 2 }] {
        run(<TrackedSoaPool<Unit> as Driver>::fixed(24), seed);
        run(<TrackedSoaPool<Unit> as Driver>::growable(4), seed ^ 11);
    }
}

#[test]
fn soa_pool_under_fail_and_panic_budgets_keeps_its_rows() {
    let unit_bytes = size_of::<Unit>();
    for (i, budget) in [Budget::fail(6 * unit_bytes), Budget::panic(6 * unit_bytes)]
        .into_iter()
        .enumerate()
    {
        for growable in [false, true] {
            let mut pool: SoaPool<Unit> = if growable {
                SoaPool::growable(2)
            } else {
                SoaPool::with_capacity(16)
            };
            pool.set_budget(Some(budget.into()));
            run(pool, 0x5151 + i as u64);
        }
    }
}

/// A pool with a generation budget: slots retire as values are removed, so inserts go to fresh
/// slots and then run out; rows keep moving under the retired slots.
#[test]
fn soa_pool_with_retiring_slots_keeps_its_rows() {
    let mut pool = SoaPool::with_capacity_and_generation_budget(24, 3);
    let mut model = Model::new();
    let mut rng = Rng(77);
    let mut next_id = 0;
    for _ in 0..STEPS {
        step(&mut pool, &mut model, &mut rng, &mut next_id);
    }
    empty_through_remove(&mut pool, &mut model, &mut rng);
    assert!(pool.pool_mut().is_empty());
}

/// `clear` with a value whose drop panics, then the pool in use again: the handles of before
/// are stale, new values get rows from 0, and removing them in any order moves the right rows.
#[test]
fn a_panicking_drop_during_clear_leaves_an_empty_consistent_pool() {
    for growable in [false, true] {
        let mut pool: SoaPool<Unit> = if growable {
            SoaPool::growable(2)
        } else {
            SoaPool::with_capacity(8)
        };
        let old: Vec<_> = (0..6).map(|i| pool.insert(unit(i))).collect();
        DROP_BOMB.with(|b| b.set(Some(2)));
        assert!(catch_unwind(AssertUnwindSafe(|| pool.clear())).is_err());
        assert_eq!(pool.len(), 0);
        for &h in &old {
            assert!(!pool.contains(h));
            assert!(pool.remove(h).is_none());
        }
        let mut model: Model = (10..16).map(|i| (pool.insert(unit(i)), i)).collect();
        check(&pool, &model);
        // retain walks rows from 0: it must see only the new values, each with its own handle.
        pool.retain(|h, row| {
            assert!(model.iter().any(|&(m, id)| m == h && id == *row.id));
            *row.id % 2 == 0
        });
        model.retain(|&(_, id)| id % 2 == 0);
        check(&pool, &model);
        let mut rng = Rng(5);
        empty_through_remove(&mut pool, &mut model, &mut rng);
    }
}

/// A drain forgotten after one value: the pool has the rest, each under its own handle, and a
/// remove that moves the last row fixes the right slot.
#[test]
fn a_forgotten_drain_leaves_the_rest_of_the_pool_consistent() {
    let mut pool = SoaPool::with_capacity(8);
    let mut model: Model = (0..5).map(|i| (pool.insert(unit(i)), i)).collect();
    let mut drain = pool.drain();
    let (h, u) = drain.next().unwrap();
    std::mem::forget(drain);
    model.retain(|&(m, _)| m != h);
    assert_eq!(u.id, 4, "the last row first");
    drop(u);
    check(&pool, &model);
    let mut rng = Rng(9);
    empty_through_remove(&mut pool, &mut model, &mut rng);
}

/// `SoaPool` read back from hostile input: rows named twice or past the live count are refused,
/// and a valid row permutation (not the slot order) gives a pool whose removes move the right
/// rows.
#[cfg(feature = "serde")]
#[test]
fn a_deserialized_soa_pool_with_a_shuffled_row_order_removes_the_right_rows() {
    use serde::{Deserialize, Deserializer};

    /// A row that serializes as a tuple, with a field that needs dropping.
    #[derive(Debug, Clone, PartialEq, arena_kit_derive::Soa)]
    #[soa(crate = arena_kit_core)]
    struct Named {
        id: u32,
        name: String,
    }

    impl serde::Serialize for NamedRef<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            (self.id, (self.name, ())).serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for Named {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let (id, (name, ())) = <(u32, (String, ()))>::deserialize(d)?;
            Ok(Named { id, name })
        }
    }

    let mut pool = SoaPool::with_capacity(6);
    let hs: Vec<_> = (0..5)
        .map(|i| {
            pool.insert(Named {
                id: i,
                name: format!("n{i}"),
            })
        })
        .collect();
    // Rows move: slot order and row order differ.
    let moved = pool.remove(hs[0]).unwrap();
    assert_eq!(moved.id, 0);
    let json = serde_json::to_value(&pool).unwrap();
    let back: SoaPool<Named> = serde_json::from_value(json.clone()).unwrap();
    let mut back = back;
    for &h in &hs[1..] {
        let got = back.remove(h).expect("a live handle");
        assert_eq!(format!("n{}", got.id), got.name);
        assert!(back.iter().all(|(h, r)| format!("n{}", r.id) == *r.name
            && hs.iter().position(|&x| x == h) == Some(*r.id as usize)));
    }
    assert!(back.is_empty());

    // Hostile: every (row, value) pair rewritten to name row 0, or a row past the live count.
    fn rows_set(v: &mut serde_json::Value, f: &mut dyn FnMut(u64) -> u64) {
        match v {
            serde_json::Value::Array(items) => {
                // A slot's payload: [row, [id, [name, []]]]
                if items.len() == 2
                    && items[0].is_u64()
                    && items[1].as_array().is_some_and(|a| {
                        a.len() == 2
                            && a[0].is_u64()
                            && a[1].as_array().is_some_and(|n| n[0].is_string())
                    })
                {
                    let row = items[0].as_u64().unwrap();
                    items[0] = f(row).into();
                    return;
                }
                for item in items {
                    rows_set(item, f);
                }
            }
            serde_json::Value::Object(map) => {
                for (_, item) in map.iter_mut() {
                    rows_set(item, f);
                }
            }
            _ => {}
        }
    }
    for attack in 0..3 {
        let mut hostile = json.clone();
        let mut n = 0;
        rows_set(&mut hostile, &mut |row| {
            n += 1;
            match attack {
                0 => 0,
                1 => row + 4,
                _ => u64::from(u32::MAX),
            }
        });
        assert!(n >= 4, "found the rows in {json}");
        let r: Result<SoaPool<Named>, _> = serde_json::from_value(hostile);
        assert!(r.is_err(), "attack {attack}: refused");
    }
}
