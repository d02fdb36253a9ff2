// A box drops its value when the box is dropped, so a value that borrows must not outlive what
// it borrows, even though the arena does.
use arena_kit::prelude::*;

struct Named<'a>(&'a str);

impl Drop for Named<'_> {
    fn drop(&mut self) {
        println!("dropping {}", self.0);
    }
}

fn main() {
    let arena = Arena::new();
    let kept;
    {
        let name = String::from("orc");
        kept = arena.alloc_box(Named(&name));
    }
    drop(kept);
}
