//! [`MemoryUsage`] for the heap and its shared forms, so each can go into a
//! [`Registry`](crate::tags::Registry) report: a [`FreeListHeap`] (wrapped in
//! [`Tracked`](crate::tags::Tracked) or not), and a `&HeapCell` or `&LockedHeap` (through the
//! blanket impl for references), for example the global allocator.

use super::{FreeListHeap, HeapStats};
use crate::tags::{MemoryUsage, Usage};

/// The heap's numbers as a [`Usage`].
fn usage_of(stats: &HeapStats) -> Usage {
    Usage {
        current: stats.used,
        peak: stats.peak_used,
        allocations: stats.live_blocks,
        reserved: stats.capacity,
    }
}

/// Current = bytes in live blocks (the 16 bytes of tags each block carries included, so every
/// byte of block space is owned by someone), peak = the highest of that, allocations = live
/// blocks, reserved = block space.
impl MemoryUsage for FreeListHeap<'_> {
    fn usage(&self) -> Usage {
        usage_of(&self.stats())
    }

    fn reports_leaks(&self) -> bool {
        true
    }
}

/// As for [`FreeListHeap`], with deferred frees done first when possible. A shared allocator:
/// live blocks when a reference to it is dropped are not leaks, so it reports none.
#[cfg(feature = "allocator-api2")]
impl MemoryUsage for super::HeapCell<'_> {
    fn usage(&self) -> Usage {
        usage_of(&self.stats())
    }
}

/// As for [`FreeListHeap`], read under the lock. Called on a thread inside this heap's
/// [`with`](super::LockedHeap::with) (re-entry), it cannot read the heap and reports all zeros.
/// A shared allocator (often the global one, whose blocks outlive any report): it reports no
/// leaks.
impl<const N: usize> MemoryUsage for super::LockedHeap<N> {
    fn usage(&self) -> Usage {
        self.stats().map(|s| usage_of(&s)).unwrap_or_default()
    }
}
