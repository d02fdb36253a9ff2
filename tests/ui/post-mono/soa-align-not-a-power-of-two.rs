// A hand-written `Soa` impl whose `ALIGN` is not a power of two: the build fails where its
// columns are laid out (the derive rejects `#[soa(align = 3)]` itself). `cargo check` does not
// evaluate this check; `cargo build` and `cargo test` do.
use arena_kit::soa::{Col, Soa, SoaVec};

pub struct Odd(pub u32);

impl Soa for Odd {
    type Columns = (Col<u32>, ());
    type Ref<'a> = (&'a u32, ());
    type Mut<'a> = (&'a mut u32, ());
    type Slices<'a> = (&'a [u32], ());
    type SlicesMut<'a> = (&'a mut [u32], ());
    const ALIGN: usize = 3;
    fn into_columns(self, _: arena_kit::soa::RowConversion<Self>) -> (u32, ()) {
        (self.0, ())
    }
    fn from_columns((a, ()): (u32, ()), _: arena_kit::soa::RowConversion<Self>) -> Self {
        Odd(a)
    }
    fn view<'a>(c: Self::Ref<'a>) -> Self::Ref<'a> {
        c
    }
    fn view_mut<'a>(c: Self::Mut<'a>) -> Self::Mut<'a> {
        c
    }
    fn view_slices<'a>(c: Self::Slices<'a>) -> Self::Slices<'a> {
        c
    }
    fn view_slices_mut<'a>(c: Self::SlicesMut<'a>) -> Self::SlicesMut<'a> {
        c
    }
}

fn main() {
    let _ = SoaVec::<Odd>::try_with_capacity(4);
}
