use arena_kit::prelude::*;
use rayon::prelude::*;

#[derive(Soa)]
pub struct Enemy {
    pub x: f32,
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Enemy { x: 1.0 });
    // Views collected from the parallel iterator borrow the vector like `iter_mut`'s do.
    let mut rows: Vec<EnemyMut<'_>> = v.par_iter_mut().collect();
    drop(v);
    *rows[0].x = 2.0;
}
