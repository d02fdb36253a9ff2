use arena_kit::Layout;

// `Bad`: 1 + 8 + 1 bytes of fields padded to 24.
#[derive(Layout)]
#[layout(size = 16)]
#[repr(C)]
struct Bad {
    a: u8,
    b: f64,
    c: u8,
}

fn main() {}
