use arena_kit::soa::PlainRow;
use arena_kit::Soa;

/// Every field is `pub`, but the row's `Deserialize` checks it through `try_from`, which the
/// column formats would skip: not plain.
#[derive(Soa, serde::Deserialize)]
#[serde(try_from = "usize")]
pub struct Below4 {
    pub i: usize,
}

impl TryFrom<usize> for Below4 {
    type Error = &'static str;
    fn try_from(i: usize) -> Result<Self, Self::Error> {
        if i < 4 { Ok(Below4 { i }) } else { Err("4 or more") }
    }
}

fn plain<T: PlainRow>() {}

fn main() {
    plain::<Below4>();
}
