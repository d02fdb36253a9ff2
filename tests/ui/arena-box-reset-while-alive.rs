// A live box borrows its arena, so the arena cannot be reset (or rewound) under its value.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::new();
    let name = arena.alloc_box(String::from("orc"));
    arena.reset();
    println!("{name}");
}
