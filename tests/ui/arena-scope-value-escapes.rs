// A value allocated in a scope is freed when the scope ends, so it cannot escape it.
use arena_kit::prelude::*;

fn main() {
    let mut arena = Arena::with_capacity(1024);
    let escaped: &mut [u8];
    {
        let scope = arena.scope();
        escaped = scope.alloc_slice_copy(&[1, 2, 3]);
    }
    escaped[0] = 9;
}
