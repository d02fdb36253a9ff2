use arena_kit::soa::{TrackedSoaPool, TrackedSoaVec};

mod checked {
    use arena_kit::Soa;

    /// An index into a 4-byte table, checked once where it is made, beside a public weight.
    #[derive(Soa)]
    pub struct Below4 {
        i: usize,
        pub weight: f32,
    }

    impl Below4 {
        pub fn new(i: usize) -> Option<Below4> {
            (i < 4).then_some(Below4 { i, weight: 1.0 })
        }

        pub fn read(&self, table: &[u8; 4]) -> u8 {
            // SAFETY: `i < 4`: `new` checked it, and no code outside this module can set `i`.
            unsafe { *table.get_unchecked(self.i) }
        }
    }
}

fn main() {
    // `column_mut::<K>()` lends a column by position, to any module: only a `pub` field's.
    let mut v: TrackedSoaVec<checked::Below4> = [checked::Below4::new(3).unwrap()].into_iter().collect();
    v.column_mut::<1>()[0] = 2.0; // `weight` is `pub`
    v.column_mut::<0>()[0] = 1 << 40;
    let _ = v.pop().unwrap().read(&[0; 4]);
    let mut p: TrackedSoaPool<checked::Below4> = TrackedSoaPool::with_capacity(1);
    p.column_mut::<0>();
}
