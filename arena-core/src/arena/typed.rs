//! Typed allocation: values, slices and strings, each with a `try_` form.
//!
//! Values whose type needs dropping get a [`DropRecord`] placed right before them (one bump for
//! both), or join the newest record's run when they are of the same type and land right after
//! it, or its tail (a [`TailEntry`] right before the value) when they are of another type and
//! land right after it; `needs_drop` is a compile-time constant, so other types pay nothing.

// Handing out `&mut T` from `&self` is the point of an arena: each call returns fresh memory.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;
use core::convert::Infallible;
use core::mem;
use core::ptr::NonNull;

use super::drop_list::{DropRecord, TailEntry};
use super::{AllocOrInitError, Arena, ArenaError};
use crate::collections::{ArenaBox, ArenaFull};
use crate::or_panic::OrFail;

/// The store that covers a value once it is built (see [`Arena::try_alloc_with`]): `word` into
/// `slot`, the end of the value's run or the drop function of its tail entry. For a zero-sized
/// `T` (never in a tail) `slot` is the run's count, incremented instead, because values a
/// constructor allocates may join the run meanwhile.
struct Cover {
    slot: NonNull<*const ()>,
    word: *const (),
}

impl Cover {
    /// Covering `value`, the slot right after the values `record`'s run covers, by moving the
    /// run's end past it.
    #[inline(always)]
    fn run_end<T>(record: NonNull<DropRecord>, value: NonNull<T>) -> Cover {
        Cover {
            slot: DropRecord::cover_slot::<T>(record),
            word: value.as_ptr().wrapping_add(1).cast_const().cast(),
        }
    }

    /// Covering the value right after `entry`, a `T`, by arming the entry.
    #[inline(always)]
    fn entry<T>(entry: NonNull<TailEntry>) -> Cover {
        Cover {
            slot: TailEntry::drop_slot(entry),
            word: TailEntry::drop_word::<T>(),
        }
    }

    /// Makes the value covered.
    ///
    /// # Safety
    ///
    /// - The value is initialised and owned by the arena, and `slot`'s record (or entry) is
    ///   still linked.
    #[inline(always)]
    unsafe fn apply<T>(self) {
        // SAFETY: `slot` is a field of a live record or entry, guaranteed by the caller.
        unsafe {
            if size_of::<T>() == 0 {
                *self.slot.cast::<usize>().as_ptr() += 1;
            } else {
                self.slot.write(self.word);
            }
        }
    }
}

/// The block of a tail entry followed by a `T`, and the value's offset in it: the entry ends
/// right where the value starts (the block is aligned to at least the entry's 8 bytes).
/// `None` for a `T` too large for any block, which then takes the new record's path (and its
/// error).
const fn tail_block<T>() -> Option<(Layout, usize)> {
    match Layout::new::<TailEntry>().extend(Layout::new::<T>()) {
        Ok(block) => Some(block),
        Err(_) => None,
    }
}

/// The `Send` half of the bound on [`Arena::alloc`] and the other dropping allocations: every
/// `Send` type implements it, and only those (it is sealed). It exists for its error message, so
/// that a value that is not `Send` gets a note naming [`Arena::alloc_box`] and
/// [`Arena::alloc_no_drop`] rather than rustc's bare "cannot be sent between threads safely".
///
/// Why `Send`: an arena runs its values' destructors on reset, rewind and when it is dropped, and
/// an [`Arena`] is `Send`, so that may happen on another thread than the one that allocated them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `Send`: an arena may drop its values on another thread",
    label = "not `Send`",
    note = "`Arena` is `Send`, and it drops its values on reset, rewind or drop, on whichever thread it is then",
    note = "store it with `alloc_box` (dropped with its box), `alloc_no_drop` (never dropped), or use a `Send` type (`Arc` for `Rc`)"
)]
pub trait ArenaDrop: Send + sealed::Sealed {}

impl<T: ?Sized + Send> ArenaDrop for T {}

/// Who allocates: the arena itself ([`Direct`]), or a [`Tracked`](crate::tags::Tracked)
/// wrapper's own `alloc`, whose fast path bumps below the armed end (`end` while the wrapper's
/// budget is known to be on the arena, else 0: see [`Arena::arm`]) and which checks its budget
/// when that path misses with the arena not armed. The value is then written in one place
/// whichever path gave its slot, as for the arena's own allocations.
pub(crate) trait Caller: Copy {
    /// Bump below the armed end, and call [`missed`](Caller::missed) when that misses with
    /// the arena not armed.
    const ARMED: bool;

    /// The armed path missed: the wrapper puts its budget on the arena (if it is not there) and
    /// arms it again; the arena's own paths follow.
    fn missed(self);
}

/// The arena's own allocation: no armed path, nothing to check.
#[derive(Clone, Copy)]
pub(crate) struct Direct;

impl Caller for Direct {
    const ARMED: bool = false;

    #[inline(always)]
    fn missed(self) {}
}

mod sealed {
    /// Keeps [`ArenaDrop`](super::ArenaDrop) implemented by exactly the `Send` types.
    pub trait Sealed {}
    impl<T: ?Sized + Send> Sealed for T {}
}

/// Panics with the error's text: the infallible forms' failure path.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn fail(e: ArenaError) -> ! {
    panic!("{e}")
}

impl Arena {
    /// Allocates `layout` and returns a pointer to uninitialised memory of at least
    /// `layout.size()` bytes, aligned to `layout.align()`. The memory is valid until the arena is
    /// reset, rewound past it or dropped; nothing is ever dropped in it. This is the building
    /// block for typed layers (the SoA containers use it).
    ///
    /// A zero-sized layout never fails and never takes a page. It is bumped like any other
    /// (there is no separate test for it on the fast path): where the bump pointer rounded up to
    /// `layout.align()` is at most the current page's end as clamped by the budget (never below
    /// the bump pointer), that is the pointer handed out, and [`used`](Arena::used) grows by the
    /// alignment padding (as in bumpalo and bump-scope). So a full page, or a budget used up,
    /// still hands out the bump pointer itself when it already meets the alignment: at a full
    /// page's end, one past its last byte (which [`offset_of`](Arena::offset_of) does not
    /// place). Otherwise (no page yet, a padding that would cross the page end or the budget) it
    /// gets a dangling pointer aligned to `layout.align()` and uses no space. A guarded arena
    /// ([`with_guards`](Arena::with_guards), in builds where guards are on) always hands out the
    /// dangling pointer: there are no bytes to guard, and none is taken for guards around
    /// nothing. Either way the pointer is valid for zero-sized accesses only, and the call
    /// counts as one live allocation in [`allocation_count`](Arena::allocation_count) until a
    /// reset or rewind, like any `alloc_layout` (the typed forms do not count zero-sized values
    /// that the arena does not drop, nor empty slices: a zero-sized value from
    /// [`alloc_no_drop`](Arena::alloc_no_drop) or in an [`ArenaBox`] takes and counts
    /// nothing).
    ///
    /// # Errors
    ///
    /// [`ArenaError::Full`] when a fixed arena has no room, [`ArenaError::LimitReached`] or
    /// [`ArenaError::SystemOutOfMemory`] when a chained arena cannot take a page,
    /// [`ArenaError::OverBudget`] when the allocation would take [`used`](Arena::used) over a
    /// [`Fail`](crate::tags::Policy::Fail) budget (see [`Budgeted`](crate::tags::Budgeted)).
    /// The arena is unchanged then.
    #[inline(always)]
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        // A zero-sized layout takes the same path: the cold ones (`bump_slow`,
        // `alloc_guarded`) give it a dangling pointer when the bump cannot.
        let p = self.raw_alloc::<false>(layout)?;
        if crate::poison::ENABLED {
            // SAFETY: `p` is valid for `layout.size()` freshly allocated bytes (none for a
            // zero-sized layout: a write of no bytes through a non-null aligned pointer).
            unsafe { p.write_bytes(crate::poison::FRESH, layout.size()) };
        }
        Ok(p)
    }

    /// The memory of a typed container carved from the arena (a SoA slice's columns,
    /// `SoaTiles`' block): the block of `layout` for `rows` rows, and, when the rows need
    /// dropping (`needs_drop`) and there are any, the drop record `record` makes for them,
    /// in the same bump ([`try_alloc_block_and_record`](Arena::try_alloc_block_and_record)).
    /// No rows take no record, as an empty slice of values that need dropping takes none.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn try_alloc_rows<D: ArenaDrop + 'static>(
        &self,
        layout: Layout,
        rows: usize,
        needs_drop: bool,
        record: impl FnOnce(NonNull<u8>) -> D,
    ) -> Result<(NonNull<u8>, Option<&mut D>), ArenaError> {
        if needs_drop && rows != 0 {
            let (base, record) = self.try_alloc_block_and_record(layout, record)?;
            Ok((base, Some(record)))
        } else {
            Ok((self.try_alloc_block(layout)?, None))
        }
    }

    /// A typed container's block of `layout` without a record:
    /// [`try_alloc_layout`](Arena::try_alloc_layout), except that a zero-sized block (an empty
    /// SoA slice, rows of zero-sized columns) gets a dangling aligned pointer and is not
    /// counted, as an empty slice from [`alloc_slice_copy`](Arena::alloc_slice_copy) is not:
    /// typed forms take nothing for nothing. Off the hot path (one call per container), so the
    /// test costs nothing there.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    #[inline]
    fn try_alloc_block(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        if layout.size() == 0 {
            return Ok(dangling(layout.align()));
        }
        self.try_alloc_layout(layout)
    }

    /// [`try_alloc_layout`](Arena::try_alloc_layout), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the allocation fails.
    #[inline(always)]
    #[track_caller]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        self.try_alloc_layout(layout).or_fail()
    }

    /// [`alloc`](Arena::alloc), returning an error instead of panicking when the arena is full.
    /// `T` must be `'static` and `Send` ([`ArenaDrop`]), as for `alloc`.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout); `value` is dropped then.
    #[inline(always)]
    pub fn try_alloc<T: ArenaDrop + 'static>(&self, value: T) -> Result<&mut T, ArenaError> {
        // The value is built: moving it in can neither panic nor allocate.
        self.alloc_in::<true, T, _, _>(|| value, Direct)
    }

    /// [`try_alloc`](Arena::try_alloc) for `caller`: the arena's own, or a
    /// [`Tracked`](crate::tags::Tracked) wrapper's, whose fast path bumps below the armed end
    /// and runs the wrapper's budget check when that misses.
    #[inline(always)]
    pub(crate) fn try_alloc_for<T: ArenaDrop + 'static>(
        &self,
        value: T,
        caller: impl Caller,
    ) -> Result<&mut T, ArenaError> {
        self.alloc_in::<true, T, _, _>(|| value, caller)
    }

    /// Moves `value` into the arena and returns it, to be dropped on reset, rewind or when the
    /// arena is dropped.
    ///
    /// **`T` must be `'static`**: it owns its data. A value that borrows (a `&str`, a struct
    /// holding one, a reference to another arena value) is refused, as "borrowed value does not
    /// live long enough ... argument requires that `x` is borrowed for `'static`", because the
    /// arena drops it later, when what it borrows may be gone. Store such values with
    /// [`alloc_box`](Arena::alloc_box), whose box drops them while the borrow lives, or with
    /// [`alloc_no_drop`](Arena::alloc_no_drop), which never drops them. `T` must be `Send` too
    /// ([`ArenaDrop`]): by the time the arena drops it, the arena may be on another thread.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// struct Label<'a> { text: &'a str }
    /// let arena = Arena::with_capacity(1024);
    /// let name: &mut String = arena.alloc(String::from("player")); // owns its bytes
    /// let label = arena.alloc_no_drop(Label { text: name }); // borrows `name`
    /// assert_eq!(label.text, "player");
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full ([`try_alloc`](Arena::try_alloc)
    /// returns it instead).
    #[inline(always)]
    #[track_caller]
    pub fn alloc<T: ArenaDrop + 'static>(&self, value: T) -> &mut T {
        self.try_alloc(value).or_fail()
    }

    /// Allocates space, then builds the value in place with `f` (so large values need not pass
    /// through the stack). If `f` panics, the space stays used until the next reset or rewind
    /// and nothing is registered for dropping.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout); `f` is not called then.
    #[inline(always)]
    pub fn try_alloc_with<T: ArenaDrop + 'static, F: FnOnce() -> T>(
        &self,
        f: F,
    ) -> Result<&mut T, ArenaError> {
        self.alloc_in::<false, T, F, _>(f, Direct)
    }

    /// [`try_alloc_with`](Arena::try_alloc_with); `BUILT` when `f` only hands over a value
    /// already built (it can neither panic nor allocate), so a tail entry need not be made safe
    /// for the time `f` runs.
    #[inline(always)]
    fn alloc_in<const BUILT: bool, T: ArenaDrop + 'static, F: FnOnce() -> T, C: Caller>(
        &self,
        f: F,
        caller: C,
    ) -> Result<&mut T, ArenaError> {
        if !mem::needs_drop::<T>() {
            return self.try_alloc_no_drop_with(f, caller);
        }
        // Both paths end the same way: the value is written, then the record (the open run's,
        // or a new one covering nothing yet) is extended over it. So the value is written in
        // one place, and `f()` (often a value moved in) is built straight into the slot instead
        // of being held in registers across the branch. While `f` runs, the record ends before
        // the slot and the bump pointer after it, so nothing `f` allocates joins the record
        // (for a zero-sized `T` it may: each value then counts itself in once it is built). If
        // `f` panics, the slot stays uncovered and used until the next reset or rewind.
        // Each path names one word to store once the value is built, the store that makes it
        // covered: the run's new end, or the tail entry's drop function. So the value is
        // written and covered in one place, whichever path gave the slot.
        // A wrapper's allocation that misses its armed path has the wrapper check its budget,
        // then takes the arena's own paths.
        // (Armed, a miss is the arena's own: the value starts a record or the page is full,
        // which the arena's paths below handle under the budget already on it.)
        let slot = match self.run_slot::<T>(C::ARMED) {
            None if C::ARMED && !self.cursor.is_armed() => {
                caller.missed();
                self.run_slot::<T>(false)
            }
            slot => slot,
        };
        let (value, cover) = match slot {
            Some(slot) => slot,
            None => match self.tail_slot::<BUILT, T>() {
                Some((value, entry)) => (value, Cover::entry::<T>(entry)),
                None => {
                    let (record, value) = self.new_drop_record::<T>()?;
                    (value, Cover::run_end::<T>(record, value))
                }
            },
        };
        // SAFETY: `value` is valid and aligned for a `T` (a new record's slot and a tail
        // entry's are bumped at its alignment, a run's is at the run's end), right after the
        // values its record covers or right after its entry, and the arena's borrow keeps it
        // alive for the returned reference; the record or entry covers it only once it is
        // initialised, and nothing else covered it since `cover` was made.
        unsafe {
            value.write(f());
            cover.apply::<T>();
            Ok(&mut *value.as_ptr())
        }
    }

    /// The slot of a value of `T` that extends the open run, bumped and counted, with the store
    /// that covers it; `None` if the value does not extend the run or does not fit below the
    /// clamped end (`armed`: below the armed end, see [`Caller`]).
    #[inline(always)]
    fn run_slot<T: ArenaDrop + 'static>(&self, armed: bool) -> Option<(NonNull<T>, Cover)> {
        let run = self.open_run::<T>()?;
        // The open run's values of `T` keep their alignment back to back and the run ends at
        // the bump pointer, so the cursor is aligned for a `T`: an alignment of 1 spares the
        // rounding and still gives an aligned slot.
        let value = if armed {
            self.cursor.bump_armed(size_of::<T>(), 1)
        } else {
            self.cursor.bump_fast::<true>(size_of::<T>(), 1)
        }?
        .cast::<T>();
        self.cursor.count_alloc();
        Some((value, Cover::run_end::<T>(run, value)))
    }

    /// Arms the fast path of a [`Tracked`](crate::tags::Tracked) wrapper's allocations
    /// ([`Caller::ARMED`]): what the wrapper calls once its budget is on the arena. Changing the
    /// budget disarms it, and so does the wrapper before it lends the arena out mutably.
    pub(crate) fn arm(&self) {
        self.cursor.arm();
    }

    /// Sends the wrapper's next allocation to its budget check again (see
    /// [`arm`](Arena::arm)).
    pub(crate) fn disarm(&self) {
        self.cursor.disarm();
    }

    /// The slot of a value of `T` appended to the open run's tail (see
    /// [`open_tail`](Arena::open_tail)), with its entry, or `None` when the value does not go
    /// there (or the page has no room for it: the new record's path then takes a page).
    #[inline(always)]
    fn tail_slot<const BUILT: bool, T: ArenaDrop + 'static>(
        &self,
    ) -> Option<(NonNull<T>, NonNull<TailEntry>)> {
        if size_of::<T>() == 0 {
            return None;
        }
        let (record, tail) = self.open_tail::<T>()?;
        let (block, off) = const { tail_block::<T>() }?;
        let base = self.cursor.bump_fast::<true>(block.size(), block.align())?;
        self.cursor.count_alloc();
        // SAFETY: `off >= size_of::<TailEntry>()` and `off + size_of::<T>() = block.size()`,
        // so the entry and the value are inside the block just bumped, the entry 8-aligned (the
        // block's alignment is at least 8 and `off` a multiple of it, minus 16).
        unsafe {
            let value = base.add(off);
            let entry = value.sub(size_of::<TailEntry>()).cast::<TailEntry>();
            self.push_entry::<BUILT>(record, tail, entry, value.as_ptr().add(size_of::<T>()));
            Some((value.cast(), entry))
        }
    }

    /// Bumps a drop record and the slot of one `T` after it, and links the record (covering
    /// nothing yet): the path of a value that does not join the open run.
    #[inline(always)]
    fn new_drop_record<T: ArenaDrop + 'static>(
        &self,
    ) -> Result<(NonNull<DropRecord>, NonNull<T>), ArenaError> {
        let (record, value) = self.alloc_with_record::<true>(Layout::new::<T>())?;
        // SAFETY: the record precedes the value's slot in the current page, just bumped.
        unsafe { self.push_run::<T>(record, value) };
        Ok((record, value.cast()))
    }

    /// Reserves memory for a drop record followed by a value of `layout` (`CONST`: a
    /// compile-time constant layout).
    #[inline(always)]
    pub(super) fn alloc_with_record<const CONST: bool>(
        &self,
        layout: Layout,
    ) -> Result<(NonNull<DropRecord>, NonNull<u8>), ArenaError> {
        if crate::poison::ENABLED && self.guarded {
            return self.alloc_guarded_with_record(layout);
        }
        let overflow = ArenaError::SizeOverflow {
            elem_size: layout.size(),
            count: 1,
        };
        let (block, off) = Layout::new::<DropRecord>()
            .extend(layout)
            .map_err(|_| overflow)?;
        let base = self.raw_alloc::<CONST>(block)?;
        // SAFETY: `off` is inside `block`.
        Ok((base.cast(), unsafe { base.add(off) }))
    }

    /// Guarded arenas put the record at the start of the guarded value's block, before its
    /// front guard, so the guards sit right around the value and one bump takes both (a
    /// refused value leaves no record, or page taken for it, behind).
    #[cold]
    fn alloc_guarded_with_record(
        &self,
        layout: Layout,
    ) -> Result<(NonNull<DropRecord>, NonNull<u8>), ArenaError> {
        let (base, value) = self.alloc_guarded_after(Layout::new::<DropRecord>(), layout)?;
        Ok((base.cast(), value))
    }

    /// [`try_alloc_with`](Arena::try_alloc_with), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full; also if `f` panics.
    #[inline(always)]
    #[track_caller]
    pub fn alloc_with<T: ArenaDrop + 'static, F: FnOnce() -> T>(&self, f: F) -> &mut T {
        self.try_alloc_with(f).or_fail()
    }

    /// Moves `value` into the arena and never drops it (as if by `mem::forget`, which is safe).
    /// Takes any type, including ones that borrow other arena values, `!Send` types and types
    /// that are not `'static`.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout); `value` is dropped then.
    #[inline(always)]
    pub fn try_alloc_no_drop<T>(&self, value: T) -> Result<&mut T, ArenaError> {
        self.try_alloc_no_drop_with(|| value, Direct)
    }

    /// [`try_alloc_no_drop`](Arena::try_alloc_no_drop), panicking on failure.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// struct Node<'a> { value: u32, next: Option<&'a Node<'a>> }
    /// let arena = Arena::with_capacity(1024);
    /// let first = arena.alloc_no_drop(Node { value: 1, next: None });
    /// let second = arena.alloc_no_drop(Node { value: 2, next: Some(first) });
    /// assert_eq!(second.next.unwrap().value, 1);
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full.
    #[inline(always)]
    #[track_caller]
    pub fn alloc_no_drop<T>(&self, value: T) -> &mut T {
        self.try_alloc_no_drop(value).or_fail()
    }

    /// Moves `value` into the arena inside an [`ArenaBox`], which drops it when the box is
    /// dropped, not at the arena's reset; or hands the value back with the reason if the arena
    /// is full. Takes any type, including ones that borrow: the box drops its value while the
    /// borrow is still alive. The arena registers nothing for it (see [`ArenaBox`]).
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout), inside an [`ArenaFull`] that holds
    /// `value`; nothing was allocated.
    #[inline(always)]
    pub fn try_alloc_box<T>(&self, value: T) -> Result<ArenaBox<'_, T>, ArenaFull<T>> {
        let ptr = match self.no_drop_slot::<T>() {
            Ok(ptr) => ptr,
            Err(error) => return Err(ArenaFull { value, error }),
        };
        // SAFETY: `ptr` is valid and aligned for a `T` (dangling is fine for a zero-sized `T`),
        // handed out once by the arena, which never drops it or reaches it again until a reset
        // or rewind; the box borrows the arena, which rules those out while it lives.
        unsafe {
            ptr.write(value);
            Ok(ArenaBox::from_raw(ptr))
        }
    }

    /// [`try_alloc_box`](Arena::try_alloc_box), panicking when the arena is full.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::with_capacity(1024);
    /// let mut name = arena.alloc_box(String::from("orc"));
    /// name.push_str(" chief");
    /// assert_eq!(*name, "orc chief");
    /// drop(name); // the `String` is dropped here, not at the arena's reset
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full.
    #[inline(always)]
    #[track_caller]
    pub fn alloc_box<T>(&self, value: T) -> ArenaBox<'_, T> {
        match self.try_alloc_box(value) {
            Ok(b) => b,
            Err(full) => fail(full.error),
        }
    }

    /// Allocates `len` values built by `f(index)`, in index order, in an [`ArenaBox`] that drops
    /// them (in index order, as a `Box<[T]>` does) when it is dropped, not at the arena's reset.
    /// Takes any type, including ones that borrow. The arena registers nothing for it. If `f`
    /// panics, the values already built are dropped and the space is given back if nothing was
    /// allocated after it meanwhile. The size is checked: a `len` whose byte size overflows is
    /// [`ArenaError::SizeOverflow`], never a wrapped size. bump-scope's `alloc_slice_fill_with`,
    /// which returns a `BumpBox<[T]>`.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`], or as [`try_alloc_layout`](Arena::try_alloc_layout); `f` is
    /// not called then.
    #[inline]
    pub fn try_alloc_box_slice_fill_with<T, F: FnMut(usize) -> T>(
        &self,
        len: usize,
        f: F,
    ) -> Result<ArenaBox<'_, [T]>, ArenaError> {
        // SAFETY: without `REGISTER`, nothing is required of `T`.
        let slice = unsafe { self.fill_slice_with::<false, T, F>(len, f) }?;
        // SAFETY: the slice's values are initialised in memory the arena handed out once and,
        // without a record, never drops or reaches again until a reset or rewind, which the
        // box's borrow rules out (dangling and aligned when it takes no bytes).
        Ok(unsafe { ArenaBox::from_raw(NonNull::from(slice)) })
    }

    /// [`try_alloc_box_slice_fill_with`](Arena::try_alloc_box_slice_fill_with), panicking on
    /// failure.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaBox;
    ///
    /// let names = ["ada", "grace"];
    /// let arena = Arena::with_capacity(1024);
    /// // Each value borrows `names`: `alloc_slice_fill_with` would refuse them.
    /// let mut tags: ArenaBox<[(usize, &str)]> = arena.alloc_box_slice_fill_with(2, |i| (i, names[i]));
    /// tags[1].0 = 7;
    /// assert_eq!(*tags, [(0, "ada"), (7, "grace")]);
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full or the size overflows; also if `f`
    /// panics.
    #[inline]
    #[track_caller]
    pub fn alloc_box_slice_fill_with<T, F: FnMut(usize) -> T>(
        &self,
        len: usize,
        f: F,
    ) -> ArenaBox<'_, [T]> {
        self.try_alloc_box_slice_fill_with(len, f).or_fail()
    }

    /// The slot of one `T` the arena will not drop ([`alloc_no_drop`](Arena::alloc_no_drop),
    /// [`alloc_box`](Arena::alloc_box)): a dangling aligned pointer for a zero-sized `T`
    /// (nothing taken or counted), else a counted bump.
    #[inline(always)]
    fn no_drop_slot<T>(&self) -> Result<NonNull<T>, ArenaError> {
        if size_of::<T>() == 0 {
            Ok(dangling(align_of::<T>()).cast::<T>())
        } else {
            Ok(self.raw_alloc::<true>(Layout::new::<T>())?.cast::<T>())
        }
    }

    /// A wrapper's slot for a value of `T` without a destructor, bumped below the armed end
    /// and counted; `None` for the arena's own allocations, and when the armed path does not
    /// apply (a zero-sized `T`, guard bytes) or misses: then, if the arena is not armed, after
    /// the wrapper's budget check ([`Caller::missed`]).
    #[inline(always)]
    fn armed_slot<T, C: Caller>(&self, caller: C) -> Option<NonNull<T>> {
        if !C::ARMED {
            return None;
        }
        if size_of::<T>() != 0
            && !(crate::poison::ENABLED && self.guarded)
            && let Some(ptr) = self.cursor.bump_armed(size_of::<T>(), align_of::<T>())
        {
            self.cursor.count_alloc();
            return Some(ptr.cast());
        }
        // Armed, the arena's own paths take it under the budget already on it.
        if !self.cursor.is_armed() {
            caller.missed();
        }
        None
    }

    #[inline(always)]
    fn try_alloc_no_drop_with<T, F: FnOnce() -> T, C: Caller>(
        &self,
        f: F,
        caller: C,
    ) -> Result<&mut T, ArenaError> {
        let ptr = match self.armed_slot::<T, C>(caller) {
            Some(ptr) => ptr,
            None => self.no_drop_slot::<T>()?,
        };
        // SAFETY: `ptr` is valid and aligned for a `T` (dangling is fine for a zero-sized `T`),
        // and the arena's borrow keeps the memory alive for the returned reference.
        unsafe {
            ptr.write(f());
            Ok(&mut *ptr.as_ptr())
        }
    }

    /// Copies `src` into the arena.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout).
    #[inline]
    pub fn try_alloc_slice_copy<T: Copy>(&self, src: &[T]) -> Result<&mut [T], ArenaError> {
        let layout = Layout::for_value(src);
        let ptr = if layout.size() == 0 {
            dangling(layout.align())
        } else {
            self.raw_alloc::<false>(layout)?
        };
        let ptr = ptr.cast::<T>();
        // SAFETY: `ptr` is valid for `src.len()` values of `T` and cannot overlap `src`, which
        // the caller holds a shared borrow of while the arena hands out fresh memory.
        unsafe {
            ptr.as_ptr()
                .copy_from_nonoverlapping(src.as_ptr(), src.len());
            Ok(core::slice::from_raw_parts_mut(ptr.as_ptr(), src.len()))
        }
    }

    /// [`try_alloc_slice_copy`](Arena::try_alloc_slice_copy), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full.
    #[inline]
    #[track_caller]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &mut [T] {
        self.try_alloc_slice_copy(src).or_fail()
    }

    /// Copies `src` into the arena.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout).
    #[inline]
    pub fn try_alloc_str(&self, src: &str) -> Result<&mut str, ArenaError> {
        let bytes = self.try_alloc_slice_copy(src.as_bytes())?;
        // SAFETY: the bytes were copied from a `str`, so they are valid UTF-8.
        Ok(unsafe { core::str::from_utf8_unchecked_mut(bytes) })
    }

    /// [`try_alloc_str`](Arena::try_alloc_str), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full.
    #[inline]
    #[track_caller]
    pub fn alloc_str(&self, src: &str) -> &mut str {
        self.try_alloc_str(src).or_fail()
    }

    /// Allocates `len` values built by `f(index)`, in index order. If `f` panics, the values
    /// already built are dropped and nothing is registered; the space is given back if nothing
    /// was allocated after it meanwhile. The size is checked: a `len` whose
    /// byte size overflows is [`ArenaError::SizeOverflow`], never a wrapped size.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`], or as [`try_alloc_layout`](Arena::try_alloc_layout); `f` is
    /// not called then.
    pub fn try_alloc_slice_fill_with<T: ArenaDrop + 'static, F: FnMut(usize) -> T>(
        &self,
        len: usize,
        f: F,
    ) -> Result<&mut [T], ArenaError> {
        // SAFETY: `T` is `ArenaDrop + 'static`: the arena may drop its values.
        unsafe { self.fill_slice_with::<true, T, F>(len, f) }
    }

    /// [`fill_slice`](Arena::fill_slice) with a constructor that cannot fail.
    ///
    /// # Safety
    ///
    /// As for `fill_slice`.
    #[inline]
    unsafe fn fill_slice_with<const REGISTER: bool, T, F: FnMut(usize) -> T>(
        &self,
        len: usize,
        mut f: F,
    ) -> Result<&mut [T], ArenaError> {
        // SAFETY: guaranteed by the caller.
        match unsafe { self.fill_slice::<REGISTER, T, _, _>(len, |i| Ok::<T, Infallible>(f(i))) } {
            Ok(slice) => Ok(slice),
            Err(AllocOrInitError::Alloc(e)) => Err(e),
            Err(AllocOrInitError::Init(never)) => match never {},
        }
    }

    /// The slice builder of the values the arena drops: [`fill_slice`](Arena::fill_slice) with
    /// a drop record when `T` needs dropping.
    pub(super) fn build_slice<T: ArenaDrop + 'static, E, F: FnMut(usize) -> Result<T, E>>(
        &self,
        len: usize,
        f: F,
    ) -> Result<&mut [T], AllocOrInitError<E>> {
        // SAFETY: `T` is `ArenaDrop + 'static`: the arena may drop its values.
        unsafe { self.fill_slice::<true, T, E, F>(len, f) }
    }

    /// The one slice builder: allocates `len` values of `T` (with a drop record if `REGISTER`
    /// and `T` needs dropping) and builds them with `f(index)` in index order. If `f` panics or
    /// returns an error, the values already built are dropped and the record is unlinked; if
    /// nothing was allocated after the block meanwhile (it is still the newest), its space is
    /// given back (as bumpalo does), otherwise it stays used until the next reset or rewind
    /// (what `f` allocated after it may still be in use). Without `REGISTER` the caller owns
    /// the values: the arena never drops them (an [`ArenaBox`] of the slice does).
    ///
    /// # Safety
    ///
    /// - With `REGISTER`, the arena may drop values of `T` (see
    ///   [`push_drop`](Arena::push_drop)): `T` is `ArenaDrop + 'static`.
    #[inline]
    unsafe fn fill_slice<const REGISTER: bool, T, E, F: FnMut(usize) -> Result<T, E>>(
        &self,
        len: usize,
        mut f: F,
    ) -> Result<&mut [T], AllocOrInitError<E>> {
        if len == 0 {
            return Ok(&mut []);
        }
        let overflow = ArenaError::SizeOverflow {
            elem_size: size_of::<T>(),
            count: len,
        };
        let array = Layout::array::<T>(len).map_err(|_| overflow)?;
        let (start, base, record) = if REGISTER && mem::needs_drop::<T>() {
            let (record, value) = self.alloc_with_record::<false>(array)?;
            (record.cast::<u8>(), value, Some(record))
        } else if array.size() == 0 {
            let d = dangling(array.align());
            (d, d, None)
        } else {
            let p = self.raw_alloc::<false>(array)?;
            (p, p, None)
        };
        let ptr = base.cast::<T>();

        /// If `f` panics or fails: drops the values built so far, unlinks the record and gives
        /// the block back if it is still the newest.
        struct Built<'a, T> {
            arena: &'a Arena,
            ptr: NonNull<T>,
            len: usize,
            start: NonNull<u8>,
            size: usize,
            record: Option<NonNull<DropRecord>>,
        }
        impl<T> Drop for Built<'_, T> {
            fn drop(&mut self) {
                // SAFETY: the first `len` values were initialised and are owned by this guard.
                unsafe {
                    core::ptr::drop_in_place(core::ptr::slice_from_raw_parts_mut(
                        self.ptr.as_ptr(),
                        self.len,
                    ))
                };
                let arena = self.arena;
                let newest = self.size != 0 && arena.is_last(self.start, self.size);
                if let Some(record) = self.record {
                    if !(newest && arena.is_newest_drop(record)) {
                        return; // the record, covering nothing, stays until a reset or rewind
                    }
                    // SAFETY: it is the newest record and covers nothing (never set).
                    unsafe { arena.unlink_newest_drop(record) };
                }
                if newest {
                    arena.give_back_last(self.start, self.size);
                }
            }
        }
        if let Some(record) = record {
            // SAFETY: the record slot precedes the array; it covers nothing until all are built.
            // The arena may drop `T`s (a record is only made with `REGISTER`: the caller's
            // guarantee).
            unsafe { self.push_drop::<T>(record, base) };
        }
        let mut built = Built {
            arena: self,
            ptr,
            len: 0,
            start,
            // the record (if any) and the array end the block
            size: base.as_ptr() as usize + array.size() - start.as_ptr() as usize,
            record,
        };
        while built.len < len {
            let value = f(built.len).map_err(AllocOrInitError::Init)?;
            // SAFETY: `built.len < len`, inside the array.
            unsafe { ptr.add(built.len).write(value) };
            built.len += 1;
        }
        mem::forget(built);
        if let Some(record) = record {
            // SAFETY: the record precedes the array; all values are built.
            unsafe { self.set_drop_len::<T>(record, len) };
        }
        // SAFETY: `len` values are initialised at `ptr`, borrowed for the arena's borrow.
        Ok(unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr(), len) })
    }

    /// Allocates `layout`, a container's block, together with the value `record(block)` builds
    /// to drop what the block will hold, in one bump: a drop record, the value, then the block.
    /// The record covers the value as soon as it is written, so the arena drops it on reset,
    /// rewind or drop. For containers carved from the arena whose rows need dropping (a SoA
    /// slice's columns and `SoaTiles`' block).
    ///
    /// One bump, so a refusal leaves nothing behind, and no user code runs between the block
    /// and the record: a budget warning's sink and the global allocator taking a page run
    /// before the bump, and the profiler's report of a page left runs before the bump takes its
    /// bytes (all three may allocate from this arena; with two allocations, giving the first
    /// back after a refused second would give theirs back too).
    ///
    /// The record and the value come first, so they are padded to the block's alignment: an
    /// over-aligned block (`#[soa(align = 4096)]`) costs up to that alignment more. A block of
    /// no bytes is not placed at all (a dangling pointer on its alignment), so it costs nothing
    /// beyond the record and the value.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout), for the value and the block together.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    fn try_alloc_block_and_record<D: ArenaDrop + 'static>(
        &self,
        layout: Layout,
        record: impl FnOnce(NonNull<u8>) -> D,
    ) -> Result<(NonNull<u8>, &mut D), ArenaError> {
        let overflow = ArenaError::SizeOverflow {
            elem_size: layout.size(),
            count: 1,
        };
        // A block of no bytes (rows of zero-sized columns) takes no room: it gets a dangling
        // aligned pointer, and only the record is bumped, not padded to the block's alignment.
        let empty = layout.size() == 0;
        let (whole, block_at) = if empty {
            (Layout::new::<D>(), 0)
        } else {
            Layout::new::<D>().extend(layout).map_err(|_| overflow)?
        };
        let (rec, value) = self.alloc_with_record::<false>(whole)?;
        let block = if empty {
            dangling(layout.align())
        } else {
            // SAFETY: `block_at` is inside the memory just bumped for `whole`.
            unsafe { value.add(block_at) }
        };
        if crate::poison::ENABLED {
            // SAFETY: `block` is valid for `layout.size()` freshly allocated bytes.
            unsafe { block.write_bytes(crate::poison::FRESH, layout.size()) };
        }
        let d = value.cast::<D>();
        // SAFETY: the record slot precedes the value's in the memory just bumped, and covers
        // nothing until the value is written; `value` is valid and aligned for a `D` (the offset
        // `alloc_with_record` and `extend` gave it) and stays allocated for the arena's borrow;
        // the arena may drop a `D` (`ArenaDrop + 'static`).
        unsafe {
            self.push_drop::<D>(rec, value);
            d.write(record(block));
            self.set_drop_len::<D>(rec, 1);
            // Nothing may join the record's run: its value is followed by the block.
            self.close_run();
            Ok((block, &mut *d.as_ptr()))
        }
    }

    /// [`try_alloc_slice_fill_with`](Arena::try_alloc_slice_fill_with), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full or the size overflows; also if `f`
    /// panics.
    #[track_caller]
    pub fn alloc_slice_fill_with<T: ArenaDrop + 'static, F: FnMut(usize) -> T>(
        &self,
        len: usize,
        f: F,
    ) -> &mut [T] {
        self.try_alloc_slice_fill_with(len, f).or_fail()
    }
}

/// A non-null pointer with address `align`, valid for zero-sized accesses.
#[inline(always)]
pub(super) fn dangling(align: usize) -> NonNull<u8> {
    NonNull::without_provenance(core::num::NonZeroUsize::new(align).expect("alignment is non-zero"))
}
