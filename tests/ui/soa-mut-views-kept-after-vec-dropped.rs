use arena_kit::prelude::*;

#[derive(Soa)]
pub struct Enemy {
    pub x: f32,
    pub name: String,
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Enemy { x: 1.0, name: String::from("imp") });
    // Exclusive row views collected from `iter_mut` borrow the vector until their last use.
    let mut rows: Vec<EnemyMut<'_>> = v.iter_mut().collect();
    drop(v);
    *rows[0].x = 2.0;
}
