use arena_kit::Layout;

#[derive(Layout)]
#[layout(size = 16)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {}
