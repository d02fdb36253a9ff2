//! The column machinery: how a struct's fields map to raw columns, and every unsafe operation on
//! them, written once here for all `Soa` types.
//!
//! A type's columns are described by a small type-level list built from three pieces: [`Col<F>`]
//! (one column of `F`), pairs `(A, B)` of column lists (the derive nests them as
//! `(Col<A>, (Col<B>, ()))`) and [`Nested<S>`] (all the columns of another `Soa` type `S`). The
//! [`Columns`] trait is sealed: only these shapes implement it, so a (safe) `Soa` impl can only say
//! which field types it stores, never how they are laid out or accessed.

use core::cmp::Ordering;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::ptr;

use super::Soa;

mod sealed {
    pub trait Sealed {}

    /// Makes [`Columns::into_raw`](super::Columns::into_raw) and
    /// [`from_raw`](super::Columns::from_raw) callable from this crate only: they run a nested
    /// row's conversions, which must stay the containers' (see `RowConversion`). Public in a
    /// private module, so no other crate can name or make one.
    #[derive(Clone, Copy)]
    pub struct Private(());

    impl Private {
        #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
        #[inline(always)]
        pub(crate) const fn new() -> Self {
            Private(())
        }
    }
}

#[cfg(feature = "alloc")]
pub(crate) use sealed::Private;

/// Where the columns of one block go: walks the columns in order, giving each an offset aligned to
/// its element type (and to the type's [`Soa::ALIGN`]), and records the block's total size.
///
/// Used by the containers; the derive never touches it.
///
/// # Variance
///
/// No parameters.
#[derive(Debug)]
pub struct Cursor {
    base: *mut u8,
    offset: usize,
    cap: usize,
    min_align: usize,
    max_align: usize,
    overflow: bool,
    /// Placing one tile of a `SoaTiles` (`cap` lanes): every column of non-zero-sized values
    /// also starts on [`lane_align`]`(cap * size)`.
    lanes: bool,
}

impl Cursor {
    /// Starts a placement of `cap` rows at `base` (which may be null when only planning).
    #[inline(always)]
    pub(crate) fn new(base: *mut u8, cap: usize) -> Self {
        Cursor {
            base,
            offset: 0,
            cap,
            min_align: 1,
            max_align: 1,
            overflow: false,
            lanes: false,
        }
    }

    /// Starts the placement of one tile of `lanes` rows at `base`: the same walk as
    /// [`new`](Self::new), with each lane array also aligned to [`lane_align`].
    #[cfg(feature = "alloc")]
    #[inline(always)]
    pub(crate) fn tile(base: *mut u8, lanes: usize) -> Self {
        Cursor {
            lanes: true,
            ..Cursor::new(base, lanes)
        }
    }

    /// Places the columns `C` with each aligned to at least `align`: [`with_align`] with a direct
    /// call, which inlines all the way down, so a placement from constants folds to constant
    /// offsets (the tiled containers rely on it).
    ///
    /// [`with_align`]: Self::with_align
    #[inline(always)]
    pub(crate) fn place_aligned<C: Columns>(&mut self, align: usize) -> C {
        // Every caller passes `column_align`, checked when compiled.
        debug_assert!(align.is_power_of_two());
        let saved = self.min_align;
        self.min_align = saved.max(align);
        let cols = C::place(self);
        self.min_align = saved;
        cols
    }

    /// Runs `f` with every column it places aligned to at least `align`.
    #[inline(always)]
    pub(crate) fn with_align<R>(&mut self, align: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        // Every caller passes `column_align`, checked when compiled.
        debug_assert!(align.is_power_of_two());
        let saved = self.min_align;
        self.min_align = saved.max(align);
        let r = f(self);
        self.min_align = saved;
        r
    }

    /// Places the next column of `F`; returns its first element's address (meaningless when only
    /// planning or after an overflow).
    #[inline(always)]
    fn column<F>(&mut self) -> *mut F {
        let mut align = core::mem::align_of::<F>().max(self.min_align);
        if self.lanes && core::mem::size_of::<F>() != 0 {
            align = align.max(lane_align(
                core::mem::size_of::<F>().saturating_mul(self.cap),
            ));
        }
        self.max_align = self.max_align.max(align);
        let start = self.offset.checked_next_multiple_of(align);
        let bytes = core::mem::size_of::<F>().checked_mul(self.cap);
        match (start, bytes) {
            (Some(start), Some(bytes)) => match start.checked_add(bytes) {
                Some(end) => {
                    self.offset = end;
                    self.base.wrapping_add(start).cast()
                }
                None => {
                    self.overflow = true;
                    self.base.cast()
                }
            },
            _ => {
                self.overflow = true;
                self.base.cast()
            }
        }
    }

    /// The block's `(size, align)`, or `None` if the sizes overflowed `usize`.
    pub(crate) fn finish(&self) -> Option<(usize, usize)> {
        if self.overflow {
            None
        } else {
            Some((self.offset, self.max_align))
        }
    }
}

/// The alignment of a tile's lane array of `bytes` bytes: `bytes` rounded up to a power of two,
/// clamped to 32..=64 (an AVX register at least, a cache line at most).
pub(crate) const fn lane_align(bytes: usize) -> usize {
    let p = match bytes.checked_next_power_of_two() {
        Some(p) => p,
        None => 64,
    };
    if p < 32 {
        32
    } else if p > 64 {
        64
    } else {
        p
    }
}

/// One column of `F` values: the address of its first element.
///
/// Named by generated code only (`type Columns = (Col<f32>, (Col<u8>, ()));`).
///
/// # Variance
///
/// Invariant in `F` (it holds a `*mut F`): one column type serves shared and mutable views alike,
/// so it must not let `F` change.
pub struct Col<F> {
    ptr: *mut F,
    _marker: PhantomData<F>,
}

impl<F> Col<F> {
    /// The column's first element.
    #[inline(always)]
    pub(crate) fn as_ptr(self) -> *mut F {
        self.ptr
    }

    /// The column `bytes` bytes later (the same column in a later tile). Only computes an
    /// address (wrapping): using it is up to the caller's bounds.
    #[inline(always)]
    pub(crate) fn wrapping_add_bytes(self, bytes: usize) -> Self {
        Col {
            ptr: self.ptr.wrapping_byte_add(bytes),
            _marker: PhantomData,
        }
    }
}

impl<F> Clone for Col<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for Col<F> {}
impl<F> core::fmt::Debug for Col<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Col").field(&self.ptr).finish()
    }
}
// SAFETY: a `Col<F>` is a bare column address; every access through it is an `unsafe` method
// whose caller (a container in this crate) owns or borrows the values, so moving or sharing the
// address itself does nothing. These impls only make a column list `Send`/`Sync` exactly when
// every stored field type `F` is, which the containers' and views' own impls then ask for.
unsafe impl<F: Send> Send for Col<F> {}
// SAFETY: as above, for `Sync`.
unsafe impl<F: Sync> Sync for Col<F> {}

/// All the columns of the `Soa` type `S`, used for a `#[soa(nested)]` field: `pos: Vec3` stores
/// `pos.x`, `pos.y` and `pos.z` as columns of their own.
///
/// # Variance
///
/// Invariant in `S`, because it stores `S::Columns`.
pub struct Nested<S: Soa> {
    inner: S::Columns,
}

impl<S: Soa> Nested<S> {
    pub(crate) fn inner(self) -> S::Columns {
        self.inner
    }

    pub(crate) fn from_inner(inner: S::Columns) -> Self {
        Nested { inner }
    }
}

impl<S: Soa> Clone for Nested<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: Soa> Copy for Nested<S> {}
impl<S: Soa> core::fmt::Debug for Nested<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Nested")
    }
}

/// A type-level list of columns: what a [`Soa`] type stores, and the raw operations the containers
/// use on it. Sealed: implemented only by [`Col`], [`Nested`], pairs and `()`.
///
/// Every unsafe method takes indices into columns of at least `index + count` elements that this
/// value's pointers address; the containers guarantee that.
pub trait Columns: Copy + sealed::Sealed {
    /// The values of one row as a `Soa` impl gives and takes them: a nested field is one value
    /// of its own `Soa` type.
    type Owned;
    /// The values of one row as the columns store them: one value per leaf column, a nested
    /// field already split. Moving a `Raw` in or out of the columns runs no user code; turning it
    /// into [`Owned`](Self::Owned) and back ([`from_raw`](Self::from_raw),
    /// [`into_raw`](Self::into_raw)) runs the nested fields' conversions, so the containers do
    /// that only while every row is accounted for.
    type Raw;
    /// Shared references to one row's values.
    type Ref<'a>
    where
        Self: 'a;
    /// Exclusive references to one row's values.
    type Mut<'a>
    where
        Self: 'a;
    /// Shared slices of every column.
    type Slices<'a>
    where
        Self: 'a;
    /// Exclusive slices of every column.
    type SlicesMut<'a>
    where
        Self: 'a;
    /// Whether any stored value needs dropping.
    const NEEDS_DROP: bool;
    /// How many entries the list has at its top level: one per field of the row, a nested field
    /// counting once (`Col` and `Nested` are 1, a pair `1 + B::FIELDS`, `()` 0). Change tracking
    /// (`soa::TrackedSoaVec`) keeps one version per entry.
    const FIELDS: usize;

    /// Places these columns with `cursor` (safe: only computes addresses).
    fn place(cursor: &mut Cursor) -> Self;

    /// Splits the nested fields of a row into their columns' values (calls their
    /// [`Soa::into_columns`]). If one panics, every value is dropped once.
    fn into_raw(owned: Self::Owned, private: sealed::Private) -> Self::Raw;

    /// Rebuilds the nested fields of a row from their columns' values (calls their
    /// [`Soa::from_columns`]). If one panics, every value is dropped once.
    fn from_raw(raw: Self::Raw, private: sealed::Private) -> Self::Owned;

    /// Writes row `i` without dropping what was there. Runs no user code.
    ///
    /// # Safety
    /// - `i` is within the allocated capacity of every column.
    unsafe fn write(self, i: usize, value: Self::Raw);

    /// Moves row `i` out (a bitwise read: the slot is logically uninitialised afterwards). Runs
    /// no user code.
    ///
    /// # Safety
    /// - row `i` is initialised and is not used again until rewritten.
    unsafe fn read(self, i: usize) -> Self::Raw;

    /// References to row `i`.
    ///
    /// # Safety
    /// - row `i` is initialised and not mutated during `'a`.
    unsafe fn get<'a>(self, i: usize) -> Self::Ref<'a>
    where
        Self: 'a;

    /// Exclusive references to row `i`.
    ///
    /// # Safety
    /// - row `i` is initialised and not accessed by anything else during `'a`.
    unsafe fn get_mut<'a>(self, i: usize) -> Self::Mut<'a>
    where
        Self: 'a;

    /// Slices of rows `start..start + len` of every column.
    ///
    /// # Safety
    /// - those rows are initialised and not mutated during `'a`.
    unsafe fn slices<'a>(self, start: usize, len: usize) -> Self::Slices<'a>
    where
        Self: 'a;

    /// Exclusive slices of rows `start..start + len` of every column.
    ///
    /// # Safety
    /// - those rows are initialised and not accessed by anything else during `'a`.
    unsafe fn slices_mut<'a>(self, start: usize, len: usize) -> Self::SlicesMut<'a>
    where
        Self: 'a;

    /// Copies `count` rows from `src` at `from` to `dst` at `to` (the ranges may overlap).
    ///
    /// # Safety
    /// - both ranges are in bounds of their columns; the copy is bitwise, so the caller decides
    ///   which copy owns the values afterwards.
    unsafe fn copy(src: Self, from: usize, dst: Self, to: usize, count: usize);

    /// Moves rows `0..count` of every column from `src` to `dst`, last column first: after a block
    /// grew in place, every column's new start is at or after its old one, so moving the last
    /// column first never overwrites a column not yet moved.
    ///
    /// # Safety
    /// - both are placements in one block, `dst` for a capacity at least `src`'s, and rows
    ///   `0..count` of `src` are initialised.
    unsafe fn shift_up(src: Self, dst: Self, count: usize);

    /// Swaps rows `i` and `j`.
    ///
    /// # Safety
    /// - both rows are initialised.
    unsafe fn swap(self, i: usize, j: usize);

    /// The same columns starting `n` rows later (row `k` of the result is row `n + k` of `self`).
    /// Runs no user code.
    ///
    /// # Safety
    /// - `n` is at most the number of rows every column of `self` has room for.
    unsafe fn offset(self, n: usize) -> Self;

    /// Drops rows `start..start + count` in place. If a drop panics, the remaining columns are
    /// still dropped.
    ///
    /// # Safety
    /// - those rows are initialised and are not used again.
    unsafe fn drop_range(self, start: usize, count: usize);

    /// Moves row `order[k]` of `src` to row `k` of `dst` for every `k`.
    ///
    /// # Safety
    /// - every index in `order` is an initialised row of `src`, `dst` has room for `order.len()`
    ///   rows, and the moved-from rows of `src` are treated as uninitialised afterwards.
    unsafe fn gather(src: Self, dst: Self, order: &[usize]);
}

impl sealed::Sealed for () {}
impl<F> sealed::Sealed for Col<F> {}
impl<S: Soa> sealed::Sealed for Nested<S> {}
impl<A: Columns, B: Columns> sealed::Sealed for (A, B) {}

impl Columns for () {
    type Owned = ();
    type Raw = ();
    type Ref<'a> = ();
    type Mut<'a> = ();
    type Slices<'a> = ();
    type SlicesMut<'a> = ();
    const NEEDS_DROP: bool = false;
    const FIELDS: usize = 0;

    #[inline(always)]
    fn place(_: &mut Cursor) -> Self {}
    #[inline(always)]
    fn into_raw((): (), _: sealed::Private) {}
    #[inline(always)]
    fn from_raw((): (), _: sealed::Private) {}
    #[inline]
    unsafe fn write(self, _: usize, (): ()) {}
    #[inline]
    unsafe fn read(self, _: usize) {}
    #[inline]
    unsafe fn get<'a>(self, _: usize)
    where
        Self: 'a,
    {
    }
    #[inline]
    unsafe fn get_mut<'a>(self, _: usize)
    where
        Self: 'a,
    {
    }
    #[inline]
    unsafe fn slices<'a>(self, _: usize, _: usize)
    where
        Self: 'a,
    {
    }
    #[inline]
    unsafe fn slices_mut<'a>(self, _: usize, _: usize)
    where
        Self: 'a,
    {
    }
    #[inline]
    unsafe fn copy(_: Self, _: usize, _: Self, _: usize, _: usize) {}
    #[inline]
    unsafe fn shift_up(_: Self, _: Self, _: usize) {}
    #[inline]
    unsafe fn swap(self, _: usize, _: usize) {}
    #[inline(always)]
    unsafe fn offset(self, _: usize) -> Self {}
    #[inline]
    unsafe fn drop_range(self, _: usize, _: usize) {}
    #[inline]
    unsafe fn gather(_: Self, _: Self, _: &[usize]) {}
}

impl<F> Columns for Col<F> {
    type Owned = F;
    type Raw = F;
    type Ref<'a>
        = &'a F
    where
        Self: 'a;
    type Mut<'a>
        = &'a mut F
    where
        Self: 'a;
    type Slices<'a>
        = &'a [F]
    where
        Self: 'a;
    type SlicesMut<'a>
        = &'a mut [F]
    where
        Self: 'a;
    const NEEDS_DROP: bool = core::mem::needs_drop::<F>();
    const FIELDS: usize = 1;

    #[inline(always)]
    fn place(cursor: &mut Cursor) -> Self {
        Col {
            ptr: cursor.column::<F>(),
            _marker: PhantomData,
        }
    }
    #[inline(always)]
    fn into_raw(owned: F, _: sealed::Private) -> F {
        owned
    }
    #[inline(always)]
    fn from_raw(raw: F, _: sealed::Private) -> F {
        raw
    }
    #[inline(always)]
    unsafe fn write(self, i: usize, value: F) {
        // SAFETY: the caller guarantees `i` is within this column's capacity.
        unsafe { self.ptr.add(i).write(value) }
    }
    #[inline(always)]
    unsafe fn read(self, i: usize) -> F {
        // SAFETY: the caller guarantees row `i` is initialised and given up.
        unsafe { self.ptr.add(i).read() }
    }
    #[inline(always)]
    unsafe fn get<'a>(self, i: usize) -> &'a F
    where
        Self: 'a,
    {
        // SAFETY: the caller guarantees row `i` is initialised and shared for `'a`.
        unsafe { &*self.ptr.add(i) }
    }
    #[inline(always)]
    unsafe fn get_mut<'a>(self, i: usize) -> &'a mut F
    where
        Self: 'a,
    {
        // SAFETY: the caller guarantees row `i` is initialised and exclusive for `'a`.
        unsafe { &mut *self.ptr.add(i) }
    }
    #[inline(always)]
    unsafe fn slices<'a>(self, start: usize, len: usize) -> &'a [F]
    where
        Self: 'a,
    {
        // SAFETY: the caller guarantees the rows are initialised and shared for `'a`; the column
        // pointer is aligned and non-null even when `len == 0`.
        unsafe { core::slice::from_raw_parts(self.ptr.add(start), len) }
    }
    #[inline(always)]
    unsafe fn slices_mut<'a>(self, start: usize, len: usize) -> &'a mut [F]
    where
        Self: 'a,
    {
        // SAFETY: the caller guarantees the rows are initialised and exclusive for `'a`.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
    #[inline]
    unsafe fn copy(src: Self, from: usize, dst: Self, to: usize, count: usize) {
        // SAFETY: the caller guarantees both ranges are in bounds; `ptr::copy` allows overlap.
        unsafe { ptr::copy(src.ptr.add(from), dst.ptr.add(to), count) }
    }
    #[inline]
    unsafe fn shift_up(src: Self, dst: Self, count: usize) {
        // SAFETY: the caller guarantees both ranges lie in the block; `ptr::copy` allows overlap.
        unsafe { ptr::copy(src.ptr, dst.ptr, count) }
    }
    #[inline]
    unsafe fn swap(self, i: usize, j: usize) {
        // SAFETY: the caller guarantees both rows are initialised; `ptr::swap` allows `i == j`.
        unsafe { ptr::swap(self.ptr.add(i), self.ptr.add(j)) }
    }
    #[inline(always)]
    unsafe fn offset(self, n: usize) -> Self {
        Col {
            // SAFETY: the caller guarantees `n` rows fit in this column's block.
            ptr: unsafe { self.ptr.add(n) },
            _marker: PhantomData,
        }
    }
    #[inline]
    unsafe fn drop_range(self, start: usize, count: usize) {
        if core::mem::needs_drop::<F>() {
            // SAFETY: the caller guarantees the rows are initialised and given up. Dropping a slice
            // keeps dropping its other elements if one panics.
            unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.ptr.add(start), count)) }
        }
    }
    #[inline]
    unsafe fn gather(src: Self, dst: Self, order: &[usize]) {
        for (k, &i) in order.iter().enumerate() {
            // SAFETY: the caller guarantees `i` is an initialised row of `src` and `k` fits `dst`.
            unsafe { dst.ptr.add(k).write(src.ptr.add(i).read()) }
        }
    }
}

/// Runs `B::drop_range` when dropped: keeps dropping the later columns if an earlier one panics.
struct DropRest<B: Columns> {
    cols: B,
    start: usize,
    count: usize,
}

impl<B: Columns> Drop for DropRest<B> {
    fn drop(&mut self) {
        // SAFETY: created only in `drop_range` below, whose caller gave up these rows.
        unsafe { self.cols.drop_range(self.start, self.count) }
    }
}

impl<A: Columns, B: Columns> Columns for (A, B) {
    type Owned = (A::Owned, B::Owned);
    type Raw = (A::Raw, B::Raw);
    type Ref<'a>
        = (A::Ref<'a>, B::Ref<'a>)
    where
        Self: 'a;
    type Mut<'a>
        = (A::Mut<'a>, B::Mut<'a>)
    where
        Self: 'a;
    type Slices<'a>
        = (A::Slices<'a>, B::Slices<'a>)
    where
        Self: 'a;
    type SlicesMut<'a>
        = (A::SlicesMut<'a>, B::SlicesMut<'a>)
    where
        Self: 'a;
    const NEEDS_DROP: bool = A::NEEDS_DROP || B::NEEDS_DROP;
    const FIELDS: usize = 1 + B::FIELDS;

    #[inline(always)]
    fn place(cursor: &mut Cursor) -> Self {
        let a = A::place(cursor);
        (a, B::place(cursor))
    }
    #[inline(always)]
    fn into_raw((a, b): Self::Owned, private: sealed::Private) -> Self::Raw {
        // If `B::into_raw` panics, `a`'s raw values are dropped as a local: each value once.
        let a = A::into_raw(a, private);
        (a, B::into_raw(b, private))
    }
    #[inline(always)]
    fn from_raw((a, b): Self::Raw, private: sealed::Private) -> Self::Owned {
        let a = A::from_raw(a, private);
        (a, B::from_raw(b, private))
    }
    #[inline(always)]
    unsafe fn write(self, i: usize, (a, b): Self::Raw) {
        // SAFETY: forwarded from the caller.
        unsafe {
            self.0.write(i, a);
            self.1.write(i, b);
        }
    }
    #[inline(always)]
    unsafe fn read(self, i: usize) -> Self::Raw {
        // SAFETY: forwarded from the caller.
        unsafe { (self.0.read(i), self.1.read(i)) }
    }
    #[inline(always)]
    unsafe fn get<'a>(self, i: usize) -> Self::Ref<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        unsafe { (self.0.get(i), self.1.get(i)) }
    }
    #[inline(always)]
    unsafe fn get_mut<'a>(self, i: usize) -> Self::Mut<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller; the two halves are different columns.
        unsafe { (self.0.get_mut(i), self.1.get_mut(i)) }
    }
    #[inline(always)]
    unsafe fn slices<'a>(self, start: usize, len: usize) -> Self::Slices<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        unsafe { (self.0.slices(start, len), self.1.slices(start, len)) }
    }
    #[inline(always)]
    unsafe fn slices_mut<'a>(self, start: usize, len: usize) -> Self::SlicesMut<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller; the two halves are different columns.
        unsafe { (self.0.slices_mut(start, len), self.1.slices_mut(start, len)) }
    }
    #[inline]
    unsafe fn copy(src: Self, from: usize, dst: Self, to: usize, count: usize) {
        // SAFETY: forwarded from the caller.
        unsafe {
            A::copy(src.0, from, dst.0, to, count);
            B::copy(src.1, from, dst.1, to, count);
        }
    }
    #[inline]
    unsafe fn shift_up(src: Self, dst: Self, count: usize) {
        // SAFETY: forwarded from the caller; the later columns move first.
        unsafe {
            B::shift_up(src.1, dst.1, count);
            A::shift_up(src.0, dst.0, count);
        }
    }
    #[inline]
    unsafe fn swap(self, i: usize, j: usize) {
        // SAFETY: forwarded from the caller.
        unsafe {
            self.0.swap(i, j);
            self.1.swap(i, j);
        }
    }
    #[inline(always)]
    unsafe fn offset(self, n: usize) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe { (self.0.offset(n), self.1.offset(n)) }
    }
    #[inline]
    unsafe fn drop_range(self, start: usize, count: usize) {
        if Self::NEEDS_DROP {
            let rest = DropRest {
                cols: self.1,
                start,
                count,
            };
            // SAFETY: forwarded from the caller; `rest` drops the second half even if this panics.
            unsafe { self.0.drop_range(start, count) };
            drop(rest);
        }
    }
    #[inline]
    unsafe fn gather(src: Self, dst: Self, order: &[usize]) {
        // SAFETY: forwarded from the caller.
        unsafe {
            A::gather(src.0, dst.0, order);
            B::gather(src.1, dst.1, order);
        }
    }
}

impl<S: Soa> Columns for Nested<S> {
    type Owned = S;
    type Raw = <S::Columns as Columns>::Raw;
    type Ref<'a>
        = S::Ref<'a>
    where
        Self: 'a;
    type Mut<'a>
        = S::Mut<'a>
    where
        Self: 'a;
    type Slices<'a>
        = S::Slices<'a>
    where
        Self: 'a;
    type SlicesMut<'a>
        = S::SlicesMut<'a>
    where
        Self: 'a;
    const NEEDS_DROP: bool = <S::Columns as Columns>::NEEDS_DROP;
    const FIELDS: usize = 1;

    #[inline(always)]
    fn place(cursor: &mut Cursor) -> Self {
        Nested {
            inner: cursor.place_aligned::<S::Columns>(super::column_align::<S>()),
        }
    }
    #[inline(always)]
    fn into_raw(owned: S, private: sealed::Private) -> Self::Raw {
        S::Columns::into_raw(owned.into_columns(super::RowConversion::new()), private)
    }
    #[inline(always)]
    fn from_raw(raw: Self::Raw, private: sealed::Private) -> S {
        S::from_columns(
            S::Columns::from_raw(raw, private),
            super::RowConversion::new(),
        )
    }
    #[inline(always)]
    unsafe fn write(self, i: usize, value: Self::Raw) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.write(i, value) }
    }
    #[inline(always)]
    unsafe fn read(self, i: usize) -> Self::Raw {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.read(i) }
    }
    #[inline(always)]
    unsafe fn get<'a>(self, i: usize) -> S::Ref<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        S::view(unsafe { self.inner.get(i) })
    }
    #[inline(always)]
    unsafe fn get_mut<'a>(self, i: usize) -> S::Mut<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        S::view_mut(unsafe { self.inner.get_mut(i) })
    }
    #[inline(always)]
    unsafe fn slices<'a>(self, start: usize, len: usize) -> S::Slices<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        S::view_slices(unsafe { self.inner.slices(start, len) })
    }
    #[inline(always)]
    unsafe fn slices_mut<'a>(self, start: usize, len: usize) -> S::SlicesMut<'a>
    where
        Self: 'a,
    {
        // SAFETY: forwarded from the caller.
        S::view_slices_mut(unsafe { self.inner.slices_mut(start, len) })
    }
    #[inline]
    unsafe fn copy(src: Self, from: usize, dst: Self, to: usize, count: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { S::Columns::copy(src.inner, from, dst.inner, to, count) }
    }
    #[inline]
    unsafe fn shift_up(src: Self, dst: Self, count: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { S::Columns::shift_up(src.inner, dst.inner, count) }
    }
    #[inline]
    unsafe fn swap(self, i: usize, j: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.swap(i, j) }
    }
    #[inline(always)]
    unsafe fn offset(self, n: usize) -> Self {
        Nested {
            // SAFETY: forwarded from the caller.
            inner: unsafe { self.inner.offset(n) },
        }
    }
    #[inline]
    unsafe fn drop_range(self, start: usize, count: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.drop_range(start, count) }
    }
    #[inline]
    unsafe fn gather(src: Self, dst: Self, order: &[usize]) {
        // SAFETY: forwarded from the caller.
        unsafe { S::Columns::gather(src.inner, dst.inner, order) }
    }
}

/// Columns whose every value can be cloned: row-wise cloning for `Clone` on the containers.
#[diagnostic::on_unimplemented(
    message = "every field of the `Soa` type must implement `Clone` to clone its container",
    label = "a column of this type is not `Clone`"
)]
pub trait CloneColumns: Columns {
    /// Clones row `i`, value by value (a nested field is cloned column by column, without
    /// rebuilding it). If a clone panics, the values cloned so far are dropped.
    ///
    /// # Safety
    /// - row `i` is initialised.
    unsafe fn clone_row(self, i: usize) -> Self::Raw;
}

impl CloneColumns for () {
    #[inline]
    unsafe fn clone_row(self, _: usize) {}
}
impl<F: Clone> CloneColumns for Col<F> {
    #[inline]
    unsafe fn clone_row(self, i: usize) -> F {
        // SAFETY: the caller guarantees row `i` is initialised.
        unsafe { (*self.ptr.add(i)).clone() }
    }
}
impl<A: CloneColumns, B: CloneColumns> CloneColumns for (A, B) {
    #[inline]
    unsafe fn clone_row(self, i: usize) -> Self::Raw {
        // SAFETY: forwarded from the caller. If the second clone panics the first is dropped.
        unsafe { (self.0.clone_row(i), self.1.clone_row(i)) }
    }
}
/// Only for a nested row that is `Clone` and [`PlainRow`](super::PlainRow) itself, as the outer
/// row must be: a nested row type that is not `Clone` (a token that must stay unique), or whose
/// clone is more than its fields' clones, must not be duplicated column by column either.
impl<S: Soa + Clone + super::PlainRow> CloneColumns for Nested<S>
where
    S::Columns: CloneColumns,
{
    #[inline]
    unsafe fn clone_row(self, i: usize) -> Self::Raw {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.clone_row(i) }
    }
}

/// Columns whose every value can be compared: column-wise `PartialEq` on the containers.
#[diagnostic::on_unimplemented(
    message = "every field of the `Soa` type must implement `PartialEq` to compare its containers",
    label = "a column of this type is not `PartialEq`"
)]
pub trait EqColumns: Columns {
    /// Whether rows `0..len` of `a` and `b` are equal, column by column.
    ///
    /// # Safety
    /// - rows `0..len` of both are initialised.
    unsafe fn eq_rows(a: Self, b: Self, len: usize) -> bool;
}

impl EqColumns for () {
    #[inline]
    unsafe fn eq_rows(_: Self, _: Self, _: usize) -> bool {
        true
    }
}
impl<F: PartialEq> EqColumns for Col<F> {
    #[inline]
    unsafe fn eq_rows(a: Self, b: Self, len: usize) -> bool {
        // SAFETY: the caller guarantees both columns hold `len` initialised values.
        unsafe { a.slices(0, len) == b.slices(0, len) }
    }
}
impl<A: EqColumns, B: EqColumns> EqColumns for (A, B) {
    #[inline]
    unsafe fn eq_rows(a: Self, b: Self, len: usize) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { A::eq_rows(a.0, b.0, len) && B::eq_rows(a.1, b.1, len) }
    }
}
impl<S: Soa> EqColumns for Nested<S>
where
    S::Columns: EqColumns,
{
    #[inline]
    unsafe fn eq_rows(a: Self, b: Self, len: usize) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { S::Columns::eq_rows(a.inner, b.inner, len) }
    }
}

/// Columns whose every value is `Eq`: `Eq` on the containers.
#[diagnostic::on_unimplemented(
    message = "every field of the `Soa` type must implement `Eq` for its container to be `Eq`",
    label = "a column of this type is not `Eq`"
)]
pub trait TotalEqColumns: EqColumns {}

impl TotalEqColumns for () {}
impl<F: Eq> TotalEqColumns for Col<F> {}
impl<A: TotalEqColumns, B: TotalEqColumns> TotalEqColumns for (A, B) {}
impl<S: Soa> TotalEqColumns for Nested<S> where S::Columns: TotalEqColumns {}

/// Columns whose every value can be ordered: lexicographic `PartialOrd` on the containers, row
/// by row and, within a row, field by field in declaration order (what `#[derive(PartialOrd)]`
/// on the row compares, so a `SoaVec<T>` orders like a `Vec<T>`).
#[diagnostic::on_unimplemented(
    message = "every field of the `Soa` type must implement `PartialOrd` to order its containers",
    label = "a column of this type is not `PartialOrd`"
)]
pub trait PartialOrdColumns: EqColumns {
    /// Compares row `i` of `a` with row `j` of `b`, field by field.
    ///
    /// # Safety
    /// - row `i` of `a` and row `j` of `b` are initialised.
    unsafe fn partial_cmp_row(a: Self, i: usize, b: Self, j: usize) -> Option<Ordering>;
}

/// Columns whose every value is `Ord`: lexicographic `Ord` on the containers (see
/// [`PartialOrdColumns`]).
#[diagnostic::on_unimplemented(
    message = "every field of the `Soa` type must implement `Ord` to order its containers",
    label = "a column of this type is not `Ord`"
)]
pub trait OrdColumns: PartialOrdColumns + TotalEqColumns {
    /// Compares row `i` of `a` with row `j` of `b`, field by field.
    ///
    /// # Safety
    /// - row `i` of `a` and row `j` of `b` are initialised.
    unsafe fn cmp_row(a: Self, i: usize, b: Self, j: usize) -> Ordering;
}

impl PartialOrdColumns for () {
    #[inline]
    unsafe fn partial_cmp_row(_: Self, _: usize, _: Self, _: usize) -> Option<Ordering> {
        Some(Ordering::Equal)
    }
}
impl OrdColumns for () {
    #[inline]
    unsafe fn cmp_row(_: Self, _: usize, _: Self, _: usize) -> Ordering {
        Ordering::Equal
    }
}
impl<F: PartialOrd> PartialOrdColumns for Col<F> {
    #[inline]
    unsafe fn partial_cmp_row(a: Self, i: usize, b: Self, j: usize) -> Option<Ordering> {
        // SAFETY: the caller guarantees both rows are initialised.
        unsafe { (*a.ptr.add(i)).partial_cmp(&*b.ptr.add(j)) }
    }
}
impl<F: Ord> OrdColumns for Col<F> {
    #[inline]
    unsafe fn cmp_row(a: Self, i: usize, b: Self, j: usize) -> Ordering {
        // SAFETY: the caller guarantees both rows are initialised.
        unsafe { (*a.ptr.add(i)).cmp(&*b.ptr.add(j)) }
    }
}
impl<A: PartialOrdColumns, B: PartialOrdColumns> PartialOrdColumns for (A, B) {
    #[inline]
    unsafe fn partial_cmp_row(a: Self, i: usize, b: Self, j: usize) -> Option<Ordering> {
        // SAFETY: forwarded from the caller.
        match unsafe { A::partial_cmp_row(a.0, i, b.0, j) } {
            // SAFETY: forwarded from the caller.
            Some(Ordering::Equal) => unsafe { B::partial_cmp_row(a.1, i, b.1, j) },
            other => other,
        }
    }
}
impl<A: OrdColumns, B: OrdColumns> OrdColumns for (A, B) {
    #[inline]
    unsafe fn cmp_row(a: Self, i: usize, b: Self, j: usize) -> Ordering {
        // SAFETY: forwarded from the caller.
        unsafe { A::cmp_row(a.0, i, b.0, j).then_with(|| B::cmp_row(a.1, i, b.1, j)) }
    }
}
impl<S: Soa> PartialOrdColumns for Nested<S>
where
    S::Columns: PartialOrdColumns,
{
    #[inline]
    unsafe fn partial_cmp_row(a: Self, i: usize, b: Self, j: usize) -> Option<Ordering> {
        // SAFETY: forwarded from the caller.
        unsafe { S::Columns::partial_cmp_row(a.inner, i, b.inner, j) }
    }
}
impl<S: Soa> OrdColumns for Nested<S>
where
    S::Columns: OrdColumns,
{
    #[inline]
    unsafe fn cmp_row(a: Self, i: usize, b: Self, j: usize) -> Ordering {
        // SAFETY: forwarded from the caller.
        unsafe { S::Columns::cmp_row(a.inner, i, b.inner, j) }
    }
}

/// Columns whose every value can be hashed: `Hash` on the containers, column by column (equal
/// containers have equal columns, so the hash agrees with `Eq`).
#[diagnostic::on_unimplemented(
    message = "every field of the `Soa` type must implement `Hash` to hash its containers",
    label = "a column of this type is not `Hash`"
)]
pub trait HashColumns: Columns {
    /// Feeds rows `0..len` of every column to `state`, one column after another.
    ///
    /// # Safety
    /// - rows `0..len` are initialised.
    unsafe fn hash_rows<H: Hasher>(self, len: usize, state: &mut H);
}

impl HashColumns for () {
    #[inline]
    unsafe fn hash_rows<H: Hasher>(self, _: usize, _: &mut H) {}
}
impl<F: Hash> HashColumns for Col<F> {
    #[inline]
    unsafe fn hash_rows<H: Hasher>(self, len: usize, state: &mut H) {
        // SAFETY: the caller guarantees the column holds `len` initialised values.
        F::hash_slice(unsafe { self.slices(0, len) }, state)
    }
}
impl<A: HashColumns, B: HashColumns> HashColumns for (A, B) {
    #[inline]
    unsafe fn hash_rows<H: Hasher>(self, len: usize, state: &mut H) {
        // SAFETY: forwarded from the caller.
        unsafe {
            self.0.hash_rows(len, state);
            self.1.hash_rows(len, state);
        }
    }
}
impl<S: Soa> HashColumns for Nested<S>
where
    S::Columns: HashColumns,
{
    #[inline]
    unsafe fn hash_rows<H: Hasher>(self, len: usize, state: &mut H) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.hash_rows(len, state) }
    }
}

/// A non-null, suitably aligned address for a block of zero bytes with alignment `align`.
#[cfg(feature = "alloc")]
pub(crate) fn dangling(align: usize) -> *mut u8 {
    ptr::without_provenance_mut(align)
}
