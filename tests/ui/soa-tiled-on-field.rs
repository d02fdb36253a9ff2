use arena_kit::Soa;

#[derive(Soa)]
struct Particle {
    #[soa(tiled)]
    x: f32,
}

fn main() {}
