use arena_kit::{Layout, assert_enum_layout};

#[derive(Layout)]
enum Slot<T> {
    Full(T),
    Empty,
}

assert_enum_layout!(Slot<u32>, size = 8);
assert_enum_layout!(Slot<[u64; 8]>, max_size = 16);

fn main() {}
