use arena_kit::SoaVec;
use arena_kit::soa::serde::{columns, named_columns};

mod checked {
    use arena_kit::Soa;

    /// An index into a 4-byte table, checked once where it is made. Not `Deserialize`.
    #[derive(Soa)]
    pub struct Below4 {
        i: usize,
    }

    impl Below4 {
        pub fn read(&self, table: &[u8; 4]) -> u8 {
            // SAFETY: `i < 4`: only this module makes a `Below4`, always checked.
            unsafe { *table.get_unchecked(self.i) }
        }
    }
}

fn main() {
    // The column formats set every field, private ones too: only for `Deserialize` rows.
    let json = serde_json::json!([[1_u64 << 40]]);
    let v: SoaVec<checked::Below4> = columns::deserialize(json).unwrap();
    let _ = v.get(0);
    let json = serde_json::json!({ "i": [1_u64 << 40] });
    let mut v: SoaVec<checked::Below4> = named_columns::deserialize(json).unwrap();
    let _ = v.pop().unwrap().read(&[0; 4]);
}
