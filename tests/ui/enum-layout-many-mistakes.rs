use arena_kit::Layout;

// Every mistake in one build: a value that is not an integer, an unknown key, a struct-only
// key, a repeated key and an attribute on a variant.
#[derive(Layout)]
#[layout(max_variant_size = "big", sise = 1, optimal, size = 8, size = 16)]
enum Shape {
    #[layout(report)]
    Circle(f32),
    Square(f32),
}

fn main() {}
