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
//!
//! Values of types that alternate (`A, B, A, B, ...`) break every run. Such a value does not get a
//! record of its own: when the open record's run holds one value and ends at the bump pointer, or
//! its tail (below) does, the value is appended to that record's *tail*, a stack of
//! [`TailEntry`]s, each a 16-byte header (the value's drop function and the entry before it)
//! placed right before its value. A record drops its tail first, newest first, then its run,
//! which keeps reverse allocation order. A value of the tail's newest type, or one after a run
//! of two or more, starts a record of its own instead, so runs form as before.

use core::ptr::NonNull;

use super::Arena;
use super::marker::Pos;
use crate::cold_path;

/// Drops the values a record covers: `(value, end, len)`. See [`drop_values`].
type DropFn = unsafe fn(NonNull<u8>, *mut u8, usize);

/// One pending destructor, for a run of values of one type and the tail of values after it.
///
/// `end` comes first (`repr(C)`), as `drop` does in a [`TailEntry`]: the word that covers a
/// built value is then at offset 0 of either, so the allocation path stores through the one
/// pointer it holds, without adding an offset that depends on the path taken.
#[repr(C)]
pub(super) struct DropRecord {
    /// One past the last value covered (null only in the closed records, [`NO_RUN`]).
    end: *mut u8,
    /// Drops the values of the record's type in `[value, end)` (`len` of them for a zero-sized
    /// type). It also names the type: a run only takes values whose `drop_values::<T>` is this
    /// function (see [`Arena::open_run`]).
    drop_fn: DropFn,
    value: NonNull<u8>,
    /// Values covered, for a zero-sized type (whose values take no bytes); a sized type's
    /// count is `(end - value) / size`, so a run of them grows by moving `end` alone.
    len: usize,
    prev: Option<NonNull<DropRecord>>,
    /// Index of the page holding the values, for position comparisons.
    page: usize,
    /// The newest entry of the record's tail (values of other types appended after its run),
    /// or [`no_tail`] (never written, and its `drop` word is no type's).
    tail: NonNull<TailEntry>,
    /// One past the tail's newest value: the record's end once it has a tail. Before that, one
    /// past the run's first value, so a value joins the tail only after a run of one (see
    /// [`Arena::open_tail`]); null in the closed records ([`NO_RUN`]).
    tail_end: *mut u8,
}

/// The `tail` of a record without one: an entry that is never written, whose `drop` word is
/// null (no type's), so a value of any type may follow a run of one.
struct NoTail(TailEntry);

// SAFETY: `NO_TAIL` is never written (entries are only written when bumped, and the tail walk
// stops before it) and holds no interior mutability, so shared access from any thread is reads
// of plain data.
unsafe impl Sync for NoTail {}

static NO_TAIL: NoTail = NoTail(TailEntry {
    drop: core::ptr::null(),
    prev: NonNull::from_ref(&NO_TAIL.0),
});

/// A pointer to [`NO_TAIL`]: the `tail` of a record that has none.
fn no_tail() -> NonNull<TailEntry> {
    NonNull::from_ref(&NO_TAIL.0)
}

/// Drops the value of one type at the pointer: the drop function of a [`TailEntry`].
type DropOneFn = unsafe fn(NonNull<u8>);

/// One value of a record's tail: placed right before the value (the value is at the entry's
/// address plus its 16 bytes), linked to the entry before it. `drop` comes first (see
/// [`DropRecord`]).
#[repr(C)]
pub(super) struct TailEntry {
    /// Drops the value: a [`DropOneFn`] as a pointer (see [`TailEntry::drop_word`]),
    /// [`drop_unbuilt`] until the value is built, so an entry whose constructor panicked drops
    /// nothing (and the walk calls every entry's function without testing it first). An entry
    /// for a value already built (`Arena::alloc`) leaves it unwritten for the moment the value
    /// is moved in, when nothing can read it (see [`Arena::push_entry`]). Null only in
    /// [`NO_TAIL`], which is never dropped.
    drop: *const (),
    /// The entry before this one in the same tail, or [`no_tail`] (which is its own).
    prev: NonNull<TailEntry>,
}

impl TailEntry {
    /// The `drop` field of `entry`, written by [`TailEntry::drop_word`]'s value when its value
    /// is built.
    #[inline(always)]
    pub(super) fn drop_slot(entry: NonNull<TailEntry>) -> NonNull<*const ()> {
        // SAFETY: a field of a non-null pointer is non-null.
        unsafe { NonNull::new_unchecked(&raw mut (*entry.as_ptr()).drop) }
    }

    /// The `drop` word of an entry whose value is a `T`: `drop_one::<T>` as a pointer (turned
    /// back into the function by [`TailEntry::drop_fn`]).
    #[inline(always)]
    pub(super) fn drop_word<T>() -> *const () {
        drop_one::<T> as DropOneFn as *const ()
    }

    /// The `drop` word of an entry whose value is not built yet: [`drop_unbuilt`].
    #[inline(always)]
    fn unbuilt_word() -> *const () {
        drop_unbuilt as DropOneFn as *const ()
    }

    /// Whether the entry's value is built (its `drop` word is no longer [`drop_unbuilt`]'s).
    fn built(&self) -> bool {
        self.drop != TailEntry::unbuilt_word()
    }

    /// The function that drops the entry's value: [`drop_unbuilt`] (nothing) if it is not
    /// built. Never for [`NO_TAIL`].
    fn drop_fn(&self) -> DropOneFn {
        debug_assert!(!self.drop.is_null(), "NO_TAIL is never dropped");
        // SAFETY: the `drop` word of every entry but `NO_TAIL` was written from `drop_word` or
        // `unbuilt_word`, a `DropOneFn` cast to a pointer, so this turns it back into the same
        // function pointer.
        unsafe { core::mem::transmute::<*const (), DropOneFn>(self.drop) }
    }
}

impl DropRecord {
    /// The word of `record` that covers one more value of `T`: its run's end, or for a
    /// zero-sized `T` its count (a `usize`), which the caller increments instead.
    #[inline(always)]
    pub(super) fn cover_slot<T>(record: NonNull<DropRecord>) -> NonNull<*const ()> {
        let rec = record.as_ptr();
        // SAFETY: a field of a non-null pointer is non-null.
        unsafe {
            if size_of::<T>() == 0 {
                NonNull::new_unchecked(&raw mut (*rec).len).cast()
            } else {
                NonNull::new_unchecked(&raw mut (*rec).end).cast()
            }
        }
    }
}

/// What [`drop_unbuilt`] names: its body takes this static's address, which no other function
/// does, so no optimisation merges it with an empty drop function of some type (the `drop`
/// word tells an unbuilt value from a built one, [`TailEntry::built`]).
static UNBUILT: u8 = 0;

/// The drop function of an entry whose value is not built (its constructor is running, or
/// panicked): drops nothing. Not generic and never inlined into another crate's code, so its
/// address is one and the same wherever it is taken.
///
/// # Safety
///
/// None needed; it is `unsafe` to have the type of every drop function.
#[inline(never)]
unsafe fn drop_unbuilt(_: NonNull<u8>) {
    core::hint::black_box(&UNBUILT);
}

/// Calls `call(f)`, but through a call site of its own, calling `first`, when `same` says `f` is
/// `first`: the drop walk's indirect calls, split by target.
///
/// The walk calls each record's and each tail entry's drop function through a pointer. Where
/// values of two types alternate, one call site sees its target alternate with every call,
/// which some processors mispredict nearly every time: on an AMD EPYC, `drop-2types` took 9.2 ns
/// a value with one site and 4.4 ns with two (BENCHMARKS.md). Split, each site sees one target
/// for two types, and the branch between them alternates, which branch predictors learn. The
/// compiler fence keeps the compiler from merging the two calls back into one (a select of the
/// target); it emits no instruction.
#[inline(always)]
fn split_call<F>(same: bool, f: F, first: F, call: impl FnOnce(F)) {
    if same {
        call(first);
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    } else {
        call(f);
    }
}

/// Drops the value of `T` at `value`.
///
/// # Safety
///
/// - `value` points to an initialised `T` that is not used afterwards.
unsafe fn drop_one<T>(value: NonNull<u8>) {
    // SAFETY: guaranteed by the caller.
    unsafe { core::ptr::drop_in_place(value.cast::<T>().as_ptr()) };
}

/// The record [`Arena::open_run`] looks at when no run may grow: its `end` is null, which no
/// bump pointer is, so no value joins it. It is only ever read.
struct Closed(DropRecord);

// SAFETY: `CLOSED` and `BUILDING` are never written (no run is extended and no tail entry
// appended through them: their `end` and `tail_end` are null, which no bump pointer matches,
// and they are never linked, so no walk unlinks from them) and hold no interior mutability, so
// shared access from any thread is reads of plain data.
unsafe impl Sync for Closed {}

/// Does nothing: the drop function of the closed records ([`NO_RUN`]), which cover no values.
///
/// # Safety
///
/// None needed; it is `unsafe` to have the type of every drop function.
unsafe fn drop_nothing(_: NonNull<u8>, _: *mut u8, _: usize) {}

/// A record that covers nothing and whose `end` is null, which no bump pointer is: what the
/// open run is when no value may join it ([`CLOSED`], [`BUILDING`]).
const NO_RUN: DropRecord = DropRecord {
    drop_fn: drop_nothing,
    value: NonNull::dangling(),
    end: core::ptr::null_mut(),
    len: 0,
    prev: None,
    page: 0,
    tail: NonNull::from_ref(&NO_TAIL.0),
    tail_end: core::ptr::null_mut(),
};

static CLOSED: Closed = Closed(NO_RUN);

/// The open run while the values of the newest record (from [`Arena::push_drop`]) are being
/// built: closed as [`CLOSED`] is ([`NO_RUN`] too), at another address, so that
/// [`Arena::set_drop_len`] can tell whether a marker closed the run meanwhile.
static BUILDING: Closed = Closed(NO_RUN);

/// A pointer to [`BUILDING`].
fn building_run() -> NonNull<DropRecord> {
    NonNull::from(&BUILDING.0)
}

/// A pointer to [`CLOSED`], to store as the open run when none is.
pub(super) fn closed_run() -> NonNull<DropRecord> {
    NonNull::from(&CLOSED.0)
}

/// Drops the values of type `T` in `[value, end)` (or `len` of them for a zero-sized `T`), last
/// to first (reverse allocation order). If one destructor panics, the ones before it still run
/// while unwinding.
///
/// Its address names `T` in a record (see [`Arena::open_run`]), so its code holds `T`'s size
/// and alignment (below): optimised builds merge identical functions, and the drop code of two
/// types that differ only in alignment (`[u64; 2]` beside a `[u8; 0]` or an `[Align16; 0]`) is
/// identical, so without them a value of the more aligned type joined the other type's run, at
/// an address not aligned for it. Two functions that are merged now drop the same code, step
/// by the same size and keep the same alignment.
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
    // Two stores a record, never a value: no two types that differ in size or alignment
    // share this function's code, so none share its address.
    core::hint::black_box((size_of::<T>(), align_of::<T>()));
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
    /// No run is open until then, so no value joins it: the open run is [`BUILDING`] until a
    /// marker or another record replaces it.
    ///
    /// # Safety
    ///
    /// - `record` is memory of this arena's current page, valid for a `DropRecord`, placed before
    ///   the memory of the values it will drop (in the same page), and not reused while the
    ///   record is linked.
    /// - The arena may drop values of `T` whenever it resets, rewinds or is dropped, on any
    ///   thread: `T` is [`ArenaDrop`](super::ArenaDrop) and `'static`, as the public
    ///   allocations that register values require.
    #[inline(always)]
    pub(super) unsafe fn push_drop<T>(&self, record: NonNull<DropRecord>, value: NonNull<u8>) {
        let rec = DropRecord {
            drop_fn: drop_values::<T>,
            value,
            end: value.as_ptr(),
            len: 0,
            prev: self.drops.get(),
            page: self.cursor.page_index(),
            tail: no_tail(),
            // Where the first value ends: `open_tail` compares it with the bump pointer.
            tail_end: value.as_ptr().wrapping_add(size_of::<T>()),
        };
        // SAFETY: guaranteed by the caller.
        unsafe { record.write(rec) };
        self.drops.set(Some(record));
        self.run.set(building_run());
    }

    /// [`push_drop`](Arena::push_drop) for one value built after it, and makes the record the
    /// open run at once (not in a guarded arena): its `end` is the slot's start while the
    /// value is built and the bump pointer is past the slot, so nothing joins it before
    /// the value, once built, is covered by moving the run's end past it
    /// ([`DropRecord::cover_slot`]; a zero-sized value of `T` built meanwhile may join,
    /// counting itself, as the outer one then counts itself after it).
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
    /// The type is told by the record's drop function alone. Two types can share a drop
    /// function's address only when the compiler merged two identical `drop_values` bodies,
    /// and each body holds its type's size and alignment (see [`drop_values`]): then each
    /// type's values are dropped by exactly the code of its own `drop_values`, step by the same
    /// size and have the same alignment, so a run that mixes them drops each value correctly
    /// and keeps each aligned (the fast path bumps at alignment 1, right at the run's end). One
    /// type's function can have several addresses; its values then form several runs.
    #[inline(always)]
    pub(super) fn open_run<T: 'static>(&self) -> Option<NonNull<DropRecord>> {
        let run = self.run.get();
        // SAFETY: `run` is a closed record (`CLOSED`, `BUILDING`) or the newest linked record, which is live (see
        // `run_drops_from`).
        let rec = unsafe { run.as_ref() };
        // Two branches, not one over both tests: each compare then reads its field from memory.
        if rec.end != self.cursor.ptr().as_ptr() {
            cold_path();
            return None;
        }
        // One function can have several addresses (Miri picks one of several at random, and
        // separate codegen units may each have their copy): a value whose drop function's
        // address differs from the run's starts a record of its own, which costs a record's
        // bytes, not correctness. (Telling the type by its `TypeId` instead cost every change
        // of type a 16-byte compare, or the record 16 bytes.)
        #[allow(unpredictable_function_pointer_comparisons)]
        if rec.drop_fn != drop_values::<T> as DropFn {
            cold_path();
            return None;
        }
        Some(run)
    }

    /// The open run's record, if a value of `T` goes to the end of its tail: the record's run
    /// holds one value and ends at the bump pointer (when it has no tail yet), or its tail ends
    /// there and the tail's newest value is not a `T` (a value of the same type as the newest
    /// starts a record, whose run it may then grow). Called when the value does not extend the
    /// open run; never for a zero-sized `T` (whose values take no bytes, so an entry's 16 would
    /// be all they cost).
    #[inline(always)]
    pub(super) fn open_tail<T: 'static>(
        &self,
    ) -> Option<(NonNull<DropRecord>, NonNull<TailEntry>)> {
        let run = self.run.get();
        // SAFETY: `run` is a closed record (`CLOSED`, `BUILDING`) or the newest linked record, which is live (see
        // `run_drops_from`).
        let rec = unsafe { run.as_ref() };
        let cursor = self.cursor.ptr().as_ptr();
        // Before the record has a tail, `tail_end` is the end of its run's first value: a value
        // goes to the tail only after a run of one value (or while that value is being built).
        // After a longer run, the values of the next type are as likely to form a run of their
        // own, which a record of their own lets them do. A closed record's is null, which no
        // bump pointer is.
        if rec.tail_end != cursor {
            return None;
        }
        let tail = rec.tail;
        // SAFETY: the entries of a linked record's tail are live (see `run_drops_from`), and
        // `NO_TAIL` always is.
        let newest = unsafe { tail.as_ref() };
        // An address that differs for the same type only costs that value an entry.
        if newest.drop == TailEntry::drop_word::<T>() {
            return None;
        }
        Some((run, tail))
    }

    /// Appends `entry` (the header bumped right before a value's slot that ends at `end`) to
    /// `record`'s tail, whose newest entry is `tail`, dropping nothing until the value is built
    /// and its drop function stored ([`TailEntry::drop_word`]; with `BUILT`, unwritten until
    /// then, below). The tail's end moves to `end`,
    /// so the values a constructor allocates meanwhile may join the tail after it.
    ///
    /// With `BUILT` the entry's `drop` word is left unwritten: the caller writes the value and
    /// arms the entry next, with nothing in between that could panic, allocate or walk the
    /// list (the value was built before the call).
    ///
    /// # Safety
    ///
    /// - `record` and `tail` came from [`open_tail`](Arena::open_tail) just now, and `entry`
    ///   and the slot after it, up to `end`, were bumped right after (at the record's end, in
    ///   its page), so `tail` is still the record's newest entry.
    /// - With `BUILT`, the caller arms the entry ([`TailEntry::drop_slot`]) before anything
    ///   can panic, allocate from this arena or reach its drop list.
    #[inline(always)]
    pub(super) unsafe fn push_entry<const BUILT: bool>(
        &self,
        record: NonNull<DropRecord>,
        tail: NonNull<TailEntry>,
        entry: NonNull<TailEntry>,
        end: *mut u8,
    ) {
        debug_assert!(
            // SAFETY: guaranteed by the caller: the record is linked, so live.
            unsafe { (*record.as_ptr()).tail } == tail
        );
        // SAFETY: guaranteed by the caller: the record is linked, so live, and `entry` is
        // fresh memory for a `TailEntry` (8-aligned: the slot's alignment is at least 8).
        unsafe {
            let rec = record.as_ptr();
            if !BUILT {
                TailEntry::drop_slot(entry).write(TailEntry::unbuilt_word());
            }
            (&raw mut (*entry.as_ptr()).prev).write(tail);
            (*rec).tail = entry;
            (*rec).tail_end = end;
        }
    }

    /// Makes a record from [`push_drop`](Arena::push_drop) cover `len` values, and lets later
    /// values of `T` join its run (not in a guarded arena, whose values each have their own
    /// guard bytes), unless another record came after it or a marker was taken while its
    /// values were built (a value joining it would then lie past the marker, and a rewind to
    /// the marker would drop the whole record).
    ///
    /// # Safety
    ///
    /// - `record` came from `push_drop::<T>`, is linked, and its `len` values of `T` are
    ///   initialised and owned by the arena.
    pub(super) unsafe fn set_drop_len<T>(&self, record: NonNull<DropRecord>, len: usize) {
        // SAFETY: the record is live (linked) and only accessed through the arena; its `len`
        // values of `T` follow `value` inside its page.
        unsafe {
            let rec = &mut *record.as_ptr();
            rec.len = len;
            rec.end = rec.value.as_ptr().add(len * size_of::<T>());
        }
        if self.is_newest_drop(record) && self.run.get() == building_run() {
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
        debug_assert!(
            self.is_newest_drop(record)
                && rec.len == 0
                && rec.end == rec.value.as_ptr()
                && rec.tail == no_tail()
        );
        self.drops.set(rec.prev);
        self.close_run();
    }

    /// Runs (and unlinks) every pending destructor at or after `pos`, newest first.
    pub(super) fn run_drops_from(&self, pos: Pos) {
        if pos == Pos::MIN {
            self.run_drops::<true>(pos);
        } else {
            self.run_drops::<false>(pos);
        }
    }

    /// [`run_drops_from`](Self::run_drops_from); `ALL` when `pos` is [`Pos::MIN`], which every
    /// record is at or after, so the walk does not compare each record's place with it.
    #[inline(always)]
    fn run_drops<const ALL: bool>(&self, pos: Pos) {
        /// Finishes the remaining destructors if one of them panics.
        struct Resume<'a>(&'a Arena, Pos);
        impl Drop for Resume<'_> {
            fn drop(&mut self) {
                self.0.run_drops_from(self.1);
            }
        }
        /// The records left, from `next` on: kept in a register during the walk and written
        /// to the arena when it ends, or by this guard's drop if a destructor panics (before
        /// `Resume`, declared first, walks on from there).
        struct Head<'a> {
            arena: &'a Arena,
            next: Option<NonNull<DropRecord>>,
        }
        impl Drop for Head<'_> {
            fn drop(&mut self) {
                self.arena.drops.set(self.next);
            }
        }
        // The records run here may include the open run's: nothing may extend it afterwards.
        self.close_run();
        // One guard for the whole walk: each record is unlinked before its destructor runs, so
        // if one panics, the guard picks up at the next.
        let resume = Resume(self, pos);
        let mut head = Head {
            arena: self,
            next: self.drops.get(),
        };
        // The newest record's drop function, for `split_call`.
        let first_run = match head.next {
            // SAFETY: a linked record is live (see below).
            Some(rec) => unsafe { (*rec.as_ptr()).drop_fn },
            None => drop_nothing,
        };
        while let Some(rec_ptr) = head.next {
            let rec = rec_ptr.as_ptr();
            // SAFETY: records in the list are live: they are only unlinked here, and the memory
            // they sit in is only reused after they were unlinked. Fields are read and written
            // through the raw pointer. No destructor run below reaches this arena (a reset, a
            // rewind and a scope's end hold it exclusively, a scratch reset keeps its depth
            // counted, and the arena's drop has it to itself), so none reads the list's head or
            // a record's tail while `head` and `rest` hold them.
            let tail = unsafe { (*rec).tail };
            if !ALL {
                // A record is freed (and dropped whole) as soon as any of its values reaches
                // `pos`: a marker ends the open run and its tail, so a record never spans one.
                // (`page` is the page of the values, which their record shares.)
                // SAFETY: as above; the record's end (its tail's, once it has one) is in the
                // page of the values, one past the last (at most the page's end).
                let (page, end) = unsafe {
                    (
                        (*rec).page,
                        NonNull::new_unchecked(if tail != no_tail() {
                            (*rec).tail_end
                        } else {
                            (*rec).end
                        }),
                    )
                };
                if Pos::new(page, end) <= pos {
                    break;
                }
            }
            // The tail first, newest first (it was allocated after the run). Each entry leaves
            // the tail before its value is dropped: the entries left are `rest.next` on, kept
            // in a register and written to the record once the tail is done, or by `rest`'s
            // drop if a destructor panics (before `resume` walks on from there).
            if tail != no_tail() {
                /// Writes the entries left back to the record when dropped.
                struct Rest {
                    rec: *mut DropRecord,
                    next: NonNull<TailEntry>,
                }
                impl Drop for Rest {
                    fn drop(&mut self) {
                        // SAFETY: the record is reachable from `head`, so live (see above),
                        // and only the walk reaches it while its destructors run.
                        unsafe { (*self.rec).tail = self.next };
                    }
                }
                let mut rest = Rest { rec, next: tail };
                // SAFETY: the tail is not empty: its newest entry is live.
                let first = unsafe { tail.as_ref() };
                let (first, first_fn) = (first.drop, first.drop_fn());
                loop {
                    let entry = rest.next;
                    // SAFETY: the entry is live (its record is linked) and not `NO_TAIL`; its
                    // value, right after it, is built unless its drop function is
                    // `drop_unbuilt`, which drops nothing; it leaves the entries left first, so
                    // it is dropped only here. `split_call` calls the entry's drop function, or
                    // `first_fn` where the two are the same function.
                    unsafe {
                        let e = entry.read();
                        rest.next = e.prev;
                        let value = entry.add(1).cast();
                        split_call(e.drop == first, e.drop_fn(), first_fn, |f| f(value));
                    }
                    if rest.next == no_tail() {
                        break;
                    }
                }
            }
            // SAFETY: as above.
            let (prev, drop_fn, value, len, run_end) = unsafe {
                (
                    (*rec).prev,
                    (*rec).drop_fn,
                    (*rec).value,
                    (*rec).len,
                    (*rec).end,
                )
            };
            head.next = prev;
            let same = drop_fn as *const () == first_run as *const ();
            // SAFETY: the record was pushed by `push_drop` for the live values in
            // `[value, run_end)` (`len` of a zero-sized type), and it is unlinked, so this is
            // the only time they are dropped. `f` is `drop_fn`, or `first_run` where the two are
            // the same function.
            let drop = |f: DropFn| unsafe { f(value, run_end, len) };
            split_call(same, drop_fn, first_run, drop);
        }
        drop(head);
        core::mem::forget(resume);
    }

    /// Number of drop records pending: one per run of same-typed values allocated back to back
    /// (not one per value), plus one per value of alternating types (each such value carries a
    /// 16-byte entry instead of starting a run); 0 means nothing will be dropped. The record of
    /// a value whose constructor panicked covers nothing and is not counted.
    pub fn pending_drops(&self) -> usize {
        let mut n = 0;
        let mut next = self.drops.get();
        while let Some(rec) = next {
            // SAFETY: see `run_drops_from`.
            let rec = unsafe { rec.as_ref() };
            n += usize::from(rec.len > 0 || rec.end != rec.value.as_ptr());
            let mut entry = rec.tail;
            while entry != no_tail() {
                // SAFETY: entries of a linked record are live.
                let e = unsafe { entry.as_ref() };
                n += usize::from(e.built());
                entry = e.prev;
            }
            next = rec.prev;
        }
        n
    }
}
