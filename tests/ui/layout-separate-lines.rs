use arena_kit::Layout;
use std::sync::atomic::AtomicU64;

// Aligned to a line, so lines count from the start: both counters are in line 0.
#[derive(Layout)]
#[layout(separate_lines(produced, consumed))]
#[repr(C, align(64))]
struct Counters {
    produced: AtomicU64,
    _pad: [u8; 40],
    consumed: AtomicU64,
}

fn main() {}
