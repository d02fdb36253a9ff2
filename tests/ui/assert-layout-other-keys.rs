use arena_kit::{Layout, assert_layout};

#[derive(Layout)]
#[repr(C)]
struct Pair<T> {
    flag: u8,
    value: T,
    last: u8,
}

assert_layout!(Pair<u32>, max_size = 8);
assert_layout!(Pair<u32>, align = 8);
assert_layout!(Pair<u32>, optimal);

fn main() {}
