//! Struct-of-arrays storage: one column per field, in one allocation.
//!
//! `#[derive(Soa)]` (from the `arena-kit` facade) turns an ordinary struct into a set of columns;
//! [`SoaVec<T>`] is the growable container, [`SoaSliceMut<'a, T>`] a fixed-length view of
//! columns (what `Arena::alloc_soa` hands out), `SoaPool<T>` a pool of [`Handle`](crate::pool::Handle)s
//! over dense columns, and every pass over one field reads one contiguous column:
//! for a 7-`f32` particle, `x += vx * dt` reads 2 of the 7 columns, 3.5x fewer cache lines than
//! a `Vec<Particle>`, in the shape SIMD wants.
//!
//! **Pick it** when hot loops read a few fields of many values (particles, transforms, health),
//! or you want the columns as plain slices. **Don't** when code mostly reads or writes whole rows
//! at random (a `Vec<T>` keeps a row in one cache line), or when you need `&T` to a stored value:
//! a SoA container only has per-field references ([`Soa::Ref`]).
//!
//! Soundness: the trait a derive implements, [`Soa`], is a safe trait that only says which values
//! a row has (its [`Soa::Columns`], a sealed type-level list) and how to split and rebuild a row;
//! all pointer work is done here, once. The columns are private and share one length, so no safe
//! code can make them disagree.
//!
//! ```
//! use arena_kit::{Soa, SoaVec};
//!
//! #[derive(Soa)]
//! struct Enemy { x: f32, health: f32 }
//!
//! let mut enemies = SoaVec::new();
//! enemies.push(Enemy { x: 0.0, health: 100.0 });
//! enemies.push(Enemy { x: 1.0, health: 50.0 });
//! for h in enemies.slices_mut().health {
//!     *h -= 10.0; // one pass over one contiguous column
//! }
//! assert_eq!(enemies.slices().health, &[90.0, 40.0]);
//! assert_eq!(*enemies.get(1).unwrap().x, 1.0); // a row, as references to its fields
//! ```
//!
//! [`SoaTiles<T, N>`] stores the same rows tile-major ("AoSoA": tiles of `N` rows, each holding
//! `N` values of every field side by side) for types with `#[soa(tiled)]` ([`SoaTiled`]): its
//! tiles are fixed-size arrays, and a whole row lies within one tile.
//!
//! For `Enemy` the derive writes the view structs `EnemyRef<'a>`, `EnemyMut<'a>`,
//! `EnemySlices<'a>` and `EnemySlicesMut<'a>` (a field per struct field: a reference or a slice)
//! and a [`Soa`] impl that converts between a row, its column values and those views.

#[cfg(feature = "alloc")]
mod arena;
#[cfg(feature = "alloc")]
mod changes;
mod columns;
#[cfg(feature = "alloc")]
mod indirect;
mod iter;
#[cfg(feature = "alloc")]
mod pool;
#[cfg(feature = "alloc")]
mod raw;
#[cfg(feature = "rayon")]
mod rayon;
#[cfg(feature = "serde")]
pub mod serde;
mod slice;
mod tile_columns;
#[cfg(feature = "alloc")]
mod tiles;
#[cfg(feature = "alloc")]
mod vec;

#[cfg(feature = "alloc")]
pub use changes::{
    BLOCK_ROWS, ChangedRows, ChangedSince, ColumnAt, TickTooOld, TrackedSoaPool, TrackedSoaTiles,
    TrackedSoaVec,
};
pub use columns::{
    CloneColumns, Col, Columns, Cursor, EqColumns, HashColumns, Nested, OrdColumns,
    PartialOrdColumns, TotalEqColumns,
};
#[cfg(feature = "alloc")]
pub use indirect::{PermutationError, TooManyRows};
pub use iter::{ChunksExact, ChunksExactMut, Iter, IterMut};
#[cfg(feature = "alloc")]
pub use pool::{SoaPool, SoaPoolDrain};
pub use slice::{SoaSlice, SoaSliceMut};
pub use tile_columns::{SoaTiled, TileColumns};
#[cfg(feature = "alloc")]
pub use tiles::{
    SoaTiles, SoaTilesMut, TileRows, TileRowsMut, Tiles, TilesMut, tile_layout, tiles_layout,
};
#[cfg(feature = "alloc")]
pub use vec::{Drain, IntoIter, SoaVec, TryPushError};

/// A struct stored as one column per field. Implemented by `#[derive(Soa)]`.
///
/// The impl only converts between a row (`Self`) and its column values (a nested tuple such as
/// `(f32, (f32, ()))`), and between tuples of references and the generated view structs. It is
/// safe to implement by hand: the containers never trust it with a pointer, and they run its
/// conversions (and a nested field's) only before moving a row in or after the row has left, so
/// a conversion that panics drops every value once and leaves the container consistent.
///
/// # Variance
///
/// The views are the implementor's types. `#[derive(Soa)]` makes them behave like the references
/// they hold: `Ref<'a>` and `Slices<'a>` are covariant in `'a` and in the row's own parameters
/// (`&'a T`), `Mut<'a>` and `SlicesMut<'a>` covariant in `'a` and invariant in the row's
/// parameters (`&'a mut T`). A hand-written `Mut` view must not be covariant in anything it lets
/// callers write. The containers and views of this module are invariant in the row type itself
/// (see each one's docs).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Soa` type, so it cannot be stored as columns",
    label = "`{Self}` needs `#[derive(Soa)]`",
    note = "a `#[soa(nested)]` field needs a type that derives `Soa`; drop `nested` to store it as one column"
)]
pub trait Soa: Sized {
    /// The columns, as a list of [`Col<F>`] and [`Nested<S>`] ending in `()`.
    type Columns: Columns;
    /// Shared references to one row's fields (`ParticleRef<'a>`).
    type Ref<'a>
    where
        Self: 'a;
    /// Exclusive references to one row's fields (`ParticleMut<'a>`).
    type Mut<'a>
    where
        Self: 'a;
    /// Every column as a shared slice (`ParticleSlices<'a>`).
    type Slices<'a>
    where
        Self: 'a;
    /// Every column as an exclusive slice, each disjointly mutable (`ParticleSlicesMut<'a>`).
    type SlicesMut<'a>
    where
        Self: 'a;
    /// The alignment every column starts on (`#[soa(align = 64)]`); a power of two (a
    /// hand-written impl with another value fails to build where its columns are laid out).
    const ALIGN: usize = 1;
    /// The fields' names in declaration order (`["id", "pos"]`; a tuple struct's are `"0"`,
    /// `"1"`), written by the derive. The named column format of the `serde` feature
    /// (`soa::serde::named_columns`) keys each column by them, a nested field's columns as
    /// `"pos.x"`. A hand-written impl that leaves them out cannot use
    /// that format (it says so instead of writing unnamed columns).
    const FIELD_NAMES: &'static [&'static str] = &[];

    /// Splits a row into its column values. Only the containers can call it: `conversion` is a
    /// [`RowConversion`], which no code outside arena-kit can make.
    fn into_columns(self, conversion: RowConversion<Self>) -> <Self::Columns as Columns>::Owned;
    /// Rebuilds a row from its column values. Only the containers can call it (see
    /// [`RowConversion`]).
    fn from_columns(
        columns: <Self::Columns as Columns>::Owned,
        conversion: RowConversion<Self>,
    ) -> Self;
    /// Wraps one row's references in the view struct.
    fn view<'a>(columns: <Self::Columns as Columns>::Ref<'a>) -> Self::Ref<'a>
    where
        Self: 'a;
    /// Wraps one row's exclusive references in the view struct.
    fn view_mut<'a>(columns: <Self::Columns as Columns>::Mut<'a>) -> Self::Mut<'a>
    where
        Self: 'a;
    /// Wraps the column slices in the view struct.
    fn view_slices<'a>(columns: <Self::Columns as Columns>::Slices<'a>) -> Self::Slices<'a>
    where
        Self: 'a;
    /// Wraps the exclusive column slices in the view struct.
    fn view_slices_mut<'a>(
        columns: <Self::Columns as Columns>::SlicesMut<'a>,
    ) -> Self::SlicesMut<'a>
    where
        Self: 'a;
}

/// The proof a [`Soa`] conversion ([`into_columns`](Soa::into_columns),
/// [`from_columns`](Soa::from_columns)) is called by a container of this crate, for a row of
/// `T`: only arena-kit makes one, so no other code can call them.
///
/// The conversions set and read every field, whatever its visibility: callable from anywhere,
/// they would let code outside a row's module build a row with any field values (an index its
/// constructor checked, say) or take one apart, which the views, whose fields keep the row's
/// fields' visibility, do not allow. A hand-written impl names the type in its signatures and
/// ignores the value; a `RowConversion<T>` is no use for any other row type
/// (`tests/ui/soa-private-field-set-through-the-conversions.rs`).
///
/// # Variance
///
/// Invariant in `T`.
pub struct RowConversion<T>(core::marker::PhantomData<fn(T) -> T>);

impl<T> RowConversion<T> {
    /// Only the containers make one, right before they convert a row.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    #[inline(always)]
    pub(crate) const fn new() -> Self {
        RowConversion(core::marker::PhantomData)
    }
}

impl<T> core::fmt::Debug for RowConversion<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RowConversion")
    }
}

/// The row's field `K` (counted from 0 in declaration order) is `pub`: what
/// `TrackedSoaVec::column_mut::<K>()` (and its pool and tiles twins) needs, since it lends the
/// field's column by position, to any module. `#[derive(Soa)]` implements it for each `pub` field.
/// A field of any other visibility is written through `slices_mut()`, whose view keeps the
/// field's visibility: a column lent past it would let code outside the row's module set a
/// private field (an index the row's constructor checked, say) to any value.
///
/// # Safety
///
/// Implementing it lets any code that can name the row set field `K` of its rows to any value.
/// Implement it only where that cannot break what the row's module relies on: a `pub` field
/// (which any holder of a `&mut` row can set anyway), or a field no `unsafe` code depends on.
/// It is `unsafe` so that code elsewhere in the row's crate, outside its module, cannot open a
/// private field with a plain `impl`.
#[diagnostic::on_unimplemented(
    message = "field {K} of `{Self}` is not `pub`, so `column_mut::<{K}>()` cannot lend its column",
    label = "field {K} of this row is not `pub`",
    note = "make the field `pub`, or write it through `slices_mut()`, whose view keeps the field's visibility"
)]
pub unsafe trait PublicField<const K: usize>: Soa {}

/// A row that is nothing more than its fields: any values of its fields make a valid row, and
/// cloning a row means cloning each field. The containers rely on it where they build rows field
/// by field, never through the row's own code:
/// - `Clone` of [`SoaVec`], `SoaPool` and [`SoaTiles`], [`SoaVec::extend_from_slice`] and
///   [`ToValue::to_value`] clone each field (the row's own `clone` does not run);
/// - the serde column formats (`soa::serde::columns`, `soa::serde::named_columns`) build each row
///   from its columns' values (the row's own `Deserialize` does not run), and write every field,
///   private ones too (the row must be `Serialize` as well).
///
/// `#[derive(Soa)]` implements it when every field is `pub` (any code can then build any row with
/// a struct expression, so no `unsafe` code can rely on the row's fields being anything in
/// particular; not for a `#[non_exhaustive]` struct, which other crates cannot build, nor for one
/// with a `#[serde(try_from = "..")]` or `from` conversion, which the column formats would skip),
/// or when the struct says `#[soa(plain)]`. A nested field's row must be `PlainRow` itself,
/// checked where its columns are cloned or read. For a row with all-`pub` fields and a
/// hand-written `Clone`, the containers' clones are still field by field.
///
/// A row with private fields and an invariant is not plain: an index its constructor checked, a
/// `#[serde(try_from = "..")]` that validates, a hand-written `Clone` that counts references (the
/// counts would go wrong if clones skipped it). Its containers have no `Clone`, and the column
/// formats do not read it; the row format (`SoaVec`'s own `Deserialize`) does, through the row's
/// `Deserialize`.
///
/// ```
/// use arena_kit::soa::ToValue;
/// use arena_kit::{Soa, SoaVec};
///
/// #[derive(Soa, Clone, Debug, PartialEq)]
/// #[soa(plain)] // `name` and `hp` may hold anything: clone the rows field by field
/// struct Enemy { name: String, hp: u32 }
///
/// let enemies: SoaVec<Enemy> = [Enemy { name: "imp".into(), hp: 3 }].into();
/// let copies = enemies.clone();
/// assert_eq!(copies.get(0).unwrap().to_value(), Enemy { name: "imp".into(), hp: 3 });
/// ```
///
/// # Safety
///
/// Implement it only if every combination of values of the row's own fields (those of a nested
/// field as its row allows) is a row the row's module accepts, and either a row's clone is its
/// fields' clones or any code can build every row anyway (all fields `pub`, not
/// `#[non_exhaustive]`). `#[soa(plain)]` is that promise.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a plain row: its containers cannot clone it or read it from columns field by field",
    label = "`{Self}` has no `#[soa(plain)]`, and a private field, `#[non_exhaustive]` or a serde `try_from`/`from`",
    note = "if any values of its fields make a valid row and its clone is its fields' clones, add `#[soa(plain)]` to the struct"
)]
pub unsafe trait PlainRow: Soa {}

/// A row view that can rebuild the value it views, by cloning every field: implemented by
/// `#[derive(Soa)]` for the [`Ref`](Soa::Ref) and [`Mut`](Soa::Mut) views (when the row is `Clone`
/// and [`PlainRow`] and every field is `Clone`; a nested field through its own view's `ToValue`).
/// The fields are cloned one by one (the row's own `clone` does not run); a row type that is not
/// `Clone` (a token that must stay unique) or not plain has no `ToValue`, so no view duplicates
/// it.
///
/// ```
/// use arena_kit::soa::ToValue;
/// use arena_kit::{Soa, SoaVec};
///
/// #[derive(Soa, Clone, Debug, PartialEq)]
/// struct Enemy { pub name: String, pub hp: u32 } // every field `pub`: a plain row
///
/// let enemies: SoaVec<Enemy> = [Enemy { name: "imp".into(), hp: 3 }].into();
/// let copy: Enemy = enemies.get(0).unwrap().to_value();
/// assert_eq!(copy, Enemy { name: "imp".into(), hp: 3 });
/// ```
///
/// Generic code names it as a bound: `where for<'a> T::Ref<'a>: ToValue<Value = T>`.
pub trait ToValue {
    /// The row type the view reads (`Enemy` for `EnemyRef<'a>`).
    type Value;
    /// A new row holding a clone of every field the view references. If a `Clone` panics, the
    /// fields cloned so far are dropped.
    fn to_value(&self) -> Self::Value;
}

/// Why a SoA block could not be allocated. Nothing was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoaAllocError {
    /// The columns of `rows` rows do not fit in `isize::MAX` bytes.
    CapacityOverflow {
        /// The number of rows asked for.
        rows: usize,
    },
    /// The allocator refused a block of `size` bytes aligned to `align`.
    OutOfMemory {
        /// The block's size in bytes.
        size: usize,
        /// The block's alignment.
        align: usize,
    },
}

impl core::fmt::Display for SoaAllocError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            SoaAllocError::CapacityOverflow { rows } => write!(
                f,
                "the columns of {rows} rows do not fit in the address space; ask for fewer rows"
            ),
            SoaAllocError::OutOfMemory { size, align } => write!(
                f,
                "the allocator refused {size} bytes aligned to {align} for SoA columns; free memory or ask for fewer rows"
            ),
        }
    }
}

impl core::error::Error for SoaAllocError {}

/// `T::ALIGN`, the alignment every column of `T` starts on. A hand-written impl whose `ALIGN`
/// is not a power of two fails the build of the code that lays its columns out (`cargo build`
/// and `cargo test` report it; `cargo check` does not evaluate it), instead of failing at run
/// time; the derive checks `#[soa(align = N)]` itself.
#[inline(always)]
pub(crate) const fn column_align<T: Soa>() -> usize {
    const {
        assert!(
            T::ALIGN.is_power_of_two(),
            "Soa::ALIGN must be a power of two: give the impl's `const ALIGN` one (1, 2, 4, 8, ...)"
        )
    };
    T::ALIGN
}

/// The layout of one block holding every column of `rows` rows of `T`, each column aligned to its
/// type and to [`Soa::ALIGN`]. This is the block [`SoaVec`] allocates and an arena carves.
pub fn block_layout<T: Soa>(rows: usize) -> Result<core::alloc::Layout, SoaAllocError> {
    let mut cursor = Cursor::new(core::ptr::null_mut(), rows);
    cursor.with_align(column_align::<T>(), T::Columns::place);
    let (size, align) = cursor
        .finish()
        .ok_or(SoaAllocError::CapacityOverflow { rows })?;
    core::alloc::Layout::from_size_align(size, align)
        .map_err(|_| SoaAllocError::CapacityOverflow { rows })
}

/// The columns of `rows` rows of `T` placed in the block at `base`, which has
/// [`block_layout::<T>(rows)`](block_layout) (or is `columns::dangling(align)` when that is empty).
#[cfg(feature = "alloc")]
pub(crate) fn place<T: Soa>(base: *mut u8, rows: usize) -> T::Columns {
    let mut cursor = Cursor::new(base, rows);
    cursor.with_align(column_align::<T>(), T::Columns::place)
}

/// Splits a row into the values its columns store (runs the row's and its nested fields'
/// `into_columns`: call it before touching the columns).
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn row_to_raw<T: Soa>(row: T) -> <T::Columns as Columns>::Raw {
    T::Columns::into_raw(
        row.into_columns(RowConversion::new()),
        columns::Private::new(),
    )
}

/// Rebuilds a row from the values its columns store (runs the nested fields' and the row's
/// `from_columns`: call it only once the container no longer counts the row).
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn row_from_raw<T: Soa>(raw: <T::Columns as Columns>::Raw) -> T {
    T::from_columns(
        T::Columns::from_raw(raw, columns::Private::new()),
        RowConversion::new(),
    )
}

/// Whether a row of `T` occupies no memory (every column is zero-sized).
#[cfg(feature = "alloc")]
pub(crate) fn row_is_zst<T: Soa>() -> bool {
    matches!(block_layout::<T>(1), Ok(l) if l.size() == 0)
}

#[cfg(feature = "alloc")]
pub(crate) use columns::dangling;

/// Panics unless `index` is a place a row can be inserted at in `len` rows (`0..=len`).
#[cfg(feature = "alloc")]
#[track_caller]
fn assert_insert_index(index: usize, len: usize) {
    assert!(
        index <= len,
        "insertion index {index} out of bounds (len {len})"
    );
}
