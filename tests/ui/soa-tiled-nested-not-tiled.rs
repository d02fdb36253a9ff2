use arena_kit::Soa;

#[derive(Soa)]
struct Vec3 {
    x: f32,
    y: f32,
}

#[derive(Soa)]
#[soa(tiled)]
struct Body {
    #[soa(nested)]
    pos: Vec3,
    mass: f32,
}

fn main() {}
