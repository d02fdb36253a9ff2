// Items named like primitive types where the derive runs: the generated code must name
// `usize` and `str` by absolute paths (`::core::primitive::usize`), so this compiles.
#![allow(non_camel_case_types, dead_code)]

use arena_kit::prelude::*;

struct usize;
struct str;

#[derive(Soa)]
#[soa(align = 16, tiled)]
pub struct Row {
    pub a: u32,
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Row { a: 1 });
    assert_eq!(v.slices().a, &[1]);
}
