use arena_kit::soa::TrackedSoaVec;

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
            // SAFETY: `i < 4`: only this module makes a `Below4`, always checked.
            unsafe { *table.get_unchecked(self.i) }
        }
    }
}

// Elsewhere in the row's crate, outside its module: lending the private column takes an
// `unsafe impl`, so a plain one does not compile.
impl arena_kit::soa::PublicField<0> for checked::Below4 {}

// And so does claiming the row is plain (its columns could then be read from any input).
impl arena_kit::soa::PlainRow for checked::Below4 {}

fn main() {
    let mut v: TrackedSoaVec<checked::Below4> = TrackedSoaVec::new();
    v.push(checked::Below4::new(1).unwrap());
    v.column_mut::<0>()[0] = 1 << 40;
}
