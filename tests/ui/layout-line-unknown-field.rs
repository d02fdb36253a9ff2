use arena_kit::Layout;

#[derive(Layout)]
#[layout(hot(pos, velocty), same_line(pos, speed))]
#[repr(align(64))]
struct Particle {
    pos: [f32; 3],
    velocity: [f32; 3],
}

fn main() {}
