use arena_kit::Soa;

#[derive(Soa)]
struct Vec3 {
    x: f32,
}

#[derive(Soa)]
struct Body {
    #[soa(nested = true)]
    pos: Vec3,
}

fn main() {}
