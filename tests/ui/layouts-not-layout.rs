// `layouts!` lists types for the layout registry; one without `#[derive(Layout)]` is an error
// in every build, with the registry feature or without it.
use arena_kit::layouts;

struct Plain(u64);

layouts![Plain];

fn main() {}
