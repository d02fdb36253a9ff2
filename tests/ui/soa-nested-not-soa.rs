use arena_kit::Soa;

struct Plain {
    x: f32,
}

#[derive(Soa)]
struct Body {
    #[soa(nested)]
    pos: Plain,
}

fn main() {}
