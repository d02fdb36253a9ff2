use arena_kit::Soa;

// Three mistakes, three errors in one build.
#[derive(Soa)]
#[soa(align = 3, colour = "red")]
struct Particle {
    #[soa(crate = arena_kit)]
    x: f32,
}

fn main() {}
