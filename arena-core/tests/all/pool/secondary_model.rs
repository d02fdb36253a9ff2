//! Model-based property tests of both side tables: a real `Pool` hands out handles (inserts and
//! removes reuse slots, a small generation budget retires them), and random sequences of insert,
//! try_insert, remove, get, get_mut, entry, disjoint borrows, retain, drain, clear, clone and (with
//! `serde`) a save and load run on the table with any handle ever issued, stale ones included.
//! After every step the table must agree with a `HashMap<(index, generation), value>` that
//! follows the documented rules.

use crate::support::proptest_config;

use std::collections::HashMap;

use arena_kit_core::pool::{Handle, Pool, SecondaryPool, SparseSecondaryPool};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    PoolInsert,
    PoolRemove(usize),
    /// The handle at this position of the list of every handle issued, maybe stale.
    Insert(usize, u32),
    TryInsert(usize, u32),
    Remove(usize),
    Get(usize),
    GetMut(usize, u32),
    EntryOrInsert(usize, u32),
    EntryAndModify(usize),
    EntryRemove(usize),
    Disjoint(usize, usize),
    RetainEven,
    DrainSome(usize),
    Clear,
    Clone,
    RoundTrip,
}

fn op() -> impl Strategy<Value = Op> {
    let i = any::<usize>;
    prop_oneof![
        5 => Just(Op::PoolInsert),
        3 => i().prop_map(Op::PoolRemove),
        5 => (i(), any::<u32>()).prop_map(|(h, v)| Op::Insert(h, v)),
        2 => (i(), any::<u32>()).prop_map(|(h, v)| Op::TryInsert(h, v)),
        3 => i().prop_map(Op::Remove),
        3 => i().prop_map(Op::Get),
        2 => (i(), any::<u32>()).prop_map(|(h, v)| Op::GetMut(h, v)),
        2 => (i(), any::<u32>()).prop_map(|(h, v)| Op::EntryOrInsert(h, v)),
        2 => i().prop_map(Op::EntryAndModify),
        1 => i().prop_map(Op::EntryRemove),
        2 => (i(), i()).prop_map(|(a, b)| Op::Disjoint(a, b)),
        1 => Just(Op::RetainEven),
        1 => (0usize..3).prop_map(Op::DrainSome),
        1 => Just(Op::Clear),
        1 => Just(Op::Clone),
        1 => Just(Op::RoundTrip),
    ]
}

/// The pool the handles come from: a fixed one whose slots retire after `budget` values, or a
/// growable one.
fn pool() -> impl Strategy<Value = Pool<()>> {
    prop_oneof![
        ((1usize..5), (1u32..4)).prop_map(|(n, b)| Pool::with_capacity_and_generation_budget(n, b)),
        (1usize..4).prop_map(Pool::growable),
    ]
}

/// The reference: what is stored, by exact handle.
#[derive(Default)]
struct Model(HashMap<(u32, u32), u32>);

impl Model {
    fn key<T>(h: Handle<T>) -> (u32, u32) {
        (h.index(), h.generation().get())
    }

    /// The entry at `h`'s slot index, of any generation (at most one).
    fn at<T>(&self, h: Handle<T>) -> Option<(u32, u32)> {
        let mut found = self.0.iter().filter(|((i, _), _)| *i == h.index());
        let first = found.next().map(|(&(_, g), &v)| (g, v));
        assert!(found.next().is_none(), "two values for one slot index");
        first
    }

    fn get<T>(&self, h: Handle<T>) -> Option<u32> {
        self.0.get(&Self::key(h)).copied()
    }

    /// `insert`'s documented rules: `Err(())` if refused (an older handle).
    fn insert<T>(&mut self, h: Handle<T>, v: u32) -> Result<Option<u32>, ()> {
        match self.at(h) {
            Some((g, _)) if g > h.generation().get() => Err(()),
            Some((g, old)) if g == h.generation().get() => {
                self.0.insert(Self::key(h), v);
                Ok(Some(old))
            }
            Some((g, _)) => {
                self.0.remove(&(h.index(), g));
                self.0.insert(Self::key(h), v);
                Ok(None)
            }
            None => {
                self.0.insert(Self::key(h), v);
                Ok(None)
            }
        }
    }

    /// Whether `entry(h)` is `None`.
    fn stale<T>(&self, h: Handle<T>) -> bool {
        self.at(h).is_some_and(|(g, _)| g > h.generation().get())
    }

    fn sorted(&self) -> Vec<((u32, u32), u32)> {
        let mut v: Vec<_> = self.0.iter().map(|(&k, &v)| (k, v)).collect();
        v.sort();
        v
    }
}

fn sorted<'a>(it: impl Iterator<Item = (Handle<()>, &'a u32)>) -> Vec<((u32, u32), u32)> {
    let mut v: Vec<_> = it.map(|(h, &v)| (Model::key(h), v)).collect();
    v.sort();
    v
}

macro_rules! model_test {
    ($name:ident, $Table:ident, $entries:ident) => {
        mod $name {
            use super::*;
            use arena_kit_core::pool::$entries::Entry;

            struct Run {
                pool: Pool<()>,
                live: Vec<Handle<()>>,
                issued: Vec<Handle<()>>,
                table: $Table<(), u32>,
                model: Model,
            }

            impl Run {
                fn step(&mut self, op: &Op) {
                    match *op {
                        Op::PoolInsert => {
                            if let Ok(h) = self.pool.try_insert(()) {
                                self.live.push(h);
                                self.issued.push(h);
                            }
                        }
                        Op::PoolRemove(i) => {
                            if !self.live.is_empty() {
                                let h = self.live.swap_remove(i % self.live.len());
                                self.pool.remove(h);
                            }
                        }
                        _ => {
                            let issued = &self.issued;
                            let pick =
                                |i: usize| (!issued.is_empty()).then(|| issued[i % issued.len()]);
                            step_table(op, &mut self.table, &mut self.model, pick);
                        }
                    }
                }

                fn check(&self) {
                    assert_eq!(self.table.len(), self.model.0.len());
                    assert_eq!(self.table.is_empty(), self.model.0.is_empty());
                    for &h in &self.issued {
                        assert_eq!(self.table.get(h).copied(), self.model.get(h), "{h:?}");
                        assert_eq!(self.table.contains(h), self.model.get(h).is_some());
                    }
                    assert_eq!(sorted(self.table.iter()), self.model.sorted());
                    assert_eq!(self.table.iter().len(), self.table.len());
                }
            }

            fn step_table(
                op: &Op,
                table: &mut $Table<(), u32>,
                model: &mut Model,
                pick: impl Fn(usize) -> Option<Handle<()>>,
            ) {
                match *op {
                    Op::Insert(i, v) => {
                        if let Some(h) = pick(i) {
                            let want = model.insert(h, v).unwrap_or(None);
                            assert_eq!(table.insert(h, v), want);
                        }
                    }
                    Op::TryInsert(i, v) => {
                        if let Some(h) = pick(i) {
                            match (table.try_insert(h, v), model.insert(h, v)) {
                                (Ok(got), Ok(want)) => assert_eq!(got, want),
                                (Err(e), Err(())) => {
                                    assert_eq!(e.into_inner(), v, "the value comes back")
                                }
                                (got, want) => panic!("try_insert {got:?}, model {want:?}"),
                            }
                        }
                    }
                    Op::Remove(i) => {
                        if let Some(h) = pick(i) {
                            assert_eq!(table.remove(h), model.0.remove(&Model::key(h)));
                        }
                    }
                    Op::Get(i) => {
                        if let Some(h) = pick(i) {
                            assert_eq!(table.get(h).copied(), model.get(h));
                        }
                    }
                    Op::GetMut(i, v) => {
                        if let Some(h) = pick(i) {
                            match (table.get_mut(h), model.0.get_mut(&Model::key(h))) {
                                (Some(x), Some(m)) => (*x, *m) = (v, v),
                                (None, None) => {}
                                (x, m) => panic!("get_mut {x:?}, model {m:?}"),
                            }
                        }
                    }
                    Op::EntryOrInsert(i, v) => {
                        if let Some(h) = pick(i) {
                            let stale = model.stale(h);
                            match table.entry(h) {
                                None => assert!(stale, "entry refused a current handle"),
                                Some(e) => {
                                    assert!(!stale, "entry for a stale handle");
                                    assert_eq!(e.key(), h);
                                    let got = *e.or_insert(v);
                                    let want = match model.get(h) {
                                        Some(old) => old,
                                        None => {
                                            model.insert(h, v).unwrap();
                                            v
                                        }
                                    };
                                    assert_eq!(got, want);
                                }
                            }
                        }
                    }
                    Op::EntryAndModify(i) => {
                        if let Some(h) = pick(i) {
                            if let Some(e) = table.entry(h) {
                                let _ = e.and_modify(|x| *x = x.wrapping_add(1));
                                if let Some(m) = model.0.get_mut(&Model::key(h)) {
                                    *m = m.wrapping_add(1);
                                }
                            }
                        }
                    }
                    Op::EntryRemove(i) => {
                        if let Some(h) = pick(i) {
                            match table.entry(h) {
                                Some(Entry::Occupied(o)) => {
                                    assert_eq!(Some(o.remove()), model.0.remove(&Model::key(h)))
                                }
                                Some(Entry::Vacant(v)) => {
                                    assert_eq!(v.key(), h);
                                    assert_eq!(model.get(h), None);
                                }
                                None => assert!(model.stale(h)),
                            }
                        }
                    }
                    Op::Disjoint(a, b) => {
                        if let (Some(a), Some(b)) = (pick(a), pick(b)) {
                            let valid = model.get(a).is_some()
                                && model.get(b).is_some()
                                && a.index() != b.index();
                            match table.get_disjoint_mut([a, b]) {
                                Some([x, y]) => {
                                    assert!(valid);
                                    assert_eq!(
                                        [*x, *y],
                                        [model.get(a).unwrap(), model.get(b).unwrap()]
                                    );
                                    std::mem::swap(x, y);
                                    let (ka, kb) = (Model::key(a), Model::key(b));
                                    let (va, vb) = (model.0[&ka], model.0[&kb]);
                                    model.0.insert(ka, vb);
                                    model.0.insert(kb, va);
                                }
                                None => assert!(!valid),
                            }
                        }
                    }
                    Op::RetainEven => {
                        table.retain(|_, v| *v % 2 == 0);
                        model.0.retain(|_, v| *v % 2 == 0);
                    }
                    Op::DrainSome(n) => {
                        let mut drain = table.drain();
                        for _ in 0..n {
                            if let Some((h, v)) = drain.next() {
                                assert_eq!(model.get(h), Some(v));
                            }
                        }
                        drop(drain);
                        model.0.clear();
                    }
                    Op::Clear => {
                        table.clear();
                        model.0.clear();
                    }
                    Op::Clone => {
                        let copy = table.clone();
                        assert!(copy == *table);
                        *table = copy;
                    }
                    Op::RoundTrip => {
                        #[cfg(feature = "serde")]
                        {
                            let text = serde_json::to_string(&*table).unwrap();
                            let back: $Table<(), u32> = serde_json::from_str(&text).unwrap();
                            assert!(back == *table, "{text}");
                            *table = back;
                        }
                    }
                    Op::PoolInsert | Op::PoolRemove(_) => unreachable!(),
                }
            }

            proptest! {
                #![proptest_config(proptest_config())]

                #[test]
                fn agrees_with_a_hashmap_of_exact_handles(
                    pool in pool(),
                    ops in prop::collection::vec(op(), 1..if cfg!(miri) { 16 } else { 80 }),
                ) {
                    let mut run = Run {
                        pool,
                        live: Vec::new(),
                        issued: Vec::new(),
                        table: $Table::default(),
                        model: Model::default(),
                    };
                    for op in &ops {
                        run.step(op);
                        run.check();
                    }
                }
            }
        }
    };
}

model_test!(dense, SecondaryPool, secondary);
model_test!(sparse, SparseSecondaryPool, sparse_secondary);
