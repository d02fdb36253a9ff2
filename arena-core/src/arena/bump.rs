//! The bump itself: an inlined fast path in the current page and a cold path that moves to the
//! next page (kept from an earlier frame, or new).

use core::alloc::Layout;
use core::ptr::NonNull;

#[cfg(feature = "alloc")]
use super::page::{self, PageHeader};
use super::{Arena, ArenaError};

impl Arena {
    /// Allocates raw memory for `layout` without guard bytes: the fast path, then the cold one.
    /// `CONST`: the layout is a compile-time constant ([`Cursor::bump_fast`]).
    ///
    /// [`Cursor::bump_fast`]: super::cursor::Cursor::bump_fast
    #[inline(always)]
    pub(super) fn bump<const CONST: bool>(
        &self,
        layout: Layout,
    ) -> Result<NonNull<u8>, ArenaError> {
        match self
            .cursor
            .bump_fast::<CONST>(layout.size(), layout.align())
        {
            Some(p) => Ok(p),
            None => self.bump_slow(layout),
        }
    }

    /// Allocates memory for `layout`, counting the allocation and adding guard bytes when the
    /// arena has them. Everything typed goes through here. `CONST`: the layout is a
    /// compile-time constant.
    #[inline(always)]
    pub(super) fn raw_alloc<const CONST: bool>(
        &self,
        layout: Layout,
    ) -> Result<NonNull<u8>, ArenaError> {
        if crate::poison::ENABLED && self.guarded {
            return self.alloc_guarded(layout);
        }
        let p = self.bump::<CONST>(layout)?;
        self.cursor.count_alloc();
        Ok(p)
    }

    /// Moves to the next page that can hold `layout`, inserting a new page if needed.
    ///
    /// A zero-sized layout lands here only when the bump pointer rounded up to its alignment
    /// is past the current page's clamped end (no page yet, a full page, a budget used up): it
    /// gets a dangling aligned pointer, never a page, a budget check or an error
    /// ([`Arena::try_alloc_layout`]).
    #[cold]
    #[inline(never)]
    fn bump_slow(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        if layout.size() == 0 {
            return Ok(super::typed::dangling(layout.align()));
        }
        if let Some(growth) = self.cursor.growth_in_page(layout.size(), layout.align()) {
            // It fits the page: only the budget clamp sent it here.
            self.admit(growth)?;
            // A `Warn` budget's warning runs user code (a logger, a report sink), which may have
            // allocated from this arena meanwhile: then the request may no longer fit here.
            return match self
                .cursor
                .bump_fast::<false>(layout.size(), layout.align())
            {
                Some(p) => Ok(p),
                None => self.bump_slow(layout),
            };
        }
        // A new page adds at least the request to `used()`: refuse before touching the pages.
        self.admit(layout.size())?;
        if self.page_bytes == 0 {
            return Err(self.full_error(layout.size()));
        }
        self.next_page_for(layout)
    }

    #[cfg(not(feature = "alloc"))]
    fn next_page_for(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        Err(self.full_error(layout.size()))
    }

    #[cfg(feature = "alloc")]
    fn next_page_for(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        let (size, align) = (layout.size(), layout.align());
        let cur = self.cursor.page();
        let (reshaped, pages) = (self.reshaped.get(), self.pages.get());
        let (target, fresh) = match self.take_kept_page(cur, size, align) {
            Some(p) => (p, false),
            None => (self.insert_page(cur, size, align)?, true),
        };
        // The exact growth in the chosen page (its data start may need padding for `align`,
        // known only once the page exists). Over the budget, its policy runs with the page put
        // back: a `Warn` budget's warning runs user code (a logger, a report sink) that may
        // allocate from this arena, and must not find a page taken but not entered (it would be
        // handed the same bytes). A request the policy admits then starts over.
        let growth = size + pad_in(target, align);
        if !self.within_budget(growth) {
            if fresh {
                // A refused request leaves the arena unchanged: the page just taken goes back.
                // SAFETY: `insert_page` just linked `target` after `cur`, and it was never
                // current: nothing was allocated in it.
                unsafe { self.give_back_fresh_page(cur, target) };
                if self.pages.get() == pages {
                    // (unless the limit made room by giving kept pages back, which only a
                    // `Warn` budget lets happen before this check: see `insert_page`)
                    self.reshaped.set(reshaped);
                }
            }
            self.admit(growth)?;
            return self.bump::<false>(layout);
        }
        let used_before = self.used();
        match cur {
            None => self.root_used_end.set(self.cursor.ptr()),
            Some(c) => page::header(c).used_end.set(self.cursor.ptr()),
        }
        self.enter_page(Some(target), page::data_start(target), used_before);
        // The page left is reported once the arena is consistent and before the request takes
        // its bytes: the sink may allocate from this arena (values with destructors, markers),
        // and what it allocates must come before the caller's drop record, which the caller
        // links after this returns (the drop list is kept in position order). The request then
        // starts over in the page, which may no longer hold it.
        #[cfg(feature = "profiler")]
        {
            self.profile_left(cur);
            self.bump::<false>(layout)
        }
        #[cfg(not(feature = "profiler"))]
        Ok(self
            .cursor
            .bump_fast::<false>(size, align)
            .expect("a page chosen to fit the request and admitted by the budget holds it"))
    }

    /// The first kept page after `cur` that holds the request, moved up to follow `cur` if it
    /// was further on. Every page after the current one is empty, so any of them can be used
    /// next, and moving one changes no live position.
    #[cfg(feature = "alloc")]
    fn take_kept_page(
        &self,
        cur: Option<NonNull<PageHeader>>,
        size: usize,
        align: usize,
    ) -> Option<NonNull<PageHeader>> {
        let next = self.next_page(cur);
        let mut before: Option<NonNull<PageHeader>> = None;
        let mut candidate = next;
        while let Some(p) = candidate {
            if fits(p, size, align) {
                if let Some(b) = before {
                    page::header(b).next.set(page::header(p).next.get());
                    page::header(p).next.set(next);
                    self.link_after(cur, Some(p));
                    self.reshaped.set(true);
                }
                return Some(p);
            }
            before = Some(p);
            candidate = page::header(p).next.get();
        }
        None
    }

    /// Makes `page` follow `cur` in the chain and renumbers the pages from there on.
    #[cfg(feature = "alloc")]
    fn link_after(&self, cur: Option<NonNull<PageHeader>>, page: Option<NonNull<PageHeader>>) {
        match cur {
            None => self.first_page.set(page),
            Some(c) => page::header(c).next.set(page),
        }
        let mut i = Arena::page_index(cur);
        let mut later = page;
        while let Some(p) = later {
            i += 1;
            page::header(p).index.set(i);
            later = page::header(p).next.get();
        }
    }

    /// Gives every page after `cur` back to the system allocator.
    #[cfg(feature = "alloc")]
    fn free_pages_after(&self, cur: Option<NonNull<PageHeader>>) {
        let mut next = self.next_page(cur);
        if next.is_none() {
            return;
        }
        self.link_after(cur, None);
        while let Some(p) = next {
            next = page::header(p).next.get();
            self.pages.set(self.pages.get() - 1);
            self.system_bytes
                .set(self.system_bytes.get() - page::header(p).total);
            // SAFETY: the page came from `alloc_page` and is unlinked. It lies after the current
            // page, so it holds no live allocation, drop record or guard record; markers that
            // point into it are checked against the chain before use (`page_frees`).
            unsafe { page::free_page(p) };
        }
        self.page_frees.set(self.page_frees.get() + 1);
        self.reshaped.set(true);
    }

    /// Unlinks `page`, which [`insert_page`](Self::insert_page) linked right after `cur`, and
    /// gives it back to the system allocator.
    ///
    /// # Safety
    ///
    /// - `page` is the page after `cur`, and nothing lives in it: no allocation, no drop or
    ///   guard record, and no marker taken while it was current (it never was, or everything
    ///   allocated in it since was rewound and no marker was handed out meanwhile).
    #[cfg(feature = "alloc")]
    pub(super) unsafe fn give_back_fresh_page(
        &self,
        cur: Option<NonNull<PageHeader>>,
        page: NonNull<PageHeader>,
    ) {
        debug_assert!(self.next_page(cur) == Some(page));
        self.link_after(cur, page::header(page).next.get());
        self.pages.set(self.pages.get() - 1);
        self.system_bytes
            .set(self.system_bytes.get() - page::header(page).total);
        // SAFETY: the page came from `alloc_page` and is unlinked; the caller guarantees that
        // nothing lives in it and no marker points into it.
        unsafe { page::free_page(page) };
    }

    /// Takes a new page from the system allocator and links it right after `cur`. A limited
    /// arena first gives back the kept pages after `cur` (none of them holds the request) if the
    /// new page would not fit under the limit otherwise.
    #[cfg(feature = "alloc")]
    fn insert_page(
        &self,
        cur: Option<NonNull<PageHeader>>,
        size: usize,
        align: usize,
    ) -> Result<NonNull<PageHeader>, ArenaError> {
        let slack = if align > page::PAGE_ALIGN {
            align - 1
        } else {
            0
        };
        let needed = size
            .checked_add(slack)
            .and_then(|n| n.checked_add(page::HEADER))
            .filter(|&n| n <= isize::MAX as usize / 2)
            .ok_or(ArenaError::SizeOverflow {
                elem_size: size,
                count: 1,
            })?;
        let limit = self.limit.get();
        let mut total = needed.max(self.page_bytes);
        if self.system_bytes.get().saturating_add(total) > limit {
            // Give the kept pages back only if that makes room: a refused request must leave
            // the arena unchanged.
            let (_, kept) = pages_from(self.next_page(cur));
            if kept > 0 && (self.system_bytes.get() - kept).saturating_add(needed) <= limit {
                // Kept pages given back cannot come back, so a budget that would refuse the
                // request decides first. The growth is known exactly only once the page exists
                // (its data start may need padding for `align`), so this takes the most padding
                // it can need. A `Warn` budget never refuses: it is left to the exact check.
                if self.refuses(size + slack) {
                    self.admit(size + slack)?;
                }
                self.free_pages_after(cur);
            }
        }
        let taken = self.system_bytes.get();
        if taken.saturating_add(total) > limit {
            if taken.saturating_add(needed) > limit {
                return Err(ArenaError::LimitReached {
                    requested: size,
                    remaining: self.remaining(),
                    capacity: self.capacity(),
                    limit,
                });
            }
            total = limit - taken; // the last page fills the limit exactly
        }
        let next = self.next_page(cur);
        let page = page::alloc_page(total, 0, self.page_tag.get(), self.page_frees.get()).ok_or(
            ArenaError::SystemOutOfMemory {
                requested: size,
                page_bytes: total,
            },
        )?;
        if next.is_some() || self.kept.get() > 0 {
            // inserted before kept pages, or grown although pages were kept: the next reset
            // coalesces the pages so the frames served so far fit without new pages
            self.reshaped.set(true);
        }
        page::header(page).next.set(next);
        self.link_after(cur, Some(page));
        self.pages.set(self.pages.get() + 1);
        self.system_bytes.set(taken + total);
        Ok(page)
    }

    /// After a reset (the bump pointer at the start of the first page): if the pages were
    /// reshaped since the last reset, replaces them by one page that can hold everything they
    /// held together, so any frame served so far (with allocations aligned to at most
    /// `PAGE_ALIGN`) fits again without a new page. Its capacity is the sum of theirs, each
    /// rounded up to `PAGE_ALIGN` (laying the pages' data out back to back at aligned offsets
    /// keeps every allocation's alignment, and a bump allocator never does worse than a given
    /// aligned layout of the same sequence), plus a header, rounded up to a power of two and
    /// capped by the limit. Without the rounding, two or more pages already took that much,
    /// headers included, so the cap never cuts into the capacity they held.
    #[cfg(feature = "alloc")]
    pub(super) fn coalesce_pages(&self) {
        let reshaped = self.reshaped.replace(false);
        if reshaped && self.pages.get() >= 2 && self.cursor.page() == self.first_page.get() {
            let (capacity, held) = pages_from(self.first_page.get());
            let total = self.merged_page_bytes(capacity, held);
            self.enter_page(None, self.root_start, 0);
            self.free_pages_after(None);
            if total > page::HEADER + page::PAGE_ALIGN
                && let Some(page) =
                    page::alloc_page(total, 1, self.page_tag.get(), self.page_frees.get())
            {
                self.link_after(None, Some(page));
                self.pages.set(1);
                self.system_bytes.set(self.system_bytes.get() + total);
                self.enter_page(Some(page), page::data_start(page), 0);
            }
            // (if the system allocator refused, the arena holds no page and grows again on
            // demand, like a new chained arena)
            self.reshaped.set(false);
        }
        self.kept.set(self.pages.get());
    }

    /// After a rewind (a scope's end, [`Arena::rewind`]): if two or more pages follow the
    /// current one, they are all empty, and a loop of scopes that keeps needing new pages
    /// there (a request larger than the page size takes a page of its own, which smaller
    /// requests later cannot use up) would grow without bound. They are replaced by one page
    /// that holds everything they held together (sized as at a reset, see
    /// [`coalesce_pages`](Self::coalesce_pages)), so every scope served so far fits again
    /// without a new page. Nothing live is in them: markers into them are ahead of the cursor
    /// (stale), and the page-free count makes [`Arena::rewind`] check before reading one.
    ///
    /// The test is inline (two loads when no page or one page follows, a steady loop's usual
    /// state); the merge is not.
    #[cfg(feature = "alloc")]
    #[inline]
    pub(super) fn coalesce_tail(&self) {
        let cur = self.cursor.page();
        if let Some(first) = self.next_page(cur)
            && page::header(first).next.get().is_some()
        {
            crate::cold_path();
            self.merge_tail(cur, first);
        }
    }

    /// [`coalesce_tail`](Self::coalesce_tail)'s merge of the pages from `first`, which follows
    /// `cur` and is followed by another page.
    #[cfg(feature = "alloc")]
    #[inline(never)]
    fn merge_tail(&self, cur: Option<NonNull<PageHeader>>, first: NonNull<PageHeader>) {
        let (capacity, held) = pages_from(Some(first));
        let total = self.merged_page_bytes(capacity, held);
        self.free_pages_after(cur);
        if total > page::HEADER + page::PAGE_ALIGN
            && let Some(page) =
                page::alloc_page(total, 0, self.page_tag.get(), self.page_frees.get())
        {
            self.link_after(cur, Some(page));
            self.pages.set(self.pages.get() + 1);
            self.system_bytes.set(self.system_bytes.get() + total);
        }
        // (if the system allocator refused, the arena grows again on demand)
    }

    /// The size of one page replacing pages of `capacity` bytes (each rounded up to
    /// `PAGE_ALIGN`) that took `held` bytes from the system: their capacity plus a header,
    /// rounded up to a power of two (bumpalo and bump-scope size their chunks the same way: a
    /// loop whose busiest frame creeps up then grows in a few steps, not at every new peak),
    /// capped by what the limit leaves beside the arena's other memory.
    #[cfg(feature = "alloc")]
    fn merged_page_bytes(&self, capacity: usize, held: usize) -> usize {
        let other = self.system_bytes.get() - held;
        capacity
            .saturating_add(page::HEADER)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
            .min(self.limit.get().saturating_sub(other))
            .min(isize::MAX as usize / 2)
    }

    fn full_error(&self, size: usize) -> ArenaError {
        ArenaError::Full {
            requested: size,
            remaining: self.cursor.left_in_page(),
            capacity: self.capacity(),
        }
    }
}

/// The pages from `first` to the end of the chain: their capacity (each rounded up to
/// `PAGE_ALIGN`) and the bytes they took from the system, headers included.
#[cfg(feature = "alloc")]
fn pages_from(first: Option<NonNull<PageHeader>>) -> (usize, usize) {
    let (mut capacity, mut held) = (0usize, 0usize);
    let mut next = first;
    while let Some(p) = next {
        capacity = capacity.saturating_add(page_capacity_aligned(p));
        held += page::header(p).total;
        next = page::header(p).next.get();
    }
    (capacity, held)
}

/// A page's capacity rounded up to `PAGE_ALIGN`.
#[cfg(feature = "alloc")]
fn page_capacity_aligned(p: NonNull<PageHeader>) -> usize {
    let cap = page::header(p).end.as_ptr() as usize - page::data_start(p).as_ptr() as usize;
    cap.next_multiple_of(page::PAGE_ALIGN)
}

/// Padding before the first byte aligned to `align` in an empty `page`.
#[cfg(feature = "alloc")]
fn pad_in(page: NonNull<PageHeader>, align: usize) -> usize {
    (page::data_start(page).as_ptr() as usize).wrapping_neg() & (align - 1)
}

/// Whether an empty `page` can hold `size` bytes at `align`.
#[cfg(feature = "alloc")]
fn fits(page: NonNull<PageHeader>, size: usize, align: usize) -> bool {
    let start = page::data_start(page).as_ptr() as usize;
    let pad = start.wrapping_neg() & (align - 1);
    let avail = page::header(page).end.as_ptr() as usize - start;
    size.checked_add(pad).is_some_and(|n| n <= avail)
}
