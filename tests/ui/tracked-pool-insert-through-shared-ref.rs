// Inserting into a tracked pool needs `&mut`: a shared reference (what `Deref` gives for reads)
// cannot insert, so it cannot bypass the budget check either.
use arena_kit::prelude::*;

fn spawn(bodies: &Tracked<Pool<u32>, &'static str>) {
    bodies.insert(1);
}

fn main() {
    let bodies = Tracked::new(Pool::with_capacity(4), "bodies", "Physics").forgive_leaks();
    spawn(&bodies);
}
