use arena_kit::Layout;

#[derive(Layout)]
#[layout(report)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {}
