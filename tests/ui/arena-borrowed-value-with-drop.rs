// Values the arena drops must be 'static: it drops them on reset or when it is dropped, when
// what they borrow may be gone. Rustc reports this as a borrow error (no attribute can reword
// it), so `Arena::alloc`'s docs lead with it; `alloc_no_drop` takes borrowing values.
use arena_kit::prelude::*;

struct Label<'a> {
    text: &'a str,
}

fn main() {
    let arena = Arena::with_capacity(1024);
    let name = String::from("player");
    let label = arena.alloc(Label { text: &name });
    println!("{}", label.text);
}
