use arena_kit::Layout;

#[derive(Layout)]
#[layout(report = true)]
struct Good {
    b: f64,
    a: u8,
}

fn main() {}
