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
use crate::cold_path;

/// Drops the values a record covers: `(value, end, len)`. See [`drop_values`].
type DropFn = unsafe fn(NonNull<u8>, *mut u8, usize);

/// One pending destructor, for a run of values of one type.
pub(super) struct DropRecord {
    /// Drops the values of the record's type in `[value, end)` (`len` of them for a zero-sized
    /// type). It also names the type: a run only takes values whose `drop_values::<T>` is this
    /// function (see [`Arena::open_run`]).
    drop_fn: DropFn,
    /// The values' type: what decides whether a value joins the run when the drop functions'
    /// addresses differ (one function can have several addresses: Miri gives each use its
    /// own, and so can separate codegen units).
    type_id: TypeId,
    value: NonNull<u8>,
    /// One past the last value covered (null only in [`CLOSED`]).
    end: *mut u8,
    /// Values covered, for a zero-sized type (whose values take no bytes); a sized type's
    /// count is `(end - value) / size`, so a run of them grows by moving `end` alone.
    len: usize,
    prev: Option<NonNull<DropRecord>>,
    /// Index of the page holding the values, for position comparisons.
    page: usize,
}

/// The record [`Arena::open_run`] looks at when no run may grow: its `end` is null, which no
/// bump pointer is, so no value joins it. It is only ever read.
struct Closed(DropRecord);

// SAFETY: `CLOSED` is never written (no run is ever extended through it: its `end` never
// matches) and holds no interior mutability, so shared access from any thread is reads of
// plain data.
unsafe impl Sync for Closed {}

/// Does nothing: the drop function of [`CLOSED`], which covers no values.
///
/// # Safety
///
/// None needed; it is `unsafe` to have the type of every drop function.
unsafe fn drop_nothing(_: NonNull<u8>, _: *mut u8, _: usize) {}

static CLOSED: Closed = Closed(DropRecord {
    drop_fn: drop_nothing,
    type_id: TypeId::of::<Closed>(),
    value: NonNull::dangling(),
    end: core::ptr::null_mut(),
    len: 0,
    prev: None,
    page: 0,
});

/// A pointer to [`CLOSED`], to store as the open run when none is.
pub(super) fn closed_run() -> NonNull<DropRecord> {
    NonNull::from(&CLOSED.0)
}

/// Drops the values of type `T` in `[value, end)` (or `len` of them for a zero-sized `T`), last
/// to first (reverse allocation order). If one destructor panics, the ones before it still run
/// while unwinding.
///
/// # Safety
///
/// - `value` points to initialised values of `T` up to `end` (`len` of them for a zero-sized
///   `T`) that are not used afterwards.
unsafe fn drop_values<T>(value: NonNull<u8>, end: *mut u8, len: usize) {
    /// The values not dropped yet: `[start, end)`, dropped last to first.
    struct Rest<T> {
        start: *mut T,
        end: *mut T,
    }
    impl<T> Rest<T> {
        /// Drops the values left, last to first; each leaves `[start, end)` before it is
        /// dropped, so a panicking one is not dropped again.
        ///
        /// # Safety
        ///
        /// - `[start, end)` holds initialised values of `T` not used afterwards: `end - start`
        ///   of them counted in `T`s, or for a zero-sized `T`, `end - start` counted in bytes,
        ///   all at `start`.
        unsafe fn drop_all(&mut self) {
            while self.end != self.start {
                if size_of::<T>() == 0 {
                    // A counter, never dereferenced: every zero-sized value is at `start`.
                    self.end = self.end.cast::<u8>().wrapping_sub(1).cast::<T>();
                    // SAFETY: guaranteed by the caller: one more value is left, and `start` is
                    // non-null and aligned for a `T` (the values' address).
                    unsafe { core::ptr::drop_in_place(self.start) };
                } else {
                    // SAFETY: guaranteed by the caller: `end` is past at least one value, so
                    // one step back is the last value left.
                    unsafe {
                        self.end = self.end.sub(1);
                        core::ptr::drop_in_place(self.end);
                    }
                }
            }
        }
    }
    impl<T> Drop for Rest<T> {
        fn drop(&mut self) {
            // SAFETY: what is left in `[start, end)` is initialised and not dropped yet.
            unsafe { self.drop_all() };
        }
    }
    let start = value.cast::<T>().as_ptr();
    // A zero-sized `T` takes no bytes: `end` only counts its `len` values, one byte each, and
    // is never dereferenced.
    let end = if size_of::<T>() == 0 {
        start.cast::<u8>().wrapping_add(len).cast::<T>()
    } else {
        end.cast::<T>()
    };
    let mut rest = Rest { start, end };
    // SAFETY: guaranteed by the caller: `[value, end)` holds the record's values.
    unsafe { rest.drop_all() };
    core::mem::forget(rest);
}

impl Arena {
    /// Links a record that will drop values of `T` at `value` into the drop list, covering none
    /// of them yet; [`set_drop_len`](Arena::set_drop_len) covers them once they are built. It is
    /// linked *before* the values are built so that records allocated while building them (a
    /// constructor that allocates) come later in the list, keeping the list ordered by position.
    /// No run is open until then, so no value joins it.
    ///
    /// # Safety
    ///
    /// - `record` is memory of this arena's current page, valid for a `DropRecord`, placed before
    ///   the memory of the values it will drop (in the same page), and not reused while the
    ///   record is linked.
    #[inline(always)]
    pub(super) unsafe fn push_drop<T: 'static>(
        &self,
        record: NonNull<DropRecord>,
        value: NonNull<u8>,
    ) {
        let rec = DropRecord {
            drop_fn: drop_values::<T>,
            type_id: TypeId::of::<T>(),
            value,
            end: value.as_ptr(),
            len: 0,
            prev: self.drops.get(),
            page: Arena::page_index(self.cursor.page()),
        };
        // SAFETY: guaranteed by the caller.
        unsafe { record.write(rec) };
        self.drops.set(Some(record));
        self.close_run();
    }

    /// [`push_drop`](Arena::push_drop) for one value built after it, and makes the record the
    /// open run at once (not in a guarded arena): its `end` is the slot's start while the
    /// value is built and the bump pointer is past the slot, so nothing joins it before
    /// [`extend_run`](Arena::extend_run) covers the value (a zero-sized value of `T` built
    /// meanwhile may join, counting itself, as `extend_run` counts the outer one after it).
    ///
    /// # Safety
    ///
    /// As for `push_drop`, with the memory of one `T` at `value`, just bumped.
    #[inline(always)]
    pub(super) unsafe fn push_run<T: 'static>(
        &self,
        record: NonNull<DropRecord>,
        value: NonNull<u8>,
    ) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.push_drop::<T>(record, value) };
        self.open(record);
    }

    /// Makes `record`, the newest, the open run, unless the arena is guarded (whose values
    /// each have their own guard bytes, so no run ever opens).
    #[inline(always)]
    fn open(&self, record: NonNull<DropRecord>) {
        if !(crate::poison::ENABLED && self.guarded) {
            self.run.set(record);
        }
    }

    /// No value joins the newest record's run from here on (a marker was taken, the record is
    /// being built or unlinked, or records are being run).
    #[inline]
    pub(super) fn close_run(&self) {
        self.run.set(closed_run());
    }

    /// The open run, if the next value of type `T` would extend it: the newest record, of the
    /// same type, ending at the bump pointer, with no marker taken since it began (guarded
    /// arenas never open one). Two loads and two compares: `run` points at [`CLOSED`] when no
    /// run is open, so there is no `None` to test.
    ///
    /// The type is told by the record's drop function, or, when its address differs from the
    /// one this call sees, by the record's `TypeId`. Two types can share a drop function's
    /// address only when the compiler merged two identical `drop_values` bodies, and then each
    /// type's values are dropped by exactly the code of its own `drop_values` (the size they
    /// step by included), so a run that mixes them drops each value correctly.
    #[inline(always)]
    pub(super) fn open_run<T: 'static>(&self) -> Option<NonNull<DropRecord>> {
        let run = self.run.get();
        // SAFETY: `run` is `CLOSED` or the newest linked record, which is live (see
        // `run_drops_from`).
        let rec = unsafe { run.as_ref() };
        // Two branches, not one over both tests: each compare then reads its field from memory.
        if rec.end != self.cursor.ptr().as_ptr() {
            cold_path();
            return None;
        }
        // The drop function's address first (one load and compare), the type itself only when
        // the addresses differ.
        #[allow(unpredictable_function_pointer_comparisons)]
        if rec.drop_fn != drop_values::<T> as DropFn && rec.type_id != TypeId::of::<T>() {
            cold_path();
            return None;
        }
        Some(run)
    }

    /// Adds the value of `T` just written right after the values `run` covers to the run.
    ///
    /// # Safety
    ///
    /// - `run` is linked and covers values of `T` (it came from [`open_run`](Arena::open_run)
    ///   or [`push_run`](Arena::push_run) for `T`), and the value right after them, in the
    ///   slot bumped for it, is initialised and owned by the arena.
    #[inline(always)]
    pub(super) unsafe fn extend_run<T>(&self, run: NonNull<DropRecord>) {
        // SAFETY: guaranteed by the caller (`run` is never `CLOSED`, whose `end` no bump
        // pointer matches and which `push_run` never returns).
        unsafe {
            let rec = &mut *run.as_ptr();
            if size_of::<T>() == 0 {
                rec.len += 1;
            } else {
                rec.end = rec.end.add(size_of::<T>());
            }
        }
    }

    /// Makes a record from [`push_drop`](Arena::push_drop) cover `len` values, and lets later
    /// values of `T` join its run (not in a guarded arena, whose values each have their own
    /// guard bytes).
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
            rec.end = rec.value.as_ptr().add(len * size_of::<T>());
        }
        if self.is_newest_drop(record) {
            self.open(record);
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
        debug_assert!(self.is_newest_drop(record) && rec.len == 0 && rec.end == rec.value.as_ptr());
        self.drops.set(rec.prev);
        self.close_run();
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
        // The records run here may include the open run's: nothing may extend it afterwards.
        self.close_run();
        // One guard for the whole walk: each record is unlinked before its destructor runs, so
        // if one panics, the guard picks up at the next.
        let resume = Resume(self, pos);
        while let Some(rec_ptr) = self.drops.get() {
            // SAFETY: records in the list are live: they are only unlinked here, and the memory
            // they sit in is only reused after they were unlinked.
            let rec = unsafe { rec_ptr.as_ref() };
            // A run is freed (and dropped whole) as soon as any of its values reaches `pos`.
            // (`page` is the page of the values, which their record shares.)
            // SAFETY: `end` is in the page of the values (one past the last, at most its end).
            let end = unsafe { NonNull::new_unchecked(rec.end) };
            if Pos::new(rec.page, end) <= pos {
                break;
            }
            self.drops.set(rec.prev);
            let (drop_fn, value, len) = (rec.drop_fn, rec.value, rec.len);
            // SAFETY: the record was pushed by `push_drop` for the live values in
            // `[value, end)` (`len` of a zero-sized type), and it is unlinked, so this is the
            // only time they are dropped.
            unsafe { drop_fn(value, end.as_ptr(), len) };
        }
        core::mem::forget(resume);
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
            n += usize::from(rec.len > 0 || rec.end != rec.value.as_ptr());
            next = rec.prev;
        }
        n
    }
}
