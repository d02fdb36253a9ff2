use arena_kit::{Soa, SoaVec};
use arena_kit::soa::serde::columns;

mod checked {
    use arena_kit::Soa;

    /// An index into a 4-byte table, checked once where it is made. Not `Deserialize`.
    #[derive(Soa)]
    pub struct Below4 {
        i: usize,
    }

    impl Below4 {
        pub fn new(i: usize) -> Option<Below4> {
            (i < 4).then_some(Below4 { i })
        }

        pub fn read(&self, table: &[u8; 4]) -> u8 {
            // SAFETY: `i < 4`: only this module makes a `Below4`, always checked.
            unsafe { *table.get_unchecked(self.i) }
        }
    }
}

/// `Deserialize`, through the checked constructor of its nested row.
#[derive(Soa)]
struct Slot {
    #[soa(nested)]
    at: checked::Below4,
}

impl<'de> serde::Deserialize<'de> for Slot {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let i = usize::deserialize(d)?;
        let at = checked::Below4::new(i).ok_or_else(|| serde::de::Error::custom("not below 4"))?;
        Ok(Slot { at })
    }
}

fn main() {
    // The column format sets the nested row's columns directly, not through `Slot`'s
    // `Deserialize`: a nested row that is not `Deserialize` must not be built that way.
    let v: SoaVec<Slot> = columns::deserialize(serde_json::json!([[1_u64 << 40]])).unwrap();
    let _ = v.into_iter().next().unwrap().at.read(&[0; 4]);
}
