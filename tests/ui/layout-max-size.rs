use arena_kit::Layout;

#[derive(Layout)]
#[layout(max_size = 16)]
#[repr(C)]
struct Enemy {
    alive: bool,
    health: f64,
    kind: u8,
    id: i32,
}

fn main() {}
