use arena_kit::Layout;

#[derive(Layout)]
#[layout(max_padding = 2)]
#[repr(C)]
struct Bad {
    a: u8,
    b: f64,
    c: u8,
}

fn main() {}
