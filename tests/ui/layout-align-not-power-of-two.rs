use arena_kit::Layout;

#[derive(Layout)]
#[layout(align = 12)]
struct Good {
    b: f64,
    a: u8,
}

fn main() {}
