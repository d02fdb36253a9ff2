use arena_kit::Layout;

// Align 1: 62 bytes between `a` and `b` is one short of never sharing a 64-byte line.
#[derive(Layout)]
#[layout(separate_lines(a, b))]
#[repr(C)]
struct Close {
    a: u8,
    _pad: [u8; 62],
    b: u8,
}

fn main() {}
