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
use std::ptr::NonNull;
use std::time::Instant;

use arena_kit::tags::{Budget, Tracked};
use arena_kit::{Arena, FreeListHeap, Handle, Pool};

/// `value` moved to `offset` bytes past a 64-byte boundary, `f` run on it, then dropped.
fn placed<T, R>(offset: usize, value: T, f: impl FnOnce(&mut T) -> R) -> R {
    assert_eq!(
        offset % align_of::<T>(),
        0,
        "an offset the type's alignment allows"
    );
    let layout = Layout::from_size_align(offset + size_of::<T>(), 64.max(align_of::<T>()))
        .expect("a small layout");
    // SAFETY: the layout's size is not zero (it holds a `T` of at least the struct's fields).
    let block = NonNull::new(unsafe { std::alloc::alloc(layout) }).expect("memory");
    // SAFETY: `offset + size_of::<T>()` bytes fit the block and `offset` keeps `T`'s alignment
    // (asserted above; the block is aligned to at least it).
    let at = unsafe { block.add(offset) }.cast::<T>();
    // SAFETY: `at` is valid for writes of a `T` and aligned.
    unsafe { at.write(value) };
    // SAFETY: `at` holds the `T` just written and nothing else refers to it.
    let out = f(unsafe { &mut *at.as_ptr() });
    // SAFETY: `at` still holds that `T`, dropped once here; the block is freed with the layout
    // it was allocated with.
    unsafe {
        at.drop_in_place();
        std::alloc::dealloc(block.as_ptr(), layout);
    }
    out
}

/// The best of five runs of `run`, which returns ns per operation.
fn best(mut run: impl FnMut() -> f64) -> f64 {
    (0..5).map(|_| run()).fold(f64::MAX, f64::min)
}

fn tracked8(arena: &mut Tracked<Arena, &'static str>) -> f64 {
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

fn bump8(arena: &mut Arena) -> f64 {
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

/// xorshift64 (13, 7, 17).
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn churn(pool: &mut Pool<[u64; 8]>) -> f64 {
    const LIVE: u64 = 1_000;
    let mut keys: Vec<Handle<[u64; 8]>> = (0..LIVE).map(|i| pool.insert([i; 8])).collect();
    let mut state = 7u64.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let steps: Vec<(usize, usize)> = (0..200_000)
        .map(|_| {
            let remove = (next(&mut state) % LIVE) as usize;
            (remove, (next(&mut state) % LIVE) as usize)
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
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let layout = |state: &mut u64| {
        Layout::from_size_align(16 + (next(state) % 4081) as usize, 8).expect("a small layout")
    };
    let mut live: Vec<NonNull<u8>> = (0..256).map(|_| heap.alloc(layout(&mut state))).collect();
    let steps: Vec<(usize, Layout)> = (0..100_000)
        .map(|_| ((next(&mut state) % 256) as usize, layout(&mut state)))
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

/// One line per offset: `name`'s ns per operation at `offset` bytes past a cache line.
fn scan<T>(name: &str, make: impl Fn() -> T, run: impl Fn(&mut T) -> f64) {
    let times: Vec<f64> = (0..64)
        .step_by(align_of::<T>())
        .map(|offset| placed(offset, make(), &run))
        .collect();
    let (low, high) = times
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let cells: Vec<String> = (0..64)
        .step_by(align_of::<T>())
        .zip(&times)
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
        bump8,
    );
    scan(
        "Tracked<Arena> with a budget, alloc of 8 bytes",
        || {
            Tracked::new(Arena::with_capacity(1 << 20), "placed", "Bench")
                .with_budget(Budget::fail(1 << 30))
        },
        tracked8,
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
