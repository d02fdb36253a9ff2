use arena_kit::Layout;

// A 4-byte C tag, 4 bytes of padding, then the `u64`.
#[derive(Layout)]
#[layout(max_padding = 0)]
#[repr(C)]
enum Value {
    Int(u64),
    Byte(u8),
}

fn main() {}
