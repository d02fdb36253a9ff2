use arena_kit::Layout;

#[derive(Layout)]
#[layout(report)]
#[repr(u8)]
enum Command {
    Move { x: f32, y: f32 },
    Fire(u8),
    Stop,
}

fn main() {}
