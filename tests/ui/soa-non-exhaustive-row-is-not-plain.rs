use arena_kit::soa::PlainRow;
use arena_kit::Soa;

/// Every field is `pub`, but other crates cannot build a `#[non_exhaustive]` struct: it is not
/// plain unless it says `#[soa(plain)]` (a view's `to_value` would otherwise build one for them).
#[derive(Soa, Clone)]
#[non_exhaustive]
pub struct Ticket {
    pub number: u32,
}

fn plain<T: PlainRow>() {}

fn main() {
    plain::<Ticket>();
}
