//! [`PageTag`]: the tag an allocator charges the memory it takes from the global allocator to,
//! so a [`TaggingAllocator`](super::TaggingAllocator) counts a tracked allocator's pages under
//! the allocator's own tag, whichever scope is current when it grows.

use core::marker::PhantomData;

use super::tag::Tag;

/// The tag an allocator charges the memory it takes from the global allocator to (its pages,
/// chunks and column blocks): a [`Tracked`](super::Tracked) wrapper hands its tag to the
/// allocator through [`Budgeted::charge_pages_to`](super::Budgeted::charge_pages_to), and the
/// allocator opens [`charge`](PageTag::charge) around every request for memory. So with the
/// [`TaggingAllocator`](super::TaggingAllocator) installed, a tracked pool that grows inside an
/// `Audio` scope still charges its new chunk to its own tag, and each byte appears once, under the
/// tag of the allocator that holds it.
///
/// Without `std`, or with no `TaggingAllocator` installed, a `PageTag` is [`NONE`](PageTag::NONE)
/// and charging does nothing.
///
/// ```
/// use arena_kit::tags::{PageTag, tag_scope};
///
/// let physics = PageTag::of("Physics");
/// let _audio = tag_scope("Audio");
/// let page = {
///     let _charge = physics.charge(); // this thread's allocations go to Physics meanwhile
///     vec![0u8; 4096]
/// };
/// let back_in_audio = vec![0u8; 16]; // Audio again
/// drop((page, back_in_audio));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageTag {
    /// The tag's counter slot, or `None`: leave the caller's scope as it is.
    #[cfg(feature = "std")]
    slot: Option<u8>,
}

impl PageTag {
    /// Charges nothing differently: memory goes to the scope current when it is taken.
    pub const NONE: PageTag = PageTag {
        #[cfg(feature = "std")]
        slot: None,
    };

    /// The page tag of `tag`: its counter slot (claimed as [`tag_scope`](super::tag_scope)
    /// claims one). [`NONE`](PageTag::NONE) while no
    /// [`TaggingAllocator`](super::TaggingAllocator) has allocated (one installed as the global
    /// allocator has done so before `main`), so an allocator tagged in a program without one
    /// claims no slot.
    pub fn of<G: Tag>(tag: G) -> PageTag {
        #[cfg(feature = "std")]
        {
            if crate::tagging_alloc::installed() {
                return PageTag {
                    slot: Some(crate::tagging_alloc::slot_of(tag)),
                };
            }
        }
        let _ = tag;
        PageTag::NONE
    }

    /// Whether this is [`NONE`](PageTag::NONE).
    pub const fn is_none(&self) -> bool {
        #[cfg(feature = "std")]
        {
            self.slot.is_none()
        }
        #[cfg(not(feature = "std"))]
        {
            true
        }
    }

    /// Charges this thread's allocations to the tag until the guard is dropped (as a
    /// [`tag_scope`](super::tag_scope) of the tag would); with [`NONE`](PageTag::NONE), changes
    /// nothing. What an allocator opens around each request for memory.
    #[inline]
    pub fn charge(self) -> PageCharge {
        #[cfg(feature = "std")]
        {
            PageCharge {
                previous: self.slot.map(crate::tagging_alloc::swap_current),
                _not_send: PhantomData,
            }
        }
        #[cfg(not(feature = "std"))]
        {
            PageCharge {
                _not_send: PhantomData,
            }
        }
    }

    /// Runs `f` with this thread's allocations charged to the tag, and returns what it
    /// returns: [`charge`](PageTag::charge) around one call. The previous tag is current again
    /// when `f` returns or unwinds.
    ///
    /// ```
    /// use arena_kit::tags::PageTag;
    ///
    /// let physics = PageTag::of("Physics");
    /// let page = physics.charged(|| vec![0u8; 4096]); // charged to Physics
    /// assert_eq!(page.len(), 4096);
    /// ```
    #[inline]
    pub fn charged<R>(self, f: impl FnOnce() -> R) -> R {
        let _charge = self.charge();
        f()
    }
}

/// The guard of [`PageTag::charge`]: dropping it puts back the tag that was current before. It
/// stays on the thread that made it.
#[derive(Debug)]
#[must_use = "the charge applies until the guard is dropped"]
pub struct PageCharge {
    #[cfg(feature = "std")]
    previous: Option<u8>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for PageCharge {
    #[inline]
    fn drop(&mut self) {
        #[cfg(feature = "std")]
        if let Some(previous) = self.previous {
            crate::tagging_alloc::swap_current(previous);
        }
    }
}
