use arena_kit::Layout;

// Align 4: the struct may start anywhere in a line, so its lines can't be counted.
#[derive(Layout)]
#[layout(hot(pos, vel))]
#[layout(line = 128, same_line(pos, vel))]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
}

fn main() {}
