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

/// A hand-written AoSoA of `$n`-row blocks, as a C++ engine writes it: every field's `$n` lanes
/// side by side, on an `$align`-byte boundary (what `SoaTiles<Particle, $n>` stores), the last
/// block padded with zeroed lanes.
macro_rules! hand_aosoa {
    ($(#[$doc:meta])* $aosoa:ident, $block:ident, $n:literal, $align:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        #[repr(C, align($align))]
        pub struct $block {
            pub x: [f32; $n],
            pub y: [f32; $n],
            pub z: [f32; $n],
            pub vx: [f32; $n],
            pub vy: [f32; $n],
            pub vz: [f32; $n],
            pub life: [f32; $n],
        }

        /// Hand-written AoSoA particles in blocks of this many rows.
        pub struct $aosoa {
            pub blocks: Vec<$block>,
            pub len: usize,
        }

        impl $aosoa {
            /// Particles `0..n`, as `particle(i)`.
            pub fn new(n: usize) -> Self {
                let zero = [0.0; $n];
                let empty = $block { x: zero, y: zero, z: zero, vx: zero, vy: zero, vz: zero, life: zero };
                let mut blocks = vec![empty; n.div_ceil($n)];
                for i in 0..n {
                    let (b, k) = (&mut blocks[i / $n], i % $n);
                    let p = particle(i);
                    b.x[k] = p.x;
                    b.y[k] = p.y;
                    b.z[k] = p.z;
                    b.vx[k] = p.vx;
                    b.vy[k] = p.vy;
                    b.vz[k] = p.vz;
                    b.life[k] = p.life;
                }
                $aosoa { blocks, len: n }
            }

            /// `x += vx * dt`: full blocks all lanes at a time, then the live lanes of the last one.
            #[inline]
            pub fn update_x(&mut self, dt: f32) {
                let full = self.len / $n;
                for b in &mut self.blocks[..full] {
                    for k in 0..$n {
                        b.x[k] += b.vx[k] * dt;
                    }
                }
                if let Some(b) = self.blocks.get_mut(full) {
                    for k in 0..self.len % $n {
                        b.x[k] += b.vx[k] * dt;
                    }
                }
            }

            /// The sum of every field of particle `i`.
            #[inline]
            pub fn row_sum(&self, i: usize) -> f32 {
                let (b, k) = (&self.blocks[i / $n], i % $n);
                b.x[k] + b.y[k] + b.z[k] + b.vx[k] + b.vy[k] + b.vz[k] + b.life[k]
            }
        }
    };
}

hand_aosoa!(
    /// 8 particles, 224 bytes, on a 32-byte boundary.
    HandAosoa, Block8, 8, 32
);
hand_aosoa!(
    /// 16 particles, 448 bytes, on a 64-byte boundary: every lane array is one cache line.
    HandAosoa16, Block16, 16, 64
);

/// Blocks of 16 `x` and 16 `vx` and nothing else (128 bytes): the two lines a tile of 16 gives
/// the `x` pass, with no other field's lines between them. The control that shows what the
/// other fields' lines cost a pass that skips them.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct XvBlock16 {
    pub x: [f32; 16],
    pub vx: [f32; 16],
}

/// `x += vx * dt` over `XvBlock16`s (the row count a multiple of 16 rounded up; the padding
/// lanes are zero and updated too).
#[inline]
pub fn update_x_xv16(blocks: &mut [XvBlock16], dt: f32) {
    for b in blocks {
        for k in 0..16 {
            b.x[k] += b.vx[k] * dt;
        }
    }
}

/// Particles `0..n`'s `x` and `vx` in `XvBlock16`s.
pub fn xv_blocks16(n: usize) -> Vec<XvBlock16> {
    let mut blocks = vec![
        XvBlock16 {
            x: [0.0; 16],
            vx: [0.0; 16]
        };
        n.div_ceil(16)
    ];
    for i in 0..n {
        let p = particle(i);
        blocks[i / 16].x[i % 16] = p.x;
        blocks[i / 16].vx[i % 16] = p.vx;
    }
    blocks
}
