//! The 7-`f32` particle of the SoA benches, the column passes two benches time, and the same
//! pass over tiled storage (`SoaTiles`) and a hand-written AoSoA.

// Each bench uses the part it needs.
#![allow(dead_code)]

use arena_kit::soa::{SoaTiles, SoaVec};

/// Position, velocity and remaining life: 28 bytes, align 4.
#[derive(arena_kit::Soa, Clone, Copy)]
#[soa(tiled)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub vx: f32,
    pub vy: f32,
    pub vz: f32,
    pub life: f32,
}

/// The particle the benches fill their containers with at index `i`.
pub fn particle(i: usize) -> Particle {
    let f = (i % 1000) as f32;
    Particle {
        x: f,
        y: -f,
        z: f * 0.5,
        vx: 1.0,
        vy: 2.0,
        vz: 3.0,
        life: (i % 97) as f32,
    }
}

/// `x += vx * dt` over the `x` and `vx` columns, zipped.
#[inline]
pub fn update_x_zip(v: &mut SoaVec<Particle>, dt: f32) {
    let s = v.slices_mut();
    for (x, vx) in s.x.iter_mut().zip(s.vx.iter()) {
        *x += vx * dt;
    }
}

/// The same pass over the same two columns in std's chunks of 8 (`<[f32]>::chunks_exact_mut(8)`
/// zipped with `chunks_exact(8)`), then the remainder: what `chunks_exact_mut::<8>()` does, written
/// with the standard library's slices.
#[inline]
pub fn update_x_std_chunks8(v: &mut SoaVec<Particle>, dt: f32) {
    let s = v.slices_mut();
    let mut xs = s.x.chunks_exact_mut(8);
    let mut vxs = s.vx.chunks_exact(8);
    for (x, vx) in (&mut xs).zip(&mut vxs) {
        for k in 0..8 {
            x[k] += vx[k] * dt;
        }
    }
    for (x, vx) in xs.into_remainder().iter_mut().zip(vxs.remainder()) {
        *x += vx * dt;
    }
}

/// The same pass in chunks of 8 rows (`chunks_exact_mut::<8>()`), then the remainder.
#[inline]
pub fn update_x_chunks8(v: &mut SoaVec<Particle>, dt: f32) {
    let mut chunks = v.chunks_exact_mut::<8>();
    for c in &mut chunks {
        for k in 0..8 {
            c.x[k] += c.vx[k] * dt;
        }
    }
    let rest = chunks.into_remainder();
    for (x, vx) in rest.x.iter_mut().zip(rest.vx.iter()) {
        *x += vx * dt;
    }
}

/// `x += vx * dt` over tiles of `N` (`tiles_mut()`: an `&mut [f32; N]` and an `&[f32; N]` per
/// tile), then the partial last tile's rows as slices.
#[inline]
pub fn update_x_tiles<const N: usize>(v: &mut SoaTiles<Particle, N>, dt: f32) {
    for ParticleTileMut { x, vx, .. } in v.tiles_mut() {
        for k in 0..N {
            x[k] += vx[k] * dt;
        }
    }
    let ParticleSlicesMut { x, vx, .. } = v.tail_mut();
    for (x, vx) in x.iter_mut().zip(vx.iter()) {
        *x += vx * dt;
    }
}

/// A hand-written AoSoA block of 8 particles, as a C++ engine writes it: every field's 8 lanes
/// side by side, 224 bytes, on a 32-byte boundary (what `SoaTiles<Particle, 8>` stores).
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub struct Block8 {
    pub x: [f32; 8],
    pub y: [f32; 8],
    pub z: [f32; 8],
    pub vx: [f32; 8],
    pub vy: [f32; 8],
    pub vz: [f32; 8],
    pub life: [f32; 8],
}

/// Hand-written AoSoA particles: blocks of 8, the last one padded with zeroed lanes.
pub struct HandAosoa {
    pub blocks: Vec<Block8>,
    pub len: usize,
}

impl HandAosoa {
    /// Particles `0..n`, as `particle(i)`.
    pub fn new(n: usize) -> Self {
        let mut blocks = vec![Block8::default(); n.div_ceil(8)];
        for i in 0..n {
            let (b, k) = (&mut blocks[i / 8], i % 8);
            let p = particle(i);
            b.x[k] = p.x;
            b.y[k] = p.y;
            b.z[k] = p.z;
            b.vx[k] = p.vx;
            b.vy[k] = p.vy;
            b.vz[k] = p.vz;
            b.life[k] = p.life;
        }
        HandAosoa { blocks, len: n }
    }

    /// `x += vx * dt`: full blocks 8 lanes at a time, then the live lanes of the last one.
    #[inline]
    pub fn update_x(&mut self, dt: f32) {
        let full = self.len / 8;
        for b in &mut self.blocks[..full] {
            for k in 0..8 {
                b.x[k] += b.vx[k] * dt;
            }
        }
        if let Some(b) = self.blocks.get_mut(full) {
            for k in 0..self.len % 8 {
                b.x[k] += b.vx[k] * dt;
            }
        }
    }

    /// The sum of every field of particle `i`.
    #[inline]
    pub fn row_sum(&self, i: usize) -> f32 {
        let (b, k) = (&self.blocks[i / 8], i % 8);
        b.x[k] + b.y[k] + b.z[k] + b.vx[k] + b.vy[k] + b.vz[k] + b.life[k]
    }
}
