use arena_kit::Soa;

// `nested` on a type that is not `Soa`: one error, at the field's type.
#[derive(Soa)]
struct Body {
    x: f32,
    #[soa(nested)]
    speed: f32,
}

fn main() {}
