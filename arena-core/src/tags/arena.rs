//! Budget-checked allocation for tracked arenas, frames and frame arenas.

// Handing out `&mut T` from `&self` is the point of an arena.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;
use core::ptr::NonNull;

use super::budget::BudgetExceeded;
use super::tag::Tag;
use super::tracked::{Refused, Tracked};
use super::usage::MemoryUsage;
use crate::arena::{Arena, ArenaError, BufferArena};
#[cfg(feature = "alloc")]
use crate::arena::{Frame, FrameArena};

/// An allocator that bumps through one [`Arena`]: the arena itself, a [`BufferArena`] or a
/// [`Frame`]. [`Tracked`] gives all of them the same budget-checked allocation methods.
pub trait BumpAllocator: MemoryUsage {
    /// The arena allocations go to.
    fn arena(&self) -> &Arena;
}

impl BumpAllocator for Arena {
    #[inline(always)]
    fn arena(&self) -> &Arena {
        self
    }
}

impl BumpAllocator for BufferArena<'_> {
    #[inline(always)]
    fn arena(&self) -> &Arena {
        self
    }
}

#[cfg(feature = "alloc")]
impl BumpAllocator for Frame<'_> {
    #[inline(always)]
    fn arena(&self) -> &Arena {
        Frame::arena(self)
    }
}

/// Panics with the refusal's text: the infallible forms' failure path.
#[cold]
#[inline(never)]
#[track_caller]
fn fail(e: Refused<ArenaError>) -> ! {
    panic!("{e}")
}

fn over_budget(exceeded: BudgetExceeded) -> Refused<ArenaError> {
    Refused::OverBudget {
        exceeded,
        value: (),
    }
}

impl<A: BumpAllocator, G: Tag> Tracked<A, G> {
    /// The arena after checking `bytes` more against the budget.
    #[inline(always)]
    fn gate(&self, bytes: usize) -> Result<&Arena, Refused<ArenaError>> {
        let arena = self.inner.arena();
        if self.has_budget() {
            self.check(arena.used(), bytes).map_err(over_budget)?;
        }
        Ok(arena)
    }

    /// [`Arena::try_alloc`] after the budget check (the value's size; alignment padding is not
    /// counted by the check, and is by the usage).
    ///
    /// # Errors
    ///
    /// [`Refused::OverBudget`] under [`Policy::Fail`](super::Policy::Fail), or the arena's own
    /// error. Nothing is allocated then.
    #[inline(always)]
    pub fn try_alloc<T: Send + 'static>(&self, value: T) -> Result<&mut T, Refused<ArenaError>> {
        self.gate(size_of::<T>())?
            .try_alloc(value)
            .map_err(Refused::Allocator)
    }

    /// [`try_alloc`](Self::try_alloc), panicking on failure.
    ///
    /// # Panics
    ///
    /// When the arena is full, or over budget under a `Fail` or `Panic` policy.
    #[inline(always)]
    #[track_caller]
    pub fn alloc<T: Send + 'static>(&self, value: T) -> &mut T {
        self.try_alloc(value).unwrap_or_else(|e| fail(e))
    }

    /// [`Arena::try_alloc_slice_copy`] after the budget check.
    ///
    /// # Errors
    ///
    /// As [`try_alloc`](Self::try_alloc).
    pub fn try_alloc_slice_copy<T: Copy>(
        &self,
        src: &[T],
    ) -> Result<&mut [T], Refused<ArenaError>> {
        self.gate(size_of_val(src))?
            .try_alloc_slice_copy(src)
            .map_err(Refused::Allocator)
    }

    /// [`try_alloc_slice_copy`](Self::try_alloc_slice_copy), panicking on failure.
    ///
    /// # Panics
    ///
    /// As [`alloc`](Self::alloc).
    #[track_caller]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &mut [T] {
        self.try_alloc_slice_copy(src).unwrap_or_else(|e| fail(e))
    }

    /// [`Arena::try_alloc_str`] after the budget check.
    ///
    /// # Errors
    ///
    /// As [`try_alloc`](Self::try_alloc).
    pub fn try_alloc_str(&self, src: &str) -> Result<&mut str, Refused<ArenaError>> {
        self.gate(src.len())?
            .try_alloc_str(src)
            .map_err(Refused::Allocator)
    }

    /// [`try_alloc_str`](Self::try_alloc_str), panicking on failure.
    ///
    /// # Panics
    ///
    /// As [`alloc`](Self::alloc).
    #[track_caller]
    pub fn alloc_str(&self, src: &str) -> &mut str {
        self.try_alloc_str(src).unwrap_or_else(|e| fail(e))
    }

    /// [`Arena::try_alloc_layout`] after the budget check.
    ///
    /// # Errors
    ///
    /// As [`try_alloc`](Self::try_alloc).
    #[inline(always)]
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, Refused<ArenaError>> {
        self.gate(layout.size())?
            .try_alloc_layout(layout)
            .map_err(Refused::Allocator)
    }

    /// [`try_alloc_layout`](Self::try_alloc_layout), panicking on failure.
    ///
    /// # Panics
    ///
    /// As [`alloc`](Self::alloc).
    #[inline(always)]
    #[track_caller]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        self.try_alloc_layout(layout).unwrap_or_else(|e| fail(e))
    }
}

#[cfg(feature = "alloc")]
impl<const N: usize, G: Tag> Tracked<FrameArena<N>, G> {
    /// [`FrameArena::begin_frame`]: the next frame, tracked under the same name, tag and budget.
    /// The budget applies to the frame's own buffer (what one frame may allocate).
    pub fn begin_frame(&mut self) -> Tracked<Frame<'_>, G> {
        let labels = self.labels;
        labels.wrap(self.inner.begin_frame())
    }
}
