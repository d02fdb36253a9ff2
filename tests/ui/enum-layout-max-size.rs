use arena_kit::Layout;

#[derive(Layout)]
#[layout(max_size = 32)]
#[repr(u8)]
enum Command {
    Move { x: f32, y: f32 },
    Fire(u8),
    Load([u8; 60]),
}

fn main() {}
