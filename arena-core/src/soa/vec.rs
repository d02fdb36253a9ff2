//! [`SoaVec<T>`]: a growable struct-of-arrays vector.

use alloc::vec::Vec;
use core::fmt;
use core::iter::FusedIterator;

use super::raw::{RawSoa, unwrap_alloc};
use super::{
    ChunksExact, ChunksExactMut, CloneColumns, Columns, EqColumns, HashColumns, Iter, IterMut,
    OrdColumns, PartialOrdColumns, Soa, SoaAllocError, SoaSlice, SoaSliceMut, TotalEqColumns,
    row_from_raw, row_to_raw,
};
use crate::tags::{BudgetExceeded, BudgetGate, PageTag};

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
    /// The tag the column block is charged to when it grows (set by a `Tracked` wrapper).
    page_tag: PageTag,
    /// The name and tag a `Tracked` wrapper put on the vector, and the block reported to the
    /// profiler as one allocation (address, bytes; 0 bytes: none).
    #[cfg(feature = "profiler")]
    profiler: (Option<crate::tags::ProfilerLabel>, (usize, usize)),
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
            page_tag: PageTag::NONE,
            #[cfg(feature = "profiler")]
            profiler: (None, (0, 0)),
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
            page_tag: PageTag::NONE,
            #[cfg(feature = "profiler")]
            profiler: (None, (0, 0)),
        })
    }

    /// The tag the column block is charged to when it grows.
    pub(super) fn page_tag(&self) -> PageTag {
        self.page_tag
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
        let reserved = self
            .page_tag
            .charged(|| unsafe { self.raw.try_reserve(self.len, additional, false) });
        self.refresh_end();
        reserved
    }

    /// Makes room for exactly `additional` more rows (no geometric growth).
    pub fn try_reserve_exact(&mut self, additional: usize) -> Result<(), SoaAllocError> {
        // SAFETY: rows `0..len` are the initialised ones.
        let reserved = self
            .page_tag
            .charged(|| unsafe { self.raw.try_reserve(self.len, additional, true) });
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
        // Last, with every field final: the sink is user code, and if it panics the vector
        // must already be consistent (an `end` left at an old, larger capacity would let a
        // push write past the block).
        #[cfg(feature = "profiler")]
        self.profile_block();
    }

    /// Reports the block to the profiler if it moved or changed size since it was reported
    /// (every change of the block goes through `refresh_end`): `Free` of the old, `Alloc` of the
    /// new.
    #[cfg(feature = "profiler")]
    fn profile_block(&mut self) {
        let (label, old) = self.profiler;
        let new = if label.is_some() {
            self.raw.block()
        } else {
            (0, 0)
        };
        if new == old {
            return;
        }
        self.profiler.1 = new;
        if old.1 > 0 {
            crate::tags::profiler::free(label, old.0, old.1);
        }
        if new.1 > 0 {
            crate::tags::profiler::alloc_block(label, new.0, new.1);
        }
    }

    /// Takes the reported block back (a label changing).
    #[cfg(feature = "profiler")]
    fn profile_block_off(&mut self) {
        let (label, old) = self.profiler;
        if old.1 > 0 {
            crate::tags::profiler::free(label, old.0, old.1);
        }
        self.profiler.1 = (0, 0);
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

    /// Shrinks the block to hold exactly `len` rows. Rows whose fields are all zero-sized take
    /// no block, and their capacity stays unbounded (`usize::MAX`), as a `Vec`'s of a zero-sized
    /// type does.
    pub fn shrink_to_fit(&mut self) {
        if !super::row_is_zst::<T>() && self.capacity() > self.len {
            // The smaller block is the vector's, charged to its tag as its growth is.
            // SAFETY: rows `0..len` are the initialised ones.
            let shrunk = self
                .page_tag
                .charged(|| unsafe { self.raw.try_realloc(self.len, self.len) });
            unwrap_alloc(shrunk);
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
        self.make_room_for_one();
        // SAFETY: `make_room_for_one` made `len < capacity`.
        unsafe { self.push_raw_unchecked(parts) };
    }

    /// The row count below which one more row fits without asking the allocator or the budget
    /// (the capacity, or less under a budget); at or above it, a push goes through
    /// [`make_room_for_one`](Self::make_room_for_one).
    #[inline(always)]
    pub(crate) fn room_end(&self) -> usize {
        self.end
    }

    /// Makes room for one more row under the budget, as [`push`](Self::push) does before
    /// writing: afterwards `len < capacity`.
    ///
    /// # Panics
    /// As `push`.
    #[inline]
    #[track_caller]
    pub(crate) fn make_room_for_one(&mut self) {
        if let Err(refusal) = self.room_for_one() {
            refusal.panic("SoaVec::push")
        }
    }

    /// Appends a row whose room was made already.
    ///
    /// # Safety
    /// - `len < capacity` (as `len <` [`room_end`](Self::room_end) says, or
    ///   [`make_room_for_one`](Self::make_room_for_one) leaves it).
    #[inline(always)]
    pub(crate) unsafe fn push_raw_unchecked(&mut self, parts: <T::Columns as Columns>::Raw) {
        debug_assert!(self.len < self.capacity());
        // SAFETY: guaranteed by the caller: row `len` is within the capacity and uninitialised.
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
        super::assert_insert_index(index, self.len);
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
        // SAFETY: `index < len`, just asserted.
        unsafe { self.swap_remove_unchecked(index) }
    }

    /// [`swap_remove`](Self::swap_remove) without the bounds check, for containers that know
    /// the row is live.
    ///
    /// # Safety
    /// - `index < len`.
    #[inline]
    pub(crate) unsafe fn swap_remove_unchecked(&mut self, index: usize) -> T {
        debug_assert!(index < self.len);
        let cols = self.raw.cols;
        let last = self.len - 1;
        // SAFETY: row `index` is moved out, then the last row is copied over it, one column at a
        // time (a copy of one element per column, no `memmove` call; one column's values live at
        // once instead of the whole row's). For the last row itself (`index == last`) that
        // copies a row onto itself, which `Columns::copy` allows (it may overlap), and the row
        // is past the length afterwards either way. No user code runs until the length is final.
        let parts = unsafe {
            let parts = cols.read(index);
            Columns::copy(cols, last, cols, index, 1);
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
        self.as_soa_slice_mut().into_get_mut(index)
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

    /// The rows in `range` as a shared view (see [`SoaSlice::slice`]).
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Mob { x: f32, hp: u32 }
    ///
    /// let mut mobs: SoaVec<Mob> = (0..6).map(|i| Mob { x: i as f32, hp: 10 }).collect();
    /// assert_eq!(mobs.slice(2..4).slices().x, &[2.0, 3.0]);
    /// for hp in mobs.slice_mut(..2).slices_mut().hp {
    ///     *hp = 0;
    /// }
    /// assert_eq!(mobs.slices().hp, &[0, 0, 10, 10, 10, 10]);
    /// assert!(mobs.get_slice(5..7).is_none());
    /// ```
    ///
    /// # Panics
    /// If the range is reversed or reaches past `len`; see [`get_slice`](Self::get_slice).
    #[inline]
    #[track_caller]
    pub fn slice(&self, range: impl core::ops::RangeBounds<usize>) -> SoaSlice<'_, T> {
        self.as_soa_slice().slice(range)
    }

    /// The rows in `range` as a shared view, or `None` if it is reversed or reaches past `len`.
    #[inline]
    pub fn get_slice(&self, range: impl core::ops::RangeBounds<usize>) -> Option<SoaSlice<'_, T>> {
        self.as_soa_slice().get_slice(range)
    }

    /// The rows in `range` as an exclusive view (see [`SoaSliceMut::slice_mut`]).
    ///
    /// # Panics
    /// If the range is reversed or reaches past `len`; see [`get_slice_mut`](Self::get_slice_mut).
    #[inline]
    #[track_caller]
    pub fn slice_mut(&mut self, range: impl core::ops::RangeBounds<usize>) -> SoaSliceMut<'_, T> {
        self.as_soa_slice_mut().into_slice_mut(range)
    }

    /// The rows in `range` as an exclusive view, or `None` if it is reversed or reaches past
    /// `len`.
    #[inline]
    pub fn get_slice_mut(
        &mut self,
        range: impl core::ops::RangeBounds<usize>,
    ) -> Option<SoaSliceMut<'_, T>> {
        let (start, end) = crate::range::checked_range(range, self.len)?;
        Some(self.as_soa_slice_mut().into_slice_mut(start..end))
    }

    /// The rows before `mid` and the rows from `mid` on, as shared views.
    ///
    /// # Panics
    /// If `mid > len`; see [`SoaSlice::split_at_checked`].
    #[inline]
    #[track_caller]
    pub fn split_at(&self, mid: usize) -> (SoaSlice<'_, T>, SoaSlice<'_, T>) {
        self.as_soa_slice().split_at(mid)
    }

    /// The rows before `mid` and the rows from `mid` on, as two exclusive views (see
    /// [`SoaSliceMut::split_at_mut`]).
    ///
    /// # Panics
    /// If `mid > len`; see [`SoaSliceMut::split_at_mut_checked`].
    #[inline]
    #[track_caller]
    pub fn split_at_mut(&mut self, mid: usize) -> (SoaSliceMut<'_, T>, SoaSliceMut<'_, T>) {
        let len = self.len;
        match self.as_soa_slice_mut().into_split_at_mut(mid) {
            Some(halves) => halves,
            None => {
                panic!("split_at_mut({mid}) out of bounds for {len} rows: mid must be at most len")
            }
        }
    }

    /// The first row, or `None` if empty.
    #[inline]
    pub fn first(&self) -> Option<T::Ref<'_>> {
        self.as_soa_slice().first()
    }

    /// The last row, or `None` if empty.
    #[inline]
    pub fn last(&self) -> Option<T::Ref<'_>> {
        self.as_soa_slice().last()
    }

    /// The first row, exclusively, or `None` if empty.
    #[inline]
    pub fn first_mut(&mut self) -> Option<T::Mut<'_>> {
        self.get_mut(0)
    }

    /// The last row, exclusively, or `None` if empty.
    #[inline]
    pub fn last_mut(&mut self) -> Option<T::Mut<'_>> {
        self.get_mut(self.len.wrapping_sub(1))
    }

    /// References to row `index`'s fields, without a bounds check (see
    /// [`SoaSlice::get_unchecked`]).
    ///
    /// # Safety
    /// - `index < len`.
    #[inline]
    pub unsafe fn get_unchecked(&self, index: usize) -> T::Ref<'_> {
        // SAFETY: forwarded from the caller.
        unsafe { self.as_soa_slice().get_unchecked(index) }
    }

    /// Exclusive references to row `index`'s fields, without a bounds check (see
    /// [`SoaSliceMut::get_unchecked_mut`]).
    ///
    /// # Safety
    /// - `index < len`.
    #[inline]
    pub unsafe fn get_unchecked_mut(&mut self, index: usize) -> T::Mut<'_> {
        // SAFETY: forwarded from the caller.
        unsafe { self.as_soa_slice_mut().into_get_unchecked_mut(index) }
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

    /// Column `K` (the `K`th field in declaration order) as an exclusive slice of `len` values, or
    /// a nested field's view of slices: what `TrackedSoaVec::column_mut` hands out.
    #[inline]
    pub(crate) fn column_mut<const K: usize>(
        &mut self,
    ) -> <<T::Columns as super::ColumnAt<K>>::Column as Columns>::SlicesMut<'_>
    where
        T::Columns: super::ColumnAt<K>,
    {
        let column = super::ColumnAt::<K>::column(self.raw.cols);
        // SAFETY: rows `0..len` of every column are initialised and exclusive for the borrow of
        // `self`; one column of them is part of that.
        unsafe { column.slices_mut(0, self.len) }
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
    ///
    /// Both views share one lifetime, so generic code can compare them with their own
    /// `PartialOrd`:
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// fn sort_generic<T: Soa>(v: &mut SoaVec<T>)
    /// where
    ///     for<'a> T::Ref<'a>: PartialOrd,
    /// {
    ///     v.sort_by(|a, b| a.partial_cmp(&b).expect("no NaN"));
    /// }
    ///
    /// #[derive(Soa)]
    /// #[soa(derive(PartialEq, PartialOrd))]
    /// struct Hit { time: f32, id: u32 }
    ///
    /// let mut hits: SoaVec<Hit> = [Hit { time: 2.0, id: 0 }, Hit { time: 1.0, id: 1 }].into();
    /// sort_generic(&mut hits);
    /// assert_eq!(hits.slices().id, &[1, 0]);
    /// ```
    pub fn sort_by<F>(&mut self, compare: F)
    where
        F: for<'a> FnMut(T::Ref<'a>, T::Ref<'a>) -> core::cmp::Ordering,
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

    /// Sorts the rows stably by their views' `Ord` (`#[soa(derive(PartialEq, Eq, PartialOrd,
    /// Ord))]` gives the views the row's field-by-field order).
    pub fn sort(&mut self)
    where
        for<'a> T::Ref<'a>: Ord,
    {
        self.sort_by(|a, b| a.cmp(&b));
    }

    /// Sorts the rows unstably by their views' `Ord`, in place without allocating (see
    /// [`SoaSliceMut::sort_unstable_by`]).
    pub fn sort_unstable(&mut self)
    where
        for<'a> T::Ref<'a>: Ord,
    {
        self.as_soa_slice_mut().sort_unstable();
    }

    /// Sorts the rows unstably with a comparator over views, in place without allocating: an
    /// introsort of whole-row swaps, so a panicking comparator leaves a permutation of the rows.
    ///
    /// Every swap touches every column, so on wide rows it is slower than the stable
    /// [`sort_by`](Self::sort_by), which moves each column once but allocates a row order and a
    /// second block: on 1M rows of seven `f32` about 255 ms against 110-150 ms (`cargo bench -p
    /// arena-kit-benches --bench soa -- soa/sort_by_life`, a shared 2-core machine). Pick it when
    /// that memory matters.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Sprite { depth: f32, id: u32 }
    ///
    /// let mut sprites: SoaVec<Sprite> = (0..4u32)
    ///     .map(|id| Sprite { depth: (id % 3) as f32, id })
    ///     .collect();
    /// sprites.sort_unstable_by(|a, b| b.depth.total_cmp(a.depth).then(a.id.cmp(b.id)));
    /// assert_eq!(sprites.slices().id, &[2, 1, 0, 3]);
    /// ```
    pub fn sort_unstable_by<F>(&mut self, compare: F)
    where
        F: for<'a> FnMut(T::Ref<'a>, T::Ref<'a>) -> core::cmp::Ordering,
    {
        self.as_soa_slice_mut().sort_unstable_by(compare);
    }

    /// Sorts the rows unstably by a key (computed on every comparison), in place without
    /// allocating.
    pub fn sort_unstable_by_key<K: Ord, F>(&mut self, key: F)
    where
        F: for<'a> FnMut(T::Ref<'a>) -> K,
    {
        self.as_soa_slice_mut().sort_unstable_by_key(key);
    }

    /// The rows' stable sorted order under `compare`, as `u32` indices, moving no row (see
    /// [`SoaSlice::sort_indices_by`]).
    ///
    /// # Panics
    /// With more than 2^32 rows (see [`try_sort_indices_by`](Self::try_sort_indices_by)).
    #[track_caller]
    pub fn sort_indices_by<F>(&self, compare: F) -> alloc::vec::Vec<u32>
    where
        F: for<'a> FnMut(T::Ref<'a>, T::Ref<'a>) -> core::cmp::Ordering,
    {
        self.as_soa_slice().sort_indices_by(compare)
    }

    /// As [`sort_indices_by`](Self::sort_indices_by), or [`TooManyRows`](super::TooManyRows).
    pub fn try_sort_indices_by<F>(
        &self,
        compare: F,
    ) -> Result<alloc::vec::Vec<u32>, super::TooManyRows>
    where
        F: for<'a> FnMut(T::Ref<'a>, T::Ref<'a>) -> core::cmp::Ordering,
    {
        self.as_soa_slice().try_sort_indices_by(compare)
    }

    /// The rows' stable sorted order by a key computed once per row, as `u32` indices (see
    /// [`SoaSlice::sort_indices_by_key`]).
    ///
    /// # Panics
    /// With more than 2^32 rows.
    #[track_caller]
    pub fn sort_indices_by_key<K: Ord, F>(&self, key: F) -> alloc::vec::Vec<u32>
    where
        F: FnMut(T::Ref<'_>) -> K,
    {
        self.as_soa_slice().sort_indices_by_key(key)
    }

    /// As [`sort_indices_by_key`](Self::sort_indices_by_key), or
    /// [`TooManyRows`](super::TooManyRows).
    pub fn try_sort_indices_by_key<K: Ord, F>(
        &self,
        key: F,
    ) -> Result<alloc::vec::Vec<u32>, super::TooManyRows>
    where
        F: FnMut(T::Ref<'_>) -> K,
    {
        self.as_soa_slice().try_sort_indices_by_key(key)
    }

    /// Moves the rows into the order `indices` gives (row `k` becomes the old row
    /// `indices[k]`, what [`sort_indices_by`](Self::sort_indices_by) returns), gathering each
    /// column once into a new block, as the stable sorts do. Refused with a
    /// [`PermutationError`](super::PermutationError), changing nothing, unless `indices` names
    /// every row exactly once.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    /// use arena_kit::soa::PermutationError;
    ///
    /// #[derive(Soa)]
    /// struct Light { range: f32, id: u32 }
    ///
    /// let mut lights: SoaVec<Light> =
    ///     [4.0, 1.0, 2.0].into_iter().zip(0..).map(|(range, id)| Light { range, id }).collect();
    /// let nearest_first = lights.sort_indices_by(|a, b| a.range.total_cmp(b.range));
    /// assert_eq!(nearest_first, [1, 2, 0]);
    /// lights.apply_permutation(&nearest_first).unwrap();
    /// assert_eq!(lights.slices().id, &[1, 2, 0]);
    /// assert_eq!(
    ///     lights.apply_permutation(&[0, 1]),
    ///     Err(PermutationError::Length { rows: 3, indices: 2 })
    /// );
    /// ```
    pub fn apply_permutation(&mut self, indices: &[u32]) -> Result<(), super::PermutationError> {
        let order = super::indirect::check_permutation(self.len, indices)?;
        self.reorder(&order);
        Ok(())
    }

    /// Makes row `k` the old row `order[k]`, gathering each column into a new block.
    fn reorder(&mut self, order: &[usize]) {
        debug_assert_eq!(order.len(), self.len);
        if self.len < 2 {
            return;
        }
        // The new block replaces the vector's own: charged to its tag, as its growth is.
        let capacity = self.capacity();
        let fresh = self
            .page_tag
            .charged(|| RawSoa::<T>::try_with_capacity(capacity));
        let fresh = unwrap_alloc(fresh);
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
        // SAFETY: `retain_by` passes initialised rows, not otherwise borrowed during the call.
        self.retain_by(|cols, i| keep(T::view(unsafe { cols.get(i) })));
    }

    /// Keeps only the rows for which `keep` returns `true`, in order, letting `keep` change the
    /// rows it sees: update and cull in one pass.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Spark { life: f32, x: f32 }
    ///
    /// let mut sparks: SoaVec<Spark> =
    ///     [0.5, 2.0, 1.5].map(|life| Spark { life, x: 0.0 }).into();
    /// sparks.retain_mut(|s| {
    ///     *s.life -= 1.0;
    ///     *s.x += 1.0;
    ///     *s.life > 0.0
    /// });
    /// assert_eq!(sparks.slices().life, &[1.0, 0.5]);
    /// ```
    ///
    /// If `keep` or a drop panics, the rows not yet visited are kept (with what `keep` wrote to
    /// them) and nothing is dropped twice.
    pub fn retain_mut<F>(&mut self, mut keep: F)
    where
        F: FnMut(T::Mut<'_>) -> bool,
    {
        // SAFETY: `retain_by` passes initialised rows, not otherwise borrowed during the call.
        self.retain_by(|cols, i| keep(T::view_mut(unsafe { cols.get_mut(i) })));
    }

    /// Removes consecutive rows whose keys are equal, keeping the first of each run (like
    /// `Vec::dedup_by_key`). The key is computed once per row, in order.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Sample { t: u32, bucket: u8 }
    ///
    /// let mut s: SoaVec<Sample> = [(0, 1), (1, 1), (2, 2), (3, 1)]
    ///     .map(|(t, bucket)| Sample { t, bucket })
    ///     .into();
    /// s.dedup_by_key(|r| *r.bucket);
    /// assert_eq!(s.slices().t, &[0, 2, 3]);
    /// ```
    ///
    /// If `key`, a key's `PartialEq` or a drop panics, the rows not yet visited are kept and
    /// nothing is dropped twice.
    pub fn dedup_by_key<K, F>(&mut self, mut key: F)
    where
        K: PartialEq,
        F: FnMut(T::Mut<'_>) -> K,
    {
        let mut last: Option<K> = None;
        self.retain_by(|cols, i| {
            // SAFETY: `retain_by` passes initialised rows, not otherwise borrowed during the call.
            let k = key(T::view_mut(unsafe { cols.get_mut(i) }));
            if last.as_ref().is_some_and(|l| *l == k) {
                false
            } else {
                last = Some(k);
                true
            }
        });
    }

    /// The one compaction loop behind `retain`, `retain_mut` and `dedup_by_key`: `keep(cols, i)`
    /// decides row `i` (rows are visited in order, each once, at its original index, before any
    /// later row moves), and the kept rows close up.
    ///
    /// `keep` may borrow row `i` of `cols` for the duration of the call only.
    fn retain_by(&mut self, mut keep: impl FnMut(T::Columns, usize) -> bool) {
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
            let kept = keep(cols, i);
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

    /// Removes the rows in `range` and yields them as values, front to back or back to front
    /// (like `Vec::drain`). The rows after the range close up when the `Drain` is dropped, even
    /// if not every row was taken.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa, Debug, PartialEq)]
    /// struct Job { id: u32, cost: f32 }
    ///
    /// let mut jobs: SoaVec<Job> = (0..5).map(|id| Job { id, cost: 1.0 }).collect();
    /// let taken: Vec<Job> = jobs.drain(1..3).collect();
    /// assert_eq!(taken, [Job { id: 1, cost: 1.0 }, Job { id: 2, cost: 1.0 }]);
    /// assert_eq!(jobs.slices().id, &[0, 3, 4]);
    /// assert_eq!(jobs.drain(..).next_back(), Some(Job { id: 4, cost: 1.0 }));
    /// assert!(jobs.is_empty()); // the rows not taken were dropped
    /// ```
    ///
    /// If the `Drain` is leaked (`mem::forget`), the vector keeps the rows before the range
    /// and loses (leaks) the rest, as `Vec` does; nothing is dropped twice.
    ///
    /// # Panics
    /// If the range is reversed or reaches past `len`.
    #[track_caller]
    pub fn drain(&mut self, range: impl core::ops::RangeBounds<usize>) -> Drain<'_, T> {
        let (start, end) = crate::range::range_or_panic(range, self.len, "rows");
        let tail_len = self.len - end;
        // Leak amplification: until the `Drain` is dropped, the vector owns only the rows
        // before the range.
        self.len = start;
        Drain {
            vec: self,
            rows: Remaining {
                front: start,
                back: end,
            },
            tail_start: end,
            tail_len,
        }
    }

    /// Resizes to `new_len` rows: drops the rows past it, or appends rows made by `f`.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Slot { id: u32 }
    ///
    /// let mut next = 0;
    /// let mut slots: SoaVec<Slot> = SoaVec::new();
    /// slots.resize_with(3, || { next += 1; Slot { id: next } });
    /// assert_eq!(slots.slices().id, &[1, 2, 3]);
    /// slots.resize_with(1, || unreachable!());
    /// assert_eq!(slots.len(), 1);
    /// ```
    ///
    /// If `f` panics, the rows made so far stay.
    ///
    /// # Panics
    /// If the allocation fails, or over a `Fail` or `Panic` budget (as [`push`](Self::push)).
    #[track_caller]
    pub fn resize_with<F: FnMut() -> T>(&mut self, new_len: usize, mut f: F) {
        if new_len <= self.len {
            self.truncate(new_len);
            return;
        }
        self.reserve(new_len - self.len);
        while self.len < new_len {
            self.push(f());
        }
    }

    /// Moves every row of `other` to the end of this vector, leaving `other` empty (its
    /// capacity stays). Without a budget the columns are copied in bulk.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct P { x: f32 }
    ///
    /// let mut a: SoaVec<P> = [P { x: 1.0 }].into();
    /// let mut b: SoaVec<P> = [P { x: 2.0 }, P { x: 3.0 }].into();
    /// a.append(&mut b);
    /// assert_eq!(a.slices().x, &[1.0, 2.0, 3.0]);
    /// assert!(b.is_empty());
    /// ```
    ///
    /// # Panics
    /// If the allocation fails, or over a `Fail` or `Panic` budget; the rows past the budget
    /// are then dropped with the unwinding.
    #[track_caller]
    pub fn append(&mut self, other: &mut SoaVec<T>) {
        if self.budget.is_some() {
            // Row by row, so the budget sees each one.
            self.extend(other.drain(..));
            return;
        }
        let n = other.len;
        self.reserve(n);
        // SAFETY: `reserve` made room for `n` rows past `len`; the rows `0..n` of `other` are
        // initialised, in another block, and given up by `other` (its length becomes 0).
        unsafe { T::Columns::copy(other.raw.cols, 0, self.raw.cols, self.len, n) };
        other.len = 0;
        self.len += n;
    }

    /// Splits off the rows from `at` on into a new vector (with capacity for just them; no
    /// budget), keeping `0..at` here.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct P { x: f32 }
    ///
    /// let mut a: SoaVec<P> = [1.0, 2.0, 3.0].map(|x| P { x }).into();
    /// let b = a.split_off(1);
    /// assert_eq!((a.slices().x, b.slices().x), (&[1.0][..], &[2.0, 3.0][..]));
    /// ```
    ///
    /// # Panics
    /// If `at > len`, or the allocation fails.
    #[track_caller]
    pub fn split_off(&mut self, at: usize) -> SoaVec<T> {
        assert!(
            at <= self.len,
            "split_off index {at} out of bounds (len {})",
            self.len
        );
        let n = self.len - at;
        let mut other = SoaVec::with_capacity(n);
        // SAFETY: `other` has room for `n` rows; rows `at..len` are initialised, in another
        // block, and given up by `self` (its length becomes `at`).
        unsafe { T::Columns::copy(self.raw.cols, at, other.raw.cols, 0, n) };
        self.len = at;
        other.len = n;
        other
    }

    /// Appends a clone of every row of `rows` (from this or any other SoA container), row by
    /// row, each field cloned column by column.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa, Clone)]
    /// #[soa(plain)] // any name makes a valid `Tag`: its rows may be cloned field by field
    /// struct Tag { name: String }
    ///
    /// let src: SoaVec<Tag> = ["a", "b", "c"].map(|n| Tag { name: n.into() }).into();
    /// let mut dst: SoaVec<Tag> = SoaVec::new();
    /// dst.extend_from_slice(src.slice(1..));
    /// assert_eq!(dst.slices().name, &["b", "c"]);
    /// ```
    ///
    /// If a `Clone` panics, the rows cloned so far stay and the panicking row's cloned fields are
    /// dropped.
    ///
    /// Only for rows that are `Clone` and [`PlainRow`](super::PlainRow): the fields are cloned
    /// one by one, so the row's own `clone` does not run, and a row type that is not `Clone` (a
    /// token that must stay unique) or not plain is not duplicated through its container either.
    ///
    /// # Panics
    /// If the allocation fails, or over a `Fail` or `Panic` budget (as [`push`](Self::push)).
    #[track_caller]
    pub fn extend_from_slice(&mut self, rows: SoaSlice<'_, T>)
    where
        T: Clone + super::PlainRow,
        T::Columns: CloneColumns,
    {
        let _ = self.try_reserve(rows.len());
        let cols = rows.columns();
        for i in 0..rows.len() {
            // SAFETY: `i < rows.len()`, an initialised row of the borrowed slice.
            let row = unsafe { cols.clone_row(i) };
            self.push_raw(row);
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

/// A [`SoaVec`] or [`SoaTiles`](super::SoaTiles) refused a row and hands it back: returned by
/// [`SoaVec::try_push`], [`SoaVec::try_insert`] and their `SoaTiles` twins. Nothing was changed.
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
    /// `value`, refused because the block could not grow.
    pub(super) fn alloc(value: T, error: SoaAllocError) -> Self {
        TryPushError {
            value,
            refusal: PushRefusal::Alloc(error),
        }
    }

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

    /// The block is one allocation: `Alloc` when it is allocated, `Free` + `Alloc` when it
    /// grows, shrinks or is rebuilt (sorting), `Free` when the vector is dropped. The one path
    /// of every label change, the drop's and `into_iter`'s included.
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        if self.profiler.0 != label {
            // Off the old label (if any), which then ends, then on the new one: the block is
            // reported again.
            self.profile_block_off();
            crate::tags::profiler::pool_end(core::mem::replace(&mut self.profiler.0, label));
            self.profile_block();
        }
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.budget.as_ref().map_or(0, BudgetGate::stamp)
    }

    /// The column block's growth from now on (a `realloc` keeps the block's first tag under the
    /// [`TaggingAllocator`](crate::tags::TaggingAllocator), so tag a vector before its first
    /// row for all of it to count under this tag).
    fn charge_pages_to(&mut self, tag: PageTag) {
        self.page_tag = tag;
    }
}

impl<T: Soa> Default for SoaVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Soa> Drop for SoaVec<T> {
    fn drop(&mut self) {
        // The block is freed to the profiler, and the label ends.
        #[cfg(feature = "profiler")]
        crate::tags::Budgeted::set_profiler_label(self, None);
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

impl<T: Soa, const N: usize> From<[T; N]> for SoaVec<T> {
    fn from(values: [T; N]) -> Self {
        values.into_iter().collect()
    }
}

impl<T: Soa> From<SoaVec<T>> for Vec<T> {
    fn from(values: SoaVec<T>) -> Self {
        values.into_vec()
    }
}

/// For rows that are `Clone` and [`PlainRow`](super::PlainRow): the fields are cloned column by
/// column (the row's own `clone` does not run), and a row type that is not `Clone`, or whose
/// clone is more than its fields' clones, must not be duplicated through its container.
impl<T: Soa + Clone + super::PlainRow> Clone for SoaVec<T>
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

impl<T: Soa> Eq for SoaVec<T> where T::Columns: TotalEqColumns {}

impl<T: Soa> PartialOrd for SoaVec<T>
where
    T::Columns: PartialOrdColumns,
{
    /// Lexicographic, like `Vec<T>`: row by row, each row field by field in declaration order
    /// (what `#[derive(PartialOrd)]` on `T` compares).
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        self.as_soa_slice().partial_cmp(&other.as_soa_slice())
    }
}

impl<T: Soa> Ord for SoaVec<T>
where
    T::Columns: OrdColumns,
{
    /// Lexicographic, like `Vec<T>` (see [`PartialOrd`](#impl-PartialOrd-for-SoaVec<T>)).
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_soa_slice().cmp(&other.as_soa_slice())
    }
}

impl<T: Soa> core::hash::Hash for SoaVec<T>
where
    T::Columns: HashColumns,
{
    /// The length, then every column: equal vectors hash equally.
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_soa_slice().hash(state);
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
        // The block leaves the vector (the iterator frees it): it is gone to the profiler, and
        // so is the vector's label.
        #[cfg(feature = "profiler")]
        crate::tags::Budgeted::set_profiler_label(&mut *this, None);
        let len = this.len;
        // SAFETY: `this` is never dropped, so its block moves into the iterator exactly once.
        let raw = unsafe { core::ptr::read(&this.raw) };
        this.len = 0;
        IntoIter {
            raw,
            rows: Remaining {
                front: 0,
                back: len,
            },
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
    rows: Remaining,
}

/// The rows `front..back` of a block not yet moved out: the one cursor of [`IntoIter`] and
/// [`Drain`]. Each `take_*` hands out an index once.
#[derive(Clone, Copy)]
struct Remaining {
    front: usize,
    back: usize,
}

impl Remaining {
    #[inline(always)]
    fn take_front(&mut self) -> Option<usize> {
        (self.front < self.back).then(|| {
            self.front += 1;
            self.front - 1
        })
    }

    #[inline(always)]
    fn take_back(&mut self) -> Option<usize> {
        (self.front < self.back).then(|| {
            self.back -= 1;
            self.back
        })
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.back - self.front
    }

    /// Takes every remaining index at once: `(first, count)`.
    #[inline(always)]
    fn take_all(&mut self) -> (usize, usize) {
        let (first, count) = (self.front, self.len());
        self.front = self.back;
        (first, count)
    }
}

/// Moves row `i` out of `cols` and rebuilds it.
///
/// # Safety
/// - row `i` is initialised and is treated as moved-out afterwards (a [`Remaining`] handed it out).
#[inline(always)]
unsafe fn take_row<T: Soa>(cols: T::Columns, i: usize) -> T {
    // SAFETY: forwarded from the caller.
    row_from_raw(unsafe { cols.read(i) })
}

impl<T: Soa> Iterator for IntoIter<T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        let i = self.rows.take_front()?;
        // SAFETY: row `i` is initialised and handed out once.
        Some(unsafe { take_row(self.raw.cols, i) })
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.rows.len(), Some(self.rows.len()))
    }
}

impl<T: Soa> DoubleEndedIterator for IntoIter<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        let i = self.rows.take_back()?;
        // SAFETY: row `i` is initialised and handed out once.
        Some(unsafe { take_row(self.raw.cols, i) })
    }
}

impl<T: Soa> ExactSizeIterator for IntoIter<T> {}
impl<T: Soa> FusedIterator for IntoIter<T> {}

impl<T: Soa> Drop for IntoIter<T> {
    fn drop(&mut self) {
        let (first, count) = self.rows.take_all();
        // SAFETY: those rows are initialised and not yet taken; `raw` frees the block.
        unsafe { self.raw.cols.drop_range(first, count) };
    }
}

/// The rows of a range of a [`SoaVec`], moved out as values: from [`SoaVec::drain`]. Dropping
/// it drops the rows not taken and closes the gap.
///
/// # Variance
///
/// Covariant in `'v`; invariant in `T` (it borrows the `SoaVec<T>` exclusively).
pub struct Drain<'v, T: Soa> {
    vec: &'v mut SoaVec<T>,
    /// The rows of the range still to be yielded.
    rows: Remaining,
    /// The rows after the range, which move down to the vector's length on drop.
    tail_start: usize,
    tail_len: usize,
}

impl<T: Soa> Iterator for Drain<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        let i = self.rows.take_front()?;
        // SAFETY: row `i` is initialised and handed out once.
        Some(unsafe { take_row(self.vec.raw.cols, i) })
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.rows.len(), Some(self.rows.len()))
    }
}

impl<T: Soa> DoubleEndedIterator for Drain<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        let i = self.rows.take_back()?;
        // SAFETY: row `i` is initialised and handed out once.
        Some(unsafe { take_row(self.vec.raw.cols, i) })
    }
}

impl<T: Soa> ExactSizeIterator for Drain<'_, T> {}
impl<T: Soa> FusedIterator for Drain<'_, T> {}

impl<T: Soa> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        /// Moves the tail down to the vector's length, also if a drop below panics.
        struct CloseGap<'d, 'v, T: Soa>(&'d mut Drain<'v, T>);
        impl<T: Soa> Drop for CloseGap<'_, '_, T> {
            fn drop(&mut self) {
                let d = &mut *self.0;
                let cols = d.vec.raw.cols;
                let start = d.vec.len;
                // SAFETY: rows `tail_start..tail_start + tail_len` are initialised and owned by
                // the drain; rows `start..tail_start` are moved out or dropped.
                unsafe { T::Columns::copy(cols, d.tail_start, cols, start, d.tail_len) };
                d.vec.len = start + d.tail_len;
            }
        }
        let (first, count) = self.rows.take_all();
        let guard = CloseGap(self);
        // SAFETY: those rows are initialised and not yet taken (`take_all` marked them gone). A
        // panicking drop still drops the others, then the guard closes the gap.
        unsafe { guard.0.vec.raw.cols.drop_range(first, count) };
        drop(guard);
    }
}

impl<T: Soa> fmt::Debug for Drain<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drain")
            .field("remaining", &self.rows.len())
            .finish_non_exhaustive()
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
