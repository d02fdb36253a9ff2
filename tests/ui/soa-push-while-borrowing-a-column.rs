use arena_kit::prelude::*;

#[derive(Soa)]
struct Particle {
    x: f32,
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Particle { x: 1.0 });
    // The column slice borrows the vector: a push (which may reallocate) cannot happen meanwhile.
    let xs = v.slices().x;
    v.push(Particle { x: 2.0 });
    println!("{}", xs[0]);
}
