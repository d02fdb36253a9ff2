//! The cache-line checks (`hot`, `same_line`, `separate_lines`) and per-target `cfg` assertions
//! on structs that pass them; each failing form has a case in `tests/ui/`.

use core::sync::atomic::AtomicU64;

use arena_kit::{HasLayout, Layout};

/// The fields a particle update reads every frame share the first line; `cold` fills the rest.
#[derive(Layout)]
#[layout(hot(pos, vel, flags), same_line(pos, flags), align = 64)]
#[repr(C, align(64))]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
    flags: u32,
    cold: [u8; 100],
}

/// Two counters written by different threads, one line each: lines count from the struct's start
/// because it is aligned to a line.
#[derive(Layout)]
#[layout(separate_lines(produced, consumed))]
#[repr(C, align(64))]
struct Counters {
    produced: AtomicU64,
    _pad: [u8; 56],
    consumed: AtomicU64,
}

/// The same pair without `repr(align(64))`: the struct may start anywhere in a line, so the
/// fields need 63 bytes between them, here 64.
#[derive(Layout)]
#[layout(separate_lines(produced, consumed))]
#[repr(C)]
struct LooseCounters {
    produced: AtomicU64,
    _pad: [u8; 64],
    consumed: AtomicU64,
}

/// Exactly `line - 1` bytes between the fields: at any address the last byte of `a` and the
/// byte of `b` are 64 apart, so they never share a line.
#[derive(Layout)]
#[layout(separate_lines(b, a))]
#[repr(C)]
struct JustApart {
    a: u8,
    _pad: [u8; 63],
    b: u8,
}

/// 128-byte lines (some ARM cores, and Apple's M-series L2 prefetch pairs), with a hot set of
/// two of them.
#[derive(Layout)]
#[layout(line = 128, hot(head, tail), hot_lines = 2, same_line(head, len))]
#[layout(separate_lines(head, tail))]
#[repr(C, align(128))]
struct Queue {
    head: u64,
    len: u64,
    _pad: [u8; 112],
    tail: u64,
}

/// A tuple struct names its fields by position.
#[derive(Layout)]
#[layout(hot(0, 1), same_line(1, 0))]
#[repr(C, align(64))]
struct Pair(u64, u32);

/// The 32- and 64-bit numbers of one struct; only the attribute whose `cfg` holds is checked.
/// (Clippy's `duplicated_attributes` compares keys by name, not by integer value.)
#[allow(clippy::duplicated_attributes)]
#[derive(Layout)]
#[layout(cfg(target_pointer_width = "64"), size = 24, align = 8)]
#[layout(cfg(target_pointer_width = "32"), size = 12, align = 4)]
#[layout(max_padding = 0)]
struct Span3 {
    start: usize,
    len: usize,
    cap: usize,
}

/// A wrong size (and a `report`, which always fails) under a `cfg` that does not hold here
/// compiles: the checks are not generated.
#[cfg(target_pointer_width = "64")]
#[derive(Layout)]
#[layout(cfg(target_pointer_width = "32"), size = 1000, report)]
#[layout(cfg(not(target_pointer_width = "64")), max_size = 1)]
struct OnlyChecked32 {
    a: usize,
}

#[test]
fn line_checks_pass_on_the_structs_that_keep_them() {
    assert_eq!(Particle::LAYOUT.fields()[2].last_cache_line(), 0);
    assert_eq!(Counters::LAYOUT.fields()[2].first_cache_line(), 1);
    assert_eq!(LooseCounters::LAYOUT.fields()[2].offset, 72);
    assert_eq!(JustApart::LAYOUT.fields()[2].offset, 64);
    assert_eq!(Queue::LAYOUT.fields()[3].offset, 128);
    assert_eq!(Pair::LAYOUT.size(), 64);
}

#[test]
fn cfg_assertions_apply_to_their_target_only() {
    assert_eq!(Span3::LAYOUT.size(), 3 * size_of::<usize>());
    #[cfg(target_pointer_width = "64")]
    assert_eq!(OnlyChecked32::LAYOUT.size(), 8);
}
