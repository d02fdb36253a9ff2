use arena_kit::Layout;

#[derive(Layout)]
#[layout(align = 12)]
struct Good {
    b: f64,
    a: u8,
}

// One past the largest alignment Rust accepts (2^29).
#[derive(Layout)]
#[layout(align = 1073741824)]
struct Huge {
    b: f64,
}

fn main() {}
