use arena_kit::Layout;

// `report` fails the build on purpose and prints the table, like `dbg!` for layouts.
#[derive(Layout)]
#[layout(report)]
#[repr(C)]
struct Bad {
    a: u8,
    b: f64,
    c: u8,
}

fn main() {}
