//! Budget-checked allocation for tracked heaps.

use core::alloc::Layout;
use core::ops::Deref;
use core::ptr::NonNull;

use super::tag::Tag;
use super::tracked::{Refused, Tracked};
use super::usage::{MemoryUsage, Usage};
use crate::heap::{FreeListHeap, HeapError};

/// Current = bytes in live blocks (the 16 bytes of tags each block carries included, so every
/// byte of block space is owned by someone), peak = the highest of that, allocations = live
/// blocks, reserved = block space.
impl MemoryUsage for FreeListHeap<'_> {
    fn usage(&self) -> Usage {
        let stats = self.stats();
        Usage {
            current: stats.used,
            peak: stats.peak_used,
            allocations: stats.live_blocks,
            reserved: stats.capacity,
        }
    }

    fn reports_leaks(&self) -> bool {
        true
    }
}

impl<'buf, G: Tag> Tracked<FreeListHeap<'buf>, G> {
    /// [`FreeListHeap::alloc`] after checking `layout.size()` more bytes against the budget (the
    /// block's tags and rounding are not counted by the check, and are by the usage).
    ///
    /// # Errors
    ///
    /// [`Refused::OverBudget`] under [`Policy::Fail`](super::Policy::Fail), or the heap's own
    /// [`HeapError`]. Nothing is allocated then.
    ///
    /// # Panics
    ///
    /// Over budget under [`Policy::Panic`](super::Policy::Panic).
    #[inline]
    #[track_caller]
    pub fn try_alloc(&mut self, layout: Layout) -> Result<NonNull<u8>, Refused<HeapError>> {
        if self.has_budget() {
            let used = self.inner.stats().used;
            self.check(used, layout.size())
                .map_err(|exceeded| Refused::OverBudget {
                    exceeded,
                    value: (),
                })?;
        }
        self.inner.alloc(layout).map_err(Refused::Allocator)
    }

    /// [`FreeListHeap::free`].
    ///
    /// # Errors
    ///
    /// As [`FreeListHeap::free`]: `ptr` is not a live block of this heap; nothing changes.
    #[inline]
    pub fn free(&mut self, ptr: NonNull<u8>) -> Result<(), HeapError> {
        self.inner.free(ptr)
    }
}

/// Reading a tracked heap is reading the heap ([`FreeListHeap::stats`], the memory map, ...);
/// allocating needs `&mut` and goes through the budget check.
impl<'buf, G: Tag> Deref for Tracked<FreeListHeap<'buf>, G> {
    type Target = FreeListHeap<'buf>;
    fn deref(&self) -> &FreeListHeap<'buf> {
        &self.inner
    }
}
