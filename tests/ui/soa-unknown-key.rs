use arena_kit::Soa;

#[derive(Soa)]
#[soa(aligned = 64)]
struct Particle {
    #[soa(flatten)]
    x: f32,
}

fn main() {}
