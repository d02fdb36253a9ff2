// A collection whose elements were published cannot be dropped while the frame lasts: its
// elements' destructors would free what a `FrameReader` still reads.
use allocator_api2::vec::Vec as ArenaVec;
use arena_kit::prelude::*;

fn main() {
    let mut frames = FrameArena::<2>::chained(4096);
    let frame = frames.begin_frame();
    let mut names: ArenaVec<String, &Arena> = ArenaVec::new_in(&frame);
    names.push(String::from("player"));
    let reader = frame.publish(&*names).unwrap();
    drop(names);
    assert_eq!(reader[0], "player");
}
