//! Arena benchmarks, ours beside the peers in one run (see BENCHMARKS.md for the figures).
//!
//! Run: `cargo bench --bench arena -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use arena_kit::arena::Arena;
use criterion::{Criterion, criterion_group, criterion_main};

const N: usize = 10_000;

/// The 64-byte struct of the performance targets.
#[derive(Clone, Copy)]
struct Obj {
    fields: [u64; 8],
}

#[inline(always)]
fn obj(i: usize) -> Obj {
    let i = i as u64;
    Obj { fields: [i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7] }
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
                black_box(ours.alloc(Droppy { fields: obj(i).fields }));
            }
            ours.reset();
        })
    });
    let mut bs: bump_scope::Bump = bump_scope::Bump::with_size(2 << 20);
    g.bench_function("bump-scope BumpBox (held in a bump slice, dropped, reset)", |b| {
        b.iter(|| {
            bs.scoped(|s| {
                let mut i = 0;
                let held = s.alloc_slice_fill_with(N, || {
                    i += 1;
                    s.alloc(Droppy { fields: obj(i).fields })
                });
                black_box(&held);
            })
        })
    });
    g.finish();
}

criterion_group!(benches, alloc_then_reset, scoped, drop_values);
criterion_main!(benches);
