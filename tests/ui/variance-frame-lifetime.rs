// `Frame<'f>` is invariant in `'f`: a frame cannot be passed off as one of a shorter frame, which
// would let `publish` accept data borrowed for less than the frame.
use arena_kit::prelude::*;

fn shorten<'a: 'b, 'b>(frame: Frame<'a>) -> Frame<'b> {
    frame
}

fn main() {}
