use arena_kit::Soa;

/// `#[serde(try_from)]` checks every row read; `#[soa(plain)]` would let the column formats
/// skip that check.
#[derive(Soa, serde::Deserialize)]
#[soa(plain)]
#[serde(try_from = "usize")]
pub struct Below4 {
    i: usize,
}

impl TryFrom<usize> for Below4 {
    type Error = &'static str;
    fn try_from(i: usize) -> Result<Self, Self::Error> {
        if i < 4 { Ok(Below4 { i }) } else { Err("4 or more") }
    }
}

fn main() {}
