use arena_kit::Layout;

// Three 64-byte lines, two allowed.
#[derive(Layout)]
#[layout(hot(a, c), hot_lines = 2)]
#[repr(C, align(64))]
struct Wide {
    a: u64,
    b: [u8; 120],
    c: u64,
}

fn main() {}
