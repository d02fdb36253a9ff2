// Tiled storage is invariant in its row type `T`, as the other SoA containers are (see
// variance-soa-row-type.rs): a `TilesMut<'_, Named<'static>, 4>` seen as
// `TilesMut<'_, Named<'short>, 4>` could store a short borrow into a lane array that outlives
// it, through a tile, a row view or the tail. Each function below must fail to compile.
use arena_kit::prelude::*;
use arena_kit::soa::{SoaTilesMut, TileRows, TileRowsMut, Tiles, TilesMut, TrackedSoaTiles};

#[derive(Soa)]
#[soa(tiled)]
pub struct Named<'n> {
    pub name: &'n str,
    pub score: u32,
}

fn tiles_mut<'s, 'a: 'b, 'b>(x: TilesMut<'s, Named<'a>, 4>) -> TilesMut<'s, Named<'b>, 4> {
    x
}
fn rows_mut<'s, 'a: 'b, 'b>(x: TileRowsMut<'s, Named<'a>, 4>) -> TileRowsMut<'s, Named<'b>, 4> {
    x
}
fn arena_tiles<'s, 'a: 'b, 'b>(x: SoaTilesMut<'s, Named<'a>, 4>) -> SoaTilesMut<'s, Named<'b>, 4> {
    x
}
fn owned<'a: 'b, 'b>(x: SoaTiles<Named<'a>, 4>) -> SoaTiles<Named<'b>, 4> {
    x
}
fn tracked<'a: 'b, 'b>(x: TrackedSoaTiles<Named<'a>, 4>) -> TrackedSoaTiles<Named<'b>, 4> {
    x
}
// The generated exclusive tile view holds `&'s mut [&'n str; N]`, so it is invariant in `'n`.
fn tile_view_mut<'s, 'a: 'b, 'b>(x: NamedTileMut<'s, 'a, 4>) -> NamedTileMut<'s, 'b, 4> {
    x
}
// The shared ones would be sound covariant but cannot be, as they store `T::Columns` too.
fn tiles<'s, 'a: 'b, 'b>(x: Tiles<'s, Named<'a>, 4>) -> Tiles<'s, Named<'b>, 4> {
    x
}
fn rows<'s, 'a: 'b, 'b>(x: TileRows<'s, Named<'a>, 4>) -> TileRows<'s, Named<'b>, 4> {
    x
}

fn main() {}
