use arena_kit::Soa;

// A row is split into its fields, so a struct with its own `Drop` cannot be stored as columns.
#[derive(Soa)]
struct Guarded {
    x: f32,
}

impl Drop for Guarded {
    fn drop(&mut self) {}
}

fn main() {}
