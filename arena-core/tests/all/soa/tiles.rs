//! `SoaTiles<T, N>` against `Vec<T>`.
#![allow(missing_docs)]

use arena_kit_core::soa::SoaTiles;
use arena_kit_derive::Soa;

#[derive(Debug, Clone, Copy, PartialEq, Default, Soa)]
#[soa(crate = arena_kit_core, tiled)]
pub struct P {
    pub x: f32,
    pub vx: f32,
    pub id: u8,
}

#[test]
fn smoke() {
    let mut t: SoaTiles<P, 8> = (0..20)
        .map(|i| P {
            x: 0.0,
            vx: i as f32,
            id: i as u8,
        })
        .collect();
    for PTileMut { x, vx, .. } in t.tiles_mut() {
        for k in 0..8 {
            x[k] += vx[k];
        }
    }
    assert_eq!(*t.get(9).unwrap().x, 9.0);
    assert_eq!(t.tail().x.len(), 4);
}
