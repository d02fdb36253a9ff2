use arena_kit::Layout;

#[derive(Layout)]
#[layout(cfg(), size = 16)]
#[layout(cfg(unix), cfg(windows), size = 16)]
#[layout(cfg(target_pointer_width = "64"), size = 16)]
#[layout(cfg(target_pointer_width = "64"), size = 16)]
#[layout(cfg(unix))]
#[layout(cfg(unix), crate = arena_kit, align = 8)]
#[layout(cfg = "unix", max_size = 16)]
struct Pair {
    a: u64,
    b: u64,
}

fn main() {}
