//! Row types shared by the SoA tests, stored with the real `#[derive(Soa)]` (a dev-dependency of
//! arena-kit-core; `crate = arena_kit_core` points the generated code at this crate instead of the
//! `arena-kit` facade), so the tests and Miri exercise the code users get.
#![allow(dead_code)]

use arena_kit_derive::Soa;

/// A particle of seven `f32`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub vx: f32,
    pub vy: f32,
    pub vz: f32,
    pub life: f32,
}

/// An enemy with a position, health and an id.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Enemy {
    pub x: f32,
    pub y: f32,
    pub health: f32,
    pub id: i32,
}

/// Enemy `id`, at `x = id`, with 10 health.
pub fn enemy(id: i32) -> Enemy {
    Enemy {
        x: id as f32,
        y: 0.0,
        health: 10.0,
        id,
    }
}

/// Mixed alignments, drop glue and a zero-sized field.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Mixed {
    pub tag: u8,
    pub name: String,
    pub unit: (),
    pub wide: u64,
    pub half: u16,
}

/// Every column on a 64-byte boundary.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy), align = 64)]
pub struct Aligned {
    pub a: u8,
    pub b: u32,
    pub c: Box<u16>,
}

/// Only zero-sized fields.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Nothing {
    pub a: (),
    pub b: core::marker::PhantomData<String>,
}
