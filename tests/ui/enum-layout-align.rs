use arena_kit::Layout;

#[derive(Layout)]
#[layout(align = 16)]
enum Value {
    Int(u64),
    Byte(u8),
}

fn main() {}
