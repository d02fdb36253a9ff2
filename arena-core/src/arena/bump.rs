//! The bump itself: an inlined fast path in the current page and a cold path that moves to the
//! next page (kept from an earlier frame, or new).

use core::alloc::Layout;
use core::ptr::NonNull;

#[cfg(feature = "alloc")]
use super::page::{self, PageHeader};
use super::{Arena, ArenaError};

impl Arena {
    /// Allocates `layout` in the current page, or `None` if it does not fit there.
    #[inline(always)]
    pub(super) fn bump_fast(&self, size: usize, align: usize) -> Option<NonNull<u8>> {
        let ptr = self.ptr.get();
        let addr = ptr.as_ptr() as usize;
        // Round up, then derive the pointer from the rounded address (not from `ptr + padding`),
        // which keeps the bump pointer's dependency chain to add, and, add.
        let aligned = addr.wrapping_add(align - 1) & !(align - 1);
        // Negative when rounding passed `end`; `end - aligned <= isize::MAX` otherwise because a
        // page is one allocation.
        let remaining = (self.end.get().as_ptr() as usize).wrapping_sub(aligned) as isize;
        // `aligned < addr` only if the rounding wrapped around the address space.
        if aligned >= addr && size as isize <= remaining {
            // SAFETY: `addr <= aligned` and `aligned + size <= end`, so both pointers stay inside
            // the current page; `aligned >= addr > 0`.
            unsafe {
                let start = NonNull::new_unchecked(ptr.as_ptr().with_addr(aligned));
                self.ptr.set(start.add(size));
                Some(start)
            }
        } else {
            None
        }
    }

    /// Moves the bump pointer to `addr` inside the current page, keeping the page's provenance
    /// (never adopting a caller's pointer), and returns the new cursor. Used to give back or
    /// extend the newest block.
    #[cfg_attr(not(feature = "allocator-api2"), allow(dead_code))]
    pub(super) fn move_cursor_to(&self, addr: usize) -> NonNull<u8> {
        let (start, end) = (self.cur_start.get(), self.end.get());
        assert!(
            (start.as_ptr() as usize..=end.as_ptr() as usize).contains(&addr),
            "the bump pointer stays inside the current page"
        );
        // `addr` is inside the current page, so the cursor's provenance (the page's) covers it;
        // the page start is non-null, so `addr` is too.
        let moved = self
            .ptr
            .get()
            .with_addr(core::num::NonZeroUsize::new(addr).expect("a page address is never null"));
        self.ptr.set(moved);
        moved
    }

    /// Allocates raw memory for `layout` without guard bytes: the fast path, then the cold one.
    #[inline(always)]
    pub(super) fn bump(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        match self.bump_fast(layout.size(), layout.align()) {
            Some(p) => Ok(p),
            None => self.bump_slow(layout),
        }
    }

    /// Allocates memory for `layout`, counting the allocation and adding guard bytes when the
    /// arena has them. Everything typed goes through here.
    #[inline(always)]
    pub(super) fn raw_alloc(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        if crate::poison::ENABLED && self.guarded {
            return self.alloc_guarded(layout);
        }
        let p = self.bump(layout)?;
        self.allocs.set(self.allocs.get() + 1);
        Ok(p)
    }

    /// Moves to the next page that can hold `layout`, inserting a new page if needed.
    #[cold]
    #[inline(never)]
    fn bump_slow(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
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
        let cur = self.cur.get();
        let next = self.next_page(cur);
        let target = match next {
            Some(p) if fits(p, size, align) => p,
            _ => self.insert_page(cur, next, size, align)?,
        };
        let used_before = self.used();
        match cur {
            None => self.root_used_end.set(self.ptr.get()),
            Some(c) => page::header(c).used_end.set(self.ptr.get()),
        }
        self.enter_page(Some(target), page::data_start(target), used_before);
        Ok(self
            .bump_fast(size, align)
            .expect("a page chosen to fit the request holds it"))
    }

    /// Takes a new page from the system allocator and links it after `cur`, before `next`.
    #[cfg(feature = "alloc")]
    fn insert_page(
        &self,
        cur: Option<NonNull<PageHeader>>,
        next: Option<NonNull<PageHeader>>,
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
        let mut total = needed.max(self.page_bytes);
        let taken = self.system_bytes.get();
        if taken.saturating_add(total) > self.limit {
            if taken.saturating_add(needed) > self.limit {
                return Err(ArenaError::LimitReached {
                    requested: size,
                    remaining: self.remaining(),
                    capacity: self.capacity(),
                    limit: self.limit,
                });
            }
            total = self.limit - taken; // the last page fills the limit exactly
        }
        let index = Arena::page_index(cur) + 1;
        let page = page::alloc_page(total, index).ok_or(ArenaError::SystemOutOfMemory {
            requested: size,
            page_bytes: total,
        })?;
        page::header(page).next.set(next);
        match cur {
            None => self.first_page.set(Some(page)),
            Some(c) => page::header(c).next.set(Some(page)),
        }
        let mut later = next;
        let mut i = index;
        while let Some(p) = later {
            i += 1;
            page::header(p).index.set(i);
            later = page::header(p).next.get();
        }
        self.pages.set(self.pages.get() + 1);
        self.system_bytes.set(taken + total);
        Ok(page)
    }

    fn full_error(&self, size: usize) -> ArenaError {
        ArenaError::Full {
            requested: size,
            remaining: self.end.get().as_ptr() as usize - self.ptr.get().as_ptr() as usize,
            capacity: self.capacity(),
        }
    }
}

/// Whether an empty `page` can hold `size` bytes at `align`.
#[cfg(feature = "alloc")]
fn fits(page: NonNull<PageHeader>, size: usize, align: usize) -> bool {
    let start = page::data_start(page).as_ptr() as usize;
    let pad = start.wrapping_neg() & (align - 1);
    let avail = page::header(page).end.as_ptr() as usize - start;
    size.checked_add(pad).is_some_and(|n| n <= avail)
}
