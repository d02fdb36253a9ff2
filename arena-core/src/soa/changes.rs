//! Change tracking for SoA containers: [`TrackedSoaVec`], [`TrackedSoaTiles`] and
//! [`TrackedSoaPool`] (their docs say what marks what and what it costs).

use alloc::vec::Vec;
use core::fmt;
use core::ops::{Deref, Range, RangeBounds};

use super::{
    Columns, IterMut, Soa, SoaPool, SoaSliceMut, SoaTiled, SoaTiles, SoaVec, TileRowsMut, TilesMut,
    TryPushError,
};
use crate::pool::{Handle, PoolCapacityError, PoolFull};
use crate::range::range_or_panic;

/// The rows one version covers: a write anywhere in rows `64 * b .. 64 * (b + 1)` of a field
/// reports that whole block of the field.
pub const BLOCK_ROWS: usize = 64;

mod sealed {
    pub trait Sealed<const K: usize> {}
}

/// Field `K` of a row's column list (`T::Columns`), counted from 0 in declaration order: what
/// [`TrackedSoaVec::column_mut`] hands out. Sealed; implemented for the first 32 fields.
#[diagnostic::on_unimplemented(
    message = "the row has no field at the position `column_mut::<K>()` asks for",
    label = "the row has fewer than `K + 1` fields",
    note = "`column_mut::<K>()` counts fields from 0 in declaration order (`T::FIELD_NAMES[K]`); fields past the 32nd have no one-column accessor, use `slices_mut()`"
)]
pub trait ColumnAt<const K: usize>: Columns + sealed::Sealed<K> {
    /// The columns of field `K`: a `Col<F>`, or a `Nested<S>` for a `#[soa(nested)]` field.
    type Column: Columns;
    /// Field `K`'s columns, out of the whole list (addresses only; no access).
    fn column(self) -> Self::Column;
}

impl<A: Columns, R: Columns> sealed::Sealed<0> for (A, R) {}
impl<A: Columns, R: Columns> ColumnAt<0> for (A, R) {
    type Column = A;
    #[inline(always)]
    fn column(self) -> A {
        self.0
    }
}

macro_rules! column_at {
    ($($k:literal => $prev:literal),* $(,)?) => {$(
        impl<A: Columns, R: ColumnAt<$prev>> sealed::Sealed<$k> for (A, R) {}
        impl<A: Columns, R: ColumnAt<$prev>> ColumnAt<$k> for (A, R) {
            type Column = <R as ColumnAt<$prev>>::Column;
            #[inline(always)]
            fn column(self) -> Self::Column {
                ColumnAt::<$prev>::column(self.1)
            }
        }
    )*};
}

column_at!(
    1 => 0, 2 => 1, 3 => 2, 4 => 3, 5 => 4, 6 => 5, 7 => 6, 8 => 7, 9 => 8, 10 => 9,
    11 => 10, 12 => 11, 13 => 12, 14 => 13, 15 => 14, 16 => 15, 17 => 16, 18 => 17, 19 => 18,
    20 => 19, 21 => 20, 22 => 21, 23 => 22, 24 => 23, 25 => 24, 26 => 25, 27 => 26, 28 => 27,
    29 => 28, 30 => 29, 31 => 30,
);

/// The versions: one per field per block, block-major (`stamps[block * fields + field]`), plus a
/// floor per field that every block of it is at least (a whole-field mark is one store). Blocks
/// past `stamps` count as 0: a row gets there only through a mark (push, insert) or a floor
/// (`inner_mut`), so an entry missing there is never a write missed. If the stamps cannot grow,
/// a mark falls back to the floors (every block of every field).
#[derive(Debug, Clone)]
struct ChangeLog {
    /// The open tick: what marks stamp. Starts at 1, so tick 0 is "before anything".
    now: u64,
    fields: usize,
    floors: Vec<u64>,
    stamps: Vec<u64>,
}

impl ChangeLog {
    fn new(fields: usize) -> Self {
        ChangeLog {
            now: 1,
            fields,
            floors: alloc::vec![0; fields],
            stamps: Vec::new(),
        }
    }

    #[inline]
    fn mark_all(&mut self) {
        let now = self.now;
        for floor in &mut self.floors {
            *floor = now;
        }
    }

    #[inline]
    fn mark_field(&mut self, field: usize) {
        self.floors[field] = self.now;
    }

    /// Marks the blocks covering `rows` in every field.
    #[inline]
    fn mark_rows(&mut self, rows: Range<usize>) {
        if rows.start >= rows.end || self.fields == 0 {
            return;
        }
        let first = rows.start / BLOCK_ROWS;
        let end = ((rows.end - 1) / BLOCK_ROWS + 1).checked_mul(self.fields);
        let Some(end) = end.filter(|&end| end <= self.stamps.len() || self.grow(end)) else {
            // No memory for more versions (a huge vector of zero-sized rows, say): mark every
            // field whole instead, a superset of the rows, never a write missed.
            self.mark_all();
            return;
        };
        let now = self.now;
        for stamp in &mut self.stamps[first * self.fields..end] {
            *stamp = now;
        }
    }

    /// Marks `row`'s block in every field; `fields` is `self.fields`, passed by the generic
    /// wrappers as the constant `T::Columns::FIELDS` so the index arithmetic folds.
    #[inline]
    fn mark_row(&mut self, row: usize, fields: usize) {
        debug_assert_eq!(fields, self.fields);
        // Row marks stamp every field of a block at once, so the block's first stamp says whether
        // this tick has marked it already (the common case of a pass of row views).
        let first = (row / BLOCK_ROWS).checked_mul(fields);
        if first.and_then(|i| self.stamps.get(i)) == Some(&self.now) {
            return;
        }
        self.mark_rows(row..row.saturating_add(1));
    }

    /// Room for `end` stamps, new ones 0; `false` (and nothing changed) if it cannot be had.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, end: usize) -> bool {
        if self.stamps.try_reserve(end - self.stamps.len()).is_err() {
            return false;
        }
        self.stamps.resize(end, 0);
        true
    }

    #[inline]
    fn stamp(&self, block: usize, field: usize) -> u64 {
        let own = block
            .checked_mul(self.fields)
            .and_then(|i| self.stamps.get(i + field))
            .copied()
            .unwrap_or(0);
        own.max(self.floors[field])
    }

    fn tick(&mut self) -> u64 {
        let closed = self.now;
        self.now = closed
            .checked_add(1)
            .expect("change tracking: the tick counter (u64) ran out");
        closed
    }

    fn changed_since(
        &self,
        since: u64,
        len: usize,
        names: &'static [&'static str],
    ) -> ChangedSince<'_> {
        ChangedSince {
            log: self,
            names,
            since,
            len,
            field: 0,
            block: 0,
        }
    }

    #[track_caller]
    fn is_changed_since(&self, field: usize, row: usize, len: usize, since: u64) -> bool {
        assert!(
            field < self.fields,
            "change tracking: field {field} out of range (the row has {} fields)",
            self.fields
        );
        row < len && self.stamp(row / BLOCK_ROWS, field) > since
    }
}

/// One run of rows of one field written since the tick asked about (from `changed_since`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChangedRows {
    /// The field's position in declaration order (the `K` of `column_mut::<K>`).
    pub field: usize,
    /// The field's name (`T::FIELD_NAMES[field]`), if the `Soa` impl gives names (the derive does).
    pub name: Option<&'static str>,
    /// The rows: whole blocks of [`BLOCK_ROWS`], adjacent ones merged, the last one cut at the
    /// length. Never empty.
    pub rows: Range<usize>,
}

/// The row ranges written since a tick, field by field, each field's in row order: see
/// [`TrackedSoaVec::changed_since`].
#[derive(Debug, Clone)]
pub struct ChangedSince<'a> {
    log: &'a ChangeLog,
    names: &'static [&'static str],
    since: u64,
    len: usize,
    field: usize,
    block: usize,
}

impl Iterator for ChangedSince<'_> {
    type Item = ChangedRows;

    fn next(&mut self) -> Option<ChangedRows> {
        let blocks = self.len.div_ceil(BLOCK_ROWS);
        while self.field < self.log.fields {
            let field = self.field;
            if self.block == 0 && blocks > 0 && self.log.floors[field] > self.since {
                // The whole field was handed out since: one range, no per-block scan.
                self.field += 1;
                return Some(self.item(field, 0..self.len));
            }
            // Past the stamps only the floor counts, and it is not newer (checked above): the
            // scan stops there, so a huge vector of zero-sized rows costs its stamps, not its rows.
            let stamped = blocks.min(self.log.stamps.len() / self.log.fields);
            while self.block < stamped && self.log.stamp(self.block, field) <= self.since {
                self.block += 1;
            }
            if self.block >= stamped {
                self.field += 1;
                self.block = 0;
                continue;
            }
            let start = self.block;
            while self.block < stamped && self.log.stamp(self.block, field) > self.since {
                self.block += 1;
            }
            let end = self.block.saturating_mul(BLOCK_ROWS).min(self.len);
            return Some(self.item(field, start * BLOCK_ROWS..end));
        }
        None
    }
}

impl ChangedSince<'_> {
    fn item(&self, field: usize, rows: Range<usize>) -> ChangedRows {
        ChangedRows {
            field,
            name: self.names.get(field).copied(),
            rows,
        }
    }
}

impl core::iter::FusedIterator for ChangedSince<'_> {}

/// The clock questions every tracked container answers, written once: `$rows` is the field that
/// holds the container (its `len()` is the row count the ranges are cut at).
macro_rules! tick_queries {
    ($rows:ident) => {
        /// The open tick: what a `&mut` handed out now is stamped with.
        #[inline]
        pub fn current_tick(&self) -> u64 {
            self.log.now
        }

        /// The rows of each field handed out mutably after tick `since` was closed (with
        /// [`tick`](Self::tick)): whole blocks of [`BLOCK_ROWS`] rows, adjacent ones merged, cut
        /// at the length; field by field. `since = 0` reports every row (nothing is older).
        pub fn changed_since(&self, since: u64) -> ChangedSince<'_> {
            self.log
                .changed_since(since, self.$rows.len(), T::FIELD_NAMES)
        }

        /// Whether `row`'s block of `field` was handed out mutably after tick `since` (the
        /// per-value question bevy's `is_changed` answers; here for the row's block). `false`
        /// past the length.
        ///
        /// # Panics
        /// If `field` is not below the number of fields.
        #[track_caller]
        pub fn is_changed_since(&self, field: usize, row: usize, since: u64) -> bool {
            self.log
                .is_changed_since(field, row, self.$rows.len(), since)
        }
    };
}

/// Whole-column writes, marked before they are lent, for the containers with columns
/// (`slices_mut`, `column_mut`): `$rows` is the field that holds the container.
macro_rules! column_writes {
    ($rows:ident) => {
        /// Every column as an exclusive slice (marks every block of every field: the view lends
        /// them all; use [`column_mut`](Self::column_mut) to write one).
        #[inline]
        pub fn slices_mut(&mut self) -> T::SlicesMut<'_> {
            self.log.mark_all();
            self.$rows.slices_mut()
        }

        /// Field `K` (counted from 0 in declaration order, `T::FIELD_NAMES[K]`) as an exclusive
        /// slice, or a nested field's `SlicesMut` view; marks every block of that field only. A
        /// `K` past the last field does not compile, nor does one of a field that is not `pub`
        /// ([`PublicField`](super::PublicField)).
        ///
        /// ```
        /// use arena_kit::Soa;
        /// use arena_kit::soa::TrackedSoaVec;
        ///
        /// #[derive(Soa)]
        /// struct Body { pub pos: f32, pub vel: f32 }
        ///
        /// let mut bodies: TrackedSoaVec<Body> = [Body { pos: 0.0, vel: 2.0 }].into_iter().collect();
        /// let seen = bodies.tick();
        /// let vel = bodies.slices().vel.to_vec();
        /// for (p, v) in bodies.column_mut::<0>().iter_mut().zip(vel) {
        ///     *p += v;
        /// }
        /// assert!(bodies.is_changed_since(0, 0, seen)); // `pos`
        /// assert!(!bodies.is_changed_since(1, 0, seen)); // `vel` was only read
        /// ```
        ///
        /// `Body` has two fields, so there is no `column_mut::<2>()`:
        ///
        /// ```compile_fail
        /// # use arena_kit::Soa;
        /// # use arena_kit::soa::TrackedSoaVec;
        /// # #[derive(Soa)]
        /// # struct Body { pub pos: f32, pub vel: f32 }
        /// let mut bodies: TrackedSoaVec<Body> = TrackedSoaVec::new();
        /// bodies.column_mut::<2>(); // error: the row has no field at the position `column_mut::<K>()` asks for
        /// ```
        #[inline]
        pub fn column_mut<const K: usize>(
            &mut self,
        ) -> <<T::Columns as ColumnAt<K>>::Column as Columns>::SlicesMut<'_>
        where
            T: super::PublicField<K>,
            T::Columns: ColumnAt<K>,
        {
            self.log.mark_field(K);
            self.$rows.column_mut::<K>()
        }
    };
}

/// The writes of the indexed row containers ([`TrackedSoaVec`], [`TrackedSoaTiles`]), each
/// marked before it is forwarded, written once: `$rows` is the field that holds the container,
/// `$name` its type's name (for the docs), `$inner` its type.
macro_rules! row_writes {
    ($rows:ident, $name:ident, $inner:ty) => {
        /// Closes the current tick and returns it: [`changed_since`](Self::changed_since) with
        /// the returned tick reports exactly what is handed out mutably from now on.
        ///
        /// # Panics
        /// After `u64::MAX` ticks (never, in practice).
        #[track_caller]
        pub fn tick(&mut self) -> u64 {
            self.log.tick()
        }

        /// Appends a row (marks its block).
        ///
        /// # Panics
        #[doc = concat!("As [`", stringify!($name), "::push`].")]
        #[inline]
        #[track_caller]
        pub fn push(&mut self, value: T) {
            self.log.mark_row(self.$rows.len(), T::Columns::FIELDS);
            self.$rows.push(value);
        }

        #[doc = concat!("Appends a row, or hands it back (see [`", stringify!($name), "::try_push`]).")]
        pub fn try_push(&mut self, value: T) -> Result<(), TryPushError<T>> {
            self.log.mark_row(self.$rows.len(), T::Columns::FIELDS);
            self.$rows.try_push(value)
        }

        /// Removes the last row (marks its block).
        pub fn pop(&mut self) -> Option<T> {
            if let Some(last) = self.$rows.len().checked_sub(1) {
                self.log.mark_row(last, T::Columns::FIELDS);
            }
            self.$rows.pop()
        }

        /// Inserts a row at `index`, shifting the rows after it (marks the blocks of
        /// `index..=len`).
        ///
        /// # Panics
        #[doc = concat!("As [`", stringify!($name), "::insert`].")]
        #[track_caller]
        pub fn insert(&mut self, index: usize, value: T) {
            let len = self.$rows.len();
            if index <= len {
                self.log.mark_rows(index..len + 1);
            }
            self.$rows.insert(index, value);
        }

        /// Removes the row at `index`, shifting the rows after it (marks the blocks of
        /// `index..len`).
        ///
        /// # Panics
        #[doc = concat!("As [`", stringify!($name), "::remove`].")]
        #[track_caller]
        pub fn remove(&mut self, index: usize) -> T {
            self.log.mark_rows(index..self.$rows.len());
            self.$rows.remove(index)
        }

        /// Removes the row at `index`, moving the last row into it (marks both blocks).
        ///
        /// # Panics
        #[doc = concat!("As [`", stringify!($name), "::swap_remove`].")]
        #[track_caller]
        pub fn swap_remove(&mut self, index: usize) -> T {
            let len = self.$rows.len();
            if index < len {
                self.log.mark_row(index, T::Columns::FIELDS);
                self.log.mark_row(len - 1, T::Columns::FIELDS);
            }
            self.$rows.swap_remove(index)
        }

        /// Swaps two rows (marks both blocks).
        ///
        /// # Panics
        #[doc = concat!("As [`", stringify!($name), "::swap`].")]
        #[track_caller]
        pub fn swap(&mut self, a: usize, b: usize) {
            let len = self.$rows.len();
            if a < len && b < len {
                self.log.mark_row(a, T::Columns::FIELDS);
                self.log.mark_row(b, T::Columns::FIELDS);
            }
            self.$rows.swap(a, b);
        }

        /// Drops the rows from `len` on (marks their blocks).
        pub fn truncate(&mut self, len: usize) {
            self.log.mark_rows(len..self.$rows.len());
            self.$rows.truncate(len);
        }

        /// Drops every row (marks every block that had rows).
        pub fn clear(&mut self) {
            self.truncate(0);
        }

        /// Row `index` as exclusive references (marks its block in every field).
        #[inline]
        pub fn get_mut(&mut self, index: usize) -> Option<T::Mut<'_>> {
            if index < self.$rows.len() {
                self.log.mark_row(index, T::Columns::FIELDS);
            }
            self.$rows.get_mut(index)
        }

        #[doc = concat!("The wrapped `", stringify!($name), "`, for any of its `&mut self` methods \
            (`retain`, `reserve`, ...). Marks every block of every field, whatever the call does \
            to the length.")]
        pub fn inner_mut(&mut self) -> &mut $inner {
            self.log.mark_all();
            &mut self.$rows
        }

        #[doc = concat!("The wrapped `", stringify!($name), "`, mutably, **without marking \
            anything**: writes through it are not reported by \
            [`changed_since`](Self::changed_since) (bevy's `bypass_change_detection`). For writes \
            a consumer must not see, such as undoing its own bookkeeping.")]
        pub fn bypass_change_tracking(&mut self) -> &mut $inner {
            &mut self.$rows
        }

        #[doc = concat!("The wrapped `", stringify!($name), "`, dropping the versions.")]
        pub fn into_inner(self) -> $inner {
            self.$rows
        }
    };
}

/// The trait impls of the indexed row containers, written once (as [`row_writes`]); `$wrapper`
/// is the tracked type with its generics, `[$($generics)*]` the impl's parameters.
macro_rules! row_container_impls {
    ([$($generics:tt)*], $wrapper:ty, $rows:ident, $inner:ty, $label:literal) => {
        impl<$($generics)*> Deref for $wrapper {
            type Target = $inner;
            #[inline]
            fn deref(&self) -> &$inner {
                &self.$rows
            }
        }

        /// Wraps the container at tick 1, with every row marked (changed since tick 0).
        impl<$($generics)*> From<$inner> for $wrapper {
            fn from($rows: $inner) -> Self {
                let mut log = ChangeLog::new(T::Columns::FIELDS);
                log.mark_all();
                Self { $rows, log }
            }
        }

        impl<$($generics)*> Default for $wrapper {
            fn default() -> Self {
                Self::from(<$inner>::new())
            }
        }

        impl<$($generics)*> Extend<T> for $wrapper {
            /// Pushes each row (marks each one's block; a panic in the iterator leaves the rows
            /// pushed so far marked).
            fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
                for value in iter {
                    self.push(value);
                }
            }
        }

        impl<$($generics)*> FromIterator<T> for $wrapper {
            fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
                Self::from(<$inner>::from_iter(iter))
            }
        }

        impl<$($generics)*> Clone for $wrapper
        where
            $inner: Clone,
        {
            /// A copy with the same rows, tick and versions.
            fn clone(&self) -> Self {
                Self {
                    $rows: self.$rows.clone(),
                    log: self.log.clone(),
                }
            }
        }

        impl<$($generics)*> fmt::Debug for $wrapper
        where
            $inner: fmt::Debug,
        {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct($label)
                    .field("tick", &self.log.now)
                    .field("rows", &self.$rows)
                    .finish()
            }
        }
    };
}

/// A [`SoaVec<T>`] that records which blocks of which fields were handed out mutably, per tick.
///
/// Reading goes through [`Deref`] to the `SoaVec` (`get`, `slices`, `iter`, `len`, ...). Writing
/// goes through the methods here, which mark before they lend; a `SoaVec` method not mirrored here
/// (`sort_by`, `retain`, `drain`, `resize_with`, ...) is reached through
/// [`inner_mut`](Self::inner_mut), which marks every block of every field.
///
/// ```
/// use arena_kit::Soa;
/// use arena_kit::soa::TrackedSoaVec;
///
/// #[derive(Soa)]
/// struct Enemy { x: f32, health: f32 }
///
/// let mut enemies = TrackedSoaVec::new();
/// for i in 0..100 {
///     enemies.push(Enemy { x: i as f32, health: 100.0 });
/// }
/// let seen = enemies.tick();
/// for row in 10..20 {
///     *enemies.get_mut(row).unwrap().health -= 5.0; // row views: rows 10..20 are in block 0
/// }
/// let changed: Vec<_> = enemies.changed_since(seen).map(|c| (c.field, c.rows)).collect();
/// assert_eq!(changed, [(0, 0..64), (1, 0..64)]);
/// let now = enemies.tick();
/// assert!(enemies.changed_since(now).next().is_none()); // nothing written since
/// ```
///
/// # What it is
///
/// [`TrackedSoaVec<T>`] and [`TrackedSoaPool<T>`] keep a version per field per
/// block of [`BLOCK_ROWS`] rows, so a system that uploads, saves or re-derives data can visit only
/// the rows written since it last looked.
///
/// **Pick it** when a consumer (a GPU upload, a network snapshot, a spatial index) wants to skip
/// the parts of a large container nobody wrote since its last visit. **Don't** when every row
/// changes every frame (a full pass is cheaper than asking), or when you need per-row precision:
/// a version covers 64 rows, so one write reports its whole block.
///
/// # How it works
///
/// The wrapper owns the container and lends `&` to it freely ([`Deref`]). Every method that lends
/// `&mut` first stamps what that `&mut` can reach with the container's current tick:
///
/// | method | marks |
/// |---|---|
/// | [`slices_mut`](Self::slices_mut), [`iter_mut`](Self::iter_mut), [`inner_mut`](Self::inner_mut) | every block of every field |
/// | [`column_mut::<K>`](Self::column_mut) | every block of field `K` only |
/// | [`get_mut`](Self::get_mut), [`get_disjoint_mut`](Self::get_disjoint_mut) | each row's block, in every field |
/// | [`slice_mut(range)`](Self::slice_mut) | the blocks covering `range`, in every field |
/// | `push`, `pop`, `insert`, `remove`, `swap_remove`, `swap`, `truncate`, `clear` | the blocks of the rows that were written, moved or removed, in every field |
///
/// Marks are made *before* the `&mut` exists, so a panic in user code (a `Drop`, a closure, a
/// conversion) can only leave a block marked that was not written, never the reverse.
/// [`tick`](Self::tick) closes the current tick and returns it; writes after it carry a
/// later tick. [`changed_since(t)`](Self::changed_since) yields, per field, the row
/// ranges written after tick `t` was closed, adjacent dirty blocks merged, clipped to the length.
/// Ticks are `u64` and never wrap. A whole-field mark costs one store (a per-field floor), so a
/// mutable pass over a column costs the same with tracking as without (BENCHMARKS.md). A row view
/// checks its block's stamp on every call, which keeps a `get_mut` loop from being vectorised
/// (about 25 instructions per row against 1.6): write passes through `column_mut`, `slices_mut`
/// or `iter_mut`, and keep `get_mut` for scattered writes.
///
/// **One field at a time.** The derive's `SlicesMut` view hands out every column at once, so
/// [`slices_mut`](Self::slices_mut) must mark them all. To write one column and leave the
/// others clean, ask for it by its position in declaration order: `column_mut::<2>()` is the third
/// field (`T::FIELD_NAMES[2]`), as `&mut [F]` (a `#[soa(nested)]` field: its own `SlicesMut`
/// view, tracked as one field). The index is checked at compile time ([`ColumnAt`]).
///
/// **Interior mutability is not seen.** A `Cell` or `Mutex` field written through `&` marks
/// nothing, as in any `&mut`-based scheme. [`bypass_change_tracking`](Self::bypass_change_tracking)
/// writes without marking, on purpose.
///
/// # Compared with bevy's change detection
///
/// bevy stamps each component of each entity (`Ref::is_changed`, `is_added`, against the tick a
/// system last ran) and marks on `DerefMut`, so reading through `Mut<T>` marks nothing. Here:
/// - a version covers 64 rows of one field, not one value: the answer is a superset of the rows
///   written (the block), built for passes over ranges rather than per-entity checks;
/// - handing out `&mut` marks, whether or not it is written through (there is no `DerefMut` hook
///   on a slice), so ask for `&mut` only where you write;
/// - there is one clock per container, advanced by you ([`tick`](Self::tick)), not a
///   world-wide one; a reader remembers the tick it last looked at, as a bevy system does;
/// - `is_added` is [`TrackedSoaPool::inserted_since`] (handles, not rows, since a pool's rows
///   move), and `RemovedComponents` is [`TrackedSoaPool::removed_since`]; both keep only the last
///   two ticks and say so with [`TickTooOld`] instead of silently forgetting.
///
/// ```
/// use arena_kit::Soa;
/// use arena_kit::soa::TrackedSoaVec;
///
/// #[derive(Soa)]
/// struct Particle { pub x: f32, pub vx: f32 }
///
/// let mut particles: TrackedSoaVec<Particle> =
///     (0..200).map(|i| Particle { x: 0.0, vx: i as f32 }).collect();
/// let seen = particles.tick(); // everything up to here has been seen
/// for x in particles.column_mut::<0>() {
///     *x += 1.0; // writes field 0 (`x`) only
/// }
/// *particles.get_mut(150).unwrap().vx = 0.0; // one row: its block, in every field
/// let changed: Vec<_> = particles
///     .changed_since(seen)
///     .map(|c| (c.name.unwrap(), c.rows))
///     .collect();
/// assert_eq!(changed, [("x", 0..200), ("vx", 128..192)]);
/// ```
///
/// # Variance
///
/// Invariant in `T`, as [`SoaVec<T>`].
pub struct TrackedSoaVec<T: Soa> {
    vec: SoaVec<T>,
    log: ChangeLog,
}

impl<T: Soa> TrackedSoaVec<T> {
    /// An empty vector at tick 1.
    pub fn new() -> Self {
        Self::from(SoaVec::new())
    }

    /// An empty vector with room for `capacity` rows.
    ///
    /// # Panics
    /// As [`SoaVec::with_capacity`].
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::from(SoaVec::with_capacity(capacity))
    }

    tick_queries!(vec);
    row_writes!(vec, SoaVec, SoaVec<T>);
    column_writes!(vec);

    /// `N` distinct rows at once (see [`SoaVec::get_disjoint_mut`]); marks each row's block.
    pub fn get_disjoint_mut<const N: usize>(
        &mut self,
        indices: [usize; N],
    ) -> Option<[T::Mut<'_>; N]> {
        let len = self.vec.len();
        if indices.iter().any(|&i| i >= len) {
            return None;
        }
        for &i in &indices {
            self.log.mark_row(i, T::Columns::FIELDS);
        }
        self.vec.get_disjoint_mut(indices)
    }

    /// The rows in `range` as an exclusive SoA slice (marks the blocks covering them).
    ///
    /// # Panics
    /// If the range is out of bounds, as [`SoaVec::slice_mut`].
    #[track_caller]
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> SoaSliceMut<'_, T> {
        let (start, end) = range_or_panic(range, self.vec.len(), "rows");
        self.log.mark_rows(start..end);
        self.vec.slice_mut(start..end)
    }

    /// Every row as exclusive references (marks every block of every field).
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        self.log.mark_all();
        self.vec.iter_mut()
    }
}

row_container_impls!([T: Soa], TrackedSoaVec<T>, vec, SoaVec<T>, "TrackedSoaVec");

/// A [`SoaTiles<T, N>`] that records which blocks of which fields were handed out mutably, per
/// tick: the versions of [`TrackedSoaVec`] over tile-major rows.
///
/// Reading goes through [`Deref`] to the `SoaTiles` (`get`, `tiles`, `tail`, `iter`, ...). The
/// rows and their blocks are the same as a `TrackedSoaVec`'s: row `i` is in block
/// `i / BLOCK_ROWS` whatever `N` is, so a consumer reads the answer the same way.
///
/// | method | marks |
/// |---|---|
/// | [`tiles_mut`](Self::tiles_mut), [`iter_mut`](Self::iter_mut), [`inner_mut`](Self::inner_mut) | every block of every field |
/// | [`tail_mut`](Self::tail_mut) | the blocks of the partial last tile's rows, in every field |
/// | [`get_mut`](Self::get_mut) | the row's block, in every field |
/// | `push`, `pop`, `insert`, `remove`, `swap_remove`, `swap`, `truncate`, `clear` | the blocks of the rows that were written, moved or removed, in every field |
///
/// A tile view lends every field of its tile (the derive's `TileMut` holds them all), so a pass
/// through `tiles_mut` marks every field, like [`TrackedSoaVec::slices_mut`]; there is no
/// one-field form, as a field of tiled storage is not one slice.
///
/// ```
/// use arena_kit::Soa;
/// use arena_kit::soa::TrackedSoaTiles;
///
/// #[derive(Soa)]
/// #[soa(tiled)]
/// struct Particle { x: f32, vx: f32 }
///
/// let mut particles: TrackedSoaTiles<Particle, 8> =
///     (0..200).map(|i| Particle { x: 0.0, vx: i as f32 }).collect();
/// let seen = particles.tick();
/// *particles.get_mut(150).unwrap().x = 1.0; // one row: its block, in every field
/// let changed: Vec<_> = particles.changed_since(seen).map(|c| (c.name.unwrap(), c.rows)).collect();
/// assert_eq!(changed, [("x", 128..192), ("vx", 128..192)]);
///
/// let seen = particles.tick();
/// for ParticleTileMut { x, vx } in particles.tiles_mut() {
///     for k in 0..8 {
///         x[k] += vx[k];
///     }
/// }
/// assert_eq!(particles.changed_since(seen).count(), 2); // every row of both fields
/// ```
///
/// # Variance
///
/// Invariant in `T`, as [`SoaTiles<T, N>`].
pub struct TrackedSoaTiles<T: SoaTiled, const N: usize> {
    tiles: SoaTiles<T, N>,
    log: ChangeLog,
}

impl<T: SoaTiled, const N: usize> TrackedSoaTiles<T, N> {
    /// An empty vector at tick 1.
    pub fn new() -> Self {
        Self::from(SoaTiles::new())
    }

    /// An empty vector with room for `capacity` rows.
    ///
    /// # Panics
    /// As [`SoaTiles::with_capacity`].
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::from(SoaTiles::with_capacity(capacity))
    }

    tick_queries!(tiles);
    row_writes!(tiles, SoaTiles, SoaTiles<T, N>);

    /// Every row as exclusive references (marks every block of every field).
    pub fn iter_mut(&mut self) -> TileRowsMut<'_, T, N> {
        self.log.mark_all();
        self.tiles.iter_mut()
    }

    /// The full tiles as exclusive lane arrays (marks every block of every field: each tile
    /// view lends all of its tile's fields).
    pub fn tiles_mut(&mut self) -> TilesMut<'_, T, N> {
        self.log.mark_all();
        self.tiles.tiles_mut()
    }

    /// The rows of the partial last tile as exclusive slices (marks their blocks in every
    /// field).
    pub fn tail_mut(&mut self) -> T::SlicesMut<'_> {
        let len = self.tiles.len();
        self.log.mark_rows(len - len % N..len);
        self.tiles.tail_mut()
    }
}

row_container_impls!(
    [T: SoaTiled, const N: usize],
    TrackedSoaTiles<T, N>,
    tiles,
    SoaTiles<T, N>,
    "TrackedSoaTiles"
);

/// A tick older than the inserted and removed handles a [`TrackedSoaPool`] keeps (the current
/// and the previous tick).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickTooOld {
    /// The tick asked about.
    pub asked: u64,
    /// The oldest tick that can be asked about now.
    pub oldest: u64,
}

impl fmt::Display for TickTooOld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tick {} is too old: the pool keeps inserted and removed handles for its last two ticks only (ask about tick {} or later); \
             ask at least every other tick, or compare your own handle list with `contains`",
            self.asked, self.oldest
        )
    }
}

impl core::error::Error for TickTooOld {}

/// The handles of one kind of event for the open and the previous tick.
struct Events<T> {
    current: Vec<Handle<T>>,
    previous: Vec<Handle<T>>,
}

impl<T> Events<T> {
    fn new() -> Self {
        Events {
            current: Vec::new(),
            previous: Vec::new(),
        }
    }

    fn tick(&mut self) {
        core::mem::swap(&mut self.current, &mut self.previous);
        self.current.clear();
    }

    /// The handles recorded after tick `since`, with `now` the open tick.
    fn since(
        &self,
        since: u64,
        now: u64,
    ) -> Result<impl Iterator<Item = Handle<T>> + '_, TickTooOld> {
        let oldest = now.saturating_sub(2);
        let (previous, current): (&[Handle<T>], &[Handle<T>]) = if since >= now {
            (&[], &[])
        } else if since + 1 == now {
            (&[], &self.current)
        } else if since == oldest {
            (&self.previous, &self.current)
        } else {
            return Err(TickTooOld {
                asked: since,
                oldest,
            });
        };
        Ok(previous.iter().chain(current).copied())
    }
}

impl<T> Clone for Events<T> {
    fn clone(&self) -> Self {
        Events {
            current: self.current.clone(),
            previous: self.previous.clone(),
        }
    }
}

/// A [`SoaPool<T>`] with change tracking: the versions of [`TrackedSoaVec`] over its dense rows,
/// plus the handles inserted and removed in the current and the previous tick.
///
/// Rows are positions, and a pool's rows move (a removal moves the last row into the hole; both
/// blocks are marked), so [`changed_since`](Self::changed_since) answers "which rows to look at
/// again" and [`inserted_since`](Self::inserted_since) / [`removed_since`](Self::removed_since)
/// answer "which values came and went". Reading goes through [`Deref`] to the pool.
///
/// ```
/// use arena_kit::Soa;
/// use arena_kit::soa::TrackedSoaPool;
///
/// #[derive(Soa)]
/// struct Enemy { x: f32, health: f32 }
///
/// let mut enemies = TrackedSoaPool::with_capacity(8);
/// let orc = enemies.insert(Enemy { x: 0.0, health: 100.0 });
/// let seen = enemies.tick();
/// let imp = enemies.insert(Enemy { x: 1.0, health: 50.0 });
/// enemies.remove(orc);
/// assert_eq!(enemies.inserted_since(seen).unwrap().collect::<Vec<_>>(), [imp]);
/// assert_eq!(enemies.removed_since(seen).unwrap().collect::<Vec<_>>(), [orc]);
/// enemies.tick();
/// enemies.tick();
/// assert!(enemies.inserted_since(seen).is_err()); // older than the last two ticks
/// ```
///
/// # Variance
///
/// Invariant in `T`, as [`SoaPool<T>`].
pub struct TrackedSoaPool<T: Soa> {
    pool: SoaPool<T>,
    log: ChangeLog,
    inserted: Events<T>,
    removed: Events<T>,
}

impl<T: Soa> TrackedSoaPool<T> {
    /// A pool for up to `capacity` live values (see [`SoaPool::with_capacity`]).
    ///
    /// # Panics
    /// As [`SoaPool::with_capacity`].
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::from(SoaPool::with_capacity(capacity))
    }

    /// As [`with_capacity`](Self::with_capacity), with a typed error.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, PoolCapacityError> {
        SoaPool::try_with_capacity(capacity).map(Self::from)
    }

    /// A pool growing by chunks of `chunk_capacity` handle slots (see [`SoaPool::growable`]).
    ///
    /// # Panics
    /// As [`SoaPool::growable`].
    #[track_caller]
    pub fn growable(chunk_capacity: usize) -> Self {
        Self::from(SoaPool::growable(chunk_capacity))
    }

    tick_queries!(pool);
    column_writes!(pool);

    /// Closes the current tick and returns it (see [`TrackedSoaVec::tick`]); the previous tick's
    /// inserted and removed handles are forgotten.
    #[track_caller]
    pub fn tick(&mut self) -> u64 {
        let closed = self.log.tick();
        self.inserted.tick();
        self.removed.tick();
        closed
    }

    /// The handles inserted after tick `since`, oldest first (bevy's `is_added`, as a list). A
    /// handle inserted and then removed is listed here and by
    /// [`removed_since`](Self::removed_since).
    ///
    /// # Errors
    /// [`TickTooOld`] if `since` is older than the previous tick's start (`current_tick() - 2`):
    /// those handles are forgotten.
    pub fn inserted_since(
        &self,
        since: u64,
    ) -> Result<impl Iterator<Item = Handle<T>> + '_, TickTooOld> {
        self.inserted.since(since, self.log.now)
    }

    /// The handles removed after tick `since`, oldest first (bevy's `RemovedComponents`). They
    /// are stale: use them to drop what you keep about them.
    ///
    /// # Errors
    /// As [`inserted_since`](Self::inserted_since).
    pub fn removed_since(
        &self,
        since: u64,
    ) -> Result<impl Iterator<Item = Handle<T>> + '_, TickTooOld> {
        self.removed.since(since, self.log.now)
    }

    /// Inserts `value` (marks its row's block; records the handle).
    ///
    /// # Panics
    /// As [`SoaPool::insert`].
    #[track_caller]
    pub fn insert(&mut self, value: T) -> Handle<T> {
        self.inserted.current.reserve(1);
        self.log.mark_row(self.pool.len(), T::Columns::FIELDS);
        let handle = self.pool.insert(value);
        self.inserted.current.push(handle);
        handle
    }

    /// Inserts `value` or hands it back (see [`SoaPool::try_insert`]).
    ///
    /// # Panics
    /// As [`SoaPool::try_insert`].
    #[track_caller]
    pub fn try_insert(&mut self, value: T) -> Result<Handle<T>, PoolFull<T>> {
        self.inserted.current.reserve(1);
        self.log.mark_row(self.pool.len(), T::Columns::FIELDS);
        let handle = self.pool.try_insert(value)?;
        self.inserted.current.push(handle);
        Ok(handle)
    }

    /// Inserts the value `f` builds from its own handle (see [`SoaPool::insert_with`]).
    ///
    /// # Panics
    /// As [`SoaPool::insert_with`].
    #[track_caller]
    pub fn insert_with(&mut self, f: impl FnOnce(Handle<T>) -> T) -> Handle<T> {
        self.inserted.current.reserve(1);
        self.log.mark_row(self.pool.len(), T::Columns::FIELDS);
        let handle = self.pool.insert_with(f);
        self.inserted.current.push(handle);
        handle
    }

    /// Removes `handle`'s value (marks its row's and the last row's blocks; records the handle).
    /// `None` if it was already removed.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[track_caller]
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        let row = self.pool.row_index(handle)?;
        self.removed.current.reserve(1);
        self.log.mark_row(row, T::Columns::FIELDS);
        self.log.mark_row(self.pool.len() - 1, T::Columns::FIELDS);
        // Recorded first: the pool is final before the value is rebuilt (user code).
        self.removed.current.push(handle);
        self.pool.remove(handle)
    }

    /// Keeps the values for which `keep` returns `true` (see [`SoaPool::retain`]); records the
    /// removed handles. Marks every block of every field (`keep` gets each row mutably).
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, T::Mut<'_>) -> bool) {
        self.log.mark_all();
        let removed = &mut self.removed.current;
        self.pool.retain(|handle, row| {
            let kept = keep(handle, row);
            if !kept {
                removed.push(handle);
            }
            kept
        });
    }

    /// Removes every value; records every handle as removed.
    pub fn clear(&mut self) {
        self.removed.current.reserve(self.pool.len());
        self.removed
            .current
            .extend(self.pool.iter().map(|(handle, _)| handle));
        self.log.mark_all();
        self.pool.clear();
    }

    /// `handle`'s value as exclusive references (marks its row's block), or `None`.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<T::Mut<'_>> {
        let row = self.pool.row_index(handle)?;
        self.log.mark_row(row, T::Columns::FIELDS);
        self.pool.get_mut(handle)
    }

    /// `handle`'s value as exclusive references (marks its row's block).
    ///
    /// # Panics
    /// As [`SoaPool::row_of_mut`].
    #[track_caller]
    pub fn row_of_mut(&mut self, handle: Handle<T>) -> T::Mut<'_> {
        if let Some(row) = self.pool.row_index(handle) {
            self.log.mark_row(row, T::Columns::FIELDS);
        }
        self.pool.row_of_mut(handle)
    }

    /// `N` distinct handles' values at once (see [`SoaPool::get_disjoint_mut`]); marks each row's
    /// block.
    ///
    /// # Panics
    /// In debug builds, if a handle was made by a different pool.
    #[track_caller]
    pub fn get_disjoint_mut<const N: usize>(
        &mut self,
        handles: [Handle<T>; N],
    ) -> Option<[T::Mut<'_>; N]> {
        for handle in handles {
            self.log
                .mark_row(self.pool.row_index(handle)?, T::Columns::FIELDS);
        }
        self.pool.get_disjoint_mut(handles)
    }

    /// Every live value mutably with its handle (marks every block of every field).
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (Handle<T>, T::Mut<'_>)> + '_ {
        self.log.mark_all();
        self.pool.iter_mut()
    }

    /// Every live value mutably, without handles (marks every block of every field).
    pub fn values_mut(&mut self) -> IterMut<'_, T> {
        self.log.mark_all();
        self.pool.values_mut()
    }

    /// The wrapped pool, dropping the versions and the recorded handles.
    pub fn into_inner(self) -> SoaPool<T> {
        self.pool
    }
}

impl<T: Soa> Deref for TrackedSoaPool<T> {
    type Target = SoaPool<T>;
    #[inline]
    fn deref(&self) -> &SoaPool<T> {
        &self.pool
    }
}

/// Wraps a pool at tick 1: every row marked, every live handle recorded as inserted.
impl<T: Soa> From<SoaPool<T>> for TrackedSoaPool<T> {
    fn from(pool: SoaPool<T>) -> Self {
        let mut log = ChangeLog::new(T::Columns::FIELDS);
        log.mark_all();
        let mut inserted = Events::new();
        inserted
            .current
            .extend(pool.iter().map(|(handle, _)| handle));
        TrackedSoaPool {
            pool,
            log,
            inserted,
            removed: Events::new(),
        }
    }
}

impl<T: Soa> Clone for TrackedSoaPool<T>
where
    SoaPool<T>: Clone,
{
    /// A copy with the same values, handles, tick, versions and recorded handles.
    fn clone(&self) -> Self {
        TrackedSoaPool {
            pool: self.pool.clone(),
            log: self.log.clone(),
            inserted: self.inserted.clone(),
            removed: self.removed.clone(),
        }
    }
}

impl<T: Soa> fmt::Debug for TrackedSoaPool<T>
where
    SoaPool<T>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrackedSoaPool")
            .field("tick", &self.log.now)
            .field("pool", &self.pool)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::ChangeLog;

    #[test]
    fn a_mark_the_versions_cannot_hold_marks_every_field_whole() {
        // Rows near `usize::MAX` (a vector of zero-sized rows) need more stamps than an
        // allocation can hold: 2^58 blocks of 32 fields overflow `isize::MAX` bytes (refused
        // without allocating, so Miri runs it too), of 100 fields overflow `usize`.
        for fields in [32, 100] {
            let mut log = ChangeLog::new(fields);
            log.tick();
            log.mark_row(usize::MAX - 1, fields);
            assert!(log.stamps.is_empty());
            assert!(log.floors.iter().all(|&f| f == 2));
            let changed = log.changed_since(1, usize::MAX, &[]);
            assert!(
                changed
                    .map(|c| c.rows)
                    .eq((0..fields).map(|_| 0..usize::MAX))
            );
        }
        // A block that fits is stamped as usual, and reported block by block.
        let mut log = ChangeLog::new(2);
        log.tick();
        log.mark_rows(130..131);
        let blocks: alloc::vec::Vec<_> = log
            .changed_since(1, usize::MAX, &[])
            .map(|c| c.rows)
            .collect();
        assert_eq!(blocks, [128..192, 128..192]);
    }
}
