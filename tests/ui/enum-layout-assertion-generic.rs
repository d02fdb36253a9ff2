use arena_kit::Layout;

#[derive(Layout)]
#[layout(max_variant_size = 16, report)]
enum Slot<T> {
    Full(T),
    Empty,
}

fn main() {}
