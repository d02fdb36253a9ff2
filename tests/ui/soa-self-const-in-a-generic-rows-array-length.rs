// `Self::N` in an array length of a generic row: Rust rejects `Self` (a generic type) in an
// anonymous constant. The derive replaces `Self` in the field types it copies into the views;
// the rejection must stay the struct's own, not repeat once per generated view.
use arena_kit::prelude::*;

#[derive(Soa)]
pub struct Lanes<T> {
    pub values: [T; Self::N],
}

impl<T> Lanes<T> {
    pub const N: usize = 4;
}

fn main() {}
