// A live boxed slice borrows its arena, so the arena cannot be reset (or rewound) under its
// values.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::new();
    let names = arena.alloc_box_slice_fill_with(2, |i| format!("orc {i}"));
    arena.reset();
    println!("{}", names[0]);
}
