//! [`SoaPool<T>`]: generational handles over dense SoA columns.
//!
//! Live values are packed at the front of the columns, so [`SoaPool::slices_mut`] walks
//! contiguous columns of live values only (what bevy's tables do for entities). Removing a value
//! moves the last one into its place and updates the handle map; handles stay valid, their rows
//! do not (a row index is not a stable name, a [`Handle`] is).
//!
//! The handle map is [`Pool`](crate::pool::Pool)'s slot map with the row index as payload: its
//! insert, remove and lookup do every generation, tag and free-list step; this file keeps the
//! columns and the row → slot back links, nothing else.

use alloc::vec::Vec;
use core::fmt;
use core::iter::FusedIterator;

use super::{Iter, Soa, SoaVec};
use crate::or_panic::OrPanic;
use crate::pool::slot_map::{Claim, Refusal, SlotMap};
use crate::pool::{Handle, PoolCapacityError, PoolFull, PoolStats};
use crate::tags::{BudgetGate, Budgeted, PageTag};

/// A pool of `T` stored as dense SoA columns, addressed by [`Handle<T>`]: fixed capacity
/// ([`with_capacity`](Self::with_capacity)) or growing by chunks of handle slots
/// ([`growable`](Self::growable)).
///
/// Handles work as in [`Pool`](crate::pool::Pool), on the same slot map: stale handles miss, a
/// slot retires when its generations run out, and in debug builds a handle from another pool
/// panics, naming both, in every lookup.
///
/// ```
/// use arena_kit::{Soa, SoaPool};
///
/// #[derive(Soa)]
/// struct Enemy { x: f32, health: f32 }
///
/// let mut enemies = SoaPool::with_capacity(8);
/// let orc = enemies.insert(Enemy { x: 0.0, health: 100.0 });
/// let imp = enemies.insert(Enemy { x: 1.0, health: 50.0 });
/// enemies.remove(orc);
/// for h in enemies.slices_mut().health {
///     *h -= 10.0; // only live enemies, in one contiguous column
/// }
/// assert_eq!(*enemies.get(imp).unwrap().health, 40.0);
/// assert!(enemies.get(orc).is_none());
/// ```
///
/// # Variance
///
/// Invariant in `T`, because it stores `T::Columns` (an associated type). That is also what
/// soundness asks of a container whose rows can be written through `&mut self`.
pub struct SoaPool<T: Soa> {
    /// The columns and each row's slot.
    rows: Rows<T>,
    /// The handle map: each live slot's payload is its value's row, below `rows.len()`.
    slots: SlotMap<u32>,
    drop_report: Option<fn(&PoolStats)>,
}

impl<T: Soa> SoaPool<T> {
    /// A pool for up to `capacity` live values; its columns are allocated at once.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_CAPACITY`](crate::pool::MAX_CAPACITY) or does not fit in
    /// memory; see [`try_with_capacity`](Self::try_with_capacity).
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::try_with_capacity(capacity).or_panic("SoaPool::with_capacity: ")
    }

    /// A pool for up to `capacity` live values, or an error if too many or out of memory.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, PoolCapacityError> {
        Self::build(capacity, None, None)
    }

    /// A pool of `capacity` slots in which each slot can hold at most `budget` values over its
    /// life before it retires, as [`Pool::with_capacity_and_generation_budget`](
    /// crate::pool::Pool::with_capacity_and_generation_budget).
    ///
    /// # Panics
    /// As [`with_capacity`](Self::with_capacity).
    #[track_caller]
    pub fn with_capacity_and_generation_budget(capacity: usize, budget: u32) -> Self {
        Self::build(capacity, None, Some(budget))
            .or_panic("SoaPool::with_capacity_and_generation_budget: ")
    }

    /// A pool whose handle map starts with one chunk of `chunk_capacity` slots (rounded up to a
    /// power of two) and adds another whenever it is full; the columns grow like a
    /// [`SoaVec`]'s.
    ///
    /// # Panics
    /// If the chunk size exceeds 2^31 slots or the memory cannot be allocated; see
    /// [`try_growable`](Self::try_growable).
    #[track_caller]
    pub fn growable(chunk_capacity: usize) -> Self {
        Self::try_growable(chunk_capacity).or_panic("SoaPool::growable: ")
    }

    /// As [`growable`](Self::growable), returning an error instead of panicking.
    pub fn try_growable(chunk_capacity: usize) -> Result<Self, PoolCapacityError> {
        let shift = crate::pool::chunk_shift(chunk_capacity)?;
        Self::build(1 << shift, Some(shift), None)
    }

    fn build(
        capacity: usize,
        shift: Option<u32>,
        budget: Option<u32>,
    ) -> Result<Self, PoolCapacityError> {
        let slots =
            SlotMap::build::<Handle<T>>(capacity, shift, budget, size_of::<T>(), "SoaPool")?;
        let oom = PoolCapacityError::OutOfMemory {
            requested: capacity,
        };
        let rows = Rows::with_capacity(capacity).map_err(|()| oom)?;
        Ok(SoaPool {
            rows,
            slots,
            drop_report: None,
        })
    }

    /// Calls `report` with the pool's final [`PoolStats`] when it is dropped, as
    /// [`Pool::set_drop_report`](crate::pool::Pool::set_drop_report) does.
    pub fn set_drop_report(&mut self, report: fn(&PoolStats)) {
        self.drop_report = Some(report);
    }

    /// The number of live values.
    #[inline]
    pub fn len(&self) -> usize {
        self.rows.values.len()
    }

    /// Whether no value is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rows.values.is_empty()
    }

    /// How many values can be live at once (for a growable pool, before its next chunk).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.capacity() as usize
    }

    /// Whether the pool grows by chunks when full.
    pub fn is_growable(&self) -> bool {
        self.slots.chunk_len().is_some()
    }

    /// The pool's counters, as [`Pool::stats`](crate::pool::Pool::stats) (`blocks` counts the
    /// handle map's chunks).
    pub fn stats(&self) -> PoolStats {
        self.slots.stats()
    }

    /// Fills `claim` with the row `value`, or hands the value back if the columns cannot grow
    /// (nothing changed then but the capacity).
    #[inline(always)]
    #[track_caller]
    fn fill(rows: &mut Rows<T>, claim: Claim<'_, u32>, value: T) -> Result<Handle<T>, T> {
        let row = rows.len();
        rows.try_push(value, claim.index())?;
        Ok(claim.commit(row as u32))
    }

    /// Inserts `value` and returns its handle, or gives it back inside [`PoolFull`] if the pool
    /// is full (and cannot grow) or a [`Budget`](crate::tags::Budget) with
    /// [`Policy::Fail`](crate::tags::Policy::Fail) refuses it ([`PoolFull::budget_exceeded`]). O(1);
    /// nothing changes on failure.
    ///
    /// # Panics
    /// Over a budget with [`Policy::Panic`](crate::tags::Policy::Panic).
    #[inline]
    #[track_caller]
    pub fn try_insert(&mut self, value: T) -> Result<Handle<T>, PoolFull<T>> {
        let capacity = self.capacity();
        let claim = match self.slots.claim() {
            Ok(claim) => claim,
            Err(refusal) => return Err(PoolFull::new(value, capacity, refusal)),
        };
        Self::fill(&mut self.rows, claim, value)
            .map_err(|value| PoolFull::new(value, capacity, Refusal::Full))
    }

    /// Inserts `value` and returns its handle.
    ///
    /// # Panics
    /// If the pool is full or over a `Fail` or `Panic` budget; see
    /// [`try_insert`](Self::try_insert).
    #[inline]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> Handle<T> {
        if !self.rows.has_room() {
            return self.insert_growing(value);
        }
        // User code (`into_columns`) runs before anything changes.
        let parts = super::row_to_raw(value);
        // If this panics (full, or over a budget), `parts` is dropped and nothing changed.
        let handle: Handle<T> = self.slots.insert_or_panic(self.rows.len() as u32);
        // SAFETY: `has_room` said so above, and nothing since has added a row (`row_to_raw` and
        // the slot map do not touch the rows).
        unsafe { self.rows.push_unchecked(parts, handle.index()) };
        handle
    }

    /// [`insert`](Self::insert) when the rows must grow first (growable pools; a fixed pool only
    /// when full). The slot is claimed before anything grows, so a pool that cannot take the
    /// value (full, or over a `Fail` or `Panic` budget) panics having grown nothing, and a
    /// `Warn` budget warns once.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn insert_growing(&mut self, value: T) -> Handle<T> {
        // User code (`into_columns`) runs before anything changes.
        let parts = super::row_to_raw(value);
        let claim = self.slots.claim_or_panic();
        // If this panics (out of memory), the claim is dropped: nothing changed but the slot
        // map's and the rows' capacities.
        if self.rows.make_room().is_err() {
            out_of_memory()
        }
        // The columns' own budget, if one was ever set on them (a pool budgets its slots).
        self.rows.values.make_room_for_one();
        let handle: Handle<T> = claim.commit(self.rows.len() as u32);
        // SAFETY: `make_room` made room for one more row and its link, `make_room_for_one`
        // checked the columns' budget without adding a row, and committing the claim touches
        // neither.
        unsafe { self.rows.push_unchecked(parts, handle.index()) };
        handle
    }

    /// Inserts the value `f` builds from its own handle, and returns the handle. If `f` panics
    /// (or the columns cannot grow to take the value), the pool is unchanged but for the
    /// generation of the handle `f` was given, which is spent: that handle never names a value,
    /// as in [`Pool::insert_with`](crate::pool::Pool::insert_with).
    ///
    /// # Panics
    /// If the pool is full or over a `Fail` or `Panic` budget (before calling `f`).
    #[track_caller]
    pub fn insert_with(&mut self, f: impl FnOnce(Handle<T>) -> T) -> Handle<T> {
        let mut claim = self.slots.claim_or_panic();
        let value = f(claim.issue_handle());
        match Self::fill(&mut self.rows, claim, value) {
            Ok(handle) => handle,
            Err(_) => out_of_memory(),
        }
    }

    /// As [`insert_with`](Self::insert_with), but returns `None` without calling `f` if the pool
    /// is full or a `Fail` budget refuses the value, and `None` after calling it if the columns
    /// cannot grow to take the value (which is dropped; its handle is spent, as when `f`
    /// panics).
    ///
    /// # Panics
    /// Over a budget with [`Policy::Panic`](crate::tags::Policy::Panic).
    #[track_caller]
    pub fn try_insert_with(&mut self, f: impl FnOnce(Handle<T>) -> T) -> Option<Handle<T>> {
        let mut claim = self.slots.claim().ok()?;
        let value = f(claim.issue_handle());
        Self::fill(&mut self.rows, claim, value).ok()
    }

    /// The row of a live handle. On a miss, a handle carrying another pool's tag panics (debug
    /// builds), as in [`Pool`](crate::pool::Pool).
    #[inline]
    #[track_caller]
    fn row(&self, handle: Handle<T>) -> Option<usize> {
        self.slots.get(handle).map(|&row| row as usize)
    }

    /// The row of a live handle, for change tracking (`soa::TrackedSoaPool` marks its block).
    #[inline]
    #[track_caller]
    pub(crate) fn row_index(&self, handle: Handle<T>) -> Option<usize> {
        self.row(handle)
    }

    /// Column `K` of the live values (see `SoaVec::column_mut`).
    #[inline]
    pub(crate) fn column_mut<const K: usize>(
        &mut self,
    ) -> <<T::Columns as super::ColumnAt<K>>::Column as super::Columns>::SlicesMut<'_>
    where
        T::Columns: super::ColumnAt<K>,
    {
        self.rows.values.column_mut::<K>()
    }

    /// Whether `handle`'s value is still live.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn contains(&self, handle: Handle<T>) -> bool {
        self.row(handle).is_some()
    }

    /// References to the fields of `handle`'s value, or `None` if it was removed.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn get(&self, handle: Handle<T>) -> Option<T::Ref<'_>> {
        self.rows.values.get(self.row(handle)?)
    }

    /// Exclusive references to the fields of `handle`'s value, or `None` if it was removed.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<T::Mut<'_>> {
        let row = self.row(handle)?;
        self.rows.values.get_mut(row)
    }

    /// References to the fields of `handle`'s value.
    ///
    /// # Panics
    /// If `handle` is stale (and, in debug builds, if it was made by a different pool). The
    /// pool's `Index`: a row is a view of references into separate columns, not a `&T`, so
    /// `pool[handle]` cannot return it.
    #[track_caller]
    pub fn row_of(&self, handle: Handle<T>) -> T::Ref<'_> {
        match self.get(handle) {
            Some(row) => row,
            None => stale(handle),
        }
    }

    /// Exclusive references to the fields of `handle`'s value: the pool's `IndexMut`.
    ///
    /// # Panics
    /// As [`row_of`](Self::row_of).
    #[track_caller]
    pub fn row_of_mut(&mut self, handle: Handle<T>) -> T::Mut<'_> {
        match self.row(handle) {
            Some(row) => self
                .rows
                .values
                .get_mut(row)
                .expect("a live slot's row is in range"),
            None => stale(handle),
        }
    }

    /// Exclusive references to the fields of `N` distinct handles' values at once, or `None` if
    /// any handle is stale or two are equal.
    ///
    /// # Panics
    /// In debug builds, if a handle was made by a different pool.
    #[track_caller]
    pub fn get_disjoint_mut<const N: usize>(
        &mut self,
        handles: [Handle<T>; N],
    ) -> Option<[T::Mut<'_>; N]> {
        let rows = self
            .slots
            .get_disjoint_mut(handles)?
            .map(|&mut row| row as usize);
        self.rows.values.get_disjoint_mut(rows)
    }

    /// Removes `handle`'s value and returns it; `None` if it was already removed. The last value
    /// moves into the freed row. O(1).
    ///
    /// The handle map and the length are final before the value is rebuilt (user code: its
    /// `from_columns`), so a panic there still leaves a consistent pool.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        let row = self.slots.remove(handle)? as usize;
        // SAFETY: `row` is the payload of the live slot just freed.
        Some(unsafe { self.remove_row(row) })
    }

    /// Takes the value out of `row`, whose slot was just freed, moving the last row into it.
    ///
    /// # Safety
    /// `row` was the payload of a slot that was live until just now (the caller freed it): by
    /// the type's invariant it is below the row count, and every other row's back link names a
    /// live slot. The handle map and the rows agree between any two public calls: profiler
    /// events are raised from inside the handle map, after a slot changed and before its row
    /// moves, but a sink's panic never unwinds through the pool (with `std` it is caught where
    /// the event is raised; without, the program aborts). Debug builds check both anyway.
    #[inline]
    unsafe fn remove_row(&mut self, row: usize) -> T {
        let slots = &mut self.slots;
        // The moved row's slot is fixed up before the value is rebuilt (user code that may
        // panic).
        let fix = |moved: u32| {
            debug_assert!(
                slots.handle_at::<Handle<T>>(moved).is_some(),
                "a row's owner is live"
            );
            // SAFETY: `moved` is the back link of the last row, not `row` (`swap_remove` calls
            // this only then): a live slot, by the type's invariant (guaranteed by the caller).
            unsafe { *slots.occupied_payload_mut(moved) = row as u32 };
        };
        debug_assert!(row < self.rows.len(), "a live slot's row is in range");
        // SAFETY: `row` is below the row count (guaranteed by the caller).
        unsafe { self.rows.swap_remove(row, fix) }
    }

    /// Keeps only the values for which `keep` returns `true`; the others are removed (and
    /// dropped) as by [`remove`](Self::remove). Visits every value once, in no particular order
    /// (removing one moves the last row into its place).
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, T::Mut<'_>) -> bool) {
        let mut row = 0;
        while row < self.rows.len() {
            let index = self.rows.owner(row);
            let handle = self.slots.handle_at(index).expect("a row's owner is live");
            let row_mut = self.rows.values.get_mut(row).expect("row below len");
            if keep(handle, row_mut) {
                row += 1;
            } else {
                self.slots.remove_at(index);
                // SAFETY: slot `index` owned `row` (its back link) and was live until just now.
                drop(unsafe { self.remove_row(row) });
            }
        }
    }

    /// Removes every value, yielding each with its handle (last row first). Values not consumed
    /// are removed when the iterator is dropped. The handles are stale afterwards.
    pub fn drain(&mut self) -> SoaPoolDrain<'_, T> {
        SoaPoolDrain { pool: self }
    }

    /// Removes (and drops) every value. Their handles become stale; slots keep their
    /// generations, so old handles stay rejected.
    pub fn clear(&mut self) {
        self.slots.clear();
        // The links past the row count are stale, and never read.
        self.rows.values.clear();
    }

    /// Removes the value in the last row with its handle.
    fn pop(&mut self) -> Option<(Handle<T>, T)> {
        let index = self.rows.owner(self.rows.len().checked_sub(1)?);
        let handle = self.slots.handle_at(index).expect("a row's owner is live");
        self.slots.remove_at(index);
        let value = self.rows.values.pop().expect("one row per owner");
        Some((handle, value))
    }

    /// Every live value with its handle, in row order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Handle<T>, T::Ref<'_>)> + '_ {
        let slots = &self.slots;
        self.rows
            .owners()
            .iter()
            .zip(self.rows.values.iter())
            .map(move |(&index, row)| {
                let handle = slots.handle_at(index).expect("a row's owner is live");
                (handle, row)
            })
    }

    /// Every live value mutably with its handle, in row order.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (Handle<T>, T::Mut<'_>)> + '_ {
        let slots = &self.slots;
        let (owners, values) = self.rows.owners_and_values_mut();
        owners
            .iter()
            .zip(values.iter_mut())
            .map(move |(&index, row)| {
                let handle = slots.handle_at(index).expect("a row's owner is live");
                (handle, row)
            })
    }

    /// The live values as [`Soa::Mut`] views, in row order, without handles.
    pub fn values_mut(&mut self) -> super::IterMut<'_, T> {
        self.rows.values.iter_mut()
    }

    /// The live values as [`Soa::Ref`] views, in row order, without handles.
    pub fn values(&self) -> Iter<'_, T> {
        self.rows.values.iter()
    }

    /// Every column of the live values as a shared slice (contiguous, no holes).
    #[inline]
    pub fn slices(&self) -> T::Slices<'_> {
        self.rows.values.slices()
    }

    /// Every column of the live values as an exclusive slice (contiguous, no holes).
    #[inline]
    pub fn slices_mut(&mut self) -> T::SlicesMut<'_> {
        self.rows.values.slices_mut()
    }
}

/// The columns and each row's back link: the slot that owns it.
///
/// `owners` has an entry for every row the pool may fill without growing: its length is at
/// least the row count, its entries below the row count are the live rows' slots, and the rest
/// are stale (left by removed rows, or 0). It never shrinks, so the back links keep no length
/// of their own: a push writes one entry and a remove moves one, against the columns' length.
///
/// `room` is the row count up to which a push needs no check: the rows the columns take without
/// growing or asking a budget, capped at `owners.len()`. [`refresh_room`](Rows::refresh_room)
/// is its only writer, called after anything grows; a panic before it leaves `room` low (a push
/// then takes the slow path), never high.
struct Rows<T: Soa> {
    values: SoaVec<T>,
    owners: Vec<u32>,
    room: usize,
}

impl<T: Soa> Rows<T> {
    /// Rows for `capacity` values, allocated at once; `Err` if out of memory.
    fn with_capacity(capacity: usize) -> Result<Self, ()> {
        let values = SoaVec::try_with_capacity(capacity).map_err(drop)?;
        Self::from_parts(values, Vec::new(), capacity)
    }

    /// The rows of `values` and their links `owners`, with links for at least `links` rows (and
    /// for every row of the columns' capacity); `Err` if out of memory.
    fn from_parts(values: SoaVec<T>, owners: Vec<u32>, links: usize) -> Result<Self, ()> {
        debug_assert!(owners.len() >= values.len());
        let mut rows = Rows {
            values,
            owners,
            room: 0,
        };
        rows.grow_links(links.max(rows.links_wanted()))?;
        rows.refresh_room();
        Ok(rows)
    }

    /// The number of rows.
    #[inline(always)]
    fn len(&self) -> usize {
        self.values.len()
    }

    /// The live rows' slots, in row order.
    fn owners(&self) -> &[u32] {
        &self.owners[..self.values.len()]
    }

    /// The live rows' slots, and the columns mutably (see [`owners`](Self::owners)).
    fn owners_and_values_mut(&mut self) -> (&[u32], &mut SoaVec<T>) {
        (&self.owners[..self.values.len()], &mut self.values)
    }

    /// The slot that owns `row`.
    ///
    /// # Panics
    /// If `row` is not below the row count.
    fn owner(&self, row: usize) -> u32 {
        self.owners()[row]
    }

    /// Whether one more row fits without a check: `false` sends the caller to
    /// [`make_room`](Self::make_room).
    #[inline(always)]
    fn has_room(&self) -> bool {
        self.values.len() < self.room
    }

    /// Recomputes `room` (see the type's docs): its only writer.
    fn refresh_room(&mut self) {
        self.room = self.values.room_end().min(self.owners.len());
    }

    /// The links the columns' capacity asks for: one per row, or where every column is
    /// zero-sized (the columns never run out; the row type itself need not be zero-sized) the
    /// row count plus one, doubling.
    fn links_wanted(&self) -> usize {
        if super::row_is_zst::<T>() {
            let len = self.values.len();
            if len < self.owners.len() {
                return self.owners.len();
            }
            len.saturating_add(1)
                .max(self.owners.len().saturating_mul(2))
                .max(4)
        } else {
            self.values.capacity()
        }
    }

    /// Makes room for one more row: the columns grow as a [`SoaVec`]'s do, then the links to
    /// match. `Err` if out of memory; nothing is lost then (only capacities may have grown).
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) -> Result<(), ()> {
        if self.values.len() == self.values.capacity() {
            self.values.try_reserve(1).map_err(drop)?;
        }
        self.grow_links(self.links_wanted())?;
        self.refresh_room();
        Ok(())
    }

    /// Links for at least `links` rows, charged to the columns' tag. With a tag, the links move
    /// to a new block (a `realloc` would keep the old block's tag, which may be from before the
    /// pool was tagged), as the columns' small blocks do. `Err` if out of memory (nothing
    /// changed then).
    fn grow_links(&mut self, links: usize) -> Result<(), ()> {
        let have = self.owners.len();
        if links <= have {
            return Ok(());
        }
        let tag = self.values.page_tag();
        let owners = &mut self.owners;
        let grown = tag.charged(|| {
            if tag.is_none() {
                owners.try_reserve_exact(links - have)
            } else {
                let mut moved = Vec::new();
                moved.try_reserve_exact(links).map(|()| {
                    moved.extend_from_slice(owners);
                    *owners = moved;
                })
            }
        });
        grown.map_err(drop)?;
        // Within the capacity just reserved: no allocation.
        self.owners.resize(links, 0);
        Ok(())
    }

    /// Appends a row (its parts) and its link, without checks.
    ///
    /// # Safety
    /// - The columns and the links have room for one more row: [`has_room`](Self::has_room)
    ///   returned `true`, or [`make_room`](Self::make_room) returned `Ok`, and no row was added
    ///   since.
    #[inline(always)]
    unsafe fn push_unchecked(&mut self, parts: <T::Columns as super::Columns>::Raw, owner: u32) {
        let row = self.values.len();
        debug_assert!(row < self.values.capacity() && row < self.owners.len());
        // SAFETY: both have room for row `row` (guaranteed by the caller).
        unsafe {
            self.values.push_raw_unchecked(parts);
            *self.owners.get_unchecked_mut(row) = owner;
        }
    }

    /// Appends `value` and its link, making room first, or hands the value back if the columns
    /// cannot grow or their budget refuses it (nothing changed then but capacities).
    #[inline(always)]
    #[track_caller]
    fn try_push(&mut self, value: T, owner: u32) -> Result<(), T> {
        if !self.has_room() && self.make_room().is_err() {
            return Err(value);
        }
        let row = self.values.len();
        // With room made, only a budget on the columns can refuse; the columns do not grow.
        self.values.try_push(value).map_err(|e| e.into_inner())?;
        self.owners[row] = owner;
        Ok(())
    }

    /// Takes the value out of `row`, moving the last row (and its link) into its place. `moved`
    /// is told the moved row's slot before the value is rebuilt (user code that may panic), so
    /// the caller's map is final by then.
    ///
    /// # Safety
    /// - `row` is below the row count.
    #[inline(always)]
    unsafe fn swap_remove(&mut self, row: usize, moved: impl FnOnce(u32)) -> T {
        let len = self.values.len();
        debug_assert!(row < len);
        let last = len - 1;
        if row != last {
            // SAFETY: `row < last < len <= owners.len()` (the caller's bound, and the type's
            // invariant).
            let owner = unsafe { *self.owners.get_unchecked(last) };
            // SAFETY: as above.
            unsafe { *self.owners.get_unchecked_mut(row) = owner };
            moved(owner);
        }
        // SAFETY: `row < len` (guaranteed by the caller).
        unsafe { self.values.swap_remove_unchecked(row) }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_memory() -> ! {
    panic!("SoaPool::insert: out of memory growing the columns")
}

#[cfg(feature = "serde")]
impl<T: Soa> SoaPool<T> {
    /// The handle map and the columns, for serialization.
    pub(super) fn serde_parts(&self) -> (&SlotMap<u32>, &SoaVec<T>) {
        (&self.slots, &self.rows.values)
    }

    /// Builds a pool from what was read, or says what is wrong with it. Allocates only after
    /// every check passed and if the slots and columns fit `limit` bytes.
    pub(super) fn from_repr(
        repr: crate::pool::serde::Repr<(u32, T)>,
        limit: usize,
    ) -> Result<Self, crate::pool::PoolDecodeError> {
        let live = repr.check_rows()?;
        let row_bytes = super::block_layout::<T>(1).map_or(usize::MAX, |l| l.size());
        let per_slot = row_bytes.saturating_add(size_of::<u32>());
        let slot_bytes = crate::pool::slot_bytes::<u32>();
        // Rows are staged (they arrive in slot order) and moved to the columns in row order.
        let mut staged: Vec<Option<T>> = Vec::new();
        staged.resize_with(live, || None);
        let slots = repr.into_slot_map::<Handle<T>, _>(
            slot_bytes,
            per_slot,
            limit,
            size_of::<T>(),
            "SoaPool",
            |(row, value)| {
                staged[row as usize] = Some(value);
                row
            },
        )?;
        let oom = crate::pool::PoolDecodeError::OutOfMemory {
            capacity: slots.capacity(),
        };
        let reserve = (slots.capacity() as usize).max(live);
        let mut rows = Rows::with_capacity(reserve).map_err(|()| oom)?;
        for value in staged {
            rows.values
                .push(value.expect("check_rows: every row is named once"));
        }
        for index in 0..slots.high_water() {
            if let Some(handle) = slots.handle_at::<Handle<T>>(index) {
                let row = *slots.get(handle).expect("a live slot");
                rows.owners[row as usize] = index;
            }
        }
        // The pushes went into reserved capacity, but `room` has one writer: ask it.
        rows.refresh_room();
        Ok(SoaPool {
            rows,
            slots,
            drop_report: None,
        })
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn stale<T>(handle: Handle<T>) -> ! {
    panic!("{handle:?} is stale: its value was removed from this pool")
}

/// As for [`Pool`](crate::pool::Pool): the budget counts live values × `size_of::<T>()` and is
/// checked where the handle map looks for a slot outside its inlined path. Under
/// [`Policy::Fail`](crate::tags::Policy::Fail) `try_insert` returns a [`PoolFull`] whose
/// [`budget_exceeded`](PoolFull::budget_exceeded) is set, handing the value back; `insert` and
/// `insert_with` panic with its text; `try_insert_with` returns `None`.
impl<T: Soa> Budgeted for SoaPool<T> {
    fn budget(&self) -> Option<BudgetGate> {
        self.slots.budget()
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.slots.set_budget(gate);
    }

    /// Inserts and removes are `Alloc`/`Free` of one slot (its address, the value's size).
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        self.slots.set_profiler_label(label);
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.slots.budget_stamp()
    }

    /// The columns, the back links and the handle map's chunks, as they grow from now on.
    fn charge_pages_to(&mut self, tag: PageTag) {
        self.rows.values.charge_pages_to(tag);
        self.slots.charge_pages_to(tag);
    }
}

/// Reports (see [`set_drop_report`](SoaPool::set_drop_report)); the columns then drop the values.
impl<T: Soa> Drop for SoaPool<T> {
    fn drop(&mut self) {
        if let Some(report) = self.drop_report {
            report(&self.stats());
        }
    }
}

/// A copy with the same handles, rows, free list, counters and budget, as
/// [`Pool`](crate::pool::Pool)'s `Clone`: every handle of `self` is valid in the clone and the
/// next inserts return the same handles in both. The clone shares the original's debug tag and
/// has no drop report. For rows that are `Clone` and [`PlainRow`](super::PlainRow), as
/// [`SoaVec`]'s `Clone`.
impl<T: Soa + Clone + super::PlainRow> Clone for SoaPool<T>
where
    T::Columns: super::CloneColumns,
{
    fn clone(&self) -> Self {
        let mut values = self.rows.values.clone();
        // A fixed pool keeps its promise of never allocating after construction.
        let room = self.rows.values.capacity().saturating_sub(values.len());
        crate::soa::raw::unwrap_alloc(values.try_reserve_exact(room));
        let links = self.rows.owners.len();
        let Ok(rows) = Rows::from_parts(values, self.rows.owners.clone(), links) else {
            out_of_memory()
        };
        SoaPool {
            rows,
            slots: self.slots.clone_with(|&row| row),
            drop_report: None,
        }
    }
}

/// Prints the live values' handles and the pool's counters (rows need not be `Debug`).
impl<T: Soa> fmt::Debug for SoaPool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaPool")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Removes every value of a [`SoaPool`], yielding each with its (now stale) handle, last row
/// first: [`SoaPool::drain`]. Dropping it removes the rest.
///
/// # Variance
///
/// Invariant in `T`, as the pool is.
pub struct SoaPoolDrain<'a, T: Soa> {
    pool: &'a mut SoaPool<T>,
}

impl<T: Soa> Iterator for SoaPoolDrain<'_, T> {
    type Item = (Handle<T>, T);

    fn next(&mut self) -> Option<Self::Item> {
        self.pool.pop()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pool.len(), Some(self.pool.len()))
    }
}

impl<T: Soa> ExactSizeIterator for SoaPoolDrain<'_, T> {}
impl<T: Soa> FusedIterator for SoaPoolDrain<'_, T> {}

impl<T: Soa> Drop for SoaPoolDrain<'_, T> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}
