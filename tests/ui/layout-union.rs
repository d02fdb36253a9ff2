use arena_kit::Layout;

#[derive(Layout)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
