use arena_kit::Layout;

#[derive(Layout)]
#[layout(hot(0))]
enum Shape {
    Circle(f32),
    Square(f32),
}

fn main() {}
