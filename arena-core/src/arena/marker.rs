//! Markers, rewind and reset: a stack allocator with LIFO rollback, checked.

use core::ptr::NonNull;

use super::cursor::Cursor;
use super::page::{self, PageHeader};
use super::{Arena, MarkerError};
use crate::poison;

/// A position in an arena: page index first, then address inside the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Pos {
    page: usize,
    addr: usize,
}

impl Pos {
    pub(super) const MIN: Pos = Pos { page: 0, addr: 0 };

    pub(super) fn new(page: usize, ptr: NonNull<u8>) -> Pos {
        Pos {
            page,
            addr: ptr.as_ptr() as usize,
        }
    }
}

/// A saved position of an [`Arena`], from [`Arena::mark`]. [`Arena::rewind`] frees everything
/// allocated after it (running pending destructors) and keeps everything before it.
///
/// A marker is plain data: it can be copied, and a wrong one is refused with a [`MarkerError`]
/// instead of corrupting the arena.
///
/// # Variance
///
/// No parameters: a marker is plain data, checked against its arena (identity and reset count) when
/// used instead of through a lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    arena: usize,
    epoch: u64,
    /// The arena's `page_frees` when the marker was taken.
    page_frees: u64,
    page: Option<NonNull<PageHeader>>,
    ptr: NonNull<u8>,
    used: usize,
    allocs: usize,
}

// SAFETY: a marker is plain data (an identity plus a position) and has no interior mutability;
// no method of `Marker` dereferences its pointers. Only `Arena::rewind` does, and only on the
// arena the marker came from (checked by identity) and only after checking the marker is still
// valid there: same reset epoch, and, if pages were given back since, its page found among the
// pages the arena holds. Which thread carries the marker does not matter to that check.
unsafe impl Send for Marker {}
// SAFETY: as above; `&Marker` gives only copies of plain data (`used`).
unsafe impl Sync for Marker {}

/// The heads of an arena's drop and guard lists, from [`Arena::list_heads`]: their addresses
/// (0 for an empty list), only ever compared, so a [`Scope`](super::Scope) holding them stays
/// `Send` like the `&mut Arena` beside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListHeads {
    drops: usize,
    guards: usize,
}

impl Marker {
    /// [`Arena::used`] at the time the marker was taken: a stack allocator's marker offset.
    pub fn used(&self) -> usize {
        self.used
    }
}

impl Arena {
    /// The current position, to [`rewind`](Arena::rewind) to later.
    pub fn mark(&self) -> Marker {
        // Values after a marker must not join a run that began before it.
        self.close_run();
        Marker {
            arena: self.id,
            epoch: self.epoch.get(),
            page_frees: self.page_frees.get(),
            page: self.cursor.page(),
            ptr: self.cursor.ptr(),
            used: self.used(),
            allocs: self.cursor.allocs(),
        }
    }

    /// Frees everything allocated after `marker` (a stack allocator's free-to-marker): pending destructors
    /// run newest first, guard bytes are checked, freed bytes are poisoned with
    /// [`poison::FREED`] in debug builds. Everything allocated before the
    /// marker stays. Pages are kept.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::arena::MarkerError;
    ///
    /// let mut arena = Arena::with_capacity(256);
    /// arena.alloc([0u8; 64]); // level data
    /// let frame = arena.mark();
    /// arena.alloc([0u8; 48]); // path buffer
    /// assert_eq!(arena.used(), 112);
    /// arena.rewind(frame).unwrap();
    /// assert_eq!(arena.used(), 64);
    /// assert_eq!(Arena::with_capacity(8).rewind(frame), Err(MarkerError::Foreign));
    /// ```
    ///
    /// # Errors
    ///
    /// [`MarkerError::Foreign`] for a marker of another arena, [`MarkerError::Stale`] for one
    /// taken before a reset, beyond the current position, or into a page the arena has given
    /// back since (also when a later page got the same address). The arena is unchanged then.
    ///
    /// One case is not detected: a marker rewound past and then allocated past again (the arena
    /// regrew beyond it). Rewinding to it is accepted and means "free everything from this
    /// position on", which is memory-safe: no borrow of the arena survives a rewind, and any
    /// value reaching past the position is dropped whole. [`used`](Arena::used) is recounted
    /// from the pages, so it stays exact; [`allocation_count`](Arena::allocation_count) is the
    /// marker's count then.
    ///
    /// # Panics
    ///
    /// After completing the rewind, if a guard byte of a freed allocation was overwritten
    /// (see [`Arena::with_guards`]).
    #[track_caller]
    pub fn rewind(&mut self, mut marker: Marker) -> Result<(), MarkerError> {
        if marker.arena != self.id {
            return Err(MarkerError::Foreign);
        }
        if marker.epoch != self.epoch.get() {
            return Err(MarkerError::Stale);
        }
        // Kept pages were given back since the marker was taken: its page may be gone, so look
        // for it among the pages still held up to the current one before reading its header,
        // and read it through the arena's own pointer. A page found at the marker's address but
        // made after it is a later page at a freed page's address (the same address, not the
        // same allocation): the marker is stale.
        if marker.page_frees != self.page_frees.get() {
            match self.held_page(marker.page, marker.ptr, marker.page_frees) {
                Some(page) => marker.page = page,
                None => return Err(MarkerError::Stale),
            }
        }
        if self.pos_of(marker.page, marker.ptr) > self.pos() {
            return Err(MarkerError::Stale);
        }
        self.rewind_to(marker);
        #[cfg(feature = "alloc")]
        self.coalesce_tail();
        Ok(())
    }

    /// Frees everything: pending destructors run newest first, the bump pointer returns to the
    /// start of the first block. O(1) when nothing needs dropping (plus the debug poison fill).
    /// Pages are kept for reuse, so a steady-state loop never calls the system allocator. If the
    /// frame since the last reset needed new pages (or used them out of order), a chained
    /// arena first coalesces its pages into one that can serve every frame it served (see
    /// [`Arena::chained`]): one system allocation, only after such frames. Every [`Marker`]
    /// taken before is stale afterwards.
    ///
    /// # Panics
    ///
    /// After completing the reset, if a guard byte was overwritten (see [`Arena::with_guards`]).
    #[track_caller]
    pub fn reset(&mut self) {
        self.epoch.set(self.epoch.get() + 1);
        let page = if self.root_start == self.root_end {
            self.first_page.get()
        } else {
            None
        };
        let (start, _) = self.page_bounds(page);
        let marker = Marker {
            arena: self.id,
            epoch: self.epoch.get(),
            page_frees: self.page_frees.get(),
            page,
            ptr: start,
            used: 0,
            allocs: 0,
        };
        // Everything goes: `Pos::MIN` lets the drop walk skip comparing each record's place.
        self.rewind_with(marker, Pos::MIN);
        #[cfg(feature = "alloc")]
        self.coalesce_pages();
    }

    /// The arena's own pointer to the block at `page`'s address (`Some(None)` for the root)
    /// if it is the root or a page held at or before the current one, made before the arena's
    /// page-free count passed `frees` (the count when the marker was taken: a page made later
    /// is a new page, even at a freed page's address), and `ptr` lies inside it; `None`
    /// otherwise. Compares addresses only, and never reads through `page`: it may have been
    /// freed.
    #[allow(clippy::option_option)]
    fn held_page(
        &self,
        page: Option<NonNull<PageHeader>>,
        ptr: NonNull<u8>,
        frees: u64,
    ) -> Option<Option<NonNull<PageHeader>>> {
        let addr = |p: Option<NonNull<PageHeader>>| p.map(NonNull::addr);
        let mut p = None;
        loop {
            if addr(p) == addr(page) {
                if p.is_some_and(|p| page::header(p).frees_before > frees) {
                    return None;
                }
                let (start, end) = self.page_bounds(p);
                return (start.as_ptr() as usize..=end.as_ptr() as usize)
                    .contains(&(ptr.as_ptr() as usize))
                    .then_some(p);
            }
            if p == self.cursor.page() {
                return None;
            }
            p = self.next_page(p);
        }
    }

    /// The current position.
    fn pos(&self) -> Pos {
        Pos::new(self.cursor.page_index(), self.cursor.ptr())
    }

    fn pos_of(&self, page: Option<NonNull<PageHeader>>, ptr: NonNull<u8>) -> Pos {
        Pos::new(Arena::page_index(page), ptr)
    }

    /// The heads of the drop and guard lists. Both lists are stacks, so while a marker cannot
    /// be rewound past, the heads are what they were when it was taken exactly when no
    /// destructor and no guarded allocation was registered since.
    #[inline]
    pub(super) fn list_heads(&self) -> ListHeads {
        let addr = |p: Option<NonNull<u8>>| p.map_or(0, |p| p.as_ptr().addr());
        ListHeads {
            drops: addr(self.drops.get().map(NonNull::cast::<u8>)),
            guards: addr(self.guards.get().map(NonNull::cast::<u8>)),
        }
    }

    /// A scope's rewind to its `start`, taken with [`list_heads`](Self::list_heads) giving
    /// `heads` (then and since, the scope held the arena, so nothing rewound past `start`).
    /// When the bump pointer is still in `start`'s page and nothing was registered since, that
    /// is moving the pointer back (and, in debug builds or with `debug-checks`, poisoning the
    /// freed bytes): nothing to drop, check or recount.
    #[inline]
    pub(super) fn rewind_scope(&self, start: Marker, heads: ListHeads) {
        if self.cursor.page() == start.page && self.list_heads() == heads {
            // The cursor's page is `start`'s and still held (the cursor never left it), so its
            // provenance covers `start`'s address, as in `finish_rewind`.
            let ptr = self.cursor.page_start().with_addr(start.ptr.addr());
            self.move_back(start.page, ptr, |cursor| {
                cursor.rewind_in_page(ptr, start.allocs);
            });
        } else {
            self.rewind_to(start);
        }
        #[cfg(feature = "alloc")]
        self.coalesce_tail();
    }

    /// Rewinds to a marker already known to be valid for this arena.
    pub(super) fn rewind_to(&self, marker: Marker) {
        self.rewind_with(marker, self.pos_of(marker.page, marker.ptr));
    }

    /// [`rewind_to`](Self::rewind_to), freeing what lies at or after `pos`: the marker's
    /// position, or [`Pos::MIN`] for a reset (the marker is then the first block's start).
    fn rewind_with(&self, marker: Marker, pos: Pos) {
        /// Moves the bump pointer back even if a destructor panics.
        struct Finish<'a>(&'a Arena, Marker);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                self.0.finish_rewind(self.1);
            }
        }
        let violation = self.check_guards_from(pos);
        self.pop_guards_from(pos);
        let finish = Finish(self, marker);
        self.run_drops_from(pos);
        drop(finish);
        if let Some(v) = violation {
            panic!("{v}");
        }
    }

    fn finish_rewind(&self, marker: Marker) {
        // A marker the arena was rewound past and then regrew past may point beyond what is
        // used of a page the arena has since left: nothing lives there, so the bump pointer
        // goes to the page's used end instead (the same allocations are freed either way).
        // The cursor takes the page's provenance: the marker's pointer may come from a page that
        // was given back since and re-allocated at the same address.
        let (start, _) = self.page_bounds(marker.page);
        let at = start.with_addr(marker.ptr.addr());
        let ptr = if marker.page == self.cursor.page() {
            at
        } else {
            let used_end = self.page_used_end(marker.page);
            if used_end.as_ptr() < at.as_ptr() {
                used_end
            } else {
                at
            }
        };
        // Counted from the pages as they are now, not from `marker.used`: pages used
        // differently (or inserted) since the marker was taken change what lies before it.
        let used_before = self.used_before_page(marker.page);
        let bounds = self.page_bounds(marker.page);
        self.move_back(marker.page, ptr, |cursor| {
            cursor.rewind(marker.page, bounds, ptr, used_before, marker.allocs);
        });
    }

    /// The steps every rewind ends with, the fast one of a scope and the full one alike, around
    /// `move_cursor`, which moves the bump pointer back to `ptr` in `page`: close the open drop
    /// run (a value allocated next must start a record of its own), poison the bytes from `ptr`
    /// to the current position (in debug builds and with `debug-checks`; found from the cursor
    /// before it moves), then settle the budget and tell the profiler (with its feature). One
    /// body, so a step added to rewinding reaches both paths.
    #[inline(always)]
    fn move_back(
        &self,
        page: Option<NonNull<PageHeader>>,
        ptr: NonNull<u8>,
        move_cursor: impl FnOnce(&Cursor),
    ) {
        self.close_run();
        if poison::ENABLED {
            self.poison_from(page, ptr);
        }
        move_cursor(&self.cursor);
        self.settle_budget();
        #[cfg(feature = "profiler")]
        self.profile_rewound();
    }

    /// Bytes used in the pages before `page`, which is the first block, the current page or a
    /// page before it.
    fn used_before_page(&self, page: Option<NonNull<PageHeader>>) -> usize {
        let first_block =
            page.is_none() || (page == self.first_page.get() && self.root_start == self.root_end);
        if first_block {
            return 0;
        }
        let mut before = self.cursor.used_before();
        let mut p = page;
        while p != self.cursor.page() {
            let (start, _) = self.page_bounds(p);
            before -= self.page_used_end(p).as_ptr() as usize - start.as_ptr() as usize;
            p = self.next_page(p);
        }
        before
    }

    /// Fills every used byte from `(page, from)` up to the current position with `FREED`.
    fn poison_from(&self, page: Option<NonNull<PageHeader>>, from: NonNull<u8>) {
        let mut p = page;
        let mut start = from;
        loop {
            let end = self.page_used_end(p);
            let len = (end.as_ptr() as usize).saturating_sub(start.as_ptr() as usize);
            // SAFETY: `[start, end)` is used memory of a page of this arena, and nothing
            // allocated there is borrowed any more (rewind and reset take `&mut self`, scopes
            // rewind when their exclusive borrow ends).
            unsafe { start.as_ptr().write_bytes(poison::FREED, len) };
            if p == self.cursor.page() {
                break;
            }
            p = self.next_page(p);
            match p {
                Some(next) => start = page::data_start(next),
                None => break,
            }
        }
    }

    /// Runs every destructor and checks every guard; used when the arena is dropped.
    pub(super) fn drop_all_and_check(&self) {
        let violation = self.check_guards_from(Pos::MIN);
        self.pop_guards_from(Pos::MIN);
        self.run_drops_from(Pos::MIN);
        if let Some(v) = violation {
            panic!("{v}");
        }
    }
}
