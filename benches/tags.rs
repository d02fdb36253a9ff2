//! The cost of memory tags: a tracked arena (and pool) beside the untracked one, bumpalo as the
//! peer, and the cost of taking a report. See BENCHMARKS.md for the figures.
//!
//! Run: `cargo bench -p arena-kit-benches --bench tags -- --warm-up-time 1 --measurement-time 3`

#[path = "support/interleaved.rs"]
mod interleaved;

use interleaved::Interleaved;
use std::hint::black_box;

use arena_kit::arena::Arena;
use arena_kit::pool::Pool;
use arena_kit::tags::{Budget, Registry, Tracked};
use criterion::{Criterion, criterion_group};

const N: usize = 10_000;

/// The 64-byte struct of the performance targets (its fields are only written).
#[derive(Clone, Copy)]
#[allow(dead_code)]
struct Obj {
    fields: [u64; 8],
}

#[inline(always)]
fn obj(i: usize) -> Obj {
    let i = i as u64;
    Obj {
        fields: [i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7],
    }
}

/// A budget never reached, so every allocation takes the check's fast path.
const ROOMY: Budget = Budget::fail(1 << 30);

fn arenas() -> (
    Arena,
    Tracked<Arena, &'static str>,
    Tracked<Arena, &'static str>,
) {
    (
        Arena::with_capacity(1 << 20),
        Tracked::new(Arena::with_capacity(1 << 20), "tagged", "Bench"),
        Tracked::new(Arena::with_capacity(1 << 20), "budgeted", "Bench").with_budget(ROOMY),
    )
}

fn pools() -> (Pool<Obj>, Tracked<Pool<Obj>, &'static str>) {
    (
        Pool::with_capacity(N),
        Tracked::new(Pool::with_capacity(N), "budgeted", "Bench").with_budget(ROOMY),
    )
}

fn alloc_then_reset(c: &mut Criterion) {
    let mut g = c.benchmark_group("tags_alloc_64B_x10k_then_reset");
    let (mut plain, mut tagged, mut budgeted) = arenas();
    g.bench_function("arena untagged", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(plain.alloc(obj(i)));
            }
            plain.reset();
        })
    });
    g.bench_function("arena tagged, no budget", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(tagged.alloc(obj(i)));
            }
            tagged.reset();
        })
    });
    g.bench_function("arena tagged, budget", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(budgeted.alloc(obj(i)));
            }
            budgeted.reset();
        })
    });
    let mut bump = bumpalo::Bump::with_capacity(1 << 20);
    g.bench_function("bumpalo", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(bump.alloc(obj(i)));
            }
            bump.reset();
        })
    });
    g.finish();
}

fn insert_then_clear(c: &mut Criterion) {
    let mut g = c.benchmark_group("tags_pool_insert_64B_x10k_then_clear");
    let (mut plain, mut budgeted) = pools();
    g.bench_function("pool untagged", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(plain.insert(obj(i)));
            }
            plain.clear();
        })
    });
    g.bench_function("pool tagged, budget", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(budgeted.insert(obj(i)));
            }
            budgeted.clear();
        })
    });
    g.finish();
}

fn report(c: &mut Criterion) {
    let (_, tagged, budgeted) = arenas();
    let (_, mut pool) = pools();
    for i in 0..100 {
        tagged.alloc(obj(i));
        pool.insert(obj(i));
    }
    let mut registry = Registry::with_history(64);
    c.bench_function("tags_end_frame_3_allocators", |b| {
        b.iter(|| black_box(registry.end_frame(&[&tagged, &budgeted, &pool]).is_ok()))
    });
    pool.clear();
}

/// Best-of-N timings taken round-robin in one loop, so load from other processes on a shared
/// machine hits every contender alike; printed before criterion's own (mean-based) figures.
fn interleaved_best_of() {
    let rounds = if std::env::var_os("ARENA_KIT_SMOKE").is_some() {
        5
    } else {
        400
    };
    let (mut plain, mut tagged, mut budgeted) = arenas();
    let mut bump = bumpalo::Bump::with_capacity(1 << 20);
    let (mut pool, mut tracked_pool) = pools();
    let mut bench = Interleaved::new(&[
        "arena untagged",
        "arena tagged, no budget",
        "arena tagged, budget",
        "bumpalo",
        "pool untagged",
        "pool tagged, budget",
    ]);
    for _ in 0..rounds {
        bench.time(0, || {
            for i in 0..N {
                black_box(plain.alloc(obj(i)));
            }
            plain.reset();
        });
        bench.time(1, || {
            for i in 0..N {
                black_box(tagged.alloc(obj(i)));
            }
            tagged.reset();
        });
        bench.time(2, || {
            for i in 0..N {
                black_box(budgeted.alloc(obj(i)));
            }
            budgeted.reset();
        });
        bench.time(3, || {
            for i in 0..N {
                black_box(bump.alloc(obj(i)));
            }
            bump.reset();
        });
        bench.time(4, || {
            for i in 0..N {
                black_box(pool.insert(obj(i)));
            }
            pool.clear();
        });
        bench.time(5, || {
            for i in 0..N {
                black_box(tracked_pool.insert(obj(i)));
            }
            tracked_pool.clear();
        });
    }
    bench.print(&format!(
        "interleaved best of {rounds} rounds (10,000 x 64-byte values per round):"
    ));
    Interleaved::print_ratio("tagged / untagged arena", bench.ratio(1, 0));
    Interleaved::print_ratio("budgeted / untagged arena", bench.ratio(2, 0));
    Interleaved::print_ratio("budgeted arena / bumpalo", bench.ratio(2, 3));
    Interleaved::print_ratio("budgeted / untagged pool", bench.ratio(5, 4));
}

criterion_group!(benches, alloc_then_reset, insert_then_clear, report);

fn main() {
    interleaved_best_of();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
