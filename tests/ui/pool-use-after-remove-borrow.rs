// A reference into a pool cannot outlive a removal: `remove` needs the pool mutably, so a value
// borrowed from it must be dropped first (no dangling pointer to a freed slot).
use arena_kit::prelude::*;

fn main() {
    let mut pool = Pool::with_capacity(4);
    let h = pool.insert(String::from("bullet"));
    let name: &String = pool.get(h).unwrap();
    pool.remove(h);
    println!("{name}");
}
