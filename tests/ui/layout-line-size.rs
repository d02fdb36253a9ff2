use arena_kit::Layout;

#[derive(Layout)]
#[layout(line = 100, hot(a, b))]
#[layout(line = 0, same_line(a, b))]
#[repr(align(64))]
struct Two {
    a: u8,
    b: u8,
}

fn main() {}
