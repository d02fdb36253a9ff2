// A frame's data lives in a buffer that a later frame resets, so it cannot be kept past the next
// `begin_frame`.
use arena_kit::prelude::*;

fn main() {
    let mut frames = FrameArena::<2>::chained(4096);
    let frame = frames.begin_frame();
    let transforms = frame.arena().alloc([0.0f32; 16]);
    let _next = frames.begin_frame();
    transforms[0] = 1.0;
}
