//! `Pool<T>` against slotmap (`SlotMap`, `DenseSlotMap`), thunderdome, slab and a plain
//! `Vec<Option<T>>` with a free-index stack, in one run, with 100,000 live 64-byte values:
//!
//! - `churn`: remove a random live value, insert a new one, look up another random one;
//! - `lookup`: look up random live values;
//! - `iterate`: sum one field over every live value.
//!
//! Every container is first filled and then churned (so free lists are scrambled, as in a game
//! that has been running), and every case uses the same precomputed random positions.
//! Run: `cargo bench -p arena-kit-benches --bench pool -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use arena_kit::pool::{Handle, Pool};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const LIVE: usize = 100_000;
const BATCH: usize = 1_000;

#[derive(Clone, Copy)]
struct Payload {
    value: u64,
    _rest: [u64; 7],
}

fn payload(i: usize) -> Payload {
    Payload {
        value: i as u64,
        _rest: [i as u64; 7],
    }
}

/// xorshift64*: the same sequence for every container.
fn positions(n: usize, seed: u64) -> Vec<usize> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % LIVE
        })
        .collect()
}

/// The operations each container provides, with its own key type.
trait Container {
    type Key: Copy;
    const NAME: &'static str;
    fn with_capacity(n: usize) -> Self;
    fn insert(&mut self, value: Payload) -> Self::Key;
    fn remove(&mut self, key: Self::Key) -> Option<Payload>;
    fn get(&self, key: Self::Key) -> Option<&Payload>;
    fn sum(&self) -> u64;
}

/// A container whose API already has the `Container` shape (ours and the peers).
macro_rules! peer {
    ($ty:ty, $key:ty, $name:literal, $remove:ident) => {
        impl Container for $ty {
            type Key = $key;
            const NAME: &'static str = $name;
            fn with_capacity(n: usize) -> Self {
                <$ty>::with_capacity(n)
            }
            #[inline]
            fn insert(&mut self, value: Payload) -> Self::Key {
                <$ty>::insert(self, value)
            }
            #[inline]
            fn remove(&mut self, key: Self::Key) -> Option<Payload> {
                <$ty>::$remove(self, key)
            }
            #[inline]
            fn get(&self, key: Self::Key) -> Option<&Payload> {
                <$ty>::get(self, key)
            }
            fn sum(&self) -> u64 {
                self.iter().map(|(_, p)| p.value).sum()
            }
        }
    };
}

peer!(Pool<Payload>, Handle<Payload>, "arena-kit Pool", remove);
peer!(slotmap::SlotMap<slotmap::DefaultKey, Payload>, slotmap::DefaultKey, "slotmap SlotMap", remove);
peer!(
    slotmap::DenseSlotMap<slotmap::DefaultKey, Payload>,
    slotmap::DefaultKey,
    "slotmap DenseSlotMap",
    remove
);
peer!(
    thunderdome::Arena<Payload>,
    thunderdome::Index,
    "thunderdome",
    remove
);
peer!(slab::Slab<Payload>, usize, "slab", try_remove);

/// The naive baseline: `Vec<Option<T>>` plus a stack of free indexes (no generations, so stale
/// keys are not caught).
struct VecOption {
    slots: Vec<Option<Payload>>,
    free: Vec<usize>,
}

impl Container for VecOption {
    type Key = usize;
    const NAME: &'static str = "Vec<Option<T>>";
    fn with_capacity(n: usize) -> Self {
        VecOption {
            slots: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
        }
    }
    #[inline]
    fn insert(&mut self, value: Payload) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(value);
                i
            }
            None => {
                self.slots.push(Some(value));
                self.slots.len() - 1
            }
        }
    }
    #[inline]
    fn remove(&mut self, key: usize) -> Option<Payload> {
        let value = self.slots.get_mut(key)?.take()?;
        self.free.push(key);
        Some(value)
    }
    #[inline]
    fn get(&self, key: usize) -> Option<&Payload> {
        self.slots.get(key)?.as_ref()
    }
    fn sum(&self) -> u64 {
        self.slots.iter().flatten().map(|p| p.value).sum()
    }
}

/// A container with `LIVE` values after a round of churn, and the keys of the live values.
fn filled<C: Container>() -> (C, Vec<C::Key>) {
    let mut c = C::with_capacity(LIVE);
    let mut keys: Vec<C::Key> = (0..LIVE).map(|i| c.insert(payload(i))).collect();
    for (n, &at) in positions(LIVE / 2, 7).iter().enumerate() {
        c.remove(keys[at]).expect("live");
        keys[at] = c.insert(payload(n));
    }
    (c, keys)
}

fn churn<C: Container>(c: &mut C, keys: &mut [C::Key], removes: &[usize], reads: &[usize]) -> u64 {
    let mut sum = 0;
    for (&r, &l) in removes.iter().zip(reads) {
        let old = c.remove(keys[r]).expect("live");
        keys[r] = c.insert(old);
        sum += c.get(keys[l]).expect("live").value;
    }
    sum
}

fn lookup<C: Container>(c: &C, keys: &[C::Key], reads: &[usize]) -> u64 {
    reads
        .iter()
        .map(|&l| c.get(keys[l]).expect("live").value)
        .sum()
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn bench_churn<C: Container>(g: &mut Group<'_>) {
    let (removes, reads) = (positions(BATCH, 1), positions(BATCH, 2));
    let (mut c, mut keys) = filled::<C>();
    g.bench_function(BenchmarkId::from_parameter(C::NAME), |b| {
        b.iter(|| churn(&mut c, &mut keys, black_box(&removes), black_box(&reads)))
    });
}

fn bench_lookup<C: Container>(g: &mut Group<'_>) {
    let reads = positions(BATCH, 2);
    let (c, keys) = filled::<C>();
    g.bench_function(BenchmarkId::from_parameter(C::NAME), |b| {
        b.iter(|| lookup(&c, &keys, black_box(&reads)))
    });
}

fn bench_iterate<C: Container>(g: &mut Group<'_>) {
    let (c, _) = filled::<C>();
    g.bench_function(BenchmarkId::from_parameter(C::NAME), |b| {
        b.iter(|| black_box(&c).sum())
    });
}

macro_rules! every_container {
    ($f:ident, $g:expr) => {
        $f::<Pool<Payload>>($g);
        $f::<slotmap::SlotMap<slotmap::DefaultKey, Payload>>($g);
        $f::<slotmap::DenseSlotMap<slotmap::DefaultKey, Payload>>($g);
        $f::<thunderdome::Arena<Payload>>($g);
        $f::<slab::Slab<Payload>>($g);
        $f::<VecOption>($g);
    };
}

fn pool_vs_peers(criterion: &mut Criterion) {
    let mut g = criterion.benchmark_group("pool/churn");
    g.throughput(Throughput::Elements(BATCH as u64));
    every_container!(bench_churn, &mut g);
    g.finish();

    let mut g = criterion.benchmark_group("pool/lookup");
    g.throughput(Throughput::Elements(BATCH as u64));
    every_container!(bench_lookup, &mut g);
    g.finish();

    let mut g = criterion.benchmark_group("pool/iterate");
    g.throughput(Throughput::Elements(LIVE as u64));
    every_container!(bench_iterate, &mut g);
    g.finish();
}

criterion_group!(benches, pool_vs_peers);
criterion_main!(benches);
