use arena_kit::Layout;

#[derive(Layout)]
#[layout(max_variant_size = 16)]
enum Event {
    Key(u32),
    Text([u8; 24]),
    Path([u8; 128]),
}

fn main() {}
