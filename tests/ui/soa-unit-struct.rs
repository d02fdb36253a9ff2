use arena_kit::Soa;

#[derive(Soa)]
struct Marker;

#[derive(Soa)]
struct Empty {}

fn main() {}
