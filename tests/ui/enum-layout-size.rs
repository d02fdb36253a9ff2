use arena_kit::Layout;

// `Huge` makes every `Message` 72 bytes, even the one-byte ones.
#[derive(Layout)]
#[layout(size = 16)]
enum Message {
    Small(u8),
    Huge([u64; 8]),
}

fn main() {}
