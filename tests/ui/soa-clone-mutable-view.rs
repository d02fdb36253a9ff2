use arena_kit::prelude::*;

#[derive(Soa)]
#[soa(derive(Clone))]
struct Particle {
    x: f32,
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Particle { x: 1.0 });
    // Shared views derive Clone; exclusive ones never do (two `&mut` to one column would alias).
    let a = v.get(0).unwrap().clone();
    let m = v.get_mut(0).unwrap();
    let _m2 = m.clone();
    let _ = a;
}
