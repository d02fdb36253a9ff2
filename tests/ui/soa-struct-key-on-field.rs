use arena_kit::Soa;

#[derive(Soa)]
struct Particle {
    #[soa(align = 64)]
    x: f32,
    #[soa(derive(Debug))]
    y: f32,
}

fn main() {}
