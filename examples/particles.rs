//! A particle system, both ways: 1,000,000 particles updated as an array of structs
//! (`Vec<Particle>`) and as struct-of-arrays columns (`SoaVec<Particle>`), with the time of each
//! pass and the memory layout of both.
//!
//! `cargo run --release --example particles` (`ARENA_KIT_SMOKE=1` for a quick small run).
#![allow(dead_code)]

use std::time::{Duration, Instant};

use arena_kit::prelude::*;

/// A particle: seven `f32`, 28 bytes, no padding.
#[derive(Layout, Soa, Clone, Copy, Debug, PartialEq)]
#[layout(size = 28, max_padding = 0)]
#[repr(C)]
pub struct Particle {
    /// Position.
    pub x: f32,
    /// Position.
    pub y: f32,
    /// Position.
    pub z: f32,
    /// Velocity.
    pub vx: f32,
    /// Velocity.
    pub vy: f32,
    /// Velocity.
    pub vz: f32,
    /// Seconds remaining.
    pub life: f32,
}

const CACHE_LINE: usize = 64;

fn seed(i: usize) -> Particle {
    let f = (i % 1000) as f32;
    Particle {
        x: f,
        y: -f,
        z: 0.5 * f,
        vx: 1.0,
        vy: 2.0,
        vz: -1.0,
        life: 3.0,
    }
}

/// `updatePositions` over an array of structs.
fn update_aos(ps: &mut [Particle], dt: f32) {
    for p in ps {
        p.x += p.vx * dt;
        p.y += p.vy * dt;
        p.z += p.vz * dt;
    }
}

/// `updatePositions` over columns.
#[inline(never)]
fn update_soa(ps: &mut SoaVec<Particle>, dt: f32) {
    let ParticleSlicesMut {
        x,
        y,
        z,
        vx,
        vy,
        vz,
        ..
    } = ps.slices_mut();
    for (x, vx) in x.iter_mut().zip(vx.iter()) {
        *x += vx * dt;
    }
    for (y, vy) in y.iter_mut().zip(vy.iter()) {
        *y += vy * dt;
    }
    for (z, vz) in z.iter_mut().zip(vz.iter()) {
        *z += vz * dt;
    }
}

/// The one-field pass whose cache lines are counted below: `x += vx * dt`.
#[inline(never)]
fn x_only_aos(ps: &mut [Particle], dt: f32) {
    for p in ps {
        p.x += p.vx * dt;
    }
}

#[inline(never)]
fn x_only_soa(ps: &mut SoaVec<Particle>, dt: f32) {
    let s = ps.slices_mut();
    for (x, vx) in s.x.iter_mut().zip(s.vx.iter()) {
        *x += vx * dt;
    }
}

/// The same pass in fixed lanes of 8: inside a chunk every column is exactly 8 long, so `0..8`
/// needs no bounds checks.
#[inline(never)]
fn x_only_soa_lanes(ps: &mut SoaVec<Particle>, dt: f32) {
    let mut chunks = ps.chunks_exact_mut::<8>();
    for c in &mut chunks {
        for i in 0..8 {
            c.x[i] += c.vx[i] * dt;
        }
    }
    let rest = chunks.into_remainder();
    for (x, vx) in rest.x.iter_mut().zip(rest.vx.iter()) {
        *x += vx * dt;
    }
}

/// The best of `runs` timings of `f`.
fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs both layouts, prints the timings and the layouts, and checks they agree.
pub fn run() {
    let smoke = std::env::var_os("ARENA_KIT_SMOKE").is_some();
    let n = if smoke { 10_000 } else { 1_000_000 };
    let runs = if smoke { 3 } else { 20 };
    let dt = 1.0 / 60.0;
    println!("== Particles: array of structs vs struct of arrays ({n} particles) ==\n");

    let mut aos: Vec<Particle> = (0..n).map(seed).collect();
    let mut soa: SoaVec<Particle> = (0..n).map(seed).collect();

    let aos_all = best_of(runs, || update_aos(&mut aos, dt));
    let soa_all = best_of(runs, || update_soa(&mut soa, dt));
    let aos_x = best_of(runs, || x_only_aos(&mut aos, dt));
    let soa_x = best_of(runs, || x_only_soa(&mut soa, dt));
    let mut lanes: SoaVec<Particle> = (0..n).map(seed).collect();
    let soa_lanes = best_of(runs, || x_only_soa_lanes(&mut lanes, dt));

    println!("pass                        AoS Vec<Particle>   SoaVec<Particle>   speed-up");
    println!(
        "updatePositions (x, y, z)   {:>10.3} ms       {:>10.3} ms      {:>5.2}x",
        ms(aos_all),
        ms(soa_all),
        aos_all.as_secs_f64() / soa_all.as_secs_f64()
    );
    println!(
        "x += vx * dt               {:>10.3} ms       {:>10.3} ms      {:>5.2}x",
        ms(aos_x),
        ms(soa_x),
        aos_x.as_secs_f64() / soa_x.as_secs_f64()
    );
    println!("(best of {runs} runs each; timings on a shared machine are noisy)\n");
    // Against the plain column loop, not against AoS: the lanes are only worth it if they beat
    // the zip above, which the compiler already vectorises.
    println!(
        "the same x pass in 8-lane chunks: {:.3} ms, {:.2}x the time of the plain column loop\n",
        ms(soa_lanes),
        soa_lanes.as_secs_f64() / soa_x.as_secs_f64()
    );

    // Both layouts did the same arithmetic in the same order per field.
    let same = aos
        .iter()
        .zip(soa.iter())
        .all(|(a, s)| a.x == *s.x && a.y == *s.y && a.z == *s.z && a.life == *s.life);
    assert!(same, "AoS and SoA disagree");

    println!("-- array of structs: one Particle per element --");
    println!("{}\n", Particle::LAYOUT);

    println!("-- struct of arrays: one column per field, all in one block --");
    let s = soa.slices();
    let base = s.x.as_ptr() as usize;
    let columns: [(&str, &[f32]); 7] = [
        ("x", s.x),
        ("y", s.y),
        ("z", s.z),
        ("vx", s.vx),
        ("vy", s.vy),
        ("vz", s.vz),
        ("life", s.life),
    ];
    println!("column  offset in block   bytes");
    for (name, col) in columns {
        println!(
            "{name:<6}  {:>15}   {:>9}",
            col.as_ptr() as usize - base,
            std::mem::size_of_val(col)
        );
    }
    let block = arena_kit::soa::block_layout::<Particle>(soa.capacity()).expect("fits");
    println!(
        "block: {} bytes aligned to {} ({} rows of capacity)\n",
        block.size(),
        block.align(),
        soa.capacity()
    );

    let aos_lines = (n * std::mem::size_of::<Particle>()).div_ceil(CACHE_LINE);
    let soa_lines = (n * std::mem::size_of::<f32>()).div_ceil(CACHE_LINE);
    println!(
        "cache lines a pass over `x` touches: AoS {aos_lines}, SoA {soa_lines} per column read \
         ({:.1}x fewer; for 1,000 particles it is 438 vs 63)",
        aos_lines as f64 / soa_lines as f64
    );
}

fn main() {
    run();
}
