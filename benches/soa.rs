//! SoA containers against their peers, side by side in one run: `Vec<Particle>` (AoS), a
//! hand-written `Vec` per field, soa_derive 0.14's `ParticleVec`, soa-rs 1.0's `Soa<Particle>` and
//! our `SoaVec<Particle>`, on a 7-`f32` particle (position, velocity, life).
//!
//! `cargo bench -p arena-kit-benches --bench soa -- --warm-up-time 1 --measurement-time 3`
//! 1,000,000 particles by default; `ARENA_KIT_BENCH_16M=1` adds 16,000,000 (448 MB per layout).
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const DT: f32 = 1.0 / 60.0;

#[path = "support/particle.rs"]
mod ours;

mod sd {
    #[derive(soa_derive::StructOfArray, Clone, Copy)]
    #[soa_derive(Clone)]
    pub struct Particle {
        pub x: f32,
        pub y: f32,
        pub z: f32,
        pub vx: f32,
        pub vy: f32,
        pub vz: f32,
        pub life: f32,
    }
}

mod sr {
    use soa_rs::Soars;

    #[derive(Soars, Clone, Copy)]
    pub struct Particle {
        pub x: f32,
        pub y: f32,
        pub z: f32,
        pub vx: f32,
        pub vy: f32,
        pub vz: f32,
        pub life: f32,
    }
}

/// A hand-written SoA `ParticleSystem`: one `Vec` per field, as a C++ engine writes it.
#[derive(Default, Clone)]
struct Hand {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    vx: Vec<f32>,
    vy: Vec<f32>,
    vz: Vec<f32>,
    life: Vec<f32>,
}

impl Hand {
    fn with_capacity(n: usize) -> Self {
        let v = || Vec::with_capacity(n);
        Hand {
            x: v(),
            y: v(),
            z: v(),
            vx: v(),
            vy: v(),
            vz: v(),
            life: v(),
        }
    }
    fn push(&mut self, p: ours::Particle) {
        self.x.push(p.x);
        self.y.push(p.y);
        self.z.push(p.z);
        self.vx.push(p.vx);
        self.vy.push(p.vy);
        self.vz.push(p.vz);
        self.life.push(p.life);
    }
}

use ours::particle as seed;

fn to_sd(p: ours::Particle) -> sd::Particle {
    sd::Particle {
        x: p.x,
        y: p.y,
        z: p.z,
        vx: p.vx,
        vy: p.vy,
        vz: p.vz,
        life: p.life,
    }
}
fn to_sr(p: ours::Particle) -> sr::Particle {
    sr::Particle {
        x: p.x,
        y: p.y,
        z: p.z,
        vx: p.vx,
        vy: p.vy,
        vz: p.vz,
        life: p.life,
    }
}

fn sizes() -> Vec<usize> {
    let mut s = vec![1_000_000];
    if std::env::var_os("ARENA_KIT_BENCH_16M").is_some() {
        s.push(16_000_000);
    }
    s
}

/// `x += vx * dt` over every particle.
fn update_x(c: &mut Criterion) {
    let mut g = c.benchmark_group("soa/update_x");
    for n in sizes() {
        g.throughput(Throughput::Elements(n as u64));
        let mut aos: Vec<ours::Particle> = (0..n).map(seed).collect();
        g.bench_function(BenchmarkId::new("aos_vec", n), |b| {
            b.iter(|| {
                for p in aos.iter_mut() {
                    p.x += p.vx * DT;
                }
                black_box(&aos);
            })
        });
        drop(aos);
        let mut hand = Hand::with_capacity(n);
        (0..n).for_each(|i| hand.push(seed(i)));
        g.bench_function(BenchmarkId::new("hand_soa", n), |b| {
            b.iter(|| {
                for (x, vx) in hand.x.iter_mut().zip(&hand.vx) {
                    *x += vx * DT;
                }
                black_box(&hand.x);
            })
        });
        drop(hand);
        let mut ours: arena_kit::soa::SoaVec<ours::Particle> = (0..n).map(seed).collect();
        g.bench_function(BenchmarkId::new("soavec", n), |b| {
            b.iter(|| {
                ours::update_x_zip(&mut ours, DT);
                black_box(ours.slices().x);
            })
        });
        g.bench_function(BenchmarkId::new("soavec_chunks8", n), |b| {
            b.iter(|| {
                ours::update_x_chunks8(&mut ours, DT);
                black_box(ours.slices().x);
            })
        });
        drop(ours);
        let mut sdv = sd::ParticleVec::with_capacity(n);
        (0..n).for_each(|i| sdv.push(to_sd(seed(i))));
        g.bench_function(BenchmarkId::new("soa_derive", n), |b| {
            b.iter(|| {
                for (x, vx) in sdv.x.iter_mut().zip(&sdv.vx) {
                    *x += vx * DT;
                }
                black_box(&sdv.x);
            })
        });
        drop(sdv);
        let mut srv = soa_rs::Soa::<sr::Particle>::with_capacity(n);
        (0..n).for_each(|i| srv.push(to_sr(seed(i))));
        g.bench_function(BenchmarkId::new("soa_rs", n), |b| {
            b.iter(|| {
                let s = srv.slices_mut();
                for (x, vx) in s.x.iter_mut().zip(s.vx.iter()) {
                    *x += vx * DT;
                }
                black_box(srv.x());
            })
        });
    }
    g.finish();
}

/// Push `n` particles, from empty (`grow`) and into reserved capacity (`reserved`).
fn push(c: &mut Criterion) {
    for reserved in [false, true] {
        let name = if reserved {
            "soa/push_reserved"
        } else {
            "soa/push_empty"
        };
        let mut g = c.benchmark_group(name);
        g.sample_size(10);
        for n in sizes() {
            let cap = if reserved { n } else { 0 };
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(BenchmarkId::new("aos_vec", n), |b| {
                b.iter(|| {
                    let mut v = Vec::with_capacity(cap);
                    (0..n).for_each(|i| v.push(seed(i)));
                    v
                })
            });
            g.bench_function(BenchmarkId::new("hand_soa", n), |b| {
                b.iter(|| {
                    let mut v = Hand::with_capacity(cap);
                    (0..n).for_each(|i| v.push(seed(i)));
                    v
                })
            });
            g.bench_function(BenchmarkId::new("soavec", n), |b| {
                b.iter(|| {
                    let mut v = arena_kit::soa::SoaVec::with_capacity(cap);
                    (0..n).for_each(|i| v.push(seed(i)));
                    v
                })
            });
            g.bench_function(BenchmarkId::new("soa_derive", n), |b| {
                b.iter(|| {
                    let mut v = sd::ParticleVec::with_capacity(cap);
                    (0..n).for_each(|i| v.push(to_sd(seed(i))));
                    v
                })
            });
            g.bench_function(BenchmarkId::new("soa_rs", n), |b| {
                b.iter(|| {
                    let mut v = soa_rs::Soa::<sr::Particle>::with_capacity(cap);
                    (0..n).for_each(|i| v.push(to_sr(seed(i))));
                    v
                })
            });
        }
        g.finish();
    }
}

/// A fixed pseudo-random sequence of indices.
fn random_indices(n: usize, count: usize) -> Vec<usize> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % n as u64) as usize
        })
        .collect()
}

/// Read whole rows (all 7 fields) at 100,000 random indices.
fn random_rows(c: &mut Criterion) {
    let mut g = c.benchmark_group("soa/random_rows");
    for n in sizes() {
        let idx = random_indices(n, 100_000);
        g.throughput(Throughput::Elements(idx.len() as u64));
        let aos: Vec<ours::Particle> = (0..n).map(seed).collect();
        g.bench_function(BenchmarkId::new("aos_vec", n), |b| {
            b.iter(|| {
                idx.iter().fold(0.0f32, |acc, &i| {
                    let p = &aos[i];
                    acc + p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
                })
            })
        });
        drop(aos);
        let mut hand = Hand::with_capacity(n);
        (0..n).for_each(|i| hand.push(seed(i)));
        g.bench_function(BenchmarkId::new("hand_soa", n), |b| {
            b.iter(|| {
                idx.iter().fold(0.0f32, |acc, &i| {
                    acc + hand.x[i]
                        + hand.y[i]
                        + hand.z[i]
                        + hand.vx[i]
                        + hand.vy[i]
                        + hand.vz[i]
                        + hand.life[i]
                })
            })
        });
        drop(hand);
        let ours: arena_kit::soa::SoaVec<ours::Particle> = (0..n).map(seed).collect();
        g.bench_function(BenchmarkId::new("soavec", n), |b| {
            b.iter(|| {
                idx.iter().fold(0.0f32, |acc, &i| {
                    let p = ours.get(i).unwrap();
                    acc + p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
                })
            })
        });
        drop(ours);
        let mut sdv = sd::ParticleVec::with_capacity(n);
        (0..n).for_each(|i| sdv.push(to_sd(seed(i))));
        g.bench_function(BenchmarkId::new("soa_derive", n), |b| {
            b.iter(|| {
                idx.iter().fold(0.0f32, |acc, &i| {
                    let p = sdv.get(i).unwrap();
                    acc + p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
                })
            })
        });
        drop(sdv);
        let mut srv = soa_rs::Soa::<sr::Particle>::with_capacity(n);
        (0..n).for_each(|i| srv.push(to_sr(seed(i))));
        g.bench_function(BenchmarkId::new("soa_rs", n), |b| {
            b.iter(|| {
                idx.iter().fold(0.0f32, |acc, &i| {
                    let p = srv.get(i).unwrap();
                    acc + p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
                })
            })
        });
    }
    g.finish();
}

/// Sort by one field (`life`, which has many ties, so stability matters), stably.
fn sort(c: &mut Criterion) {
    let mut g = c.benchmark_group("soa/sort_by_life");
    g.sample_size(10);
    for n in sizes() {
        g.throughput(Throughput::Elements(n as u64));
        let aos: Vec<ours::Particle> = (0..n).map(seed).collect();
        g.bench_function(BenchmarkId::new("aos_vec", n), |b| {
            b.iter_batched_ref(
                || aos.clone(),
                |v| v.sort_by(|a, b| a.life.total_cmp(&b.life)),
                BatchSize::LargeInput,
            )
        });
        let mut hand = Hand::with_capacity(n);
        (0..n).for_each(|i| hand.push(seed(i)));
        g.bench_function(BenchmarkId::new("hand_soa", n), |b| {
            b.iter_batched_ref(
                || hand.clone(),
                |h| {
                    let mut order: Vec<usize> = (0..h.life.len()).collect();
                    order.sort_by(|&a, &b| h.life[a].total_cmp(&h.life[b]));
                    for col in [
                        &mut h.x,
                        &mut h.y,
                        &mut h.z,
                        &mut h.vx,
                        &mut h.vy,
                        &mut h.vz,
                        &mut h.life,
                    ] {
                        let sorted: Vec<f32> = order.iter().map(|&i| col[i]).collect();
                        *col = sorted;
                    }
                },
                BatchSize::LargeInput,
            )
        });
        let ours: arena_kit::soa::SoaVec<ours::Particle> = (0..n).map(seed).collect();
        g.bench_function(BenchmarkId::new("soavec", n), |b| {
            b.iter_batched_ref(
                || ours.clone(),
                |v| v.sort_by(|a, b| a.life.total_cmp(b.life)),
                BatchSize::LargeInput,
            )
        });
        // Unstable and in place (no allocation): an introsort of whole-row swaps.
        g.bench_function(BenchmarkId::new("soavec_unstable", n), |b| {
            b.iter_batched_ref(
                || ours.clone(),
                |v| v.sort_unstable_by(|a, b| a.life.total_cmp(b.life)),
                BatchSize::LargeInput,
            )
        });
        let mut sdv = sd::ParticleVec::with_capacity(n);
        (0..n).for_each(|i| sdv.push(to_sd(seed(i))));
        g.bench_function(BenchmarkId::new("soa_derive", n), |b| {
            b.iter_batched_ref(
                || sdv.clone(),
                |v| v.as_mut_slice().sort_by(|a, b| a.life.total_cmp(b.life)),
                BatchSize::LargeInput,
            )
        });
        // soa-rs 1.0 has no sort.
    }
    g.finish();
}

/// Pool churn: 100,000 live particles; each step removes a pseudo-random live one and inserts
/// a new one (100,000 steps).
fn pool_churn(c: &mut Criterion) {
    use slotmap::{DefaultKey, DenseSlotMap, SlotMap};
    let live = 100_000;
    let steps = 100_000;
    let picks = random_indices(live, steps);
    let mut g = c.benchmark_group("soa/pool_churn");
    g.throughput(Throughput::Elements(steps as u64));
    g.sample_size(20);
    g.bench_function(BenchmarkId::new("soapool", live), |b| {
        b.iter_batched_ref(
            || {
                let mut p = arena_kit::soa::SoaPool::with_capacity(live);
                let hs: Vec<_> = (0..live).map(|i| p.insert(seed(i))).collect();
                (p, hs)
            },
            |(p, hs)| {
                for (step, &i) in picks.iter().enumerate() {
                    p.remove(hs[i]);
                    hs[i] = p.insert(seed(step));
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("slotmap", live), |b| {
        b.iter_batched_ref(
            || {
                let mut p = SlotMap::with_capacity(live);
                let hs: Vec<DefaultKey> = (0..live).map(|i| p.insert(seed(i))).collect();
                (p, hs)
            },
            |(p, hs)| {
                for (step, &i) in picks.iter().enumerate() {
                    p.remove(hs[i]);
                    hs[i] = p.insert(seed(step));
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("dense_slotmap", live), |b| {
        b.iter_batched_ref(
            || {
                let mut p = DenseSlotMap::with_capacity(live);
                let hs: Vec<DefaultKey> = (0..live).map(|i| p.insert(seed(i))).collect();
                (p, hs)
            },
            |(p, hs)| {
                for (step, &i) in picks.iter().enumerate() {
                    p.remove(hs[i]);
                    hs[i] = p.insert(seed(step));
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// A one-column pass (`x += vx * dt`) over a pool of 1,000,000 live particles after churn.
fn pool_update_x(c: &mut Criterion) {
    use slotmap::{DefaultKey, DenseSlotMap};
    let n = 1_000_000;
    let mut g = c.benchmark_group("soa/pool_update_x");
    g.throughput(Throughput::Elements(n as u64));
    let mut ours = arena_kit::soa::SoaPool::with_capacity(n + 1);
    let hs: Vec<_> = (0..n + 1).map(|i| ours.insert(seed(i))).collect();
    ours.remove(hs[n / 2]);
    g.bench_function(BenchmarkId::new("soapool", n), |b| {
        b.iter(|| {
            let s = ours.slices_mut();
            for (x, vx) in s.x.iter_mut().zip(s.vx.iter()) {
                *x += vx * DT;
            }
            black_box(ours.slices().x);
        })
    });
    drop(ours);
    let mut dense = DenseSlotMap::with_capacity(n + 1);
    let keys: Vec<DefaultKey> = (0..n + 1).map(|i| dense.insert(seed(i))).collect();
    dense.remove(keys[n / 2]);
    g.bench_function(BenchmarkId::new("dense_slotmap", n), |b| {
        b.iter(|| {
            for p in dense.values_mut() {
                p.x += p.vx * DT;
            }
            black_box(&dense);
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    update_x,
    push,
    random_rows,
    sort,
    pool_churn,
    pool_update_x
);
criterion_main!(benches);
