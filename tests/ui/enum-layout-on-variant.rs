use arena_kit::Layout;

#[derive(Layout)]
enum Shape {
    #[layout(size = 4)]
    Circle(f32),
    Rect {
        #[layout(size = 4)]
        w: f32,
        h: f32,
    },
}

fn main() {}
