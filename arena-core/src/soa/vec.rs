//! [`SoaVec<T>`]: a growable struct-of-arrays vector.

use alloc::vec::Vec;
use core::fmt;
use core::iter::FusedIterator;

use super::raw::{RawSoa, unwrap_alloc};
use super::{
    ChunksExact, ChunksExactMut, CloneColumns, Columns, EqColumns, Iter, IterMut, Soa,
    SoaAllocError, SoaSlice, SoaSliceMut, row_from_raw, row_to_raw,
};

/// A growable vector of `T` stored as one column per field, all in one allocation.
///
/// The columns are private and share one length, so no safe code can desynchronise them. Growth
/// allocates a new block and copies each column into it once. The API follows `Vec<T>`; rows are
/// read through views ([`Soa::Ref`], [`Soa::Mut`]) and whole columns through
/// [`slices`](Self::slices) / [`slices_mut`](Self::slices_mut).
///
/// # Variance
///
/// Invariant in `T`, because it stores `T::Columns` (an associated type). That is also what
/// soundness asks of a container whose rows can be written through `&mut self`.
pub struct SoaVec<T: Soa> {
    raw: RawSoa<T>,
    len: usize,
}

impl<T: Soa> SoaVec<T> {
    /// An empty vector; allocates nothing until the first push.
    pub fn new() -> Self {
        SoaVec {
            raw: RawSoa::new(),
            len: 0,
        }
    }

    /// An empty vector with room for `capacity` rows.
    ///
    /// # Panics
    /// If the columns do not fit in memory; see [`try_with_capacity`](Self::try_with_capacity).
    pub fn with_capacity(capacity: usize) -> Self {
        unwrap_alloc(Self::try_with_capacity(capacity))
    }

    /// An empty vector with room for `capacity` rows, or why the block could not be allocated.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, SoaAllocError> {
        Ok(SoaVec {
            raw: RawSoa::try_with_capacity(capacity)?,
            len: 0,
        })
    }

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

    /// How many rows fit without reallocating.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// Makes room for at least `additional` more rows.
    ///
    /// # Panics
    /// If the allocation fails; see [`try_reserve`](Self::try_reserve).
    pub fn reserve(&mut self, additional: usize) {
        unwrap_alloc(self.try_reserve(additional));
    }

    /// Makes room for at least `additional` more rows, or says why not (nothing changes then).
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), SoaAllocError> {
        // SAFETY: rows `0..len` are the initialised ones.
        unsafe { self.raw.try_reserve(self.len, additional, false) }
    }

    /// Makes room for exactly `additional` more rows (no geometric growth).
    pub fn try_reserve_exact(&mut self, additional: usize) -> Result<(), SoaAllocError> {
        // SAFETY: rows `0..len` are the initialised ones.
        unsafe { self.raw.try_reserve(self.len, additional, true) }
    }

    /// Shrinks the block to hold exactly `len` rows.
    pub fn shrink_to_fit(&mut self) {
        if self.capacity() > self.len {
            // SAFETY: rows `0..len` are the initialised ones.
            unwrap_alloc(unsafe { self.raw.try_realloc(self.len, self.len) });
        }
    }

    /// Appends a row.
    ///
    /// The row is split into its column values (user code: `into_columns`, also of nested
    /// fields) before anything changes, so a panic there leaves the vector as it was.
    #[inline]
    pub fn push(&mut self, value: T) {
        self.push_raw(row_to_raw(value));
    }

    #[inline]
    pub(crate) fn push_raw(&mut self, parts: <T::Columns as Columns>::Raw) {
        if self.len == self.capacity() {
            self.reserve(1);
        }
        // SAFETY: `len < capacity`, an uninitialised row.
        unsafe { self.raw.cols.write(self.len, parts) };
        self.len += 1;
    }

    /// Removes and returns the last row.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: row `len` was initialised and is now outside the vector.
        let raw = unsafe { self.raw.cols.read(self.len) };
        Some(row_from_raw(raw))
    }

    /// Inserts a row at `index`, shifting the later rows up.
    ///
    /// # Panics
    /// If `index > len`.
    pub fn insert(&mut self, index: usize, value: T) {
        assert!(
            index <= self.len,
            "insertion index {index} out of bounds (len {})",
            self.len
        );
        // User code (the conversions) runs before any row moves.
        let parts = row_to_raw(value);
        self.reserve(1);
        let cols = self.raw.cols;
        // SAFETY: `len + 1 <= capacity`; rows `index..len` move up by one, then `index` is
        // written. No user code runs in between (raw moves only).
        unsafe {
            T::Columns::copy(cols, index, cols, index + 1, self.len - index);
            cols.write(index, parts);
        }
        self.len += 1;
    }

    /// Removes and returns row `index`, shifting the later rows down.
    ///
    /// # Panics
    /// If `index >= len`.
    pub fn remove(&mut self, index: usize) -> T {
        assert!(
            index < self.len,
            "removal index {index} out of bounds (len {})",
            self.len
        );
        let cols = self.raw.cols;
        // SAFETY: row `index` is moved out, then rows `index + 1..len` move down over it. Raw
        // moves only: no user code runs until the length is final.
        let parts = unsafe {
            let parts = cols.read(index);
            T::Columns::copy(cols, index + 1, cols, index, self.len - index - 1);
            parts
        };
        self.len -= 1;
        row_from_raw(parts)
    }

    /// Removes and returns row `index`, moving the last row into its place (O(1)).
    ///
    /// # Panics
    /// If `index >= len`.
    pub fn swap_remove(&mut self, index: usize) -> T {
        assert!(
            index < self.len,
            "swap_remove index {index} out of bounds (len {})",
            self.len
        );
        let cols = self.raw.cols;
        let last = self.len - 1;
        // SAFETY: row `index` is moved out, then the last row is moved over it (typed moves of
        // one row: no `memmove` call per column, and no user code until the length is final).
        let parts = unsafe {
            let parts = cols.read(index);
            if index != last {
                cols.write(index, cols.read(last));
            }
            parts
        };
        self.len = last;
        row_from_raw(parts)
    }

    /// Drops the rows from `len` on.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            let old = self.len;
            self.len = len;
            // SAFETY: rows `len..old` are initialised and now outside the vector (a panicking
            // drop leaks the rest instead of dropping twice).
            unsafe { self.raw.cols.drop_range(len, old - len) };
        }
    }

    /// Drops every row, keeping the capacity.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// A shared view of every row.
    #[inline]
    pub fn as_soa_slice(&self) -> SoaSlice<'_, T> {
        // SAFETY: rows `0..len` are initialised and shared for the borrow.
        unsafe { SoaSlice::from_raw(self.raw.cols, self.len) }
    }

    /// An exclusive view of every row.
    #[inline]
    pub fn as_soa_slice_mut(&mut self) -> SoaSliceMut<'_, T> {
        // SAFETY: rows `0..len` are initialised and exclusive for the borrow.
        unsafe { SoaSliceMut::from_raw(self.raw.cols, self.len) }
    }

    /// References to row `index`'s fields, or `None` if out of bounds.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T::Ref<'_>> {
        self.as_soa_slice().get(index)
    }

    /// Exclusive references to row `index`'s fields, or `None` if out of bounds.
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> Option<T::Mut<'_>> {
        // SAFETY: `index < len`, an initialised row, exclusive for the borrow.
        (index < self.len).then(|| T::view_mut(unsafe { self.raw.cols.get_mut(index) }))
    }

    /// Swaps rows `a` and `b`.
    ///
    /// # Panics
    /// If either is out of bounds.
    pub fn swap(&mut self, a: usize, b: usize) {
        self.as_soa_slice_mut().swap(a, b);
    }

    /// The rows as [`Soa::Ref`] views.
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        self.as_soa_slice().iter()
    }

    /// The rows as [`Soa::Mut`] views.
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        self.as_soa_slice_mut().into_iter()
    }

    /// Every column as a shared slice of `len` values.
    #[inline]
    pub fn slices(&self) -> T::Slices<'_> {
        self.as_soa_slice().slices()
    }

    /// Every column as an exclusive slice, all at once (they are disjoint).
    #[inline]
    pub fn slices_mut(&mut self) -> T::SlicesMut<'_> {
        self.as_soa_slice_mut().into_slices_mut()
    }

    /// Every column in chunks of exactly `N` rows (see [`ChunksExact`]).
    #[inline]
    pub fn chunks_exact<const N: usize>(&self) -> ChunksExact<'_, T, N> {
        self.as_soa_slice().chunks_exact()
    }

    /// Every column in exclusive chunks of exactly `N` rows (see [`ChunksExactMut`]).
    #[inline]
    pub fn chunks_exact_mut<const N: usize>(&mut self) -> ChunksExactMut<'_, T, N> {
        // SAFETY: rows `0..len` are exclusive for the borrow.
        unsafe { ChunksExactMut::new(self.raw.cols, self.len) }
    }

    /// Sorts the rows stably with a comparator over views (see [`SoaSliceMut::sort_by`]). The
    /// order is computed on row indices, then every column is gathered once into a new block
    /// that replaces the old one.
    pub fn sort_by<F>(&mut self, compare: F)
    where
        F: FnMut(T::Ref<'_>, T::Ref<'_>) -> core::cmp::Ordering,
    {
        let order = self.as_soa_slice().sort_order(compare);
        self.reorder(&order);
    }

    /// Sorts the rows stably by a key computed once per row.
    pub fn sort_by_key<K: Ord, F>(&mut self, key: F)
    where
        F: FnMut(T::Ref<'_>) -> K,
    {
        let order = self.as_soa_slice().key_order(key);
        self.reorder(&order);
    }

    /// Makes row `k` the old row `order[k]`, gathering each column into a new block.
    fn reorder(&mut self, order: &[usize]) {
        debug_assert_eq!(order.len(), self.len);
        if self.len < 2 {
            return;
        }
        let fresh = unwrap_alloc(RawSoa::<T>::try_with_capacity(self.capacity()));
        // SAFETY: `order` is a permutation of the initialised rows; each moves to the new block
        // once, and the old block is then freed without dropping anything. No user code runs
        // in between.
        unsafe { T::Columns::gather(self.raw.cols, fresh.cols, order) };
        drop(core::mem::replace(&mut self.raw, fresh));
    }

    /// Keeps only the rows for which `keep` returns `true`, in order.
    ///
    /// If `keep` or a drop panics, the rows not yet visited are kept and nothing is dropped twice.
    pub fn retain<F>(&mut self, mut keep: F)
    where
        F: FnMut(T::Ref<'_>) -> bool,
    {
        /// Closes the gap on drop (also while unwinding): rows `next..len` move down by `deleted`.
        struct Gap<'v, T: Soa> {
            vec: &'v mut SoaVec<T>,
            next: usize,
            deleted: usize,
            old_len: usize,
        }
        impl<T: Soa> Drop for Gap<'_, T> {
            fn drop(&mut self) {
                let cols = self.vec.raw.cols;
                let rest = self.old_len - self.next;
                // SAFETY: rows `next..old_len` are initialised and unvisited; rows
                // `next - deleted..next` are moved-out holes.
                unsafe { T::Columns::copy(cols, self.next, cols, self.next - self.deleted, rest) };
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
            let cols = g.vec.raw.cols;
            let i = g.next;
            // SAFETY: row `i` is initialised.
            let kept = keep(T::view(unsafe { cols.get(i) }));
            g.next += 1;
            if kept {
                if g.deleted > 0 {
                    // SAFETY: row `i` moves into the first hole `i - deleted`.
                    unsafe { T::Columns::copy(cols, i, cols, i - g.deleted, 1) };
                }
            } else {
                g.deleted += 1;
                // SAFETY: row `i` is initialised and now counted as a hole.
                unsafe { cols.drop_range(i, 1) };
            }
        }
    }

    /// Moves every row into a `Vec<T>`.
    pub fn into_vec(self) -> Vec<T> {
        self.into_iter().collect()
    }
}

impl<T: Soa> Default for SoaVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Soa> Drop for SoaVec<T> {
    fn drop(&mut self) {
        // SAFETY: rows `0..len` are initialised; `raw` frees the block afterwards, even if a drop
        // panics.
        unsafe { self.raw.cols.drop_range(0, self.len) };
    }
}

impl<T: Soa> Extend<T> for SoaVec<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        // The hint is only a hint: a lying (huge) lower bound must not abort or panic, so a
        // failed reservation is ignored and the pushes grow the block as rows arrive.
        let _ = self.try_reserve(iter.size_hint().0);
        for value in iter {
            self.push(value);
        }
    }
}

impl<T: Soa> FromIterator<T> for SoaVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = SoaVec::new();
        v.extend(iter);
        v
    }
}

impl<T: Soa> From<Vec<T>> for SoaVec<T> {
    fn from(values: Vec<T>) -> Self {
        values.into_iter().collect()
    }
}

impl<T: Soa> From<SoaVec<T>> for Vec<T> {
    fn from(values: SoaVec<T>) -> Self {
        values.into_vec()
    }
}

impl<T: Soa> Clone for SoaVec<T>
where
    T::Columns: CloneColumns,
{
    /// Clones row by row; if a clone panics, the rows cloned so far are dropped.
    fn clone(&self) -> Self {
        let mut out = SoaVec::with_capacity(self.len);
        for i in 0..self.len {
            // SAFETY: row `i` is initialised.
            let row = unsafe { self.raw.cols.clone_row(i) };
            out.push_raw(row);
        }
        out
    }
}

impl<T: Soa> PartialEq for SoaVec<T>
where
    T::Columns: EqColumns,
{
    /// Column by column: equal lengths and equal columns.
    fn eq(&self, other: &Self) -> bool {
        self.as_soa_slice() == other.as_soa_slice()
    }
}

impl<T: Soa> fmt::Debug for SoaVec<T>
where
    for<'x> T::Ref<'x>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'v, T: Soa> IntoIterator for &'v SoaVec<T> {
    type Item = T::Ref<'v>;
    type IntoIter = Iter<'v, T>;
    fn into_iter(self) -> Iter<'v, T> {
        self.iter()
    }
}

impl<'v, T: Soa> IntoIterator for &'v mut SoaVec<T> {
    type Item = T::Mut<'v>;
    type IntoIter = IterMut<'v, T>;
    fn into_iter(self) -> IterMut<'v, T> {
        self.iter_mut()
    }
}

impl<T: Soa> IntoIterator for SoaVec<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;
    fn into_iter(self) -> IntoIter<T> {
        let mut this = core::mem::ManuallyDrop::new(self);
        let len = this.len;
        // SAFETY: `this` is never dropped, so its block moves into the iterator exactly once.
        let raw = unsafe { core::ptr::read(&this.raw) };
        this.len = 0;
        IntoIter {
            raw,
            front: 0,
            back: len,
        }
    }
}

/// The rows of a [`SoaVec`], moved out front to back. Dropping it drops the rows not yet taken.
///
/// # Variance
///
/// Invariant in `T`, because it stores `T::Columns` (an associated type). (It would be sound
/// covariant, as it owns the rows it yields.)
pub struct IntoIter<T: Soa> {
    raw: RawSoa<T>,
    front: usize,
    back: usize,
}

impl<T: Soa> Iterator for IntoIter<T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.front < self.back {
            let i = self.front;
            self.front += 1;
            // SAFETY: row `i` is initialised and taken once (`front` already passed it).
            let raw = unsafe { self.raw.cols.read(i) };
            Some(row_from_raw(raw))
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

impl<T: Soa> DoubleEndedIterator for IntoIter<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        if self.front < self.back {
            self.back -= 1;
            // SAFETY: row `back` is initialised and taken once (`back` already passed it).
            let raw = unsafe { self.raw.cols.read(self.back) };
            Some(row_from_raw(raw))
        } else {
            None
        }
    }
}

impl<T: Soa> ExactSizeIterator for IntoIter<T> {}
impl<T: Soa> FusedIterator for IntoIter<T> {}

impl<T: Soa> Drop for IntoIter<T> {
    fn drop(&mut self) {
        let (front, back) = (self.front, self.back);
        self.front = back;
        // SAFETY: rows `front..back` are initialised and not yet taken; `raw` frees the block.
        unsafe { self.raw.cols.drop_range(front, back - front) };
    }
}

// SAFETY: a `SoaVec<T>` owns its values (as `Vec<T>` does) and stores nothing else: sending it
// moves every stored value to the other thread, which is sound when every stored field type is
// `Send` (`T::Columns: Send`). Rows are rebuilt with `from_columns` from those values on
// whichever thread pops them, as a `Vec<(A, B)>` would hand out its tuples.
unsafe impl<T: Soa> Send for SoaVec<T> where T::Columns: Send {}
// SAFETY: `&SoaVec<T>` gives only shared references to stored values (`&F`, through views and
// slices), so sharing it across threads needs every field type `Sync`, as `Vec<T>: Sync`.
unsafe impl<T: Soa> Sync for SoaVec<T> where T::Columns: Sync {}
// SAFETY: owns the rows not yet taken, as `vec::IntoIter<T>`: sending it moves them (`Send`).
unsafe impl<T: Soa> Send for IntoIter<T> where T::Columns: Send {}
// SAFETY: `&IntoIter<T>` gives no access to the values (its only methods take `&mut self`); the
// bound matches `vec::IntoIter<T>: Sync` anyway.
unsafe impl<T: Soa> Sync for IntoIter<T> where T::Columns: Sync {}
