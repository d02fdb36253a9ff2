// An `ArenaVec`'s elements live in its arena: the slice `into_slice` returns borrows the arena,
// so it cannot outlive it.
use arena_kit::prelude::*;

fn main() {
    let kept: &mut [u32];
    {
        let arena = Arena::new();
        let mut v = ArenaVec::new_in(&arena);
        v.push(1u32);
        kept = v.into_slice();
    }
    kept[0] = 2;
}
