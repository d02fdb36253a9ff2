use arena_kit::Layout;

#[derive(Layout)]
struct Good {
    #[layout(size = 8)]
    b: f64,
    a: u8,
}

fn main() {}
