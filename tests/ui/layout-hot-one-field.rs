use arena_kit::Layout;

// `big` (16 bytes) starts at 60 and crosses into the second line.
#[derive(Layout)]
#[layout(hot(big))]
#[repr(C, align(64))]
struct Straddle {
    a: [u8; 60],
    big: [u32; 4],
}

fn main() {}
