use arena_kit::Soa;

// `crate` takes a path (or a string holding one); each mistake is reported at the value and the
// derive goes on with `::arena_kit`.
#[derive(Soa)]
#[soa(crate = 5)]
struct Number {
    x: f32,
}

#[derive(Soa)]
#[soa(crate = "arena kit")]
struct Spaced {
    x: f32,
}

#[derive(Soa)]
#[soa(crate)]
struct Missing {
    x: f32,
}

fn main() {}
