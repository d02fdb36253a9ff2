use arena_kit::{Layout, assert_layout};

#[derive(Layout)]
#[repr(C)]
struct Pair<T> {
    flag: u8,
    value: T,
}

assert_layout!(Pair<u16>, size = 4);
assert_layout!(Pair<u64>, size = 8, max_padding = 0);

fn main() {}
