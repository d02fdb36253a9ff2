//! [`Arena::alloc_soa`]: SoA columns carved from an arena, as one block, handed out as a
//! fixed-length [`SoaSliceMut`]. A frame's particle scratch is one call, gone with the frame's
//! reset.

use crate::arena::{Arena, ArenaError};
use crate::or_panic::OrPanic;

use super::{Columns, Soa, SoaSliceMut, block_layout, place, row_to_raw};

/// Drops the rows an arena SoA slice holds, when the arena drops its values (reset, rewind, or
/// the arena's own drop). Registered through the arena's ordinary drop support, as a value.
struct DropColumns<C: Columns> {
    cols: C,
    len: usize,
}

impl<C: Columns> Drop for DropColumns<C> {
    fn drop(&mut self) {
        // SAFETY: rows `0..len` were written by `fill` and are only reachable through the
        // `SoaSliceMut` that borrowed the arena, which is gone when the arena drops its values.
        unsafe { self.cols.drop_range(0, self.len) }
    }
}

/// Bytes of one row (the sum of the columns' element sizes), for the overflow error.
fn row_bytes<T: Soa>() -> usize {
    block_layout::<T>(1).map_or(usize::MAX, |l| l.size())
}

impl Arena {
    /// Places `len` rows of `T` in the arena, every column in one block, row `i` being
    /// `init(i)`, and returns them as a fixed-length SoA slice with the same views as a
    /// [`SoaVec`](super::SoaVec). The rows are dropped when the arena is reset, rewound past them
    /// or dropped (which is why `T` must be `'static` and its columns `Send`, like
    /// [`Arena::alloc`]).
    ///
    /// ```
    /// use arena_kit::{Arena, Soa};
    ///
    /// #[derive(Soa)]
    /// struct Spark { x: f32, life: f32 }
    ///
    /// let mut arena = Arena::with_capacity(4096);
    /// let mut sparks = arena.alloc_soa(100, |i| Spark { x: i as f32, life: 1.0 });
    /// let SparkSlicesMut { x, life } = sparks.slices_mut();
    /// x.iter_mut().zip(life.iter()).for_each(|(x, l)| *x += l);
    /// assert_eq!(sparks.slices().x[99], 100.0);
    /// arena.reset(); // the frame is over: `sparks` can no longer be used
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::try_alloc_layout`]: the arena is full (or its limit reached), or the columns
    /// of `len` rows overflow the address space ([`ArenaError::SizeOverflow`]). `init` is not
    /// called then. For a type that needs dropping, the columns and their drop record are taken
    /// in one bump, so a refusal leaves the arena unchanged.
    pub fn try_alloc_soa<T, F>(
        &self,
        len: usize,
        mut init: F,
    ) -> Result<SoaSliceMut<'_, T>, ArenaError>
    where
        T: Soa + 'static,
        T::Columns: Send,
        F: FnMut(usize) -> T,
    {
        self.fill_soa(len, |i| Some(init(i)))
    }

    /// [`try_alloc_soa`](Arena::try_alloc_soa), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena cannot hold the columns; also if `init` does
    /// (the rows made so far are dropped with the arena).
    #[track_caller]
    pub fn alloc_soa<T, F>(&self, len: usize, init: F) -> SoaSliceMut<'_, T>
    where
        T: Soa + 'static,
        T::Columns: Send,
        F: FnMut(usize) -> T,
    {
        self.try_alloc_soa(len, init).or_panic("")
    }

    /// Places the rows of an exact-size iterator in the arena as SoA columns (see
    /// [`try_alloc_soa`](Arena::try_alloc_soa)). If the iterator ends before its reported length,
    /// the slice holds the rows it gave.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_soa`](Arena::try_alloc_soa).
    pub fn try_alloc_soa_from_iter<T, I>(&self, rows: I) -> Result<SoaSliceMut<'_, T>, ArenaError>
    where
        T: Soa + 'static,
        T::Columns: Send,
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut rows = rows.into_iter();
        self.fill_soa(rows.len(), |_| rows.next())
    }

    /// [`try_alloc_soa_from_iter`](Arena::try_alloc_soa_from_iter), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena cannot hold the columns.
    #[track_caller]
    pub fn alloc_soa_from_iter<T, I>(&self, rows: I) -> SoaSliceMut<'_, T>
    where
        T: Soa + 'static,
        T::Columns: Send,
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.try_alloc_soa_from_iter(rows).or_panic("")
    }

    /// Carves the block, registers the drop record (for types that need one), and writes rows
    /// from `next` until it returns `None` or `len` rows are written.
    fn fill_soa<T, F>(&self, len: usize, mut next: F) -> Result<SoaSliceMut<'_, T>, ArenaError>
    where
        T: Soa + 'static,
        T::Columns: Send,
        F: FnMut(usize) -> Option<T>,
    {
        let layout = block_layout::<T>(len).map_err(|_| ArenaError::SizeOverflow {
            elem_size: row_bytes::<T>(),
            count: len,
        })?;
        // Rows that need dropping take the columns with their drop record, in one bump.
        let needs_drop = <T::Columns as Columns>::NEEDS_DROP;
        let (base, record) = self.try_alloc_rows(layout, len, needs_drop, |base| DropColumns {
            cols: place::<T>(base.as_ptr(), len),
            len: 0,
        })?;
        let cols = place::<T>(base.as_ptr(), len);
        let mut written = 0;
        if let Some(record) = record {
            while record.len < len {
                let Some(row) = next(record.len) else { break };
                let parts = row_to_raw(row);
                // SAFETY: `record.len < len`, a row of the block not yet written.
                unsafe { cols.write(record.len, parts) };
                // Counted at once: if `next` panics later, the arena still drops this row.
                record.len += 1;
            }
            written = record.len;
        } else {
            while written < len {
                let Some(row) = next(written) else { break };
                let parts = row_to_raw(row);
                // SAFETY: `written < len`, a row of the block not yet written.
                unsafe { cols.write(written, parts) };
                written += 1;
            }
        }
        // SAFETY: rows `0..written` are initialised, and the block is this call's alone for as
        // long as the arena is borrowed; the arena cannot be reset while the slice lives.
        Ok(unsafe { SoaSliceMut::from_raw(cols, written) })
    }
}
