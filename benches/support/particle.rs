//! The 7-`f32` particle of the SoA benches, and the column passes two benches time.

// Each bench uses the part it needs.
#![allow(dead_code)]

use arena_kit::soa::SoaVec;

/// Position, velocity and remaining life: 28 bytes, align 4.
#[derive(arena_kit::Soa, Clone, Copy)]
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
