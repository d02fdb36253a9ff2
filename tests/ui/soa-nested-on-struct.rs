use arena_kit::Soa;

#[derive(Soa)]
#[soa(nested)]
struct Particle {
    x: f32,
}

fn main() {}
