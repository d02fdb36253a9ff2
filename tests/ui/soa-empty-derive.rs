use arena_kit::Soa;

#[derive(Soa)]
#[soa(derive())]
struct Particle {
    x: f32,
}

fn main() {}
