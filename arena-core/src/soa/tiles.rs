//! [`SoaTiles<T, N>`]: rows stored tile-major ("AoSoA") in one allocation, and
//! [`SoaTilesMut<'a, T, N>`], the same rows carved from an arena ([`Arena::alloc_tiles`]).
//!
//! Tile `t` holds rows `t * N..t * N + N`: for each field in declaration order, its `N` values
//! side by side (a lane array), `[x0..x7][y0..y7]..` for `N = 8`. One tile is placed by the same
//! walk as a [`SoaVec`](super::SoaVec) block of `N` rows (the [`Cursor`] of `columns.rs`), with
//! every lane array of non-zero-sized values also aligned to `min(64, max(32, N * size))`
//! rounded up to a power of two; the tile's size is rounded up to its alignment, and tiles
//! follow each other at that stride. Since the placement does not depend on the row count, the
//! block grows with one `realloc` and no row moves.

use alloc::alloc::{alloc, dealloc, realloc};
use alloc::vec::Vec;
use core::alloc::Layout;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;

use super::raw::unwrap_alloc;
use super::{
    CloneColumns, Columns, Cursor, Soa, SoaAllocError, SoaTiled, TileColumns, TryPushError,
    column_align, dangling, row_from_raw, row_to_raw,
};
use crate::arena::{Arena, ArenaError};
use crate::or_panic::OrPanic;

/// One tile's `(size, align)`: the placement of `N` lanes of every column, its size rounded up
/// to its alignment so the next tile starts aligned too.
fn tile_shape<T: Soa>(lanes: usize) -> Result<(usize, usize), SoaAllocError> {
    let mut cursor = Cursor::tile(core::ptr::null_mut(), lanes);
    cursor.with_align(column_align::<T>(), T::Columns::place);
    let overflow = SoaAllocError::CapacityOverflow { rows: lanes };
    let (size, align) = cursor.finish().ok_or(overflow)?;
    Ok((size.checked_next_multiple_of(align).ok_or(overflow)?, align))
}

/// The layout of one block of `tiles` tiles of `N` rows of `T` (what [`SoaTiles`] allocates and
/// [`Arena::alloc_tiles`] carves): `tiles` times [`tile_layout`]'s size.
pub fn tiles_layout<T: SoaTiled, const N: usize>(tiles: usize) -> Result<Layout, SoaAllocError> {
    let (stride, align) = tile_shape::<T>(N)?;
    let overflow = SoaAllocError::CapacityOverflow {
        rows: tiles.saturating_mul(N),
    };
    let size = stride.checked_mul(tiles).ok_or(overflow)?;
    Layout::from_size_align(size, align).map_err(|_| overflow)
}

/// The layout of one tile of `N` rows of `T`: its size is the distance between tiles (a
/// multiple of its alignment). Every lane array of non-zero-sized values in it starts on a
/// multiple of `min(64, max(32, N * size_of::<F>()))` (rounded up to a power of two) and of its
/// own alignment; a zero-sized field's takes no room.
///
/// ```
/// use arena_kit::soa::tile_layout;
/// use arena_kit::Soa;
///
/// #[derive(Soa)]
/// #[soa(tiled)]
/// struct P { x: f32, y: f32, life: u8 }
///
/// // 8 x, 8 y (32 bytes each, on 32-byte boundaries), 8 life on a 32-byte boundary too.
/// assert_eq!(tile_layout::<P, 8>().size(), 96);
/// assert_eq!(tile_layout::<P, 8>().align(), 32);
/// ```
///
/// # Panics
/// If one tile of `N` rows does not fit in the address space.
#[track_caller]
pub fn tile_layout<T: SoaTiled, const N: usize>() -> Layout {
    unwrap_alloc(tiles_layout::<T, N>(1))
}

/// The columns of the tile that starts at `base`.
#[inline(always)]
fn place_tile<T: Soa>(base: *mut u8, lanes: usize) -> T::Columns {
    let mut cursor = Cursor::tile(base, lanes);
    cursor.place_aligned::<T::Columns>(column_align::<T>())
}

/// Tile-major addressing shared by the owning container and the arena view: the block's start
/// and the tile stride. `Copy`; says nothing about which rows are initialised.
struct Lanes<T: SoaTiled, const N: usize> {
    base: *mut u8,
    stride: usize,
    /// What the columns at `base` hold: invariant in `T` (an associated type), as every
    /// container and view of this module is.
    _marker: PhantomData<T::Columns>,
}

// SAFETY: `Lanes` is an address and a stride, like the `Col` addresses of `T::Columns` (which
// are `Send`/`Sync` exactly when the stored values are); every access through it is unsafe and
// made by a container that owns or borrows the rows.
unsafe impl<T: SoaTiled, const N: usize> Send for Lanes<T, N> where T::Columns: Send {}
// SAFETY: as above.
unsafe impl<T: SoaTiled, const N: usize> Sync for Lanes<T, N> where T::Columns: Sync {}

impl<T: SoaTiled, const N: usize> Clone for Lanes<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SoaTiled, const N: usize> Copy for Lanes<T, N> {}

impl<T: SoaTiled, const N: usize> Lanes<T, N> {
    /// The columns of tile `t` (addresses only).
    ///
    /// Placed afresh from the tile's start rather than offset from stored column addresses:
    /// inlined, the placement folds to constant offsets, so the optimiser sees that a tile's
    /// lane arrays are disjoint and vectorises a loop over two of them (with stored addresses
    /// it could not tell `x` from `vx` and ran the loop scalar).
    #[inline(always)]
    fn tile(self, t: usize) -> T::Columns {
        place_tile::<T>(self.base.wrapping_add(t.wrapping_mul(self.stride)), N)
    }

    /// Row `i` as (its tile's columns, its lane).
    #[inline(always)]
    fn at(self, i: usize) -> (T::Columns, usize) {
        (self.tile(i / N), i % N)
    }

    /// Moves row `from` over row `to` (a bitwise move; `from` is a hole afterwards).
    ///
    /// # Safety
    /// - row `from` is initialised, row `to` is in the block and holds nothing to drop.
    #[inline(always)]
    unsafe fn move_row(self, from: usize, to: usize) {
        let (src, a) = self.at(from);
        let (dst, b) = self.at(to);
        // SAFETY: forwarded from the caller; rows of one block, each a lane of its tile.
        unsafe { dst.write(b, src.read(a)) }
    }

    /// Drops rows `start..end`, tile by tile; if a drop panics the rest are still dropped (a
    /// second panic aborts, as for a slice).
    ///
    /// # Safety
    /// - those rows are initialised and not used again.
    unsafe fn drop_rows(self, start: usize, end: usize) {
        if !<T::Columns as Columns>::NEEDS_DROP {
            return;
        }
        /// Drops rows `next..end` chunk by chunk, `next` moving past each chunk before it drops.
        struct Rest<T: SoaTiled, const N: usize> {
            lanes: Lanes<T, N>,
            next: usize,
            end: usize,
        }
        impl<T: SoaTiled, const N: usize> Rest<T, N> {
            fn run(&mut self) {
                while self.next < self.end {
                    let (cols, lane) = self.lanes.at(self.next);
                    let n = (N - lane).min(self.end - self.next);
                    self.next += n;
                    // SAFETY: rows of one tile, initialised and given up by `drop_rows`' caller.
                    unsafe { cols.drop_range(lane, n) };
                }
            }
        }
        impl<T: SoaTiled, const N: usize> Drop for Rest<T, N> {
            fn drop(&mut self) {
                // Only left to do after a drop panicked.
                self.run();
            }
        }
        let mut rest = Rest {
            lanes: self,
            next: start,
            end,
        };
        rest.run();
    }

    /// # Safety
    /// - row `i` is initialised and shared for `'a`.
    #[inline(always)]
    unsafe fn get<'a>(self, i: usize) -> T::Ref<'a>
    where
        T: 'a,
    {
        let (cols, lane) = self.at(i);
        // SAFETY: forwarded from the caller.
        T::view(unsafe { cols.get(lane) })
    }

    /// # Safety
    /// - row `i` is initialised and exclusive for `'a`.
    #[inline(always)]
    unsafe fn get_mut<'a>(self, i: usize) -> T::Mut<'a>
    where
        T: 'a,
    {
        let (cols, lane) = self.at(i);
        // SAFETY: forwarded from the caller.
        T::view_mut(unsafe { cols.get_mut(lane) })
    }

    /// The last `len % N` rows: the partial last tile's lanes, as slices.
    ///
    /// # Safety
    /// - rows `0..len` are initialised and shared for `'a`.
    #[inline]
    unsafe fn tail<'a>(self, len: usize) -> T::Slices<'a>
    where
        T: 'a,
    {
        // An empty tail is taken from tile 0, whose addresses are always in the block.
        let t = if len.is_multiple_of(N) { 0 } else { len / N };
        // SAFETY: forwarded from the caller; the lanes of one tile are contiguous per column.
        T::view_slices(unsafe { self.tile(t).slices(0, len % N) })
    }

    /// # Safety
    /// - rows `0..len` are initialised and exclusive for `'a`.
    #[inline]
    unsafe fn tail_mut<'a>(self, len: usize) -> T::SlicesMut<'a>
    where
        T: 'a,
    {
        let t = if len.is_multiple_of(N) { 0 } else { len / N };
        // SAFETY: forwarded from the caller.
        T::view_slices_mut(unsafe { self.tile(t).slices_mut(0, len % N) })
    }
}

/// The row and tile views [`SoaTiles`] and [`SoaTilesMut`] share, written once: both hold
/// `lanes` (where the tiles are) and `len` (rows `0..len` initialised), and lend them for the
/// borrow of `self`.
macro_rules! tile_views {
    () => {
        /// The number of rows.
        #[inline]
        pub fn len(&self) -> usize {
            self.len
        }

        /// Whether there are no rows.
        #[inline]
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }

        /// The number of full tiles (what [`tiles`](Self::tiles) yields): `len / N`.
        #[inline]
        pub fn full_tiles(&self) -> usize {
            self.len / N
        }

        /// The number of rows in the partial last tile (what [`tail`](Self::tail) holds):
        /// `len % N`.
        #[inline]
        pub fn tail_len(&self) -> usize {
            self.len % N
        }

        /// References to row `index`'s fields, or `None` if out of bounds.
        #[inline]
        pub fn get(&self, index: usize) -> Option<T::Ref<'_>> {
            // SAFETY: the row is initialised and shared for the borrow of `self`.
            (index < self.len).then(|| unsafe { self.lanes.get(index) })
        }

        /// Exclusive references to row `index`'s fields, or `None` if out of bounds.
        #[inline]
        pub fn get_mut(&mut self, index: usize) -> Option<T::Mut<'_>> {
            // SAFETY: the row is initialised and exclusive for the borrow of `self`.
            (index < self.len).then(|| unsafe { self.lanes.get_mut(index) })
        }

        /// The first row, or `None` if empty.
        pub fn first(&self) -> Option<T::Ref<'_>> {
            self.get(0)
        }

        /// The last row, or `None` if empty.
        pub fn last(&self) -> Option<T::Ref<'_>> {
            self.len.checked_sub(1).and_then(|i| self.get(i))
        }

        /// Every row as a [`Soa::Ref`] view, front to back.
        pub fn iter(&self) -> TileRows<'_, T, N> {
            TileRows {
                lanes: self.lanes,
                front: 0,
                back: self.len,
                _marker: PhantomData,
            }
        }

        /// Every row as a [`Soa::Mut`] view, front to back.
        pub fn iter_mut(&mut self) -> TileRowsMut<'_, T, N> {
            TileRowsMut {
                lanes: self.lanes,
                front: 0,
                back: self.len,
                _marker: PhantomData,
            }
        }

        /// The full tiles, each as `T::Tile<'_, N>` (a `&[F; N]` per field), front to back. The
        /// rows of a partial last tile are in [`tail`](Self::tail).
        pub fn tiles(&self) -> Tiles<'_, T, N> {
            Tiles {
                lanes: self.lanes,
                front: 0,
                back: self.len / N,
                _marker: PhantomData,
            }
        }

        /// The full tiles, each as `T::TileMut<'_, N>` (a `&mut [F; N]` per field), front to
        /// back. The rows of a partial last tile are in [`tail_mut`](Self::tail_mut).
        pub fn tiles_mut(&mut self) -> TilesMut<'_, T, N> {
            TilesMut {
                lanes: self.lanes,
                front: 0,
                back: self.len / N,
                _marker: PhantomData,
            }
        }

        /// The rows of the partial last tile (`len % N` of them, the last rows) as slices, one
        /// per field; every slice is empty when the last tile is full.
        pub fn tail(&self) -> T::Slices<'_> {
            // SAFETY: rows `0..len` are initialised and shared for the borrow.
            unsafe { self.lanes.tail(self.len) }
        }

        /// The rows of the partial last tile as exclusive slices (see [`tail`](Self::tail)).
        pub fn tail_mut(&mut self) -> T::SlicesMut<'_> {
            // SAFETY: rows `0..len` are initialised and exclusive for the borrow.
            unsafe { self.lanes.tail_mut(self.len) }
        }
    };
}

/// A growable vector of `T` stored tile-major: tiles of `N` rows, each holding `N` values of
/// every field contiguously (`[x0..x7][y0..y7]..` for `N = 8`), all in one allocation ("AoSoA").
///
/// A pass over a few fields reads them a tile at a time as fixed-size arrays
/// ([`tiles_mut`](Self::tiles_mut) gives `ParticleTileMut { x: &mut [f32; N], .. }`), which
/// vectorises with no bounds checks, like [`SoaVec`](super::SoaVec)'s columns; a whole row lies
/// within one tile, so reading a random row touches fewer cache lines (for a 7-`f32` row at
/// `N = 8`: 4 adjacent lines instead of `SoaVec`'s 7, one per column).
///
/// Choosing `N`: each lane array starts on a 32- or 64-byte boundary, so with lanes under 64
/// bytes (`N = 8` of `f32`) two fields share a cache line, and a pass over one or two fields
/// moves more bytes than `SoaVec`'s columns; with 64-byte lanes (`N = 16` of `f32`) a pass
/// moves the same bytes as a column, but a row spans as many lines as it has fields. Even then
/// a pass over a few fields reads a strided stream (the other fields' lines lie between the
/// ones it needs): at `N = 16` it kept up with two dense columns at 2.8 MB of rows and took
/// twice as long at 28 MB (measured in BENCHMARKS.md, "Tiled storage"): tiles pay off for
/// whole-row access. The last tile may be partial:
/// [`tiles`](Self::tiles) yields the full ones, and [`tail`](Self::tail) the last
/// [`tail_len`](Self::tail_len) rows as slices (the lanes of that tile past `len` are not
/// initialised, so they are never handed out as arrays).
///
/// The row API follows [`SoaVec`](super::SoaVec) (`push`, `pop`, `swap_remove`, `get`,
/// `get_mut`, `iter`, `retain`, `extend`, ...), with the same [`Soa::Ref`] / [`Soa::Mut`] views.
/// `T` must implement [`SoaTiled`] (`#[soa(tiled)]` on the derive). `N` must not be 0 (a build
/// error); a power of two keeps the row-to-tile arithmetic to a shift and a mask.
///
/// ```
/// use arena_kit::soa::SoaTiles;
/// use arena_kit::Soa;
///
/// #[derive(Soa, Debug, PartialEq)]
/// #[soa(tiled)]
/// struct Particle { x: f32, vx: f32, life: f32 }
///
/// let mut ps: SoaTiles<Particle, 8> =
///     (0..20).map(|i| Particle { x: 0.0, vx: i as f32, life: 1.0 }).collect();
/// let dt = 0.5;
/// for ParticleTileMut { x, vx, .. } in ps.tiles_mut() {
///     for k in 0..8 {
///         x[k] += vx[k] * dt;
///     }
/// }
/// let ParticleSlicesMut { x, vx, .. } = ps.tail_mut(); // rows 16..20
/// x.iter_mut().zip(vx.iter()).for_each(|(x, vx)| *x += vx * dt);
/// assert_eq!(*ps.get(19).unwrap().x, 9.5);
/// ps.retain(|p| *p.vx < 10.0);
/// assert_eq!(ps.swap_remove(0), Particle { x: 0.0, vx: 0.0, life: 1.0 });
/// assert_eq!(ps.len(), 9);
/// ```
///
/// # Variance
///
/// Invariant in `T`, because it stores `T::Columns` (an associated type).
pub struct SoaTiles<T: SoaTiled, const N: usize> {
    lanes: Lanes<T, N>,
    align: usize,
    /// Tiles the block holds (0: no block).
    tiles: usize,
    len: usize,
    _marker: PhantomData<T>,
}

impl<T: SoaTiled, const N: usize> SoaTiles<T, N> {
    tile_views!();

    const N_IS_NOT_ZERO: () = assert!(N > 0, "SoaTiles<T, N> needs N > 0 rows per tile");

    /// An empty vector; allocates nothing until the first push.
    ///
    /// # Panics
    /// If one tile of `N` rows does not fit in the address space.
    #[track_caller]
    pub fn new() -> Self {
        let () = Self::N_IS_NOT_ZERO;
        let (stride, align) = unwrap_alloc(tile_shape::<T>(N));
        let base = dangling(align);
        SoaTiles {
            lanes: Lanes {
                base,
                stride,
                _marker: PhantomData,
            },
            align,
            tiles: 0,
            len: 0,
            _marker: PhantomData,
        }
    }

    /// An empty vector with room for `capacity` rows (rounded up to whole tiles).
    ///
    /// # Panics
    /// If the block does not fit in memory; see [`try_with_capacity`](Self::try_with_capacity).
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        unwrap_alloc(Self::try_with_capacity(capacity))
    }

    /// An empty vector with room for `capacity` rows, or why the block could not be allocated.
    ///
    /// # Errors
    /// [`SoaAllocError::CapacityOverflow`] when one tile of `N` rows does not fit in the address
    /// space (where [`new`](Self::new) panics), whatever `capacity` is; otherwise as
    /// [`try_reserve_exact`](Self::try_reserve_exact).
    pub fn try_with_capacity(capacity: usize) -> Result<Self, SoaAllocError> {
        let () = Self::N_IS_NOT_ZERO;
        // The one failure `new` panics on, answered here first.
        tile_shape::<T>(N)?;
        let mut v = Self::new();
        v.try_reserve_exact(capacity)?;
        Ok(v)
    }

    /// How many rows fit without reallocating (a multiple of `N`; unbounded when a row occupies
    /// no memory).
    #[inline]
    pub fn capacity(&self) -> usize {
        if self.lanes.stride == 0 {
            usize::MAX
        } else {
            // Cannot overflow: each tile holds at least `N` bytes.
            self.tiles * N
        }
    }

    /// Makes room for at least `additional` more rows.
    ///
    /// # Panics
    /// If the allocation fails; see [`try_reserve`](Self::try_reserve).
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        unwrap_alloc(self.try_reserve(additional));
    }

    /// Makes room for at least `additional` more rows, growing geometrically, or says why not
    /// (nothing changes then).
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), SoaAllocError> {
        self.reserve_impl(additional, false)
    }

    /// Makes room for at least `additional` more rows, rounded up to whole tiles only, or says
    /// why not (nothing changes then).
    pub fn try_reserve_exact(&mut self, additional: usize) -> Result<(), SoaAllocError> {
        self.reserve_impl(additional, true)
    }

    fn reserve_impl(&mut self, additional: usize, exact: bool) -> Result<(), SoaAllocError> {
        let required = self
            .len
            .checked_add(additional)
            .ok_or(SoaAllocError::CapacityOverflow { rows: usize::MAX })?;
        if required <= self.capacity() {
            return Ok(());
        }
        let need = required.div_ceil(N);
        let tiles = if exact {
            need
        } else {
            need.max(self.tiles.saturating_mul(2)).max(1)
        };
        self.regrow(tiles)
    }

    /// Resizes the block to `tiles` tiles (at least the tiles in use). On error nothing changes.
    /// The tiles keep their offsets, so `realloc` carries every row along.
    fn regrow(&mut self, tiles: usize) -> Result<(), SoaAllocError> {
        let layout = tiles_layout::<T, N>(tiles)?;
        let refused = SoaAllocError::OutOfMemory {
            size: layout.size(),
            align: layout.align(),
        };
        let base = if self.tiles == 0 {
            if layout.size() == 0 {
                return Ok(());
            }
            // SAFETY: the layout has a non-zero size.
            unsafe { alloc(layout) }
        } else if layout.size() == 0 {
            self.free();
            dangling(self.align)
        } else {
            let old = tiles_layout::<T, N>(self.tiles)?;
            // SAFETY: `base` was allocated with `old`, whose alignment `layout` shares; the new
            // size is non-zero. The bytes of the tiles in use are carried over.
            unsafe { realloc(self.lanes.base, old, layout.size()) }
        };
        if base.is_null() {
            return Err(refused);
        }
        self.lanes.base = base;
        self.tiles = if layout.size() == 0 { 0 } else { tiles };
        Ok(())
    }

    /// Frees the block (the rows must already be dropped or moved out).
    fn free(&mut self) {
        if self.tiles != 0 {
            if let Ok(layout) = tiles_layout::<T, N>(self.tiles) {
                // SAFETY: `base` was allocated with this layout.
                unsafe { dealloc(self.lanes.base, layout) };
            }
            self.tiles = 0;
        }
    }

    /// Shrinks the block to the tiles in use.
    ///
    /// # Panics
    /// If the allocator refuses the smaller block.
    #[track_caller]
    pub fn shrink_to_fit(&mut self) {
        if self.lanes.stride != 0 && self.tiles > self.len.div_ceil(N) {
            unwrap_alloc(self.regrow(self.len.div_ceil(N)));
        }
    }

    /// Appends a row. The row is split into its column values (user code) before anything
    /// changes, so a panic there leaves the vector as it was.
    ///
    /// # Panics
    /// If the block cannot grow.
    #[inline]
    #[track_caller]
    pub fn push(&mut self, value: T) {
        self.push_raw(row_to_raw(value));
    }

    /// Appends a row, or hands it back if the block cannot grow (nothing changes then).
    pub fn try_push(&mut self, value: T) -> Result<(), TryPushError<T>> {
        if self.len == self.capacity()
            && let Err(error) = self.try_reserve(1)
        {
            return Err(TryPushError::alloc(value, error));
        }
        self.push(value);
        Ok(())
    }

    /// Inserts a row at `index` (as [`insert`](Self::insert)), or hands it back if the block
    /// cannot grow (nothing changes then).
    ///
    /// # Panics
    /// If `index > len`.
    #[track_caller]
    pub fn try_insert(&mut self, index: usize, value: T) -> Result<(), TryPushError<T>> {
        super::assert_insert_index(index, self.len);
        if self.len == self.capacity()
            && let Err(error) = self.try_reserve(1)
        {
            return Err(TryPushError::alloc(value, error));
        }
        self.insert(index, value);
        Ok(())
    }

    #[inline]
    #[track_caller]
    fn push_raw(&mut self, parts: <T::Columns as Columns>::Raw) {
        if self.len == self.capacity() {
            self.reserve(1);
        }
        let (cols, lane) = self.lanes.at(self.len);
        // SAFETY: `len < capacity`: an uninitialised row of the block.
        unsafe { cols.write(lane, parts) };
        self.len += 1;
    }

    /// Removes and returns the last row.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let (cols, lane) = self.lanes.at(self.len);
        // SAFETY: row `len` was initialised and is now outside the vector.
        Some(row_from_raw(unsafe { cols.read(lane) }))
    }

    /// Removes and returns row `index`, moving the last row into its place (O(1)).
    ///
    /// # Panics
    /// If `index >= len`.
    #[track_caller]
    pub fn swap_remove(&mut self, index: usize) -> T {
        assert!(
            index < self.len,
            "swap_remove index {index} out of bounds (len {})",
            self.len
        );
        let last = self.len - 1;
        let (cols, lane) = self.lanes.at(index);
        // SAFETY: row `index` is moved out, then the last row moved over it; no user code runs
        // until the length is final.
        let parts = unsafe {
            let parts = cols.read(lane);
            if index != last {
                self.lanes.move_row(last, index);
            }
            parts
        };
        self.len = last;
        row_from_raw(parts)
    }

    /// Inserts a row at `index`, shifting the later rows up by one (O(len - index), one row
    /// moved at a time: they cross tiles).
    ///
    /// # Panics
    /// If `index > len`, or the block cannot grow.
    #[track_caller]
    pub fn insert(&mut self, index: usize, value: T) {
        super::assert_insert_index(index, self.len);
        // User code (the conversions) and growth run before any row moves.
        let parts = row_to_raw(value);
        if self.len == self.capacity() {
            self.reserve(1);
        }
        for i in (index..self.len).rev() {
            // SAFETY: `len < capacity`; row `i` moves up into the hole at `i + 1` (row `len`
            // first, uninitialised). No user code runs until the row is written.
            unsafe { self.lanes.move_row(i, i + 1) };
        }
        let (cols, lane) = self.lanes.at(index);
        // SAFETY: row `index` is now a hole.
        unsafe { cols.write(lane, parts) };
        self.len += 1;
    }

    /// Removes and returns row `index`, shifting the later rows down by one.
    ///
    /// # Panics
    /// If `index >= len`.
    #[track_caller]
    pub fn remove(&mut self, index: usize) -> T {
        assert!(
            index < self.len,
            "removal index {index} out of bounds (len {})",
            self.len
        );
        let (cols, lane) = self.lanes.at(index);
        // SAFETY: row `index` is moved out, then rows `index + 1..len` move down over the hole,
        // raw moves only: no user code runs until the length is final.
        let parts = unsafe {
            let parts = cols.read(lane);
            for i in index + 1..self.len {
                self.lanes.move_row(i, i - 1);
            }
            parts
        };
        self.len -= 1;
        row_from_raw(parts)
    }

    /// Swaps rows `a` and `b`.
    ///
    /// # Panics
    /// If either is out of bounds.
    #[track_caller]
    pub fn swap(&mut self, a: usize, b: usize) {
        assert!(
            a < self.len && b < self.len,
            "swap indices {a} and {b} out of bounds (len {})",
            self.len
        );
        if a != b {
            let ((ca, la), (cb, lb)) = (self.lanes.at(a), self.lanes.at(b));
            // SAFETY: both rows are initialised and distinct; raw moves only.
            unsafe {
                let ra = ca.read(la);
                let rb = cb.read(lb);
                ca.write(la, rb);
                cb.write(lb, ra);
            }
        }
    }

    /// Drops the rows from `len` on.
    ///
    /// If a drop panics, the other rows past `len` are still dropped, once.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            let old = self.len;
            self.len = len;
            // SAFETY: rows `len..old` are initialised and now outside the vector.
            unsafe { self.lanes.drop_rows(len, old) };
        }
    }

    /// Drops every row, keeping the capacity.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Keeps only the rows for which `keep` returns `true`, in order.
    ///
    /// If `keep` or a drop panics, the rows not yet visited are kept and nothing is dropped twice.
    pub fn retain<F>(&mut self, mut keep: F)
    where
        F: FnMut(T::Ref<'_>) -> bool,
    {
        // SAFETY: `retain_by` passes initialised rows, not otherwise borrowed during the call.
        self.retain_by(|lanes, i| keep(unsafe { lanes.get(i) }));
    }

    /// Keeps only the rows for which `keep` returns `true`, in order, letting `keep` change the
    /// rows it sees.
    ///
    /// If `keep` or a drop panics, the rows not yet visited are kept (with what `keep` wrote to
    /// them) and nothing is dropped twice.
    pub fn retain_mut<F>(&mut self, mut keep: F)
    where
        F: FnMut(T::Mut<'_>) -> bool,
    {
        // SAFETY: `retain_by` passes initialised rows, not otherwise borrowed during the call.
        self.retain_by(|lanes, i| keep(unsafe { lanes.get_mut(i) }));
    }

    /// The compaction loop behind `retain` and `retain_mut` (as `SoaVec`'s): `keep(lanes, i)`
    /// decides row `i`, visited in order at its original index, and the kept rows close up.
    fn retain_by(&mut self, mut keep: impl FnMut(Lanes<T, N>, usize) -> bool) {
        /// Closes the gap on drop (also while unwinding): rows `next..old_len` move down by
        /// `deleted`.
        struct Gap<'v, T: SoaTiled, const N: usize> {
            vec: &'v mut SoaTiles<T, N>,
            next: usize,
            deleted: usize,
            old_len: usize,
        }
        impl<T: SoaTiled, const N: usize> Drop for Gap<'_, T, N> {
            fn drop(&mut self) {
                if self.deleted > 0 {
                    for i in self.next..self.old_len {
                        // SAFETY: row `i` is initialised and unvisited; `i - deleted` is a hole.
                        unsafe { self.vec.lanes.move_row(i, i - self.deleted) };
                    }
                }
                self.vec.len = self.old_len - self.deleted;
            }
        }
        let old_len = self.len;
        // A panic before the guard finishes must not expose holes.
        self.len = 0;
        let mut g = Gap {
            vec: self,
            next: 0,
            deleted: 0,
            old_len,
        };
        while g.next < old_len {
            let lanes = g.vec.lanes;
            let i = g.next;
            let kept = keep(lanes, i);
            g.next += 1;
            if kept {
                if g.deleted > 0 {
                    // SAFETY: row `i` moves into the first hole `i - deleted`.
                    unsafe { lanes.move_row(i, i - g.deleted) };
                }
            } else {
                g.deleted += 1;
                let (cols, lane) = lanes.at(i);
                // SAFETY: row `i` is initialised and now counted as a hole.
                unsafe { cols.drop_range(lane, 1) };
            }
        }
    }

    /// Moves every row out into a `Vec<T>`, in order.
    pub fn into_vec(mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        let len = self.len;
        // Rows `i..len` stay owned by `self` while `out` is filled: a panicking conversion
        // drops them once, through the drop of `self` (rows `0..i` were moved out first).
        self.len = 0;
        struct Rest<'v, T: SoaTiled, const N: usize> {
            vec: &'v mut SoaTiles<T, N>,
            next: usize,
            len: usize,
        }
        impl<T: SoaTiled, const N: usize> Drop for Rest<'_, T, N> {
            fn drop(&mut self) {
                // SAFETY: rows `next..len` are initialised and not yet moved out.
                unsafe { self.vec.lanes.drop_rows(self.next, self.len) };
            }
        }
        let mut rest = Rest {
            vec: &mut self,
            next: 0,
            len,
        };
        while rest.next < len {
            let (cols, lane) = rest.vec.lanes.at(rest.next);
            rest.next += 1;
            // SAFETY: row `next - 1` is initialised and given up here.
            out.push(row_from_raw(unsafe { cols.read(lane) }));
        }
        out
    }
}

impl<T: SoaTiled, const N: usize> Default for SoaTiles<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: SoaTiled, const N: usize> Drop for SoaTiles<T, N> {
    fn drop(&mut self) {
        /// Frees the block even if a row's drop panics.
        struct Free<'v, T: SoaTiled, const N: usize>(&'v mut SoaTiles<T, N>);
        impl<T: SoaTiled, const N: usize> Drop for Free<'_, T, N> {
            fn drop(&mut self) {
                self.0.free();
            }
        }
        let len = self.len;
        self.len = 0;
        let free = Free(self);
        // SAFETY: rows `0..len` are initialised and dropped once here.
        unsafe { free.0.lanes.drop_rows(0, len) };
    }
}

impl<T: SoaTiled, const N: usize> Extend<T> for SoaTiles<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        // The hint is only a hint: a failed reservation is ignored, the pushes grow as needed.
        let _ = self.try_reserve(iter.size_hint().0);
        for value in iter {
            self.push(value);
        }
    }
}

impl<T: SoaTiled, const N: usize> FromIterator<T> for SoaTiles<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = SoaTiles::new();
        v.extend(iter);
        v
    }
}

impl<T: SoaTiled, const N: usize> From<Vec<T>> for SoaTiles<T, N> {
    fn from(values: Vec<T>) -> Self {
        values.into_iter().collect()
    }
}

/// For rows that are `Clone` and [`PlainRow`](super::PlainRow), as [`SoaVec`](super::SoaVec)'s
/// `Clone`.
impl<T: SoaTiled + Clone + super::PlainRow, const N: usize> Clone for SoaTiles<T, N>
where
    T::Columns: CloneColumns,
{
    /// Clones row by row; if a clone panics, the rows cloned so far are dropped.
    fn clone(&self) -> Self {
        let mut out = SoaTiles::with_capacity(self.len);
        for i in 0..self.len {
            let (cols, lane) = self.lanes.at(i);
            // SAFETY: row `i` is initialised.
            let row = unsafe { cols.clone_row(lane) };
            out.push_raw(row);
        }
        out
    }
}

impl<T: SoaTiled, const N: usize> fmt::Debug for SoaTiles<T, N>
where
    for<'a> T::Ref<'a>: fmt::Debug,
{
    /// The rows, as a list of [`Soa::Ref`] views.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'v, T: SoaTiled, const N: usize> IntoIterator for &'v SoaTiles<T, N> {
    type Item = T::Ref<'v>;
    type IntoIter = TileRows<'v, T, N>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'v, T: SoaTiled, const N: usize> IntoIterator for &'v mut SoaTiles<T, N> {
    type Item = T::Mut<'v>;
    type IntoIter = TileRowsMut<'v, T, N>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

// SAFETY: `SoaTiles` owns its rows (the raw pointers are its own block), like a `Vec<T>` of the
// column values: sending it sends them.
unsafe impl<T: SoaTiled, const N: usize> Send for SoaTiles<T, N> where T::Columns: Send {}
// SAFETY: `&SoaTiles` only hands out shared references to the values.
unsafe impl<T: SoaTiled, const N: usize> Sync for SoaTiles<T, N> where T::Columns: Sync {}

/// A fixed-length run of rows stored tile-major in an arena (from [`Arena::alloc_tiles`]), with
/// the row and tile views of [`SoaTiles`].
///
/// ```
/// use arena_kit::soa::SoaTilesMut;
/// use arena_kit::{Arena, Soa};
///
/// #[derive(Soa)]
/// #[soa(tiled)]
/// struct Dust { x: f32, life: u8 }
///
/// let arena = Arena::with_capacity(4096);
/// let mut dust: SoaTilesMut<'_, Dust, 16> = arena.alloc_tiles(40, |i| Dust { x: 0.0, life: i as u8 });
/// for DustTileMut { x, life } in dust.tiles_mut() {
///     for k in 0..16 {
///         x[k] += f32::from(life[k]);
///     }
/// }
/// assert_eq!(dust.tiles().len(), 2);
/// assert_eq!(dust.tail().life, &[32, 33, 34, 35, 36, 37, 38, 39]);
/// assert_eq!(*dust.get(20).unwrap().x, 20.0);
/// ```
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`.
pub struct SoaTilesMut<'a, T: SoaTiled, const N: usize> {
    lanes: Lanes<T, N>,
    len: usize,
    _marker: PhantomData<&'a mut T>,
}

impl<'a, T: SoaTiled, const N: usize> SoaTilesMut<'a, T, N> {
    tile_views!();
}

impl<T: SoaTiled, const N: usize> fmt::Debug for SoaTilesMut<'_, T, N>
where
    for<'a> T::Ref<'a>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

// SAFETY: an exclusive borrow of the rows, like `&mut [T]`.
unsafe impl<T: SoaTiled, const N: usize> Send for SoaTilesMut<'_, T, N> where T::Columns: Send {}
// SAFETY: `&SoaTilesMut` only hands out shared references.
unsafe impl<T: SoaTiled, const N: usize> Sync for SoaTilesMut<'_, T, N> where T::Columns: Sync {}

/// Rows of tiled storage as [`Soa::Ref`] views, front to back. From [`SoaTiles::iter`].
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`.
pub struct TileRows<'a, T: SoaTiled, const N: usize> {
    lanes: Lanes<T, N>,
    front: usize,
    back: usize,
    _marker: PhantomData<&'a T>,
}

/// Rows of tiled storage as [`Soa::Mut`] views, front to back. From [`SoaTiles::iter_mut`].
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`.
pub struct TileRowsMut<'a, T: SoaTiled, const N: usize> {
    lanes: Lanes<T, N>,
    front: usize,
    back: usize,
    _marker: PhantomData<&'a mut T>,
}

/// The full tiles of tiled storage as [`SoaTiled::Tile`] views, front to back. From
/// [`SoaTiles::tiles`].
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`.
pub struct Tiles<'a, T: SoaTiled, const N: usize> {
    lanes: Lanes<T, N>,
    front: usize,
    back: usize,
    _marker: PhantomData<&'a T>,
}

/// The full tiles of tiled storage as [`SoaTiled::TileMut`] views, front to back. From
/// [`SoaTiles::tiles_mut`].
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`.
pub struct TilesMut<'a, T: SoaTiled, const N: usize> {
    lanes: Lanes<T, N>,
    front: usize,
    back: usize,
    _marker: PhantomData<&'a mut T>,
}

macro_rules! tiled_iter {
    ($name:ident, $item:ty, $send:ident, |$lanes:ident, $i:ident| $make:expr) => {
        impl<'a, T: SoaTiled + 'a, const N: usize> Iterator for $name<'a, T, N> {
            type Item = $item;
            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                if self.front < self.back {
                    let $i = self.front;
                    self.front += 1;
                    let $lanes = self.lanes;
                    // SAFETY: `front..back` are initialised rows (tiles) borrowed for `'a` as
                    // this iterator's kind, and each index is yielded once.
                    Some(unsafe { $make })
                } else {
                    None
                }
            }
            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                let n = self.back - self.front;
                (n, Some(n))
            }
        }

        impl<'a, T: SoaTiled + 'a, const N: usize> DoubleEndedIterator for $name<'a, T, N> {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                if self.front < self.back {
                    self.back -= 1;
                    let $i = self.back;
                    let $lanes = self.lanes;
                    // SAFETY: `front..back` are initialised rows (tiles) borrowed for `'a` as
                    // this iterator's kind, and each index is yielded once.
                    Some(unsafe { $make })
                } else {
                    None
                }
            }
        }

        impl<'a, T: SoaTiled + 'a, const N: usize> ExactSizeIterator for $name<'a, T, N> {}
        impl<'a, T: SoaTiled + 'a, const N: usize> FusedIterator for $name<'a, T, N> {}

        // SAFETY: a borrow of the rows it yields, like `slice::Iter` (`Send` when the values are
        // `Sync`) for the shared iterators and `slice::IterMut` (`Send` when they are `Send`)
        // for the exclusive ones.
        unsafe impl<T: SoaTiled, const N: usize> Send for $name<'_, T, N> where T::Columns: $send {}
        // SAFETY: `&iterator` hands out nothing.
        unsafe impl<T: SoaTiled, const N: usize> Sync for $name<'_, T, N> where T::Columns: Sync {}
    };
}

tiled_iter!(TileRows, T::Ref<'a>, Sync, |lanes, i| lanes.get(i));
tiled_iter!(TileRowsMut, T::Mut<'a>, Send, |lanes, i| lanes.get_mut(i));
tiled_iter!(Tiles, T::Tile<'a, N>, Sync, |lanes, t| T::view_tile(
    lanes.tile(t).tile::<N>()
));
tiled_iter!(TilesMut, T::TileMut<'a, N>, Send, |lanes, t| {
    T::view_tile_mut(lanes.tile(t).tile_mut::<N>())
});

impl<T: SoaTiled, const N: usize> Clone for TileRows<'_, T, N> {
    fn clone(&self) -> Self {
        TileRows { ..*self }
    }
}
impl<T: SoaTiled, const N: usize> Clone for Tiles<'_, T, N> {
    fn clone(&self) -> Self {
        Tiles { ..*self }
    }
}

/// Drops the rows of an arena tile block when the arena drops its values.
struct DropTiles<T: SoaTiled, const N: usize> {
    lanes: Lanes<T, N>,
    len: usize,
}

impl<T: SoaTiled, const N: usize> Drop for DropTiles<T, N> {
    fn drop(&mut self) {
        // SAFETY: rows `0..len` were written by `fill_tiles` and are only reachable through the
        // `SoaTilesMut` that borrowed the arena, gone when the arena drops its values.
        unsafe { self.lanes.drop_rows(0, self.len) }
    }
}

impl Arena {
    /// Places `len` rows of `T` in the arena stored tile-major (tiles of `N` rows, as
    /// [`SoaTiles`]), row `i` being `init(i)`, in one block, and returns them as a
    /// [`SoaTilesMut`]. The rows are dropped when the arena is reset, rewound past them or
    /// dropped (so `T` must be `'static` and its columns `Send`, as for [`Arena::alloc`]).
    ///
    /// ```
    /// use arena_kit::{Arena, Soa};
    ///
    /// #[derive(Soa)]
    /// #[soa(tiled)]
    /// struct Spark { x: f32, vx: f32 }
    ///
    /// let mut arena = Arena::with_capacity(4096);
    /// let mut sparks = arena.alloc_tiles::<_, 8, _>(20, |i| Spark { x: 0.0, vx: i as f32 });
    /// for SparkTileMut { x, vx } in sparks.tiles_mut() {
    ///     for k in 0..8 {
    ///         x[k] += vx[k];
    ///     }
    /// }
    /// assert_eq!(*sparks.get(9).unwrap().x, 9.0);
    /// assert_eq!(sparks.tail().x.len(), 4); // rows 16..20, not moved yet
    /// arena.reset();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::try_alloc_layout`]: the arena is full (or its limit reached), or the block
    /// overflows the address space ([`ArenaError::SizeOverflow`]). `init` is not called then.
    pub fn try_alloc_tiles<T, const N: usize, F>(
        &self,
        len: usize,
        mut init: F,
    ) -> Result<SoaTilesMut<'_, T, N>, ArenaError>
    where
        T: SoaTiled + 'static,
        T::Columns: Send,
        F: FnMut(usize) -> T,
    {
        let () = SoaTiles::<T, N>::N_IS_NOT_ZERO;
        let overflow = ArenaError::SizeOverflow {
            elem_size: tile_shape::<T>(N).map_or(usize::MAX, |(s, _)| s),
            count: len.div_ceil(N),
        };
        let (stride, _) = tile_shape::<T>(N).map_err(|_| overflow)?;
        let layout = tiles_layout::<T, N>(len.div_ceil(N)).map_err(|_| overflow)?;
        let lanes_at = |base: core::ptr::NonNull<u8>| Lanes::<T, N> {
            base: base.as_ptr(),
            stride,
            _marker: PhantomData,
        };
        // Rows that need dropping take the block with its drop record, in one bump.
        let needs_drop = <T::Columns as Columns>::NEEDS_DROP;
        let (base, record) = self.try_alloc_rows(layout, len, needs_drop, |base| DropTiles {
            lanes: lanes_at(base),
            len: 0,
        })?;
        let lanes = lanes_at(base);
        let mut written = 0;
        if let Some(record) = record {
            while record.len < len {
                let parts = row_to_raw(init(record.len));
                let (cols, lane) = lanes.at(record.len);
                // SAFETY: `record.len < len`: a row of the block not yet written.
                unsafe { cols.write(lane, parts) };
                // Counted at once: if `init` panics later, the arena still drops this row.
                record.len += 1;
            }
            written = record.len;
        } else {
            while written < len {
                let parts = row_to_raw(init(written));
                let (cols, lane) = lanes.at(written);
                // SAFETY: `written < len`: a row of the block not yet written.
                unsafe { cols.write(lane, parts) };
                written += 1;
            }
        }
        Ok(SoaTilesMut {
            lanes,
            len: written,
            _marker: PhantomData,
        })
    }

    /// [`try_alloc_tiles`](Arena::try_alloc_tiles), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena cannot hold the block; also if `init` does
    /// (the rows made so far are dropped with the arena).
    #[track_caller]
    pub fn alloc_tiles<T, const N: usize, F>(&self, len: usize, init: F) -> SoaTilesMut<'_, T, N>
    where
        T: SoaTiled + 'static,
        T::Columns: Send,
        F: FnMut(usize) -> T,
    {
        self.try_alloc_tiles(len, init).or_panic("")
    }
}
