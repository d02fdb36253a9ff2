// A value allocated in an arena borrows it, so `reset` (which frees it) cannot run while the
// value is still used.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::with_capacity(1024);
    let player = arena.alloc(100u32);
    arena.reset();
    *player -= 10; // use after reset
}
