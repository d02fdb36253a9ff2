use arena_kit::prelude::*;

#[derive(Soa)]
pub struct Enemy {
    pub x: f32,
    pub name: String,
}

fn main() {
    // A column slice borrows the vector: it cannot be kept after the vector is dropped.
    let names: &[String] = {
        let mut v = SoaVec::new();
        v.push(Enemy { x: 1.0, name: String::from("imp") });
        v.slices().name
    };
    println!("{}", names[0]);
}
