use arena_kit::Layout;

#[derive(Layout)]
#[layout(optimal)]
enum Shape {
    Circle(f32),
    Square(f32),
}

fn main() {}
