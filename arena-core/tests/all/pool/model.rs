//! Model-based property tests: random sequences of insert, remove, get, get_mut, stale access,
//! disjoint borrows, retain, drain (from either end), clear, reserve, shrink_to_fit, iteration
//! from both ends and handles through their bit form, on every kind of `Pool` (`Pool::new`
//! included), checked step by step against a `HashMap<Handle, id>` model, with every value
//! counting its drops; and pool equality against the equality of two models. Each property runs
//! for both handle types, `Handle` and `Handle32`.

use crate::support;

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use arena_kit_core::pool::{Handle, Handle32, Pool, PoolHandle};
use proptest::prelude::*;
use support::{DropCounter, proptest_config};

#[derive(Debug, Clone)]
enum Op {
    Insert,
    InsertWith,
    /// Remove the handle at this position of the list of every handle ever issued (maybe stale).
    Remove(usize),
    Get(usize),
    GetMut(usize),
    Disjoint(usize, usize, usize),
    RetainEven,
    DrainSome(usize),
    /// Drain this many from the back, then drop the rest.
    DrainBack(usize),
    Clear,
    Reserve(usize),
    ShrinkToFit,
    /// Iterate taking from the front (bit 1) or the back (bit 0), bit by bit.
    IterBoth(u64),
    /// Look a handle up through `Handle::from_bits(handle.to_bits())`.
    Bits(usize),
    /// Take this many values from the front (bit 1) or the back (bit 0) of `iter` and of
    /// `iter_mut`, then `fold` the rest (the internal walk, which `sum` and `for_each` use).
    IterFold(u64, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Insert),
        1 => Just(Op::InsertWith),
        5 => any::<usize>().prop_map(Op::Remove),
        3 => any::<usize>().prop_map(Op::Get),
        2 => any::<usize>().prop_map(Op::GetMut),
        2 => (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(a, b, c)| Op::Disjoint(a, b, c)),
        1 => Just(Op::RetainEven),
        1 => (0usize..4).prop_map(Op::DrainSome),
        1 => (0usize..4).prop_map(Op::DrainBack),
        1 => Just(Op::Clear),
        1 => (0usize..40).prop_map(Op::Reserve),
        2 => Just(Op::ShrinkToFit),
        2 => any::<u64>().prop_map(Op::IterBoth),
        2 => any::<usize>().prop_map(Op::Bits),
        2 => (any::<u64>(), 0usize..8).prop_map(|(p, n)| Op::IterFold(p, n)),
    ]
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Fixed(usize),
    Growable(usize),
    /// Fixed, with a small generation budget so slots retire during the run.
    Budget(usize, u32),
    /// `Pool::new`: nothing allocated until the first insert.
    New,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::New),
        (0usize..10).prop_map(Kind::Fixed),
        (1usize..5).prop_map(Kind::Growable),
        ((1usize..6), (1u32..4)).prop_map(|(n, b)| Kind::Budget(n, b)),
    ]
}

/// What the harness needs of a handle type beyond the pool's trait: its constructors and its bit
/// form.
trait ModelHandle: PoolHandle<DropCounter> {
    fn make(kind: Kind) -> Pool<DropCounter, Self>;
    /// The handle through its bit form and back.
    fn through_bits(self) -> Self;
    fn bits(self) -> u64;
}

impl ModelHandle for Handle<DropCounter> {
    fn make(kind: Kind) -> Pool<DropCounter, Self> {
        match kind {
            Kind::Fixed(n) => Pool::with_capacity(n),
            Kind::Growable(n) => Pool::growable(n),
            Kind::Budget(n, b) => Pool::with_capacity_and_generation_budget(n, b),
            Kind::New => Pool::new(),
        }
    }

    fn through_bits(self) -> Self {
        let back = Handle::from_bits(self.to_bits()).expect("a pool's handle");
        assert_eq!(back.to_bits(), self.to_bits());
        back
    }

    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// A `Handle32` slot holds 2048 values, more than a run reaches: `Budget` is a fixed pool here
/// (retirement has its own test, `handle32::a_slot_retires_after_2048_lives`).
impl ModelHandle for Handle32<DropCounter> {
    fn make(kind: Kind) -> Pool<DropCounter, Self> {
        match kind {
            Kind::Fixed(n) | Kind::Budget(n, _) => Pool::with_capacity_and_key(n),
            Kind::Growable(n) => Pool::growable_with_key(n),
            Kind::New => Pool::with_key(),
        }
    }

    fn through_bits(self) -> Self {
        let back = Handle32::from_bits(self.to_bits()).expect("a pool's handle");
        assert_eq!(back, self);
        back
    }

    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

struct Harness<H: ModelHandle> {
    pool: Pool<DropCounter, H>,
    model: HashMap<H, u64>,
    issued: Vec<H>,
    issued_set: HashSet<H>,
    drops: Rc<Cell<usize>>,
    next_id: u64,
    removed: usize,
    /// The most values the model held at once (after any step: no step inserts more than one).
    peak: usize,
    kind: Kind,
}

impl<H: ModelHandle> Harness<H> {
    fn new(kind: Kind) -> Self {
        let pool = H::make(kind);
        Harness {
            pool,
            model: HashMap::new(),
            issued: Vec::new(),
            issued_set: HashSet::new(),
            drops: Rc::new(Cell::new(0)),
            next_id: 0,
            removed: 0,
            peak: 0,
            kind,
        }
    }

    fn pick(&self, i: usize) -> Option<H> {
        (!self.issued.is_empty()).then(|| self.issued[i % self.issued.len()])
    }

    fn issued_new(&mut self, h: H, id: u64) {
        assert!(
            self.issued_set.insert(h),
            "handle {h:?} was handed out twice"
        );
        self.issued.push(h);
        self.model.insert(h, id);
    }

    fn step(&mut self, op: &Op) {
        match *op {
            Op::Insert => {
                let id = self.next_id;
                self.next_id += 1;
                match self.pool.try_insert(DropCounter::new(id, &self.drops)) {
                    Ok(h) => self.issued_new(h, id),
                    Err(full) => {
                        assert!(
                            !matches!(self.kind, Kind::Growable(_) | Kind::New),
                            "a growable pool grows"
                        );
                        let stats = self.pool.stats();
                        assert_eq!(self.model.len() + stats.retired, stats.capacity);
                        assert_eq!(full.into_inner().id, id, "the value comes back");
                        self.removed += 1; // dropped here, never inserted
                    }
                }
            }
            Op::InsertWith => {
                let id = self.next_id;
                let drops = Rc::clone(&self.drops);
                let mut given = None;
                if let Some(h) = self.pool.try_insert_with(|h| {
                    given = Some(h);
                    DropCounter::new(id, &drops)
                }) {
                    assert_eq!(given, Some(h), "the builder saw the value's own handle");
                    self.next_id += 1;
                    self.issued_new(h, id);
                }
            }
            Op::Remove(i) => {
                if let Some(h) = self.pick(i) {
                    let got = self.pool.remove(h).map(|v| v.id);
                    assert_eq!(got, self.model.remove(&h));
                    self.removed += usize::from(got.is_some());
                }
            }
            Op::Get(i) => {
                if let Some(h) = self.pick(i) {
                    assert_eq!(self.pool.get(h).map(|v| v.id), self.model.get(&h).copied());
                    assert_eq!(self.pool.contains(h), self.model.contains_key(&h));
                }
            }
            Op::GetMut(i) => {
                if let Some(h) = self.pick(i) {
                    let id = self.next_id;
                    self.next_id += 1;
                    match (self.pool.get_mut(h), self.model.get_mut(&h)) {
                        (Some(v), Some(m)) => {
                            v.id = id;
                            *m = id;
                        }
                        (None, None) => {}
                        (p, m) => panic!("pool {:?} vs model {m:?}", p.map(|v| v.id)),
                    }
                }
            }
            Op::Disjoint(a, b, c) => {
                if let (Some(a), Some(b), Some(c)) = (self.pick(a), self.pick(b), self.pick(c)) {
                    let valid = [a, b, c].iter().all(|h| self.model.contains_key(h))
                        && a != b
                        && b != c
                        && a != c;
                    match self.pool.get_disjoint_mut([a, b, c]) {
                        Some([x, y, z]) => {
                            assert!(valid);
                            assert_eq!(
                                [x.id, y.id, z.id],
                                [self.model[&a], self.model[&b], self.model[&c]]
                            );
                            // Rotate the ids, in the model too.
                            let (ix, iy, iz) = (x.id, y.id, z.id);
                            (x.id, y.id, z.id) = (iy, iz, ix);
                            self.model.insert(a, iy);
                            self.model.insert(b, iz);
                            self.model.insert(c, ix);
                        }
                        None => assert!(!valid),
                    }
                }
            }
            Op::RetainEven => {
                self.pool.retain(|_, v| v.id % 2 == 0);
                let before = self.model.len();
                self.model.retain(|_, id| *id % 2 == 0);
                self.removed += before - self.model.len();
            }
            Op::DrainSome(n) => {
                let mut drain = self.pool.drain();
                for _ in 0..n {
                    if let Some((h, v)) = drain.next() {
                        assert_eq!(self.model.get(&h), Some(&v.id));
                    }
                }
                drop(drain);
                self.removed += self.model.len();
                self.model.clear();
            }
            Op::DrainBack(n) => {
                let mut drain = self.pool.drain();
                let mut last = None;
                for _ in 0..n {
                    if let Some((h, v)) = drain.next_back() {
                        assert_eq!(self.model.get(&h), Some(&v.id));
                        assert!(
                            last.is_none_or(|l| h < l),
                            "from the back, in reverse order"
                        );
                        last = Some(h);
                    }
                }
                drop(drain);
                self.removed += self.model.len();
                self.model.clear();
            }
            Op::Clear => {
                self.pool.clear();
                self.removed += self.model.len();
                self.model.clear();
            }
            Op::Reserve(n) => {
                let before = self.pool.stats();
                let room = before.capacity - before.len - before.retired;
                match self.pool.try_reserve(n) {
                    Ok(()) => {
                        let after = self.pool.stats();
                        assert!(after.capacity - after.len - after.retired >= n);
                        assert!(room >= n || self.pool.is_growable());
                    }
                    Err(_) => {
                        assert!(room < n && !self.pool.is_growable());
                        assert_eq!(self.pool.stats(), before, "nothing changed");
                    }
                }
            }
            Op::ShrinkToFit => {
                let before = self.pool.capacity();
                let freed = self.pool.shrink_to_fit();
                assert_eq!(self.pool.capacity(), before - freed);
                if !self.pool.is_growable() {
                    assert_eq!(freed, 0);
                }
            }
            Op::IterBoth(pattern) => {
                let mut it = self.pool.iter();
                let (mut front, mut back) = (Vec::new(), Vec::new());
                for bit in 0.. {
                    assert_eq!(it.len(), self.model.len() - front.len() - back.len());
                    let next = if bit < 64 && pattern >> bit & 1 == 1 {
                        it.next().map(|x| front.push(x))
                    } else {
                        it.next_back().map(|x| back.push(x))
                    };
                    if next.is_none() {
                        break;
                    }
                }
                assert!(it.next().is_none() && it.next_back().is_none(), "fused");
                back.reverse();
                front.extend(back);
                let walked: Vec<_> = front.iter().map(|(h, v)| (*h, v.id)).collect();
                assert_eq!(walked, self.sorted_model());
            }
            Op::IterFold(pattern, steps) => {
                let sorted = self.sorted_model();
                let iter = self.pool.iter().map(|(h, v)| (h, v.id));
                assert_eq!(fold_after(iter, pattern, steps), sorted, "iter");
                let iter_mut = self.pool.iter_mut().map(|(h, v)| (h, v.id));
                assert_eq!(fold_after(iter_mut, pattern, steps), sorted, "iter_mut");
            }
            Op::Bits(i) => {
                if let Some(h) = self.pick(i) {
                    let back = h.through_bits();
                    assert_eq!(
                        self.pool.get(back).map(|v| v.id),
                        self.model.get(&h).copied()
                    );
                }
            }
        }
        self.peak = self.peak.max(self.model.len());
        self.check();
    }

    /// The model in slot order: handles sort by index first, and a slot holds one live value.
    fn sorted_model(&self) -> Vec<(H, u64)> {
        let mut sorted: Vec<_> = self.model.iter().map(|(&h, &id)| (h, id)).collect();
        sorted.sort();
        sorted
    }

    /// The model keyed by the handles' bit form (which drops the debug-build pool tag), as pool
    /// equality compares them.
    fn bits_model(&self) -> Vec<(u64, u64)> {
        let mut bits: Vec<_> = self.model.iter().map(|(h, &id)| (h.bits(), id)).collect();
        bits.sort();
        bits
    }

    fn check(&self) {
        assert_eq!(self.pool.len(), self.model.len());
        assert_eq!(
            self.drops.get(),
            self.removed,
            "every removed value dropped exactly once"
        );
        let seen: HashMap<_, _> = self.pool.iter().map(|(h, v)| (h, v.id)).collect();
        assert_eq!(
            seen.len(),
            self.pool.len(),
            "iteration yields each live value once"
        );
        assert_eq!(seen, self.model);
        let sorted = self.sorted_model();
        let forward: Vec<_> = self.pool.iter().map(|(h, v)| (h, v.id)).collect();
        assert_eq!(forward, sorted, "in slot order");
        let mut backward: Vec<_> = self.pool.iter().rev().map(|(h, v)| (h, v.id)).collect();
        backward.reverse();
        assert_eq!(backward, sorted, "reversed from the back");
        let keys: Vec<_> = self.pool.keys().rev().collect();
        assert!(keys.iter().rev().eq(sorted.iter().map(|(h, _)| h)));
        assert_eq!(self.pool.values().len(), self.model.len());
        let stats = self.pool.stats();
        assert!(stats.len + stats.retired <= stats.capacity);
        assert_eq!(stats.peak_live, self.peak, "the peak is exact");
        assert_eq!(
            stats.inserts,
            self.issued.len() as u64,
            "every insert counted"
        );
        assert_eq!(stats.removes, stats.inserts - stats.len as u64);
    }
}

/// Takes `steps` items from the front (bit 1 of `pattern`) or the back (bit 0), folds the rest,
/// and returns them all in walk order: taken from the front, folded, taken from the back.
fn fold_after<H: Copy>(
    mut it: impl DoubleEndedIterator<Item = (H, u64)>,
    pattern: u64,
    steps: usize,
) -> Vec<(H, u64)> {
    let (mut front, mut back) = (Vec::new(), Vec::new());
    for bit in 0..steps {
        let from_front = pattern >> bit & 1 == 1;
        let taken = if from_front {
            it.next()
        } else {
            it.next_back()
        };
        match taken {
            Some(x) if from_front => front.push(x),
            Some(x) => back.push(x),
            None => break,
        }
    }
    let mut walked = it.fold(front, |mut acc, x| {
        acc.push(x);
        acc
    });
    walked.extend(back.into_iter().rev());
    walked
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn pool_matches_hashmap_model(kind in kind(), ops in prop::collection::vec(op(), 0..support::miri_or(64, 24))) {
        run_model::<Handle<DropCounter>>(kind, &ops)?;
    }

    #[test]
    fn handle32_pool_matches_hashmap_model(kind in kind(), ops in prop::collection::vec(op(), 0..support::miri_or(64, 24))) {
        run_model::<Handle32<DropCounter>>(kind, &ops)?;
    }

    /// Two pools of any kinds, given the same operations, are equal exactly when their models
    /// hold the same handles (by bit form) with the same values; a pool equals itself.
    #[test]
    fn pool_equality_matches_model_equality(
        a in kind(),
        b in kind(),
        ops in prop::collection::vec(op(), 0..support::miri_or(48, 16)),
    ) {
        run_equality::<Handle<DropCounter>>(a, b, &ops)?;
        run_equality::<Handle32<DropCounter>>(a, b, &ops)?;
    }
}

fn run_model<H: ModelHandle>(kind: Kind, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut h = Harness::<H>::new(kind);
    for op in ops {
        h.step(op);
    }
    let (drops, live, removed) = (Rc::clone(&h.drops), h.model.len(), h.removed);
    drop(h.pool);
    prop_assert_eq!(
        drops.get(),
        removed + live,
        "dropping the pool drops the live values"
    );
    Ok(())
}

// `x.pool == x.pool` on purpose: a pool equals itself (reflexivity of the impl under test).
#[allow(clippy::eq_op)]
fn run_equality<H: ModelHandle>(a: Kind, b: Kind, ops: &[Op]) -> Result<(), TestCaseError> {
    let (mut x, mut y) = (Harness::<H>::new(a), Harness::<H>::new(b));
    for op in ops {
        x.step(op);
        y.step(op);
        prop_assert_eq!(x.pool == y.pool, x.bits_model() == y.bits_model());
        prop_assert!(x.pool == x.pool);
    }
    Ok(())
}
