use arena_kit::Layout;

#[derive(Layout)]
#[layout(hot(), same_line = 1, separate_lines(a, "b"))]
#[repr(align(64))]
struct Two {
    a: u8,
    b: u8,
}

fn main() {}
