use arena_kit::Soa;

#[derive(Soa)]
#[soa(align = 48)]
struct Particle {
    x: f32,
}

#[derive(Soa)]
#[soa(align = 0)]
struct Zero {
    x: f32,
}

fn main() {}
