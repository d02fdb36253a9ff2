//! A particle system, three ways: 1,000,000 particles updated as an array of structs
//! (`Vec<Particle>`), as struct-of-arrays columns (`SoaVec<Particle>`) and as tiles of 8 or 16
//! rows (`SoaTiles<Particle, N>`, AoSoA), with the time of each pass, of whole rows read at
//! random, and the memory layout of the first two.
//!
//! `cargo run --release --example particles` (`ARENA_KIT_SMOKE=1` for a quick small run).
#![allow(dead_code)]

use std::time::{Duration, Instant};

use arena_kit::prelude::*;

/// A particle: seven `f32`, 28 bytes, no padding.
#[derive(Layout, Soa, Clone, Copy, Debug, PartialEq)]
#[layout(size = 28, max_padding = 0)]
#[soa(tiled)]
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

/// The same pass over tiles of 16: each tile's `x` and `vx` are `[f32; 16]`, a whole cache line
/// each, and the last `len % 16` rows are plain slices.
#[inline(never)]
fn x_only_tiles16(ps: &mut SoaTiles<Particle, 16>, dt: f32) {
    for ParticleTileMut { x, vx, .. } in ps.tiles_mut() {
        for i in 0..16 {
            x[i] += vx[i] * dt;
        }
    }
    let ParticleSlicesMut { x, vx, .. } = ps.tail_mut();
    for (x, vx) in x.iter_mut().zip(vx.iter()) {
        *x += vx * dt;
    }
}

/// Row indices at random (xorshift), the same for every layout.
fn random_rows(n: usize, count: usize) -> Vec<u32> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as u32
        })
        .collect()
}

/// The sum of every field of one row.
fn row_sum(r: ParticleRef<'_>) -> f32 {
    r.x + r.y + r.z + r.vx + r.vy + r.vz + r.life
}

/// Whole rows read at random: every field of each row in `rows`.
#[inline(never)]
fn read_rows_aos(ps: &[Particle], rows: &[u32]) -> f32 {
    rows.iter()
        .map(|&i| {
            let p = &ps[i as usize];
            p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
        })
        .sum()
}

#[inline(never)]
fn read_rows_soa(ps: &SoaVec<Particle>, rows: &[u32]) -> f32 {
    rows.iter()
        .map(|&i| row_sum(ps.get(i as usize).expect("in range")))
        .sum()
}

#[inline(never)]
fn read_rows_tiles(ps: &SoaTiles<Particle, 8>, rows: &[u32]) -> f32 {
    rows.iter()
        .map(|&i| row_sum(ps.get(i as usize).expect("in range")))
        .sum()
}

/// The cache lines one row's fields sit in.
fn lines_of(r: ParticleRef<'_>) -> usize {
    let mut lines: Vec<usize> = [r.x, r.y, r.z, r.vx, r.vy, r.vz, r.life]
        .iter()
        .map(|f| *f as *const f32 as usize / CACHE_LINE)
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines.len()
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
    println!("== Particles: array of structs, struct of arrays and tiles ({n} particles) ==\n");

    let mut aos: Vec<Particle> = (0..n).map(seed).collect();
    let mut soa: SoaVec<Particle> = (0..n).map(seed).collect();

    let aos_all = best_of(runs, || update_aos(&mut aos, dt));
    let soa_all = best_of(runs, || update_soa(&mut soa, dt));
    let aos_x = best_of(runs, || x_only_aos(&mut aos, dt));
    let soa_x = best_of(runs, || x_only_soa(&mut soa, dt));
    let mut lanes: SoaVec<Particle> = (0..n).map(seed).collect();
    let soa_lanes = best_of(runs, || x_only_soa_lanes(&mut lanes, dt));
    let mut tiles16: SoaTiles<Particle, 16> = (0..n).map(seed).collect();
    let tiles_x = best_of(runs, || x_only_tiles16(&mut tiles16, dt));

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
        "the same x pass in 8-lane chunks: {:.3} ms, {:.2}x the time of the plain column loop",
        ms(soa_lanes),
        soa_lanes.as_secs_f64() / soa_x.as_secs_f64()
    );
    println!(
        "the same x pass over SoaTiles<Particle, 16>: {:.3} ms, {:.2}x the plain column loop",
        ms(tiles_x),
        tiles_x.as_secs_f64() / soa_x.as_secs_f64()
    );
    println!(
        "(a tile's x and vx lines sit between the other fields' lines: a pass over 2 of 7 fields\n \
         reads a strided stream: as fast as two dense columns at a few MB, about 2x slower at tens of MB)\n"
    );

    // Whole rows at random: columns put a row's 7 fields in 7 places, tiles of 8 keep them in
    // one tile, AoS in one 28-byte element.
    // The particles as they are now (both layouts above agree), tiled.
    let tiles8: SoaTiles<Particle, 8> = aos.iter().copied().collect();
    let rows = random_rows(n, n);
    let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
    let t_aos = best_of(runs, || a = read_rows_aos(&aos, &rows));
    let t_soa = best_of(runs, || b = read_rows_soa(&soa, &rows));
    let t_tiles = best_of(runs, || c = read_rows_tiles(&tiles8, &rows));
    assert!(a == b && b == c, "the three layouts read different rows");
    println!("{n} whole rows read at random   Vec<Particle>   SoaVec   SoaTiles<_, 8>");
    println!(
        "time                          {:>10.3} ms {:>7.3} ms {:>10.3} ms",
        ms(t_aos),
        ms(t_soa),
        ms(t_tiles)
    );
    let mid = n / 2 + 3;
    println!(
        "cache lines row {mid} spans     {:>13} {:>10} {:>16}\n",
        (std::mem::size_of::<Particle>() + (std::ptr::from_ref(&aos[mid]) as usize % CACHE_LINE))
            .div_ceil(CACHE_LINE),
        lines_of(soa.get(mid).expect("in range")),
        lines_of(tiles8.get(mid).expect("in range")),
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
