use arena_kit::Layout;

// `line` and `hot_lines` apply to the checks of their own attribute.
#[derive(Layout)]
#[layout(line = 128)]
#[layout(hot_lines = 2, same_line(a, b))]
#[layout(hot(a, b), hot_lines = 0)]
#[layout(hot(a, b), line = 64, line = 128)]
#[repr(align(128))]
struct Two {
    a: u8,
    b: u8,
}

fn main() {}
