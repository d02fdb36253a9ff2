// `Tracked<Frame<'f>, G>` is invariant in `'f`, like the `Frame` it wraps: a tracked frame cannot
// be passed off as a shorter one either (`allocator().publish(..)` would then accept data
// borrowed for less than the frame).
use arena_kit::prelude::*;

fn shorten<'a: 'b, 'b>(
    frame: Tracked<Frame<'a>, &'static str>,
) -> Tracked<Frame<'b>, &'static str> {
    frame
}

fn main() {}
