// A live vector borrows its arena, so the arena cannot be reset (or rewound) under it.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::new();
    let mut names = ArenaString::new_in(&arena);
    names.push_str("ada");
    arena.reset();
    names.push_str("grace");
}
