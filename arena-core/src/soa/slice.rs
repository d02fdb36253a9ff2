//! Fixed-length SoA views: [`SoaSlice`] (shared, like `&[T]`) and [`SoaSliceMut`] (exclusive, like
//! `&mut [T]`). Containers lend them out; an arena hands out a `SoaSliceMut` over columns it carved.

use core::cmp::Ordering;
use core::marker::PhantomData;
use core::ops::RangeBounds;

use crate::range::{checked_range, range_or_panic};

use super::{
    ChunksExact, ChunksExactMut, Columns, HashColumns, Iter, IterMut, OrdColumns,
    PartialOrdColumns, Soa, TotalEqColumns,
};

#[cold]
#[inline(never)]
#[track_caller]
fn split_panic(mid: usize, len: usize) -> ! {
    panic!("split_at({mid}) out of bounds for {len} rows: mid must be at most len")
}

/// A shared, fixed-length view of SoA columns, like `&'a [T]` but one slice per field.
///
/// # Variance
///
/// Covariant in `'a`, like `&'a [T]`. Invariant in `T`, because it stores `T::Columns` (an
/// associated type). (A shared view would be sound covariant in `T`; the columns' representation
/// rules it out.)
pub struct SoaSlice<'a, T: Soa> {
    pub(super) cols: T::Columns,
    pub(super) len: usize,
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
    pub(super) cols: T::Columns,
    pub(super) len: usize,
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

    /// The rows `start..end`, unchecked.
    ///
    /// # Safety
    /// - `start <= end <= len`.
    #[inline]
    unsafe fn sub(self, start: usize, end: usize) -> SoaSlice<'a, T> {
        // SAFETY: `start <= len` rows fit in the columns; rows `start..end` are initialised and
        // shared for `'a`.
        unsafe { SoaSlice::from_raw(self.cols.offset(start), end - start) }
    }

    /// The rows in `range` as a shorter view (`&v[1..3]` for a slice).
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Mob { x: f32, hp: u32 }
    ///
    /// let mobs: SoaVec<Mob> = (0..5).map(|i| Mob { x: i as f32, hp: 10 * i }).collect();
    /// let middle = mobs.as_soa_slice().slice(1..4);
    /// assert_eq!(middle.slices().hp, &[10, 20, 30]);
    /// assert_eq!(*middle.slice(1..).first().unwrap().hp, 20);
    /// assert!(middle.get_slice(2..9).is_none());
    /// ```
    ///
    /// # Panics
    /// If the range is reversed or reaches past `len`; see [`get_slice`](Self::get_slice).
    #[inline]
    #[track_caller]
    pub fn slice(&self, range: impl RangeBounds<usize>) -> SoaSlice<'a, T> {
        let (start, end) = range_or_panic(range, self.len, "rows");
        // SAFETY: `range_or_panic` checked `start <= end <= len`.
        unsafe { self.sub(start, end) }
    }

    /// The rows in `range`, or `None` if it is reversed or reaches past `len`.
    #[inline]
    pub fn get_slice(&self, range: impl RangeBounds<usize>) -> Option<SoaSlice<'a, T>> {
        let (start, end) = checked_range(range, self.len)?;
        // SAFETY: `checked_range` checked `start <= end <= len`.
        Some(unsafe { self.sub(start, end) })
    }

    /// The rows before `mid` and the rows from `mid` on.
    ///
    /// # Panics
    /// If `mid > len`; see [`split_at_checked`](Self::split_at_checked).
    #[inline]
    #[track_caller]
    pub fn split_at(&self, mid: usize) -> (SoaSlice<'a, T>, SoaSlice<'a, T>) {
        match self.split_at_checked(mid) {
            Some(halves) => halves,
            None => split_panic(mid, self.len),
        }
    }

    /// The rows before `mid` and the rows from `mid` on, or `None` if `mid > len`.
    #[inline]
    pub fn split_at_checked(&self, mid: usize) -> Option<(SoaSlice<'a, T>, SoaSlice<'a, T>)> {
        // SAFETY: `mid <= len` is checked first, so both ranges are within `0..len`.
        (mid <= self.len).then(|| unsafe { (self.sub(0, mid), self.sub(mid, self.len)) })
    }

    /// The first row, or `None` if there are none.
    #[inline]
    pub fn first(&self) -> Option<T::Ref<'a>> {
        self.get(0)
    }

    /// The last row, or `None` if there are none.
    #[inline]
    pub fn last(&self) -> Option<T::Ref<'a>> {
        self.get(self.len.wrapping_sub(1))
    }

    /// The first row and the rows after it, or `None` if there are none.
    #[inline]
    pub fn split_first(&self) -> Option<(T::Ref<'a>, SoaSlice<'a, T>)> {
        let first = self.first()?;
        // SAFETY: `len >= 1`, so `1..len` is within `0..len`.
        Some((first, unsafe { self.sub(1, self.len) }))
    }

    /// The last row and the rows before it, or `None` if there are none.
    #[inline]
    pub fn split_last(&self) -> Option<(T::Ref<'a>, SoaSlice<'a, T>)> {
        let last = self.last()?;
        // SAFETY: `len >= 1`, so `0..len - 1` is within `0..len`.
        Some((last, unsafe { self.sub(0, self.len - 1) }))
    }

    /// References to row `index`'s fields, without a bounds check.
    ///
    /// # Safety
    /// - `index < len`. (A wrong index reads outside the columns: undefined behaviour.)
    #[inline]
    pub unsafe fn get_unchecked(&self, index: usize) -> T::Ref<'a> {
        debug_assert!(
            index < self.len,
            "get_unchecked({index}) with {} rows",
            self.len
        );
        // SAFETY: the caller guarantees `index < len`, an initialised row shared for `'a`.
        T::view(unsafe { self.cols.get(index) })
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
        self.reborrow().into_get_mut(index)
    }

    /// [`get_mut`](Self::get_mut) for the whole of `'a`, consuming the view.
    #[inline]
    pub(crate) fn into_get_mut(self, index: usize) -> Option<T::Mut<'a>> {
        // SAFETY: `index < len`, an initialised row, exclusive for `'a` (`self` is consumed).
        (index < self.len).then(|| T::view_mut(unsafe { self.cols.get_mut(index) }))
    }

    /// [`get_unchecked_mut`](Self::get_unchecked_mut) for the whole of `'a`, consuming the view.
    ///
    /// # Safety
    /// - `index < len`.
    #[inline]
    pub(crate) unsafe fn into_get_unchecked_mut(self, index: usize) -> T::Mut<'a> {
        debug_assert!(
            index < self.len,
            "get_unchecked_mut({index}) with {} rows",
            self.len
        );
        // SAFETY: the caller guarantees `index < len`, an initialised row, exclusive for `'a`
        // (`self` is consumed).
        T::view_mut(unsafe { self.cols.get_mut(index) })
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

    /// The rows `start..end` for the whole of `'a`, unchecked.
    ///
    /// # Safety
    /// - `start <= end <= len`.
    #[inline]
    unsafe fn into_sub(self, start: usize, end: usize) -> SoaSliceMut<'a, T> {
        // SAFETY: `start <= len` rows fit in the columns; rows `start..end` are initialised and
        // exclusive for `'a` (`self` is consumed).
        unsafe { SoaSliceMut::from_raw(self.cols.offset(start), end - start) }
    }

    /// The rows in `range` as a shared view.
    ///
    /// # Panics
    /// If the range is reversed or reaches past `len`; see [`get_slice`](Self::get_slice).
    #[inline]
    #[track_caller]
    pub fn slice(&self, range: impl RangeBounds<usize>) -> SoaSlice<'_, T> {
        self.as_soa_slice().slice(range)
    }

    /// The rows in `range` as a shared view, or `None` if it is reversed or reaches past `len`.
    #[inline]
    pub fn get_slice(&self, range: impl RangeBounds<usize>) -> Option<SoaSlice<'_, T>> {
        self.as_soa_slice().get_slice(range)
    }

    /// The rows in `range` as an exclusive view (`&mut v[1..3]` for a slice).
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Mob { x: f32, hp: u32 }
    ///
    /// let mut mobs: SoaVec<Mob> = (0..5).map(|i| Mob { x: i as f32, hp: 10 }).collect();
    /// let mut all = mobs.as_soa_slice_mut();
    /// for hp in all.slice_mut(3..).slices_mut().hp {
    ///     *hp = 0; // only the last two
    /// }
    /// assert_eq!(mobs.slices().hp, &[10, 10, 10, 0, 0]);
    /// ```
    ///
    /// # Panics
    /// If the range is reversed or reaches past `len`; see [`get_slice_mut`](Self::get_slice_mut).
    #[inline]
    #[track_caller]
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> SoaSliceMut<'_, T> {
        self.reborrow().into_slice_mut(range)
    }

    /// The rows in `range` as an exclusive view, or `None` if it is reversed or reaches past
    /// `len`.
    #[inline]
    pub fn get_slice_mut(&mut self, range: impl RangeBounds<usize>) -> Option<SoaSliceMut<'_, T>> {
        let (start, end) = checked_range(range, self.len)?;
        // SAFETY: `checked_range` checked `start <= end <= len`.
        Some(unsafe { self.reborrow().into_sub(start, end) })
    }

    /// The rows in `range` as an exclusive view for the whole of `'a`, consuming this one.
    ///
    /// # Panics
    /// If the range is reversed or reaches past `len`.
    #[inline]
    #[track_caller]
    pub fn into_slice_mut(self, range: impl RangeBounds<usize>) -> SoaSliceMut<'a, T> {
        let (start, end) = range_or_panic(range, self.len, "rows");
        // SAFETY: `range_or_panic` checked `start <= end <= len`.
        unsafe { self.into_sub(start, end) }
    }

    /// The rows before `mid` and the rows from `mid` on, as shared views.
    ///
    /// # Panics
    /// If `mid > len`.
    #[inline]
    #[track_caller]
    pub fn split_at(&self, mid: usize) -> (SoaSlice<'_, T>, SoaSlice<'_, T>) {
        self.as_soa_slice().split_at(mid)
    }

    /// The rows before `mid` and the rows from `mid` on, as two exclusive views that can be
    /// used at the same time.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Cell { heat: f32 }
    ///
    /// let mut cells: SoaVec<Cell> = (0..4).map(|i| Cell { heat: i as f32 }).collect();
    /// let mut view = cells.as_soa_slice_mut();
    /// let (mut left, right) = view.split_at_mut(2);
    /// for (l, r) in left.slices_mut().heat.iter_mut().zip(right.slices().heat) {
    ///     *l += r; // read one half while writing the other
    /// }
    /// assert_eq!(cells.slices().heat, &[2.0, 4.0, 2.0, 3.0]);
    /// ```
    ///
    /// # Panics
    /// If `mid > len`; see [`split_at_mut_checked`](Self::split_at_mut_checked).
    #[inline]
    #[track_caller]
    pub fn split_at_mut(&mut self, mid: usize) -> (SoaSliceMut<'_, T>, SoaSliceMut<'_, T>) {
        let len = self.len;
        match self.split_at_mut_checked(mid) {
            Some(halves) => halves,
            None => split_panic(mid, len),
        }
    }

    /// The rows before `mid` and the rows from `mid` on as two exclusive views, or `None` if
    /// `mid > len`.
    #[inline]
    pub fn split_at_mut_checked(
        &mut self,
        mid: usize,
    ) -> Option<(SoaSliceMut<'_, T>, SoaSliceMut<'_, T>)> {
        self.reborrow().into_split_at_mut(mid)
    }

    /// [`split_at_mut_checked`](Self::split_at_mut_checked) for the whole of `'a`.
    #[inline]
    pub(crate) fn into_split_at_mut(
        self,
        mid: usize,
    ) -> Option<(SoaSliceMut<'a, T>, SoaSliceMut<'a, T>)> {
        if mid > self.len {
            return None;
        }
        let (cols, len) = (self.cols, self.len);
        // SAFETY: `mid <= len`; the two views cover the disjoint rows `0..mid` and `mid..len`,
        // both exclusive for `'a` (`self` is consumed).
        Some(unsafe {
            (
                SoaSliceMut::from_raw(cols, mid),
                SoaSliceMut::from_raw(cols.offset(mid), len - mid),
            )
        })
    }

    /// The first row, or `None` if there are none.
    #[inline]
    pub fn first(&self) -> Option<T::Ref<'_>> {
        self.get(0)
    }

    /// The last row, or `None` if there are none.
    #[inline]
    pub fn last(&self) -> Option<T::Ref<'_>> {
        self.get(self.len.wrapping_sub(1))
    }

    /// The first row, exclusively, or `None` if there are none.
    #[inline]
    pub fn first_mut(&mut self) -> Option<T::Mut<'_>> {
        self.get_mut(0)
    }

    /// The last row, exclusively, or `None` if there are none.
    #[inline]
    pub fn last_mut(&mut self) -> Option<T::Mut<'_>> {
        self.get_mut(self.len.wrapping_sub(1))
    }

    /// The first row, exclusively, and the rows after it, or `None` if there are none.
    #[inline]
    pub fn split_first_mut(&mut self) -> Option<(T::Mut<'_>, SoaSliceMut<'_, T>)> {
        let (head, tail) = self.reborrow().into_split_at_mut(1)?;
        Some((head.into_get_mut(0)?, tail))
    }

    /// The last row, exclusively, and the rows before it, or `None` if there are none.
    #[inline]
    pub fn split_last_mut(&mut self) -> Option<(T::Mut<'_>, SoaSliceMut<'_, T>)> {
        let mid = self.len.checked_sub(1)?;
        let (init, last) = self.reborrow().into_split_at_mut(mid)?;
        Some((last.into_get_mut(0)?, init))
    }

    /// References to row `index`'s fields, without a bounds check.
    ///
    /// # Safety
    /// - `index < len`. (A wrong index reads outside the columns: undefined behaviour.)
    #[inline]
    pub unsafe fn get_unchecked(&self, index: usize) -> T::Ref<'_> {
        // SAFETY: forwarded from the caller.
        unsafe { self.as_soa_slice().get_unchecked(index) }
    }

    /// Exclusive references to row `index`'s fields, without a bounds check.
    ///
    /// # Safety
    /// - `index < len`. (A wrong index writes outside the columns: undefined behaviour.)
    #[inline]
    pub unsafe fn get_unchecked_mut(&mut self, index: usize) -> T::Mut<'_> {
        // SAFETY: forwarded from the caller.
        unsafe { self.reborrow().into_get_unchecked_mut(index) }
    }

    /// Sorts the rows with a comparator over views, unstably (like `<[T]>::sort_unstable_by`),
    /// in place: no allocation, O(n log n) comparisons (an introsort of whole-row swaps).
    ///
    /// Every step swaps two whole rows, so a panicking `compare` leaves the rows a permutation of
    /// what they were.
    pub fn sort_unstable_by<F>(&mut self, mut compare: F)
    where
        F: for<'r> FnMut(T::Ref<'r>, T::Ref<'r>) -> Ordering,
    {
        let cols = self.cols;
        let mut less = |i: usize, j: usize| {
            // SAFETY: `unstable_sort` only passes indices below `len`: initialised rows, shared
            // while `compare` runs (no row moves until it returns).
            let (a, b) = unsafe { (T::view(cols.get(i)), T::view(cols.get(j))) };
            compare(a, b) == Ordering::Less
        };
        let mut swap = |i: usize, j: usize| {
            // SAFETY: both indices are below `len`, initialised and exclusively borrowed.
            unsafe { cols.swap(i, j) }
        };
        unstable_sort(self.len, &mut less, &mut swap);
    }

    /// Sorts the rows by a key, unstably and in place (no allocation). The key is computed on
    /// every comparison, as `<[T]>::sort_unstable_by_key` does.
    pub fn sort_unstable_by_key<K, F>(&mut self, mut key: F)
    where
        K: Ord,
        F: for<'r> FnMut(T::Ref<'r>) -> K,
    {
        self.sort_unstable_by(|a, b| key(a).cmp(&key(b)));
    }

    /// Sorts the rows by their views' `Ord`, unstably and in place (no allocation).
    pub fn sort_unstable(&mut self)
    where
        for<'r> T::Ref<'r>: Ord,
    {
        self.sort_unstable_by(|a, b| a.cmp(&b));
    }

    /// Sorts the rows with a comparator over views, stably (like `<[T]>::sort_by`).
    ///
    /// The order is computed first (no row moves while `compare` runs, so a panic leaves the rows
    /// as they were), then every column is permuted once.
    ///
    /// Both views share one lifetime, so generic code can compare them with their own
    /// `PartialOrd` (`where for<'r> T::Ref<'r>: PartialOrd`).
    ///
    /// Types with non-`'static` lifetime parameters cannot call this yet: a closure over
    /// `T::Ref<'_>` of any lifetime makes rustc ask for `T: 'static` (a known limitation).
    #[cfg(feature = "alloc")]
    pub fn sort_by<F>(&mut self, compare: F)
    where
        F: for<'r> FnMut(T::Ref<'r>, T::Ref<'r>) -> Ordering,
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

    /// Sorts the rows by their views' `Ord`, stably (see [`sort_by`](Self::sort_by)).
    #[cfg(feature = "alloc")]
    pub fn sort(&mut self)
    where
        for<'r> T::Ref<'r>: Ord,
    {
        self.sort_by(|a, b| a.cmp(&b));
    }
}

#[cfg(feature = "alloc")]
impl<'a, T: Soa + 'a> SoaSlice<'a, T> {
    /// The stable sorted order of the rows under `compare`: a permutation of `0..len`.
    pub(crate) fn sort_order<F>(&self, mut compare: F) -> alloc::vec::Vec<usize>
    where
        F: for<'r> FnMut(T::Ref<'r>, T::Ref<'r>) -> Ordering,
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

/// Sorts `0..len` in place with `less` and `swap` on indices: introsort (quicksort with a
/// median-of-three pivot, insertion sort for short runs, heapsort past a depth limit), so no
/// allocation and O(n log n) comparisons. Every step swaps two indices below `len`, and no
/// index leaves `0..len` even if `less` is inconsistent (the order is then unspecified).
fn unstable_sort<L, S>(len: usize, less: &mut L, swap: &mut S)
where
    L: FnMut(usize, usize) -> bool,
    S: FnMut(usize, usize),
{
    let depth = 2 * (usize::BITS - len.leading_zeros()) as usize;
    introsort(0, len, depth, less, swap);
}

/// Runs this short are finished by insertion sort.
const INSERTION_MAX: usize = 16;

fn introsort<L, S>(mut lo: usize, mut hi: usize, mut depth: usize, less: &mut L, swap: &mut S)
where
    L: FnMut(usize, usize) -> bool,
    S: FnMut(usize, usize),
{
    loop {
        let n = hi - lo;
        if n <= INSERTION_MAX {
            for k in lo + 1..hi {
                let mut m = k;
                while m > lo && less(m, m - 1) {
                    swap(m, m - 1);
                    m -= 1;
                }
            }
            return;
        }
        if depth == 0 {
            heapsort(lo, hi, less, swap);
            return;
        }
        depth -= 1;
        let p = partition(lo, hi, less, swap);
        // Recurse into the shorter side, loop on the longer: stack depth O(log n).
        if p - lo < hi - p - 1 {
            introsort(lo, p, depth, less, swap);
            lo = p + 1;
        } else {
            introsort(p + 1, hi, depth, less, swap);
            hi = p;
        }
    }
}

/// Partitions `lo..hi` (at least 3 long) around a median-of-three pivot; returns the pivot's
/// final index `p`: nothing in `lo..p` is greater than it, nothing in `p + 1..hi` less.
fn partition<L, S>(lo: usize, hi: usize, less: &mut L, swap: &mut S) -> usize
where
    L: FnMut(usize, usize) -> bool,
    S: FnMut(usize, usize),
{
    let last = hi - 1;
    let mid = lo + (hi - lo) / 2;
    // Order `lo <= mid <= last`, then move the median to `lo` as the pivot.
    if less(mid, lo) {
        swap(mid, lo);
    }
    if less(last, mid) {
        swap(last, mid);
        if less(mid, lo) {
            swap(mid, lo);
        }
    }
    swap(lo, mid);
    let (mut i, mut j) = (lo, hi);
    loop {
        i += 1;
        while i < last && less(i, lo) {
            i += 1;
        }
        j -= 1;
        while j > lo && less(lo, j) {
            j -= 1;
        }
        if i >= j {
            break;
        }
        swap(i, j);
    }
    swap(lo, j);
    j
}

/// Heapsort of `lo..hi` (the depth-limit fallback: O(n log n) whatever the input).
fn heapsort<L, S>(lo: usize, hi: usize, less: &mut L, swap: &mut S)
where
    L: FnMut(usize, usize) -> bool,
    S: FnMut(usize, usize),
{
    let len = hi - lo;
    for node in (0..len / 2).rev() {
        sift_down(lo, node, len, less, swap);
    }
    for end in (1..len).rev() {
        // The greatest row goes to the end; the rest is made a heap again.
        swap(lo, lo + end);
        sift_down(lo, 0, end, less, swap);
    }
}

/// Moves `node` down the heap `lo..lo + end` (indices relative to `lo`) until neither child is
/// greater.
fn sift_down<L, S>(lo: usize, mut node: usize, end: usize, less: &mut L, swap: &mut S)
where
    L: FnMut(usize, usize) -> bool,
    S: FnMut(usize, usize),
{
    loop {
        let mut child = 2 * node + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && less(lo + child, lo + child + 1) {
            child += 1;
        }
        if !less(lo + node, lo + child) {
            break;
        }
        swap(lo + node, lo + child);
        node = child;
    }
}

impl<T: Soa> Eq for SoaSlice<'_, T> where T::Columns: TotalEqColumns {}

impl<T: Soa> PartialOrd for SoaSlice<'_, T>
where
    T::Columns: PartialOrdColumns,
{
    /// Lexicographic, like `<[T]>::partial_cmp`: row by row, each row field by field.
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        for i in 0..self.len.min(other.len) {
            // SAFETY: `i` is below both lengths: initialised rows of both, shared.
            match unsafe { PartialOrdColumns::partial_cmp_row(self.cols, i, other.cols, i) } {
                Some(Ordering::Equal) => {}
                unequal => return unequal,
            }
        }
        self.len.partial_cmp(&other.len)
    }
}

impl<T: Soa> Ord for SoaSlice<'_, T>
where
    T::Columns: OrdColumns,
{
    /// Lexicographic, like `<[T]>::cmp`: row by row, each row field by field.
    fn cmp(&self, other: &Self) -> Ordering {
        for i in 0..self.len.min(other.len) {
            // SAFETY: `i` is below both lengths: initialised rows of both, shared.
            match unsafe { OrdColumns::cmp_row(self.cols, i, other.cols, i) } {
                Ordering::Equal => {}
                unequal => return unequal,
            }
        }
        self.len.cmp(&other.len)
    }
}

impl<T: Soa> core::hash::Hash for SoaSlice<'_, T>
where
    T::Columns: HashColumns,
{
    /// The length, then every column in turn: equal slices hash equally.
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.len);
        // SAFETY: rows `0..len` are initialised and shared.
        unsafe { self.cols.hash_rows(self.len, state) }
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
