//! Worked layout numbers, through `#[derive(Layout)]`, checked against `size_of`.

use arena_kit::prelude::*;
use arena_kit::{FieldLayout, Repr};

/// The classic padding example, `struct Bad { char a; double b; char c; }`.
#[derive(Layout)]
#[layout(size = 24, max_padding = 14)]
#[repr(C)]
struct Bad {
    a: u8,
    b: f64,
    c: u8,
}

/// `Bad`'s fields reordered by decreasing alignment.
#[derive(Layout)]
#[layout(size = 16, optimal)]
#[repr(C)]
struct Good {
    b: f64,
    a: u8,
    c: u8,
}

/// An enemy with its fields in a poor order:
/// `struct Enemy { bool alive; double health; char kind; int id; }`.
#[derive(Layout)]
#[layout(size = 24)]
#[repr(C)]
struct Enemy {
    alive: bool,
    health: f64,
    kind: u8,
    id: i32,
}

/// The same enemy in the order the report suggests.
#[derive(Layout)]
#[layout(size = 16, optimal)]
#[repr(C)]
struct EnemyReordered {
    health: f64,
    id: i32,
    alive: bool,
    kind: u8,
}

/// A particle of seven floats: no padding.
#[derive(Layout)]
#[layout(size = 28, align = 4, max_padding = 0, optimal)]
#[repr(C)]
struct Particle {
    x: f32,
    y: f32,
    z: f32,
    vx: f32,
    vy: f32,
    vz: f32,
    life: f32,
}

fn names(order: impl Iterator<Item = &'static FieldLayout>) -> Vec<&'static str> {
    order.map(|f| f.name).collect()
}

#[test]
fn bad_is_24_bytes_with_14_of_padding_and_reorders_to_16() {
    let l = Bad::LAYOUT;
    assert_eq!(l.size(), size_of::<Bad>());
    assert_eq!(
        (l.size(), l.align(), l.padding(), l.min_size()),
        (24, 8, 14, 16)
    );
    let offsets: Vec<usize> = l.fields().iter().map(|f| f.offset).collect();
    assert_eq!(offsets, [0, 8, 16]);
    assert_eq!(names(l.best_order()), ["b", "a", "c"]);
    assert_eq!(l.savings(), 8);
    assert_eq!(l.repr(), Repr::C);
}

#[test]
fn good_is_16_bytes() {
    assert_eq!(Good::LAYOUT.size(), 16);
    assert_eq!(size_of::<Good>(), 16);
    assert!(Good::LAYOUT.is_optimal());
    assert_eq!(Good::LAYOUT.padding(), 6);
}

#[test]
fn enemy_is_24_and_its_suggested_order_is_16() {
    assert_eq!(Enemy::LAYOUT.size(), 24);
    assert_eq!(Enemy::LAYOUT.min_size(), 16);
    assert_eq!(
        names(Enemy::LAYOUT.best_order()),
        ["health", "id", "alive", "kind"]
    );
    assert_eq!(size_of::<EnemyReordered>(), 16);
    assert_eq!(
        names(EnemyReordered::LAYOUT.fields().iter()),
        names(Enemy::LAYOUT.best_order())
    );
}

#[test]
fn particle_is_28_bytes_without_padding() {
    let l = Particle::LAYOUT;
    assert_eq!((l.size(), l.padding(), l.soa_size()), (28, 0, 28));
    assert_eq!(l.fields().len(), 7);
}

#[test]
fn the_report_lists_holes_fix_and_soa_cost() {
    let report = Bad::LAYOUT.to_string();
    let expected = "\
Bad: 24 bytes, align 8, repr(C)
  offset  size  align  line  field  type
       0     1      1     0  a      u8
       1     7               (padding)
       8     8      8     0  b      f64
      16     1      1     0  c      u8
      17     7               (tail padding)
  fields 10 bytes, padding 14 bytes (58%): 7 between a and b, 7 at the end
  best order: reordering to (b, a, c) gives 16 bytes, saving 8
  as struct-of-arrays: 10 bytes per element (24 as an array of structs)";
    assert_eq!(report, expected);
}

/// repr(Rust): the compiler reorders; the report follows memory order from `offset_of!`.
#[derive(Layout)]
#[layout(optimal)]
struct Reordered {
    alive: bool,
    health: f64,
    kind: u8,
    id: i32,
}

#[test]
fn repr_rust_reports_the_compilers_order_and_says_nothing_does_better() {
    let l = Reordered::LAYOUT;
    assert_eq!(l.size(), size_of::<Reordered>());
    let memory: Vec<usize> = l.memory_order().map(|f| f.offset).collect();
    assert!(memory.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(l.size(), 16);
    assert!(
        l.to_string()
            .contains("no field order does better: 14 bytes of fields round up to 16")
    );
}

#[test]
fn a_field_straddling_a_cache_line_shows_both_lines() {
    #[derive(Layout)]
    #[repr(C)]
    struct Wide {
        head: [u8; 60],
        value: u64,
    }
    let value = Wide::LAYOUT.fields()[1];
    assert_eq!(
        (
            value.offset,
            value.first_cache_line(),
            value.last_cache_line()
        ),
        (64, 1, 1)
    );
    #[derive(Layout)]
    #[repr(C, packed)]
    struct Straddle {
        head: [u8; 60],
        value: u64,
    }
    let value = Straddle::LAYOUT.fields()[1];
    assert_eq!(
        (
            value.offset,
            value.first_cache_line(),
            value.last_cache_line()
        ),
        (60, 0, 1)
    );
    assert!(Straddle::LAYOUT.to_string().contains("   0-1  value"));
}

/// Generic, tuple, unit, packed, aligned and transparent structs all derive; generic ones are
/// checked per instantiation.
#[derive(Layout)]
#[repr(C)]
struct Pair<T: Copy>
where
    T: Default,
{
    flag: u8,
    value: T,
}
assert_layout!(Pair<u16>, size = 4, align = 2, max_padding = 1);
assert_layout!(Pair<u64>, size = 16, max_size = 16, align = 8);

#[derive(Layout)]
struct Tuple<'a>(&'a str, u8);

#[derive(Layout)]
#[layout(size = 0)]
struct Unit;

#[derive(Layout)]
#[layout(size = 9, align = 1, max_padding = 0)]
#[repr(C, packed)]
struct Packed {
    a: u8,
    b: u64,
}

#[derive(Layout)]
#[layout(size = 64, align = 64)]
#[repr(C, align(64))]
struct CacheLine {
    counter: u64,
}

#[derive(Layout)]
#[layout(size = 4)]
#[repr(transparent)]
struct Meters(f32);

#[test]
fn every_struct_shape_and_repr_derives() {
    assert_eq!(<Pair<u64>>::LAYOUT.fields()[1].ty, "T");
    assert_eq!(Tuple::LAYOUT.fields()[0].name, "0");
    assert_eq!(Tuple::LAYOUT.fields()[0].ty, "&'a str");
    assert_eq!(Unit::LAYOUT.fields().len(), 0);
    assert_eq!(Packed::LAYOUT.repr().packed, Some(1));
    assert_eq!(Packed::LAYOUT.fields()[1].offset, 1);
    assert_eq!(CacheLine::LAYOUT.padding(), 56);
    assert!(CacheLine::LAYOUT.is_optimal());
    assert_eq!(Meters::LAYOUT.min_size(), 4);
    assert!(CacheLine::LAYOUT.to_string().contains("repr(C, align(64))"));
}

/// The layout is usable in `const` contexts.
const BAD_WASTE: usize = Bad::LAYOUT.padding();
const _: () = assert!(BAD_WASTE == 14);
