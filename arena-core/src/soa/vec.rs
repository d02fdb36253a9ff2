//! [`SoaVec<T>`]: a growable struct-of-arrays vector.

use alloc::vec::Vec;
use core::fmt;
use core::iter::FusedIterator;

use super::raw::{RawSoa, unwrap_alloc};
use super::{
    ChunksExact, ChunksExactMut, CloneColumns, Columns, EqColumns, Iter, IterMut, Soa,
    SoaAllocError, SoaSlice, SoaSliceMut, row_from_raw, row_to_raw,
};
use crate::tags::{BudgetExceeded, BudgetGate};

/// A growable vector of `T` stored as one column per field, all in one allocation.
///
/// The columns are private and share one length, so no safe code can desynchronise them. Growth
/// allocates a new block and copies each column into it once. The API follows `Vec<T>`; rows are
/// read through views ([`Soa::Ref`], [`Soa::Mut`]) and whole columns through
/// [`slices`](Self::slices) / [`slices_mut`](Self::slices_mut).
///
/// ```
/// use arena_kit::{Soa, SoaVec};
///
/// #[derive(Soa)]
/// struct Particle { x: f32, vx: f32, life: f32 }
///
/// let mut particles: SoaVec<Particle> =
///     (0..100).map(|i| Particle { x: 0.0, vx: i as f32, life: 1.0 }).collect();
/// let ParticleSlicesMut { x, vx, life } = particles.slices_mut();
/// for ((x, vx), life) in x.iter_mut().zip(vx.iter()).zip(life.iter_mut()) {
///     *x += vx * 0.5; // reads two columns, not every field of every particle
///     *life -= 0.25;
/// }
/// assert_eq!(particles.slices().x[10], 5.0);
/// particles.retain(|p| *p.vx < 50.0); // rows are read as references to their fields
/// assert_eq!(particles.len(), 50);
/// ```
///
/// # Variance
///
/// Invariant in `T`, because it stores `T::Columns` (an associated type). That is also what
/// soundness asks of a container whose rows can be written through `&mut self`.
pub struct SoaVec<T: Soa> {
    raw: RawSoa<T>,
    len: usize,
    /// Rows the inlined push may fill: the capacity, or fewer under a budget (the rows the budget
    /// allows); a push at or past it takes the out-of-line path, which checks the budget and
    /// grows the block.
    end: usize,
    budget: Option<BudgetGate>,
}

impl<T: Soa> SoaVec<T> {
    /// An empty vector; allocates nothing until the first push.
    pub fn new() -> Self {
        let raw = RawSoa::new();
        SoaVec {
            end: raw.capacity(),
            raw,
            len: 0,
            budget: None,
        }
    }

    /// An empty vector with room for `capacity` rows.
    ///
    /// # Panics
    /// If the columns do not fit in memory; see [`try_with_capacity`](Self::try_with_capacity).
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        unwrap_alloc(Self::try_with_capacity(capacity))
    }

    /// An empty vector with room for `capacity` rows, or why the block could not be allocated.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, SoaAllocError> {
        let raw = RawSoa::try_with_capacity(capacity)?;
        Ok(SoaVec {
            end: raw.capacity(),
            raw,
            len: 0,
            budget: None,
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
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        unwrap_alloc(self.try_reserve(additional));
    }

    /// Makes room for at least `additional` more rows, or says why not (nothing changes then).
    ///
    /// Reserving is not counted against a [budget](crate::tags::Budgeted): the budget counts rows.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), SoaAllocError> {
        // SAFETY: rows `0..len` are the initialised ones.
        let reserved = unsafe { self.raw.try_reserve(self.len, additional, false) };
        self.refresh_end();
        reserved
    }

    /// Makes room for exactly `additional` more rows (no geometric growth).
    pub fn try_reserve_exact(&mut self, additional: usize) -> Result<(), SoaAllocError> {
        // SAFETY: rows `0..len` are the initialised ones.
        let reserved = unsafe { self.raw.try_reserve(self.len, additional, true) };
        self.refresh_end();
        reserved
    }

    /// Recomputes [`end`](Self::end) after the capacity or the budget changed.
    fn refresh_end(&mut self) {
        let capacity = self.raw.capacity();
        self.end = match (&self.budget, size_of::<T>()) {
            (Some(gate), unit @ 1..) => capacity.min(gate.budget().bytes / unit),
            _ => capacity,
        };
    }

    /// Bytes the rows count against a budget.
    fn current(&self) -> usize {
        self.len.saturating_mul(size_of::<T>())
    }

    /// The out-of-line part of adding one row: the budget (its policy runs here), then room for
    /// the row. Nothing changes on failure.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn admit_one(&mut self) -> Result<(), PushRefusal> {
        let current = self.current();
        if let Some(gate) = &mut self.budget {
            // Pops and truncations do not settle (they stay free of budget code): usage only
            // matters here, where it would grow.
            gate.settle(current);
            if !gate.allows(current, size_of::<T>()) {
                gate.exceeded(current, size_of::<T>())
                    .map_err(PushRefusal::OverBudget)?;
            }
        }
        if self.len == self.capacity() {
            self.try_reserve(1).map_err(PushRefusal::Alloc)?;
        }
        Ok(())
    }

    /// Makes room for one more row under the budget, or says why not.
    #[inline(always)]
    #[track_caller]
    fn room_for_one(&mut self) -> Result<(), PushRefusal> {
        if self.len >= self.end {
            self.admit_one()?;
        }
        Ok(())
    }

    /// Shrinks the block to hold exactly `len` rows.
    pub fn shrink_to_fit(&mut self) {
        if self.capacity() > self.len {
            // SAFETY: rows `0..len` are the initialised ones.
            unwrap_alloc(unsafe { self.raw.try_realloc(self.len, self.len) });
            self.refresh_end();
        }
    }

    /// Appends a row.
    ///
    /// The row is split into its column values (user code: `into_columns`, also of nested
    /// fields) before anything changes, so a panic there leaves the vector as it was.
    ///
    /// # Panics
    /// If the allocation fails, or over a `Fail` or `Panic` budget; see
    /// [`try_push`](Self::try_push).
    #[inline]
    #[track_caller]
    pub fn push(&mut self, value: T) {
        self.push_raw(row_to_raw(value));
    }

    /// Appends a row, or hands it back inside a [`TryPushError`] if the block cannot grow or a
    /// [`Budget`](crate::tags::Budget) with [`Policy::Fail`](crate::tags::Policy::Fail) refuses
    /// it. Nothing changes on failure.
    ///
    /// ```
    /// use arena_kit::tags::Budgeted;
    /// use arena_kit::{Budget, Soa, SoaVec};
    ///
    /// #[derive(Soa, Debug, PartialEq)]
    /// struct Particle { x: f32 }
    ///
    /// let mut particles = SoaVec::with_capacity(8);
    /// particles.set_budget(Some(Budget::fail(4).into())); // one f32
    /// particles.push(Particle { x: 1.0 });
    /// let refused = particles.try_push(Particle { x: 2.0 }).unwrap_err();
    /// assert!(refused.budget_exceeded().is_some());
    /// assert_eq!(refused.into_inner(), Particle { x: 2.0 }); // the value comes back
    /// assert_eq!(particles.len(), 1);
    /// ```
    ///
    /// # Panics
    /// Over a budget with [`Policy::Panic`](crate::tags::Policy::Panic).
    #[inline]
    #[track_caller]
    pub fn try_push(&mut self, value: T) -> Result<(), TryPushError<T>> {
        if let Err(refusal) = self.room_for_one() {
            return Err(TryPushError { value, refusal });
        }
        let parts = row_to_raw(value);
        // SAFETY: `room_for_one` made `len < capacity`: an uninitialised row.
        unsafe { self.raw.cols.write(self.len, parts) };
        self.len += 1;
        Ok(())
    }

    #[inline]
    #[track_caller]
    pub(crate) fn push_raw(&mut self, parts: <T::Columns as Columns>::Raw) {
        if let Err(refusal) = self.room_for_one() {
            refusal.panic("SoaVec::push")
        }
        // SAFETY: `room_for_one` made `len < capacity`: an uninitialised row.
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
    /// If `index > len`, the allocation fails, or over a `Fail` or `Panic` budget; see
    /// [`try_insert`](Self::try_insert).
    #[track_caller]
    pub fn insert(&mut self, index: usize, value: T) {
        if let Err(e) = self.try_insert(index, value) {
            e.refusal.panic("SoaVec::insert")
        }
    }

    /// Inserts a row at `index`, shifting the later rows up, or hands it back inside a
    /// [`TryPushError`] if the block cannot grow or a `Fail` budget refuses it. Nothing changes
    /// on failure.
    ///
    /// # Panics
    /// If `index > len`, or over a budget with [`Policy::Panic`](crate::tags::Policy::Panic).
    #[track_caller]
    pub fn try_insert(&mut self, index: usize, value: T) -> Result<(), TryPushError<T>> {
        assert!(
            index <= self.len,
            "insertion index {index} out of bounds (len {})",
            self.len
        );
        if let Err(refusal) = self.room_for_one() {
            return Err(TryPushError { value, refusal });
        }
        // User code (the conversions) runs before any row moves.
        let parts = row_to_raw(value);
        let cols = self.raw.cols;
        // SAFETY: `len + 1 <= capacity`; rows `index..len` move up by one, then `index` is
        // written. No user code runs in between (raw moves only).
        unsafe {
            T::Columns::copy(cols, index, cols, index + 1, self.len - index);
            cols.write(index, parts);
        }
        self.len += 1;
        Ok(())
    }

    /// Removes and returns row `index`, shifting the later rows down.
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
    #[track_caller]
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

    /// Exclusive references to the fields of `N` distinct rows at once, or `None` if any index
    /// is out of bounds or two are equal. O(N²) index compares, for small `N`.
    pub fn get_disjoint_mut<const N: usize>(
        &mut self,
        indices: [usize; N],
    ) -> Option<[T::Mut<'_>; N]> {
        for (i, &a) in indices.iter().enumerate() {
            if a >= self.len || indices[..i].contains(&a) {
                return None;
            }
        }
        let cols = self.raw.cols;
        // SAFETY: every index is an initialised row (`< len`) and no two are equal, so the views
        // are to disjoint rows; the vector stays mutably borrowed for their lifetime.
        Some(indices.map(|i| T::view_mut(unsafe { cols.get_mut(i) })))
    }

    /// Swaps rows `a` and `b`.
    ///
    /// # Panics
    /// If either is out of bounds.
    #[track_caller]
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
        self.refresh_end();
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

/// Why a row could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PushRefusal {
    /// The block could not grow.
    Alloc(SoaAllocError),
    /// A `Fail` budget refused the row.
    OverBudget(BudgetExceeded),
}

impl PushRefusal {
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn panic(self, method: &str) -> ! {
        match self {
            PushRefusal::Alloc(e) => panic!("{method}: {e}"),
            PushRefusal::OverBudget(e) => panic!("{method}: {e}"),
        }
    }
}

/// A [`SoaVec`] refused a row and hands it back: returned by [`SoaVec::try_push`] and
/// [`SoaVec::try_insert`]. Nothing was changed.
///
/// Either the block could not grow ([`alloc_error`](Self::alloc_error)) or a
/// [`Budget`](crate::tags::Budget) with [`Policy::Fail`](crate::tags::Policy::Fail) refused
/// one more row ([`budget_exceeded`](Self::budget_exceeded)).
#[derive(Clone, PartialEq, Eq)]
pub struct TryPushError<T> {
    value: T,
    refusal: PushRefusal,
}

impl<T> TryPushError<T> {
    /// The row that was refused, given back.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The budget that refused the row, if that was the reason.
    pub fn budget_exceeded(&self) -> Option<&BudgetExceeded> {
        match &self.refusal {
            PushRefusal::OverBudget(e) => Some(e),
            PushRefusal::Alloc(_) => None,
        }
    }

    /// The allocation failure, if that was the reason.
    pub fn alloc_error(&self) -> Option<&SoaAllocError> {
        match &self.refusal {
            PushRefusal::Alloc(e) => Some(e),
            PushRefusal::OverBudget(_) => None,
        }
    }
}

/// Does not print the row (it need not be `Debug`).
impl<T> fmt::Debug for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TryPushError")
            .field("refusal", &self.refusal)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.refusal {
            PushRefusal::Alloc(e) => write!(f, "{e}; the row was handed back"),
            PushRefusal::OverBudget(e) => write!(f, "{e}; the row was handed back"),
        }
    }
}

impl<T> core::error::Error for TryPushError<T> {}

/// The budget counts rows × `size_of::<T>()` (`Usage::current`) and is checked exactly, on every
/// row added, without a cost on the inlined push: a push compares the length with one bound that
/// is the capacity, or the rows the budget allows if fewer, and the out-of-line path past it
/// checks the budget and grows the block. Reserving is not counted (the budget counts rows).
/// Under [`Policy::Fail`](crate::tags::Policy::Fail) [`try_push`](SoaVec::try_push) and
/// [`try_insert`](SoaVec::try_insert) return a [`TryPushError`] handing the row back; `push`,
/// `insert` and `extend` panic with the error's text (`extend` after pushing the rows that fit).
/// A lifted `Warn` budget re-arms once usage is back under it.
impl<T: Soa> crate::tags::Budgeted for SoaVec<T> {
    fn budget(&self) -> Option<BudgetGate> {
        let mut gate = self.budget?;
        gate.settle(self.current());
        Some(gate)
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.budget = gate.map(BudgetGate::ensure_stamped);
        self.refresh_end();
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.budget.as_ref().map_or(0, BudgetGate::stamp)
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
