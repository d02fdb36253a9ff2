//! Guard checks that name the allocator: a [`GuardViolation`] with the allocator's name and tag.

use core::fmt;

use super::tag::Tag;
use super::tracked::Tracked;
use crate::arena::BumpAllocator;
use crate::arena::{Arena, GuardViolation};

/// A damaged guard byte, with the allocator it was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardReport {
    /// The allocator's name.
    pub allocator: &'static str,
    /// The allocator's tag name.
    pub tag: &'static str,
    /// Where, which allocation (offset and size) and what was found.
    pub violation: GuardViolation,
}

impl fmt::Display for GuardReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "in `{}` (tag {}): {}",
            self.allocator, self.tag, self.violation
        )
    }
}

impl core::error::Error for GuardReport {}

impl<A: BumpAllocator, G: Tag> Tracked<A, G> {
    /// [`Arena::check_guards`], naming this allocator. Always `Ok` unless the arena was built
    /// [`with_guards`](Arena::with_guards) in a build with [`crate::poison::ENABLED`].
    ///
    /// # Errors
    ///
    /// The first damaged guard, newest allocation first.
    pub fn check_guards(&self) -> Result<(), GuardReport> {
        self.inner
            .arena()
            .check_guards()
            .map_err(|violation| GuardReport {
                allocator: self.name(),
                tag: self.tag().name(),
                violation,
            })
    }
}

impl<G: Tag> Tracked<Arena, G> {
    /// [`Arena::reset`]: frees everything (the high-water mark stays).
    ///
    /// # Panics
    ///
    /// As [`Arena::reset`], if a guard byte was overwritten; the [`GuardReport`] naming this
    /// allocator is logged first (target `arena_kit::guard`).
    #[track_caller]
    pub fn reset(&mut self) {
        if let Err(report) = self.check_guards() {
            super::sink::emit(super::Event::Guard(report));
        }
        self.inner.reset();
    }
}
