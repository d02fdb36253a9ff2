//! Budget-checked allocation for tracked heaps.
//!
//! Safe code over the heap's public API; the heap's own [`MemoryUsage`] and
//! [`Budgeted`](super::Budgeted) impls live in `crate::heap`.

use core::alloc::Layout;
use core::ops::Deref;
use core::ptr::NonNull;

use super::tag::Tag;
use super::tracked::{Refused, Tracked};
use super::usage::MemoryUsage;
#[cfg(feature = "alloc")]
use crate::heap::GuardedHeap;
use crate::heap::{FreeError, FreeListHeap, RequestError};

/// A heap [`Tracked`] can check budgets for: [`FreeListHeap`] and [`GuardedHeap`].
pub(super) trait HeapAllocator: MemoryUsage {
    /// Bytes in live blocks now (what the budget check compares).
    fn used_bytes(&self) -> usize;
    /// Allocates `layout`.
    ///
    /// # Errors
    ///
    /// The heap's error; nothing changes.
    fn allocate(&mut self, layout: Layout) -> Result<NonNull<u8>, RequestError>;
}

impl HeapAllocator for FreeListHeap<'_> {
    fn used_bytes(&self) -> usize {
        self.stats().used
    }
    #[inline]
    #[track_caller]
    fn allocate(&mut self, layout: Layout) -> Result<NonNull<u8>, RequestError> {
        self.try_alloc(layout)
    }
}

#[cfg(feature = "alloc")]
impl HeapAllocator for GuardedHeap<'_> {
    fn used_bytes(&self) -> usize {
        self.stats().used
    }
    #[track_caller]
    fn allocate(&mut self, layout: Layout) -> Result<NonNull<u8>, RequestError> {
        self.try_alloc(layout)
    }
}

/// The budget check, then the allocation.
#[inline]
#[track_caller]
fn alloc_checked<H: HeapAllocator, G: Tag>(
    heap: &mut Tracked<H, G>,
    layout: Layout,
) -> Result<NonNull<u8>, Refused<RequestError>> {
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
    /// [`FreeListHeap::try_alloc`] after checking `layout.size()` more bytes against the budget
    /// (the block's tags and rounding are not counted by the check, and are by the usage).
    ///
    /// # Errors
    ///
    /// [`Refused::OverBudget`] under [`Policy::Fail`](super::Policy::Fail), or the heap's own
    /// [`RequestError`]. Nothing is allocated then.
    ///
    /// # Panics
    ///
    /// Over budget under [`Policy::Panic`](super::Policy::Panic).
    #[inline]
    #[track_caller]
    pub fn try_alloc(&mut self, layout: Layout) -> Result<NonNull<u8>, Refused<RequestError>> {
        alloc_checked(self, layout)
    }

    /// [`FreeListHeap::free`].
    ///
    /// # Errors
    ///
    /// As [`FreeListHeap::free`]: `ptr` is not a live block of this heap; nothing changes.
    #[inline]
    pub fn free(&mut self, ptr: NonNull<u8>) -> Result<(), FreeError> {
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

    /// [`GuardedHeap::try_alloc`] after the budget check, as for a [`FreeListHeap`] (the guard
    /// bytes are not counted by the check, and are by the usage).
    ///
    /// # Errors
    ///
    /// As for a tracked [`FreeListHeap`].
    ///
    /// # Panics
    ///
    /// Over budget under [`Policy::Panic`](super::Policy::Panic).
    #[track_caller]
    pub fn try_alloc(&mut self, layout: Layout) -> Result<NonNull<u8>, Refused<RequestError>> {
        alloc_checked(self, layout)
    }

    /// [`GuardedHeap::free`]: checks the allocation's guards, then frees it. A damaged guard is
    /// also logged (target `arena_kit::guard`) as a [`GuardReport`](super::GuardReport) naming
    /// this allocator and its tag.
    ///
    /// # Errors
    ///
    /// As [`GuardedHeap::free`]: `ptr` is not a live allocation of this heap, or
    /// [`FreeError::GuardDamaged`] (the allocation is not freed); nothing changes.
    pub fn free(&mut self, ptr: NonNull<u8>) -> Result<(), FreeError> {
        let freed = self.inner.free(ptr);
        if let Err(FreeError::GuardDamaged(v)) = &freed {
            log::error!(target: "arena_kit::guard", "{}", self.guard_report(*v));
        }
        freed
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
