// Values the arena drops may be dropped on another thread (arenas are Send), so they must be
// Send; the error names `alloc_no_drop`, which takes them without a destructor.
use arena_kit::prelude::*;
use std::rc::Rc;

fn main() {
    let arena = Arena::with_capacity(1024);
    arena.alloc(Rc::new(5));
}
