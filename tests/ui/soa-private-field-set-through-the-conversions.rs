use arena_kit::soa::{Columns, Nested, RowConversion, Soa};

mod checked {
    use arena_kit::Soa;

    /// An index into a 4-byte table, checked once where it is made.
    #[derive(Soa)]
    pub struct Below4 {
        i: usize,
    }

    impl Below4 {
        pub fn new(i: usize) -> Option<Below4> {
            (i < 4).then_some(Below4 { i })
        }

        pub fn read(&self, table: &[u8; 4]) -> u8 {
            // SAFETY: `i < 4`: `new` checked it, and no code outside this module can set `i`.
            unsafe { *table.get_unchecked(self.i) }
        }
    }
}

fn main() {
    // The row's field is private: outside its module, neither `Soa`'s conversions nor the
    // column list's may build a row with any value of it, or take one apart.
    let forged = <checked::Below4 as Soa>::from_columns((1 << 40, ()), RowConversion::new());
    let _ = forged.read(&[0; 4]);
    let forged: checked::Below4 =
        <Nested<checked::Below4> as Columns>::from_raw((1 << 40, ()), Default::default());
    let _ = forged.read(&[0; 4]);
    let (i, ()) = checked::Below4::new(3).unwrap().into_columns(RowConversion::new());
    let _ = i;
}
