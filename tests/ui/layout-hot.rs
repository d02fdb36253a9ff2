use arena_kit::Layout;

// `flags` sits after 100 cold bytes, in the second 64-byte line.
#[derive(Layout)]
#[layout(hot(pos, vel, flags))]
#[repr(C, align(64))]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
    cold: [u8; 100],
    flags: u32,
}

fn main() {}
