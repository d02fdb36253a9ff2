// A vector made before a scope borrows the arena, so the scope (which rewinds what is allocated
// inside it) cannot open while the vector lives: the vector can never grow into memory the
// scope gives back.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::new();
    let mut v = ArenaVec::new_in(&arena);
    v.push(1u32);
    {
        let scope = arena.scope();
        scope.alloc(2u32);
        v.push(3);
    }
    println!("{}", v.len());
}
