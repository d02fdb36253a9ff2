//! The tile views of tiled SoA storage: [`SoaTiled`] (what `#[soa(tiled)]` implements) and the
//! sealed [`TileColumns`], which hands a tile's lane arrays out as `&[F; N]` / `&mut [F; N]`.
//!
//! Like [`Columns`], every pointer operation is here; a [`SoaTiled`] impl only wraps tuples of
//! lane arrays in its own view structs.

use super::{Col, Columns, Nested, Soa};

mod sealed {
    pub trait Sealed {}
}

impl sealed::Sealed for () {}
impl<F> sealed::Sealed for Col<F> {}
impl<S: SoaTiled> sealed::Sealed for Nested<S> {}
impl<A: TileColumns, B: TileColumns> sealed::Sealed for (A, B) {}

/// Columns that can be read a tile at a time: each column's `N` lanes of one tile as an array.
/// Sealed: implemented for the same shapes as [`Columns`] (a [`Nested`] field's type must be
/// [`SoaTiled`]).
///
/// Every unsafe method is called on the columns of one tile (a placement of `N` lanes); the
/// containers guarantee that.
pub trait TileColumns: Columns + sealed::Sealed {
    /// Every lane array of one tile as a shared array (`(&'a [f32; N], (&'a [f32; N], ()))`).
    type Tile<'a, const N: usize>
    where
        Self: 'a;
    /// Every lane array of one tile as an exclusive array.
    type TileMut<'a, const N: usize>
    where
        Self: 'a;

    /// The same columns `bytes` bytes later (the next tile is a tile's size on). Only computes
    /// addresses, wrapping: the containers use them within their blocks.
    fn byte_add(self, bytes: usize) -> Self;

    /// The `N` lanes of every column as arrays.
    ///
    /// # Safety
    /// - each column has `N` initialised values from its address, not mutated during `'a`.
    unsafe fn tile<'a, const N: usize>(self) -> Self::Tile<'a, N>
    where
        Self: 'a;

    /// The `N` lanes of every column as exclusive arrays.
    ///
    /// # Safety
    /// - each column has `N` initialised values from its address, not accessed by anything
    ///   else during `'a`.
    unsafe fn tile_mut<'a, const N: usize>(self) -> Self::TileMut<'a, N>
    where
        Self: 'a;
}

impl TileColumns for () {
    type Tile<'a, const N: usize> = ();
    type TileMut<'a, const N: usize> = ();
    #[inline(always)]
    fn byte_add(self, _: usize) -> Self {}
    #[inline(always)]
    unsafe fn tile<'a, const N: usize>(self)
    where
        Self: 'a,
    {
    }
    #[inline(always)]
    unsafe fn tile_mut<'a, const N: usize>(self)
    where
        Self: 'a,
    {
    }
}

impl<F> TileColumns for Col<F> {
    type Tile<'a, const N: usize>
        = &'a [F; N]
    where
        Self: 'a;
    type TileMut<'a, const N: usize>
        = &'a mut [F; N]
    where
        Self: 'a;
    #[inline(always)]
    fn byte_add(self, bytes: usize) -> Self {
        self.wrapping_add_bytes(bytes)
    }
    #[inline(always)]
    unsafe fn tile<'a, const N: usize>(self) -> &'a [F; N]
    where
        Self: 'a,
    {
        // SAFETY: the caller guarantees `N` initialised values from the column's address, shared
        // for `'a`; an array of `N` has the layout of `N` consecutive values.
        unsafe { &*self.as_ptr().cast::<[F; N]>() }
    }
    #[inline(always)]
    unsafe fn tile_mut<'a, const N: usize>(self) -> &'a mut [F; N]
    where
        Self: 'a,
    {
        // SAFETY: as for `tile`, exclusive for `'a`.
        unsafe { &mut *self.as_ptr().cast::<[F; N]>() }
    }
}

impl<A: TileColumns, B: TileColumns> TileColumns for (A, B) {
    type Tile<'a, const N: usize>
        = (A::Tile<'a, N>, B::Tile<'a, N>)
    where
        Self: 'a;
    type TileMut<'a, const N: usize>
        = (A::TileMut<'a, N>, B::TileMut<'a, N>)
    where
        Self: 'a;
    #[inline(always)]
    fn byte_add(self, bytes: usize) -> Self {
        (self.0.byte_add(bytes), self.1.byte_add(bytes))
    }
    #[inline(always)]
    unsafe fn tile<'a, const N: usize>(self) -> Self::Tile<'a, N>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        unsafe { (self.0.tile(), self.1.tile()) }
    }
    #[inline(always)]
    unsafe fn tile_mut<'a, const N: usize>(self) -> Self::TileMut<'a, N>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller; the two halves are different columns.
        unsafe { (self.0.tile_mut(), self.1.tile_mut()) }
    }
}

impl<S: SoaTiled> TileColumns for Nested<S> {
    type Tile<'a, const N: usize>
        = S::Tile<'a, N>
    where
        Self: 'a;
    type TileMut<'a, const N: usize>
        = S::TileMut<'a, N>
    where
        Self: 'a;
    #[inline(always)]
    fn byte_add(self, bytes: usize) -> Self {
        Nested::from_inner(self.inner().byte_add(bytes))
    }
    #[inline(always)]
    unsafe fn tile<'a, const N: usize>(self) -> S::Tile<'a, N>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        S::view_tile(unsafe { self.inner().tile() })
    }
    #[inline(always)]
    unsafe fn tile_mut<'a, const N: usize>(self) -> S::TileMut<'a, N>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        S::view_tile_mut(unsafe { self.inner().tile_mut() })
    }
}

/// A [`Soa`] type whose rows can also be stored in tiles of `N` rows (`SoaTiles<T, N>`), each
/// tile holding `N` values of every field contiguously. Implemented by `#[derive(Soa)]` with
/// `#[soa(tiled)]`, which writes the tile views `ParticleTile<'a, N>` and `ParticleTileMut<'a, N>`
/// (a `&[f32; N]` / `&mut [f32; N]` per field; a nested field's own tile view).
///
/// A separate trait, so [`Soa`] and every hand-written `Soa` impl stay as they are. Safe to
/// implement by hand: like [`Soa`], it only wraps the lane arrays the container hands it.
///
/// ```
/// use arena_kit::soa::SoaTiles;
/// use arena_kit::Soa;
///
/// #[derive(Soa)]
/// #[soa(tiled)]
/// struct Spark { x: f32, vx: f32 }
///
/// let mut sparks: SoaTiles<Spark, 8> = (0..20).map(|i| Spark { x: 0.0, vx: i as f32 }).collect();
/// for SparkTileMut { x, vx } in sparks.tiles_mut() {
///     for k in 0..8 {
///         x[k] += vx[k] * 0.5; // two arrays of 8: no bounds checks, one AVX register each
///     }
/// }
/// assert_eq!(sparks.tiles().count(), 2); // rows 16..20 are the partial last tile
/// assert_eq!(*sparks.get(10).unwrap().x, 5.0);
/// ```
///
/// # Variance
///
/// As for [`Soa`]: the derived `Tile<'a, N>` is covariant in `'a` and in the row's parameters,
/// `TileMut<'a, N>` covariant in `'a` and invariant in the row's parameters.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored in tiles",
    label = "`{Self}` needs `#[derive(Soa)]` with `#[soa(tiled)]`",
    note = "add `#[soa(tiled)]` under `#[derive(Soa)]`; a `#[soa(nested)]` field of a tiled struct needs it on its own type too"
)]
pub trait SoaTiled: Soa<Columns: TileColumns> {
    /// One tile's lane arrays as shared arrays (`ParticleTile<'a, N>`).
    type Tile<'a, const N: usize>
    where
        Self: 'a;
    /// One tile's lane arrays as exclusive arrays (`ParticleTileMut<'a, N>`).
    type TileMut<'a, const N: usize>
    where
        Self: 'a;

    /// Wraps one tile's lane arrays in the view struct.
    fn view_tile<'a, const N: usize>(
        lanes: <Self::Columns as TileColumns>::Tile<'a, N>,
    ) -> Self::Tile<'a, N>
    where
        Self: 'a;

    /// Wraps one tile's exclusive lane arrays in the view struct.
    fn view_tile_mut<'a, const N: usize>(
        lanes: <Self::Columns as TileColumns>::TileMut<'a, N>,
    ) -> Self::TileMut<'a, N>
    where
        Self: 'a;
}
