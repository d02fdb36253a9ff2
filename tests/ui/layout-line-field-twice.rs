use arena_kit::Layout;

#[derive(Layout)]
#[layout(hot(pos, vel, pos))]
#[repr(align(64))]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
}

fn main() {}
