//! Fixed-length SoA views: [`SoaSlice`] (shared, like `&[T]`) and [`SoaSliceMut`] (exclusive, like
//! `&mut [T]`). Containers lend them out; an arena hands out a `SoaSliceMut` over columns it carved.

use core::marker::PhantomData;

use super::{ChunksExact, ChunksExactMut, Columns, Iter, IterMut, Soa};

/// A shared, fixed-length view of SoA columns, like `&'a [T]` but one slice per field.
///
/// # Variance
///
/// Covariant in `'a`, like `&'a [T]`. Invariant in `T`, because it stores `T::Columns` (an
/// associated type). (A shared view would be sound covariant in `T`; the columns' representation
/// rules it out.)
pub struct SoaSlice<'a, T: Soa> {
    cols: T::Columns,
    len: usize,
    _marker: PhantomData<&'a T>,
}

/// An exclusive, fixed-length view of SoA columns, like `&'a mut [T]` but one slice per field.
///
/// This is what `Arena::alloc_soa` returns: the values live (and are
/// dropped) with the arena; the view only lends them out.
///
/// # Variance
///
/// Covariant in `'a`, like `&'a mut [T]`. Invariant in `T`, as soundness requires of a view that
/// writes rows: a `SoaSliceMut<'_, Named<'static>>` used as a `SoaSliceMut<'_, Named<'short>>`
/// could store a short borrow in a column that outlives it. The invariance comes from storing
/// `T::Columns`, and `tests/ui/variance-soa-row-type.rs` pins it.
pub struct SoaSliceMut<'a, T: Soa> {
    cols: T::Columns,
    len: usize,
    _marker: PhantomData<&'a mut T>,
}

impl<T: Soa> Clone for SoaSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Soa> Copy for SoaSlice<'_, T> {}

impl<'a, T: Soa + 'a> SoaSlice<'a, T> {
    /// # Safety
    /// - rows `0..len` of `cols` are initialised and not mutated during `'a`.
    #[inline]
    pub(crate) unsafe fn from_raw(cols: T::Columns, len: usize) -> Self {
        SoaSlice {
            cols,
            len,
            _marker: PhantomData,
        }
    }

    /// The number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[allow(dead_code)] // used by the `rayon` feature
    pub(crate) fn columns(&self) -> T::Columns {
        self.cols
    }

    /// Whether there are no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// References to row `index`'s fields, or `None` if out of bounds.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T::Ref<'a>> {
        // SAFETY: `index < len`, an initialised row shared for `'a`.
        (index < self.len).then(|| T::view(unsafe { self.cols.get(index) }))
    }

    /// Every column as a slice of `len` values.
    #[inline]
    pub fn slices(&self) -> T::Slices<'a> {
        // SAFETY: rows `0..len` are initialised and shared for `'a`.
        T::view_slices(unsafe { self.cols.slices(0, self.len) })
    }

    /// The rows as [`Soa::Ref`] views.
    #[inline]
    pub fn iter(&self) -> Iter<'a, T> {
        // SAFETY: rows `0..len` are initialised and shared for `'a`.
        unsafe { Iter::new(self.cols, 0, self.len) }
    }

    /// Every column in chunks of exactly `N` rows (see [`ChunksExact`]).
    #[inline]
    pub fn chunks_exact<const N: usize>(&self) -> ChunksExact<'a, T, N> {
        // SAFETY: rows `0..len` are initialised and shared for `'a`.
        unsafe { ChunksExact::new(self.cols, self.len) }
    }
}

impl<'a, T: Soa + 'a> IntoIterator for SoaSlice<'a, T> {
    type Item = T::Ref<'a>;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T: Soa + 'a> SoaSliceMut<'a, T> {
    /// # Safety
    /// - rows `0..len` of `cols` are initialised and accessed only through this view for `'a`.
    #[inline]
    pub(crate) unsafe fn from_raw(cols: T::Columns, len: usize) -> Self {
        SoaSliceMut {
            cols,
            len,
            _marker: PhantomData,
        }
    }

    /// The number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[allow(dead_code)] // used by the `rayon` feature
    pub(crate) fn columns(&self) -> T::Columns {
        self.cols
    }

    /// Whether there are no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A shared view of the same rows.
    #[inline]
    pub fn as_soa_slice(&self) -> SoaSlice<'_, T> {
        // SAFETY: shared for the borrow of `self`.
        unsafe { SoaSlice::from_raw(self.cols, self.len) }
    }

    /// A shorter-lived exclusive view of the same rows, leaving `self` usable afterwards.
    #[inline]
    pub fn reborrow(&mut self) -> SoaSliceMut<'_, T> {
        // SAFETY: exclusive for the borrow of `self`.
        unsafe { SoaSliceMut::from_raw(self.cols, self.len) }
    }

    /// References to row `index`'s fields, or `None` if out of bounds.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T::Ref<'_>> {
        self.as_soa_slice().get(index)
    }

    /// Exclusive references to row `index`'s fields, or `None` if out of bounds.
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> Option<T::Mut<'_>> {
        // SAFETY: `index < len`, an initialised row, exclusive for the borrow of `self`.
        (index < self.len).then(|| T::view_mut(unsafe { self.cols.get_mut(index) }))
    }

    /// Every column as a shared slice.
    #[inline]
    pub fn slices(&self) -> T::Slices<'_> {
        self.as_soa_slice().slices()
    }

    /// Every column as an exclusive slice, all at once (they are disjoint).
    #[inline]
    pub fn slices_mut(&mut self) -> T::SlicesMut<'_> {
        self.reborrow().into_slices_mut()
    }

    /// Every column as an exclusive slice for the whole of `'a`.
    #[inline]
    pub fn into_slices_mut(self) -> T::SlicesMut<'a> {
        // SAFETY: rows `0..len` are exclusive for `'a`, and `self` is consumed.
        T::view_slices_mut(unsafe { self.cols.slices_mut(0, self.len) })
    }

    /// The rows as [`Soa::Ref`] views.
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        self.as_soa_slice().iter()
    }

    /// The rows as [`Soa::Mut`] views.
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        self.reborrow().into_iter()
    }

    /// Every column in chunks of exactly `N` rows (see [`ChunksExact`]).
    #[inline]
    pub fn chunks_exact<const N: usize>(&self) -> ChunksExact<'_, T, N> {
        self.as_soa_slice().chunks_exact()
    }

    /// Every column in exclusive chunks of exactly `N` rows (see [`ChunksExactMut`]).
    #[inline]
    pub fn chunks_exact_mut<const N: usize>(&mut self) -> ChunksExactMut<'_, T, N> {
        // SAFETY: rows `0..len` are exclusive for the borrow of `self`.
        unsafe { ChunksExactMut::new(self.cols, self.len) }
    }

    /// Swaps rows `a` and `b`.
    ///
    /// # Panics
    /// If either is out of bounds.
    #[inline]
    #[track_caller]
    pub fn swap(&mut self, a: usize, b: usize) {
        assert!(
            a < self.len && b < self.len,
            "swap({a}, {b}) out of bounds (len {})",
            self.len
        );
        // SAFETY: both rows are initialised and exclusively borrowed.
        unsafe { self.cols.swap(a, b) }
    }

    /// Sorts the rows with a comparator over views, stably (like `<[T]>::sort_by`).
    ///
    /// The order is computed first (no row moves while `compare` runs, so a panic leaves the rows
    /// as they were), then every column is permuted once.
    ///
    /// Types with non-`'static` lifetime parameters cannot call this yet: a closure over
    /// `T::Ref<'_>` of any lifetime makes rustc ask for `T: 'static` (a known limitation).
    #[cfg(feature = "alloc")]
    pub fn sort_by<F>(&mut self, compare: F)
    where
        F: FnMut(T::Ref<'_>, T::Ref<'_>) -> core::cmp::Ordering,
    {
        let order = self.as_soa_slice().sort_order(compare);
        // SAFETY: `order` is a permutation of `0..len`, all initialised rows.
        unsafe { super::raw::permute::<T>(self.cols, &order) }
    }

    /// Sorts the rows by a key computed once per row, stably.
    #[cfg(feature = "alloc")]
    pub fn sort_by_key<K, F>(&mut self, key: F)
    where
        K: Ord,
        F: FnMut(T::Ref<'_>) -> K,
    {
        let order = self.as_soa_slice().key_order(key);
        // SAFETY: `order` is a permutation of `0..len`, all initialised rows.
        unsafe { super::raw::permute::<T>(self.cols, &order) }
    }
}

#[cfg(feature = "alloc")]
impl<'a, T: Soa + 'a> SoaSlice<'a, T> {
    /// The stable sorted order of the rows under `compare`: a permutation of `0..len`.
    pub(crate) fn sort_order<F>(&self, mut compare: F) -> alloc::vec::Vec<usize>
    where
        F: FnMut(T::Ref<'_>, T::Ref<'_>) -> core::cmp::Ordering,
    {
        let cols = self.cols;
        let mut order: alloc::vec::Vec<usize> = (0..self.len).collect();
        order.sort_by(|&a, &b| {
            // SAFETY: every index is an initialised row, shared for `'a`.
            let (ra, rb) = unsafe { (cols.get(a), cols.get(b)) };
            compare(T::view(ra), T::view(rb))
        });
        order
    }

    /// The stable sorted order of the rows by a key computed once per row.
    pub(crate) fn key_order<K: Ord, F>(&self, mut key: F) -> alloc::vec::Vec<usize>
    where
        F: FnMut(T::Ref<'_>) -> K,
    {
        let mut keyed: alloc::vec::Vec<(K, usize)> = self.iter().map(&mut key).zip(0..).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|(_, i)| i).collect()
    }
}

impl<'a, T: Soa + 'a> IntoIterator for SoaSliceMut<'a, T> {
    type Item = T::Mut<'a>;
    type IntoIter = IterMut<'a, T>;
    fn into_iter(self) -> IterMut<'a, T> {
        // SAFETY: rows `0..len` are exclusive for `'a`, and `self` is consumed.
        unsafe { IterMut::new(self.cols, 0, self.len) }
    }
}

impl<T: Soa> core::fmt::Debug for SoaSlice<'_, T>
where
    for<'x> T::Ref<'x>: core::fmt::Debug,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Soa> core::fmt::Debug for SoaSliceMut<'_, T>
where
    for<'x> T::Ref<'x>: core::fmt::Debug,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Soa> PartialEq for SoaSlice<'_, T>
where
    T::Columns: super::EqColumns,
{
    fn eq(&self, other: &Self) -> bool {
        // SAFETY: both hold `len` initialised rows, shared for the borrows.
        self.len == other.len
            && unsafe { super::EqColumns::eq_rows(self.cols, other.cols, self.len) }
    }
}

// SAFETY: a shared view is a `&'a [F]` per column: sending it lets the other thread read values
// this thread may read at the same time, so it needs every field `Sync` (as `&[T]: Send` needs
// `T: Sync`), not `Send`.
unsafe impl<T: Soa> Send for SoaSlice<'_, T> where T::Columns: Sync {}
// SAFETY: sharing it shares the same `&F`s: every field `Sync`, as for `&[T]`.
unsafe impl<T: Soa> Sync for SoaSlice<'_, T> where T::Columns: Sync {}
// SAFETY: an exclusive view is a `&'a mut [F]` per column: sending it hands exclusive access to
// the values to one other thread, which needs every field `Send` (as `&mut [T]: Send`).
unsafe impl<T: Soa> Send for SoaSliceMut<'_, T> where T::Columns: Send {}
// SAFETY: `&SoaSliceMut` gives only shared access (`get`, `slices`, `as_soa_slice`, `iter`), so
// sharing it needs every field `Sync`, as `&mut [T]: Sync` needs `T: Sync`.
unsafe impl<T: Soa> Sync for SoaSliceMut<'_, T> where T::Columns: Sync {}
