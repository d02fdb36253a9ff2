// A leaked box's value lives in its arena: the reference `ArenaBox::leak` returns borrows the
// arena, so it cannot outlive it.
use arena_kit::prelude::*;

fn main() {
    let kept: &mut u32;
    {
        let arena = Arena::new();
        kept = ArenaBox::leak(arena.alloc_box(1u32));
    }
    *kept = 2;
}
