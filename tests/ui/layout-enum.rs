use arena_kit::Layout;

#[derive(Layout)]
enum Shape {
    Circle(f32),
    Square(f32),
}

fn main() {}
