use arena_kit::SoaVec;
use arena_kit::soa::serde::{columns, named_columns};

mod checked {
    use arena_kit::Soa;

    /// An index into a 4-byte table. `Deserialize`, through a conversion that checks it: the
    /// row format (`SoaVec`'s own `Deserialize`) reads it row by row through that check.
    #[derive(Soa, serde::Deserialize)]
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

    impl Below4 {
        pub fn read(&self, table: &[u8; 4]) -> u8 {
            // SAFETY: `i < 4`: every `Below4` is made through `try_from`.
            unsafe { *table.get_unchecked(self.i) }
        }
    }
}

fn main() {
    // The rows' own format checks each one; the column formats would skip the check, so they
    // are only for plain rows.
    let rows: Result<SoaVec<checked::Below4>, _> = serde_json::from_str("[1, 1099511627776]");
    assert!(rows.is_err());
    let json = serde_json::json!([[1_u64 << 40]]);
    let v: SoaVec<checked::Below4> = columns::deserialize(json).unwrap();
    let _ = v.get(0);
    let json = serde_json::json!({ "i": [1_u64 << 40] });
    let mut v: SoaVec<checked::Below4> = named_columns::deserialize(json).unwrap();
    let _ = v.pop().unwrap().read(&[0; 4]);
}
