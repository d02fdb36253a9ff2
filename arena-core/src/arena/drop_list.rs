//! Pending destructors ("cleanup callbacks"): a list linked through the arena's own
//! memory, newest first, run in reverse allocation order on reset, rewind and drop.
//!
//! A record sits right before the values it drops, and covers a *run*: values of one type
//! allocated back to back share one record (the newest record grows while the bump pointer still
//! sits at its end and no marker was taken since), so reset drops them with one `drop_in_place`
//! over a slice. Records and their runs are ordered by position: rewinding to a position pops
//! exactly the records whose values reach past it. A destructor is unlinked before it runs, so a
//! panicking destructor is never run twice; the remaining ones still run while the panic unwinds
//! (a second panic aborts, as with `Vec`).

use core::any::TypeId;
use core::ptr::NonNull;

use super::Arena;
use super::marker::Pos;

/// One pending destructor, for a run of values of one type.
pub(super) struct DropRecord {
    /// Drops `len` values of the record's type starting at `value`.
    drop_fn: unsafe fn(NonNull<u8>, usize),
    /// The values' type, so only values of the same type join the run; [`Building`] while the
    /// record's values are being built, so nothing allocated by their constructor joins it.
    type_id: TypeId,
    value: NonNull<u8>,
    len: usize,
    /// One past the last value covered.
    end: NonNull<u8>,
    prev: Option<NonNull<DropRecord>>,
    /// Index of the page holding the values, for position comparisons.
    page: usize,
}

/// The type a record claims while its values are being built: no value has it, so no run can
/// join the record then. (For a zero-sized type the record's end stays at the bump pointer while
/// the constructor runs; a constructor allocating the same type would otherwise extend the run
/// and then have its count overwritten when the outer value is finished.)
enum Building {}

/// Drops `len` values of type `T` at `ptr`, last to first (reverse allocation order). If one
/// destructor panics, the ones before it still run while unwinding.
///
/// # Safety
///
/// - `ptr` points to `len` initialised values of `T` that are not used afterwards.
unsafe fn drop_values<T>(ptr: NonNull<u8>, len: usize) {
    /// The values not dropped yet: `[0, left)`.
    struct Rest<T> {
        ptr: *mut T,
        left: usize,
    }
    impl<T> Drop for Rest<T> {
        fn drop(&mut self) {
            while self.left > 0 {
                self.left -= 1;
                // SAFETY: the values below `left` are initialised and not dropped yet.
                unsafe { core::ptr::drop_in_place(self.ptr.add(self.left)) };
            }
        }
    }
    let mut rest = Rest {
        ptr: ptr.cast::<T>().as_ptr(),
        left: len,
    };
    while rest.left > 0 {
        rest.left -= 1;
        // SAFETY: guaranteed by the caller; each value is dropped once, highest index first.
        unsafe { core::ptr::drop_in_place(rest.ptr.add(rest.left)) };
    }
    core::mem::forget(rest);
}

impl Arena {
    /// Links a record that will drop values of `T` at `value` into the drop list, covering none
    /// of them yet; [`set_drop_len`](Arena::set_drop_len) covers them once they are built. It is
    /// linked *before* the values are built so that records allocated while building them (a
    /// constructor that allocates) come later in the list, keeping the list ordered by position.
    /// Until then it claims the type [`Building`], so no value joins its run.
    ///
    /// # Safety
    ///
    /// - `record` is memory of this arena's current page, valid for a `DropRecord`, placed before
    ///   the memory of the values it will drop (in the same page), and not reused while the
    ///   record is linked.
    pub(super) unsafe fn push_drop<T: 'static>(
        &self,
        record: NonNull<DropRecord>,
        value: NonNull<u8>,
    ) {
        let rec = DropRecord {
            drop_fn: drop_values::<T>,
            type_id: TypeId::of::<Building>(),
            value,
            len: 0,
            end: value,
            prev: self.drops.get(),
            page: Arena::page_index(self.cursor.page()),
        };
        // SAFETY: guaranteed by the caller.
        unsafe { record.write(rec) };
        self.drops.set(Some(record));
        self.run_open.set(true);
    }

    /// The newest record, if the next value of type `T` would extend its run: same type, the
    /// bump pointer at the run's end, no marker taken since, no guard bytes.
    #[inline(always)]
    pub(super) fn open_run<T: 'static>(&self) -> Option<NonNull<DropRecord>> {
        let head = self.drops.get()?;
        // SAFETY: the head record is live (see `run_drops_from`).
        let rec = unsafe { head.as_ref() };
        let open = self.run_open.get() && !(crate::poison::ENABLED && self.guarded);
        (open && rec.end == self.cursor.ptr() && rec.type_id == TypeId::of::<T>()).then_some(head)
    }

    /// Adds the value of `T` just written at the run's end to the run.
    ///
    /// # Safety
    ///
    /// - `run` came from [`open_run`](Arena::open_run) for `T` before the value's slot was
    ///   bumped, and the value is initialised.
    #[inline(always)]
    pub(super) unsafe fn extend_run<T>(&self, run: NonNull<DropRecord>) {
        // SAFETY: guaranteed by the caller: the slot at `end` is the next value of the run.
        unsafe {
            let rec = &mut *run.as_ptr();
            rec.len += 1;
            rec.end = rec.end.add(size_of::<T>());
        }
    }

    /// Makes a record from [`push_drop`](Arena::push_drop) cover `len` values, and lets later
    /// values of `T` join its run.
    ///
    /// # Safety
    ///
    /// - `record` came from `push_drop::<T>`, is linked, and its `len` values of `T` are
    ///   initialised and owned by the arena.
    pub(super) unsafe fn set_drop_len<T: 'static>(&self, record: NonNull<DropRecord>, len: usize) {
        // SAFETY: the record is live (linked) and only accessed through the arena; its `len`
        // values of `T` follow `value` inside its page.
        unsafe {
            let rec = &mut *record.as_ptr();
            rec.len = len;
            rec.end = rec.value.add(len * size_of::<T>());
            rec.type_id = TypeId::of::<T>();
        }
    }

    /// Whether `record` is the newest record.
    pub(super) fn is_newest_drop(&self, record: NonNull<DropRecord>) -> bool {
        self.drops.get() == Some(record)
    }

    /// Unlinks `record`, the newest record, whose values failed to build, so its memory can be
    /// given back. The next value starts a new run.
    ///
    /// # Safety
    ///
    /// - `record` is the newest record (see [`is_newest_drop`](Arena::is_newest_drop)) and
    ///   covers no values (its `len` is 0).
    pub(super) unsafe fn unlink_newest_drop(&self, record: NonNull<DropRecord>) {
        // SAFETY: the record is linked, so live (see `run_drops_from`).
        let rec = unsafe { record.as_ref() };
        debug_assert!(self.is_newest_drop(record) && rec.len == 0);
        self.drops.set(rec.prev);
        self.run_open.set(false);
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
            // A run is freed (and dropped whole) as soon as any of its values reaches `pos`.
            // (`page` is the page of the values, which their record shares.)
            if Pos::new(rec.page, rec.end) <= pos {
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

    /// Number of drop records pending: one per run of same-typed values allocated back to back
    /// (not one per value); 0 means nothing will be dropped. The record of a value whose
    /// constructor panicked covers nothing and is not counted.
    pub fn pending_drops(&self) -> usize {
        let mut n = 0;
        let mut next = self.drops.get();
        while let Some(rec) = next {
            // SAFETY: see `run_drops_from`.
            let rec = unsafe { rec.as_ref() };
            n += usize::from(rec.len > 0);
            next = rec.prev;
        }
        n
    }
}
