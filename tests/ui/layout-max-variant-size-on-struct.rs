use arena_kit::Layout;

#[derive(Layout)]
#[layout(max_variant_size = 16)]
struct Point {
    x: f32,
    y: f32,
}

fn main() {}
