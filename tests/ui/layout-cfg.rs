use arena_kit::Layout;

// The 32-bit numbers are not checked on a 64-bit host; the 64-bit ones are, and are wrong.
#[derive(Layout)]
#[layout(cfg(target_pointer_width = "32"), size = 8)]
#[layout(cfg(target_pointer_width = "64"), size = 8)]
struct Range {
    start: usize,
    end: usize,
}

fn main() {}
