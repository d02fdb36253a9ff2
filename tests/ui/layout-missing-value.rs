use arena_kit::Layout;

#[derive(Layout)]
#[layout(size, optimal = 1)]
struct Good {
    b: f64,
    a: u8,
}

fn main() {}
