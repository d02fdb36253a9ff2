use arena_kit::Soa;

#[derive(Soa)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
