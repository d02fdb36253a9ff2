// A box made from a scope borrows the scope: it cannot be kept past the scope's end, when its
// memory is rewound.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::new();
    let kept;
    {
        let scope = arena.scope();
        kept = scope.alloc_box(String::from("orc"));
    }
    println!("{kept}");
}
