use arena_kit::Layout;

#[derive(Layout)]
#[layout(same_line(a), separate_lines(a, b, c), same_line(a, b, c))]
#[repr(align(64))]
struct Three {
    a: u8,
    b: u8,
    c: u8,
}

fn main() {}
