use arena_kit::Layout;

#[derive(Layout)]
#[layout(same_line(head, tail))]
#[repr(C, align(64))]
struct Queue {
    head: u64,
    buf: [u8; 60],
    tail: u64,
}

fn main() {}
