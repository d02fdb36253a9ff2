// Scopes nest in LIFO order: the outer scope cannot be used while an inner one is open.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::with_capacity(1024);
    let mut outer = arena.scope();
    let inner = outer.scope();
    outer.alloc(1u8);
    inner.alloc(2u8);
}
