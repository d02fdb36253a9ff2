use arena_kit::prelude::*;
use rayon::prelude::*;

#[derive(Soa)]
pub struct Enemy {
    pub x: f32,
}

fn main() {
    let handle = {
        let mut v = SoaVec::new();
        v.push(Enemy { x: 1.0 });
        let rows: Vec<EnemyRef<'_>> = v.par_iter().collect();
        // A thread that may outlive the vector cannot take views into it.
        std::thread::spawn(move || *rows[0].x)
    };
    println!("{}", handle.join().unwrap());
}
