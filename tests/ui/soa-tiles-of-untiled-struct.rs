use arena_kit::Soa;
use arena_kit::soa::SoaTiles;

#[derive(Soa)]
struct Particle {
    x: f32,
}

fn main() {
    let _tiles: SoaTiles<Particle, 8> = SoaTiles::new();
}
