// A boxed slice drops its values when the box is dropped, so values that borrow must not
// outlive what they borrow, even though the arena does.
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
        kept = arena.alloc_box_slice_fill_with(3, |_| Named(&name));
    }
    drop(kept);
}
