// The SoA containers, views and iterators are invariant in their row type `T` (they store
// `T::Columns`, raw column pointers). For the mutable ones that is what soundness needs: a
// `SoaSliceMut<'_, Named<'static>>` seen as `SoaSliceMut<'_, Named<'short>>` could store a short
// borrow into a column that outlives it. Each function below must fail to compile.
use arena_kit::prelude::*;
use arena_kit::soa::{ChunksExact, ChunksExactMut, Col, IntoIter, Iter, IterMut};

#[derive(Soa)]
pub struct Named<'n> {
    pub name: &'n str,
    pub score: u32,
}

fn slice_mut<'s, 'a: 'b, 'b>(x: SoaSliceMut<'s, Named<'a>>) -> SoaSliceMut<'s, Named<'b>> {
    x
}
fn iter_mut<'s, 'a: 'b, 'b>(x: IterMut<'s, Named<'a>>) -> IterMut<'s, Named<'b>> {
    x
}
fn chunks_mut<'s, 'a: 'b, 'b>(
    x: ChunksExactMut<'s, Named<'a>, 4>,
) -> ChunksExactMut<'s, Named<'b>, 4> {
    x
}
fn vec<'a: 'b, 'b>(x: SoaVec<Named<'a>>) -> SoaVec<Named<'b>> {
    x
}
fn into_iter<'a: 'b, 'b>(x: IntoIter<Named<'a>>) -> IntoIter<Named<'b>> {
    x
}
fn pool<'a: 'b, 'b>(x: SoaPool<Named<'a>>) -> SoaPool<Named<'b>> {
    x
}
fn column<'a: 'b, 'b>(x: Col<&'a str>) -> Col<&'b str> {
    x
}
// The generated mutable row view holds `&'s mut &'n str`, so it is invariant in `'n`.
fn row_mut<'s, 'a: 'b, 'b>(x: NamedMut<'s, 'a>) -> NamedMut<'s, 'b> {
    x
}
// The shared ones would be sound covariant but cannot be, as they store `T::Columns` too.
fn slice<'s, 'a: 'b, 'b>(x: SoaSlice<'s, Named<'a>>) -> SoaSlice<'s, Named<'b>> {
    x
}
fn iter<'s, 'a: 'b, 'b>(x: Iter<'s, Named<'a>>) -> Iter<'s, Named<'b>> {
    x
}
fn chunks<'s, 'a: 'b, 'b>(x: ChunksExact<'s, Named<'a>, 4>) -> ChunksExact<'s, Named<'b>, 4> {
    x
}

fn main() {}
