use arena_kit::{HasLayout, Layout};

// Three mistakes, three errors in one build; `LAYOUT` still works below, so no follow-on errors.
#[derive(Layout)]
#[layout(sise = 16, align = 3, max_padding = "none")]
struct Good {
    b: f64,
    a: u8,
}

fn main() {
    let _ = Good::LAYOUT.size();
}
