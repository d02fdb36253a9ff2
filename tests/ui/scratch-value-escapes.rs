// A scratch arena is reset when the `scratch` call returns, so nothing allocated in it can be
// returned from the closure.
use arena_kit::scratch;

fn main() {
    let kept: &mut [u32] = scratch(|a| a.alloc_slice_copy(&[1, 2, 3]));
    kept[0] = 9;
}
