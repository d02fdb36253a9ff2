// Published data is read by another thread until its `FrameReader` is dropped, so the producer
// cannot write to it after `publish`: the data stays shared-borrowed for the whole frame.
use arena_kit::prelude::*;

fn main() {
    let mut frames = FrameArena::<2>::chained(4096);
    let frame = frames.begin_frame();
    let draws = frame.alloc_slice_fill_with(4, |i| i as u64);
    let reader = frame.publish(&*draws).unwrap();
    let render = std::thread::spawn(move || reader.iter().sum::<u64>());
    draws[0] = 99;
    render.join().unwrap();
}
