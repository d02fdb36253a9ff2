//! Placeholder removed when the arena benchmarks land.
fn main() {}
