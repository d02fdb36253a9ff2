use arena_kit::Soa;

#[derive(Soa)]
#[soa(align = "64")]
struct Particle {
    x: f32,
}

fn main() {}
