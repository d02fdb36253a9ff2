// `into_slice` leaves the elements for the arena to drop later, like `Arena::alloc`, so a type
// that needs dropping must be 'static: a `Vec<&str>` borrowing `text` is refused.
// `into_slice_no_drop` takes it (and never drops it).
use arena_kit::prelude::*;

fn main() {
    let arena = Arena::new();
    let text = String::from("a b");
    let mut v = ArenaVec::new_in(&arena);
    v.push(text.split(' ').collect::<Vec<&str>>());
    let words = v.into_slice();
    println!("{}", words[0].len());
}
