//! Budget-checked allocation for tracked heaps.

use core::alloc::Layout;
use core::ops::Deref;
use core::ptr::NonNull;

#[cfg(feature = "alloc")]
use super::heap_guard::GuardedHeap;
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

/// A heap [`Tracked`] can check budgets for: [`FreeListHeap`] and [`GuardedHeap`].
pub(super) trait HeapAllocator: MemoryUsage {
    /// Bytes in live blocks now (what the budget check compares).
    fn used_bytes(&self) -> usize;
    /// Allocates `layout`.
    ///
    /// # Errors
    ///
    /// The heap's error; nothing changes.
    fn allocate(&mut self, layout: Layout) -> Result<NonNull<u8>, HeapError>;
}

impl HeapAllocator for FreeListHeap<'_> {
    fn used_bytes(&self) -> usize {
        self.stats().used
    }
    #[inline]
    fn allocate(&mut self, layout: Layout) -> Result<NonNull<u8>, HeapError> {
        self.alloc(layout)
    }
}

#[cfg(feature = "alloc")]
impl HeapAllocator for GuardedHeap<'_> {
    fn used_bytes(&self) -> usize {
        self.stats().used
    }
    fn allocate(&mut self, layout: Layout) -> Result<NonNull<u8>, HeapError> {
        self.alloc(layout)
    }
}

/// The budget check, then the allocation.
#[inline]
#[track_caller]
fn alloc_checked<H: HeapAllocator, G: Tag>(
    heap: &mut Tracked<H, G>,
    layout: Layout,
) -> Result<NonNull<u8>, Refused<HeapError>> {
    if heap.has_budget() {
        let used = heap.inner.used_bytes();
        heap.check(used, layout.size())
            .map_err(|exceeded| Refused::OverBudget {
                exceeded,
                value: (),
            })?;
    }
    heap.inner.allocate(layout).map_err(Refused::Allocator)
}

impl<G: Tag> Tracked<FreeListHeap<'_>, G> {
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
        alloc_checked(self, layout)
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

#[cfg(feature = "alloc")]
impl<G: Tag> Tracked<GuardedHeap<'_>, G> {
    /// [`GuardedHeap::check_guards`], naming this allocator.
    ///
    /// # Errors
    ///
    /// The first damaged guard, lowest address first.
    pub fn check_guards(&self) -> Result<(), super::GuardReport> {
        self.inner
            .check_guards()
            .map_err(|violation| self.guard_report(violation))
    }

    fn guard_report(&self, violation: crate::arena::GuardViolation) -> super::GuardReport {
        super::GuardReport {
            allocator: self.name(),
            tag: self.tag().name(),
            violation,
        }
    }

    /// [`GuardedHeap::alloc`] after the budget check, as for a [`FreeListHeap`] (the guard bytes
    /// are not counted by the check, and are by the usage).
    ///
    /// # Errors
    ///
    /// As for a tracked [`FreeListHeap`].
    ///
    /// # Panics
    ///
    /// Over budget under [`Policy::Panic`](super::Policy::Panic).
    #[track_caller]
    pub fn try_alloc(&mut self, layout: Layout) -> Result<NonNull<u8>, Refused<HeapError>> {
        alloc_checked(self, layout)
    }

    /// Checks the allocation's guards, then frees it.
    ///
    /// # Errors
    ///
    /// As [`FreeListHeap::free`]: `ptr` is not a live allocation of this heap; nothing changes.
    ///
    /// # Panics
    ///
    /// If a guard byte of the allocation was overwritten, with a
    /// [`GuardReport`](super::GuardReport) naming this allocator, its tag and the allocation's
    /// size; the block is not freed.
    pub fn free(&mut self, ptr: NonNull<u8>) -> Result<(), HeapError> {
        if let Some(v) = self.inner.check_allocation(ptr) {
            panic!("{}", self.guard_report(v));
        }
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
