//! Arena benchmarks, ours beside the peers in one run (see BENCHMARKS.md for the figures).
//!
//! Run: `cargo bench -p arena-kit-benches --bench arena -- --warm-up-time 1 --measurement-time 3`

#[path = "support/interleaved.rs"]
mod interleaved;

use interleaved::Interleaved;
use std::hint::black_box;

use arena_kit::arena::Arena;
use criterion::{Criterion, criterion_group};

const N: usize = 10_000;

/// The 64-byte struct of the performance targets.
#[derive(Clone, Copy)]
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

/// A 64-byte value with drop glue.
struct Droppy {
    fields: [u64; 8],
}

impl Drop for Droppy {
    #[inline]
    fn drop(&mut self) {
        black_box(self.fields[0]);
    }
}

fn alloc_then_reset(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc_64B_x10k_then_reset");
    let mut ours = Arena::with_capacity(1 << 20);
    g.bench_function("arena-kit", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(ours.alloc(obj(i)));
            }
            ours.reset();
        })
    });
    let mut chained = Arena::chained(1 << 20);
    g.bench_function("arena-kit chained", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(chained.alloc(obj(i)));
            }
            chained.reset();
        })
    });
    let mut bumpalo = bumpalo::Bump::with_capacity(1 << 20);
    g.bench_function("bumpalo", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(bumpalo.alloc(obj(i)));
            }
            bumpalo.reset();
        })
    });
    let mut bs: bump_scope::Bump = bump_scope::Bump::with_size(1 << 20);
    g.bench_function("bump-scope", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(bs.alloc(obj(i)).into_mut());
            }
            bs.reset();
        })
    });
    let mut boxes: Vec<Box<Obj>> = Vec::with_capacity(N);
    g.bench_function("Box::new", |b| {
        b.iter(|| {
            for i in 0..N {
                boxes.push(black_box(Box::new(obj(i))));
            }
            boxes.clear();
        })
    });
    g.finish();
}

fn scoped(c: &mut Criterion) {
    let mut g = c.benchmark_group("scope_around_64B_x10k");
    let mut ours = Arena::with_capacity(1 << 20);
    ours.alloc(1u64); // something that outlives the scope
    g.bench_function("arena-kit scope", |b| {
        b.iter(|| {
            let scope = ours.scope();
            for i in 0..N {
                black_box(scope.alloc(obj(i)));
            }
        })
    });
    let mut bs: bump_scope::Bump = bump_scope::Bump::with_size(1 << 20);
    let _ = bs.alloc(1u64).into_mut();
    g.bench_function("bump-scope scoped", |b| {
        b.iter(|| {
            bs.scoped(|s| {
                for i in 0..N {
                    black_box(s.alloc(obj(i)).into_mut());
                }
            })
        })
    });
    g.finish();
}

fn drop_values(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc_droppable_64B_x10k_then_reset");
    let mut ours = Arena::with_capacity(2 << 20);
    g.bench_function("arena-kit (drop list)", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(ours.alloc(Droppy {
                    fields: obj(i).fields,
                }));
            }
            ours.reset();
        })
    });
    let mut bs: bump_scope::Bump = bump_scope::Bump::with_size(2 << 20);
    g.bench_function(
        "bump-scope BumpBox (held in a bump slice, dropped, reset)",
        |b| {
            b.iter(|| {
                bs.scoped(|s| {
                    let mut i = 0;
                    let held = s.alloc_slice_fill_with(N, || {
                        i += 1;
                        s.alloc(Droppy {
                            fields: obj(i).fields,
                        })
                    });
                    black_box(&held);
                })
            })
        },
    );
    g.finish();
}

/// Best-of-N timings taken round-robin in one loop, so load from other processes on a shared
/// machine hits every contender alike; printed before criterion's own (mean-based) figures.
fn interleaved_best_of() {
    let rounds = if std::env::var_os("ARENA_KIT_SMOKE").is_some() {
        5
    } else {
        400
    };
    let mut ours = Arena::with_capacity(1 << 20);
    let mut scoped_arena = Arena::with_capacity(1 << 20);
    let mut bumpalo = bumpalo::Bump::with_capacity(1 << 20);
    let mut bs: bump_scope::Bump = bump_scope::Bump::with_size(1 << 20);
    let mut bs_scoped: bump_scope::Bump = bump_scope::Bump::with_size(1 << 20);
    let mut droppy = Arena::with_capacity(2 << 20);
    let mut bs_drop: bump_scope::Bump = bump_scope::Bump::with_size(2 << 20);
    let mut boxes: Vec<Box<Obj>> = Vec::with_capacity(N);
    let mut bench = Interleaved::new(&[
        "alloc+reset arena-kit",
        "alloc+reset bumpalo",
        "alloc+reset bump-scope",
        "alloc+reset Box::new",
        "scope arena-kit",
        "scope bump-scope scoped",
        "droppable arena-kit",
        "droppable bump-scope BumpBox",
    ]);
    for _ in 0..rounds {
        bench.time(0, || {
            for i in 0..N {
                black_box(ours.alloc(obj(i)));
            }
            ours.reset();
        });
        bench.time(1, || {
            for i in 0..N {
                black_box(bumpalo.alloc(obj(i)));
            }
            bumpalo.reset();
        });
        bench.time(2, || {
            for i in 0..N {
                black_box(bs.alloc(obj(i)).into_mut());
            }
            bs.reset();
        });
        bench.time(3, || {
            for i in 0..N {
                boxes.push(black_box(Box::new(obj(i))));
            }
            boxes.clear();
        });
        bench.time(4, || {
            let scope = scoped_arena.scope();
            for i in 0..N {
                black_box(scope.alloc(obj(i)));
            }
        });
        bench.time(5, || {
            bs_scoped.scoped(|s| {
                for i in 0..N {
                    black_box(s.alloc(obj(i)).into_mut());
                }
            })
        });
        bench.time(6, || {
            for i in 0..N {
                black_box(droppy.alloc(Droppy {
                    fields: obj(i).fields,
                }));
            }
            droppy.reset();
        });
        bench.time(7, || {
            bs_drop.scoped(|s| {
                let mut i = 0;
                let held = s.alloc_slice_fill_with(N, || {
                    i += 1;
                    s.alloc(Droppy {
                        fields: obj(i).fields,
                    })
                });
                black_box(&held);
            })
        });
    }
    bench.print(&format!(
        "interleaved best of {rounds} rounds (10,000 x 64-byte values per round):"
    ));
    let best_peer = bench.best(1).min(bench.best(2));
    Interleaved::print_ratio(
        "alloc+reset ours / best peer",
        bench.best(0) as f64 / best_peer as f64,
    );
    Interleaved::print_ratio("Box::new / ours", bench.ratio(3, 0));
    Interleaved::print_ratio("scope ours / bump-scope scoped", bench.ratio(4, 5));
    Interleaved::print_ratio("droppable ours / bump-scope", bench.ratio(6, 7));
}

criterion_group!(benches, alloc_then_reset, scoped, drop_values);

fn main() {
    interleaved_best_of();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
