//! Time per operation of an allocator's hot loop with the allocator's own struct placed at
//! every offset its alignment allows within a 64-byte cache line (BENCHMARKS.md, "The arena's
//! hot words in one cache line"). A struct whose hot fields straddle two lines in some
//! placements shows a step between the rows.
//!
//! ```sh
//! cargo bench -p arena-kit-benches --bench placement
//! ```
//!
//! Each figure is the best of five runs, in ns per operation.

use std::alloc::Layout;
use std::hint::black_box;
use std::ops::DerefMut;
use std::ptr::NonNull;
use std::time::Instant;

use arena_kit::tags::{Budget, Tracked};
use arena_kit::{Arena, FreeListHeap, Handle, Pool};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// `value` at `K` bytes past a 64-byte boundary (after `K` bytes of padding in a box aligned
/// to 64), `run` timed on it there, then dropped.
fn placed<const K: usize, T>(value: T, run: &dyn Fn(&mut T) -> f64) -> f64 {
    #[repr(C, align(64))]
    struct Placed<const K: usize, T> {
        _pad: [u8; K],
        value: T,
    }
    assert_eq!(
        core::mem::offset_of!(Placed<K, T>, value),
        K,
        "an offset the type's alignment allows"
    );
    let mut boxed = Box::new(Placed::<K, T> {
        _pad: [0; K],
        value,
    });
    run(&mut boxed.value)
}

/// The best of five runs of `run`, which returns ns per operation.
fn best(mut run: impl FnMut() -> f64) -> f64 {
    (0..5).map(|_| run()).fold(f64::MAX, f64::min)
}

/// Allocations of 8 bytes, each through `arena`'s `Deref` (the arena itself through a `&mut`,
/// or a `Tracked` wrapper, which checks its budget there).
fn bump8(arena: &mut impl DerefMut<Target = Arena>) -> f64 {
    best(|| {
        let t = Instant::now();
        for _ in 0..100 {
            for i in 0..10_000u64 {
                black_box(arena.alloc([i]));
            }
            arena.reset();
        }
        t.elapsed().as_nanos() as f64 / 1_000_000.0
    })
}

struct First([u64; 8]);
impl Drop for First {
    fn drop(&mut self) {
        black_box(self.0[0]);
    }
}
struct Second([u64; 8]);
impl Drop for Second {
    fn drop(&mut self) {
        black_box(self.0[1]);
    }
}

fn drops(arena: &mut Arena) -> f64 {
    best(|| {
        let t = Instant::now();
        for _ in 0..50 {
            for i in 0..5_000u64 {
                black_box(arena.alloc(First([i; 8])));
                black_box(arena.alloc(Second([i; 8])));
            }
            arena.reset();
        }
        t.elapsed().as_nanos() as f64 / 500_000.0
    })
}

fn churn(pool: &mut Pool<[u64; 8]>) -> f64 {
    const LIVE: u64 = 1_000;
    let mut keys: Vec<Handle<[u64; 8]>> = (0..LIVE).map(|i| pool.insert([i; 8])).collect();
    let mut rng = Rng::new(7);
    let steps: Vec<(usize, usize)> = (0..200_000)
        .map(|_| {
            let remove = rng.below(LIVE as usize);
            (remove, rng.below(LIVE as usize))
        })
        .collect();
    best(|| {
        let t = Instant::now();
        let mut sum = 0u64;
        for &(remove, read) in &steps {
            let value = pool.remove(keys[remove]).expect("live");
            keys[remove] = pool.insert(value);
            sum = sum.wrapping_add(pool.get(keys[read]).expect("live")[0]);
        }
        black_box(sum);
        t.elapsed().as_nanos() as f64 / steps.len() as f64
    })
}

fn heap(heap: &mut FreeListHeap<'static>) -> f64 {
    let mut rng = Rng::new(1);
    let layout =
        |rng: &mut Rng| Layout::from_size_align(16 + rng.below(4081), 8).expect("a small layout");
    let mut live: Vec<NonNull<u8>> = (0..256).map(|_| heap.alloc(layout(&mut rng))).collect();
    let steps: Vec<(usize, Layout)> = (0..100_000)
        .map(|_| (rng.below(256), layout(&mut rng)))
        .collect();
    best(|| {
        let t = Instant::now();
        for &(at, l) in &steps {
            heap.free(live[at]).expect("a live block");
            live[at] = black_box(heap.alloc(l));
        }
        t.elapsed().as_nanos() as f64 / steps.len() as f64
    })
}

/// One line: `name`'s ns per operation at each offset past a cache line that `T`'s alignment
/// allows.
fn scan<T>(name: &str, make: impl Fn() -> T, run: impl Fn(&mut T) -> f64) {
    type Place<T> = fn(T, &dyn Fn(&mut T) -> f64) -> f64;
    let places: [(usize, Place<T>); 8] = [
        (0, placed::<0, T>),
        (8, placed::<8, T>),
        (16, placed::<16, T>),
        (24, placed::<24, T>),
        (32, placed::<32, T>),
        (40, placed::<40, T>),
        (48, placed::<48, T>),
        (56, placed::<56, T>),
    ];
    let times: Vec<(usize, f64)> = places
        .into_iter()
        .filter(|&(offset, _)| offset % align_of::<T>() == 0)
        .map(|(offset, place)| (offset, place(make(), &run)))
        .collect();
    let (low, high) = times
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), &(_, t)| (lo.min(t), hi.max(t)));
    let cells: Vec<String> = times
        .iter()
        .map(|(offset, t)| format!("{offset}: {t:.2}"))
        .collect();
    println!(
        "{name} (slowest / fastest {:.2}): {}",
        high / low,
        cells.join(", ")
    );
}

fn main() {
    println!("ns per operation with the struct at each offset past a 64-byte line (best of 5)");
    scan(
        "Arena, alloc of 8 bytes",
        || Arena::with_capacity(1 << 20),
        |arena| bump8(&mut &mut *arena),
    );
    scan(
        "Tracked<Arena> with a budget, alloc of 8 bytes",
        || {
            Tracked::new(Arena::with_capacity(1 << 20), "placed", "Bench")
                .with_budget(Budget::fail(1 << 30))
        },
        bump8,
    );
    scan(
        "Arena, alloc of two alternating types with Drop",
        || Arena::with_capacity(1 << 20),
        drops,
    );
    scan(
        "Pool<[u64; 8]>, remove + insert + get, 1,000 live",
        || Pool::with_capacity(1_000),
        churn,
    );
    scan(
        "FreeListHeap, free + alloc of 16..=4096 bytes, 256 live",
        || FreeListHeap::with_capacity(16 << 20),
        heap,
    );
}
