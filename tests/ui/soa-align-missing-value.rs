use arena_kit::Soa;

#[derive(Soa)]
#[soa(align)]
struct Particle {
    x: f32,
}

fn main() {}
