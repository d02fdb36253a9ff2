use arena_kit::Soa;

#[derive(Soa)]
enum Shape {
    Circle(f32),
    Square(f32),
}

fn main() {}
