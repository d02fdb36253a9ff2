use arena_kit::Layout;

#[derive(Layout)]
#[layout(crate = "1kit")]
struct Good {
    b: f64,
    a: u8,
}

fn main() {}
