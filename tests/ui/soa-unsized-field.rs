use arena_kit::Soa;

// A column holds values of one size: a field of unsized type cannot be a column.
#[derive(Soa)]
struct Message {
    id: u32,
    bytes: [u8],
}

fn main() {}
