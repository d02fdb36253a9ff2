// A `BufferArena` keeps its drop records and the values it drops in the buffer it borrows, and
// reads them when it is dropped (it runs their destructors): the buffer must outlive the arena,
// also when the arena is not used again before its drop.
use arena_kit::prelude::*;
use core::mem::MaybeUninit;

fn main() {
    let arena;
    {
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 1024];
        arena = Arena::from_buffer(&mut buf);
        arena.alloc(String::from("dropped when the arena is"));
    }
}
