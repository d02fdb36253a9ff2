use arena_kit::Layout;

#[derive(Layout)]
#[layout(hot(a, b))]
#[repr(align(64))]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {}
