// A vector made from a scope borrows the scope: it cannot be kept past the scope's end, when its
// buffer is rewound.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::new();
    let kept;
    {
        let scope = arena.scope();
        let mut v = ArenaVec::new_in(&scope);
        v.push(1u32);
        kept = v;
    }
    println!("{}", kept.len());
}
