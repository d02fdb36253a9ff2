use arena_kit::Layout;

#[derive(Layout)]
#[layout(align = 4)]
#[repr(C)]
struct Body {
    mass: f64,
    flags: u32,
}

fn main() {}
