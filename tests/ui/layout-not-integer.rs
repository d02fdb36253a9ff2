use arena_kit::Layout;

#[derive(Layout)]
#[layout(size = "16")]
struct Good {
    b: f64,
    a: u8,
}

fn main() {}
