use arena_kit::prelude::*;

#[derive(Soa)]
pub struct Enemy {
    pub x: f32,
    pub name: String,
}

fn main() {
    // A row view borrows the vector: it cannot be kept after the vector is dropped.
    let row = {
        let mut v = SoaVec::new();
        v.push(Enemy { x: 1.0, name: String::from("imp") });
        v.get(0).unwrap()
    };
    println!("{}", row.name);
}
