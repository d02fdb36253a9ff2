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

// One past the largest alignment Rust accepts (2^29).
#[derive(Soa)]
#[soa(align = 1073741824)]
struct Huge {
    x: f32,
}

fn main() {}
