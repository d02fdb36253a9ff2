//! What a tracked guarded heap adds to the heap: guard reports that name the allocator.
//!
//! Everything else a tracked heap does is the heap's own ([`Tracked`] derefs to it); the heap's
//! [`MemoryUsage`](super::MemoryUsage) and [`Budgeted`](super::Budgeted) impls live in
//! `crate::heap`.

use core::ptr::NonNull;

use super::tag::Tag;
use super::tracked::Tracked;
use crate::heap::{FreeError, GuardedHeap};

impl<G: Tag> Tracked<GuardedHeap<'_>, G> {
    /// [`GuardedHeap::check_guards`], naming this allocator.
    ///
    /// # Errors
    ///
    /// The first damaged guard, lowest address first.
    pub fn check_guards(&self) -> Result<(), super::GuardReport> {
        self.allocator()
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

    /// [`GuardedHeap::free_despite_guards`]: frees the allocation whatever its guards hold, and
    /// returns the damage found in them naming this allocator. Not logged: [`free`](Self::free)
    /// logged it when it refused the allocation.
    ///
    /// # Errors
    ///
    /// As [`GuardedHeap::free_despite_guards`]: `ptr` is not a live allocation of this heap;
    /// nothing changes.
    pub fn free_despite_guards(
        &mut self,
        ptr: NonNull<u8>,
    ) -> Result<Option<super::GuardReport>, FreeError> {
        let damage = self.allocator_mut().free_despite_guards(ptr)?;
        Ok(damage.map(|violation| self.guard_report(violation)))
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
        let freed = self.allocator_mut().free(ptr);
        if let Err(FreeError::GuardDamaged(v)) = &freed {
            super::sink::emit(super::Event::Guard(self.guard_report(*v)));
        }
        freed
    }
}
