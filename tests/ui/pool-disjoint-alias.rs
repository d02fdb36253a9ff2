// Two `get_mut`s on one pool cannot be held at once; `get_disjoint_mut` is the way to borrow
// several values mutably.
use arena_kit::prelude::*;

fn main() {
    let mut pool = Pool::with_capacity(4);
    let a = pool.insert(1);
    let b = pool.insert(2);
    let x = pool.get_mut(a).unwrap();
    let y = pool.get_mut(b).unwrap();
    std::mem::swap(x, y);
}
