//! Pending destructors ("cleanup callbacks" in the seeds): a list linked through the arena's own
//! memory, newest first, run in reverse allocation order on reset, rewind and drop.
//!
//! A record sits right after the value it drops, so records are ordered by position: rewinding
//! to a position pops exactly the records at or after it. A destructor is unlinked before it
//! runs, so a panicking destructor is never run twice; the remaining ones still run while the
//! panic unwinds (a second panic aborts, as with `Vec`).

use core::ptr::NonNull;

use super::Arena;
use super::marker::Pos;

/// One pending destructor.
pub(super) struct DropRecord {
    /// Drops `len` values of the record's type starting at `value`.
    drop_fn: unsafe fn(NonNull<u8>, usize),
    value: NonNull<u8>,
    len: usize,
    prev: Option<NonNull<DropRecord>>,
    /// Index of the page holding this record, for position comparisons.
    page: usize,
}

/// Drops `len` values of type `T` at `ptr`.
///
/// # Safety
///
/// - `ptr` points to `len` initialised values of `T` that are not used afterwards.
unsafe fn drop_values<T>(ptr: NonNull<u8>, len: usize) {
    let slice = core::ptr::slice_from_raw_parts_mut(ptr.cast::<T>().as_ptr(), len);
    // SAFETY: guaranteed by the caller.
    unsafe { core::ptr::drop_in_place(slice) };
}

impl Arena {
    /// Links a record that will drop values of `T` at `value` into the drop list, covering none
    /// of them yet; [`set_drop_len`](Arena::set_drop_len) covers them once they are built. It is
    /// linked *before* the values are built so that records allocated while building them (a
    /// constructor that allocates) come later in the list, keeping the list ordered by position.
    ///
    /// # Safety
    ///
    /// - `record` is memory of this arena's current page, valid for a `DropRecord`, placed after
    ///   the memory of the values it will drop, and not reused while the record is linked.
    pub(super) unsafe fn push_drop<T>(&self, record: NonNull<DropRecord>, value: NonNull<u8>) {
        let rec = DropRecord {
            drop_fn: drop_values::<T>,
            value,
            len: 0,
            prev: self.drops.get(),
            page: Arena::page_index(self.cur.get()),
        };
        // SAFETY: guaranteed by the caller.
        unsafe { record.write(rec) };
        self.drops.set(Some(record));
    }

    /// Makes a record from [`push_drop`](Arena::push_drop) cover `len` values.
    ///
    /// # Safety
    ///
    /// - `record` is linked and its `len` values of `T` are initialised and owned by the arena.
    pub(super) unsafe fn set_drop_len(&self, record: NonNull<DropRecord>, len: usize) {
        // SAFETY: the record is live (linked) and only accessed through the arena.
        unsafe { (*record.as_ptr()).len = len };
    }

    /// Runs (and unlinks) every pending destructor at or after `pos`, newest first.
    pub(super) fn run_drops_from(&self, pos: Pos) {
        /// Finishes the remaining destructors if one of them panics.
        struct Resume<'a>(&'a Arena, Pos);
        impl Drop for Resume<'_> {
            fn drop(&mut self) {
                self.0.run_drops_from(self.1);
            }
        }
        while let Some(rec_ptr) = self.drops.get() {
            // SAFETY: records in the list are live: they are only unlinked here, and the memory
            // they sit in is only reused after they were unlinked.
            let rec = unsafe { rec_ptr.as_ref() };
            if Pos::new(rec.page, rec_ptr.cast()) < pos {
                break;
            }
            self.drops.set(rec.prev);
            let (drop_fn, value, len) = (rec.drop_fn, rec.value, rec.len);
            let resume = Resume(self, pos);
            // SAFETY: the record was pushed by `push_drop` for `len` live values at `value`, and
            // it is unlinked, so this is the only time they are dropped.
            unsafe { drop_fn(value, len) };
            core::mem::forget(resume);
        }
    }

    /// Number of pending destructors (records, not values).
    pub fn pending_drops(&self) -> usize {
        let mut n = 0;
        let mut next = self.drops.get();
        while let Some(rec) = next {
            n += 1;
            // SAFETY: see `run_drops_from`.
            next = unsafe { rec.as_ref().prev };
        }
        n
    }
}
