use arena_kit::Soa;

// A generic struct with its own `Drop` (for every argument) cannot be stored as columns either.
#[derive(Soa)]
struct Guarded<T: Copy, const N: usize> {
    x: [T; N],
}

impl<T: Copy, const N: usize> Drop for Guarded<T, N> {
    fn drop(&mut self) {}
}

fn main() {}
