use arena_kit::Soa;

// `align` takes an unsuffixed integer: `64u8` is not a `usize`.
#[derive(Soa)]
#[soa(align = 64u8)]
struct Aligned {
    x: f32,
}

fn main() {}
