//! [`Usage`] and [`MemoryUsage`]: the counters every allocator already keeps, read in one shape.
//!
//! Nothing here runs on the allocation path: each allocator keeps its own plain counters (the
//! arena's bump pointer and high-water mark, the pool's length and peak, ...) and these impls only
//! read them when a report is taken.

use core::ops::Add;

use crate::arena::{Arena, BufferArena};
#[cfg(feature = "alloc")]
use crate::arena::{Frame, FrameArena};
#[cfg(feature = "alloc")]
use crate::pool::Pool;

/// What one allocator (or every allocator of a tag) holds, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Usage {
    /// Bytes handed out now (arenas count alignment padding; pools count live values).
    pub current: usize,
    /// The highest `current` reached (for a sum over allocators: the sum of their peaks, an upper
    /// bound on the peak of the sum).
    pub peak: usize,
    /// Live allocations: arena allocations since the last reset, pool values, heap blocks.
    pub allocations: usize,
    /// Bytes the allocator holds for its use, handed out or not (an arena's capacity, a pool's
    /// slots, a heap's block space).
    pub reserved: usize,
}

impl Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage {
            current: self.current.saturating_add(o.current),
            peak: self.peak.saturating_add(o.peak),
            allocations: self.allocations.saturating_add(o.allocations),
            reserved: self.reserved.saturating_add(o.reserved),
        }
    }
}

/// An allocator that can say what it holds. Implemented for every allocator of this crate; read
/// when a report is taken, never on the allocation path.
pub trait MemoryUsage {
    /// The allocator's counters now.
    fn usage(&self) -> Usage;

    /// Whether values still live when the allocator is dropped are leaks worth reporting: true for
    /// pools and heaps (objects with independent lifetimes), false for arenas (whose values die
    /// together by design).
    fn reports_leaks(&self) -> bool {
        false
    }

    /// At [`Registry::end_frame`](super::Registry::end_frame) (the `profiler` feature): brings
    /// what the allocator reported to the profiler up to date where it reports lazily (an
    /// arena's current block). The default does nothing.
    ///
    /// ```
    /// use arena_kit::tags::MemoryUsage;
    ///
    /// arena_kit::Arena::with_capacity(64).profile_frame(); // unlabelled: reports nothing
    /// ```
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {}
}

impl<A: MemoryUsage + ?Sized> MemoryUsage for &A {
    fn usage(&self) -> Usage {
        (**self).usage()
    }
    fn reports_leaks(&self) -> bool {
        (**self).reports_leaks()
    }
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {
        (**self).profile_frame();
    }
}

/// Current = [`Arena::used`], peak = [`Arena::high_water`], reserved = [`Arena::capacity`].
impl MemoryUsage for Arena {
    fn usage(&self) -> Usage {
        Usage {
            current: self.used(),
            peak: self.high_water(),
            allocations: self.allocation_count(),
            reserved: self.capacity(),
        }
    }
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {
        Arena::profile_frame(self);
    }
}

impl MemoryUsage for BufferArena<'_> {
    fn usage(&self) -> Usage {
        (**self).usage()
    }
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {
        (**self).profile_frame();
    }
}

/// The frame's own buffer only.
#[cfg(feature = "alloc")]
impl MemoryUsage for Frame<'_> {
    fn usage(&self) -> Usage {
        self.arena().usage()
    }
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {
        self.arena().profile_frame();
    }
}

/// The sum over all `N` buffers: the frame being built and the older frames readers may still
/// hold. The peak is the sum of the buffers' peaks.
#[cfg(feature = "alloc")]
impl<const N: usize> MemoryUsage for FrameArena<N> {
    fn usage(&self) -> Usage {
        (0..N)
            .map(|i| self.buffer(i).usage())
            .fold(Usage::default(), Add::add)
    }
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {
        for i in 0..N {
            self.buffer(i).profile_frame();
        }
    }
}

/// Current = live values × `size_of::<T>()`, peak = most values live at once × the same,
/// reserved = slots × slot size (the value and its generation).
#[cfg(feature = "alloc")]
impl<T, H: crate::pool::PoolHandle<T>> MemoryUsage for Pool<T, H> {
    fn usage(&self) -> Usage {
        let stats = self.stats();
        Usage {
            current: stats.len.saturating_mul(size_of::<T>()),
            peak: stats.peak_live.saturating_mul(size_of::<T>()),
            allocations: stats.len,
            reserved: stats
                .capacity
                .saturating_mul(crate::pool::slot_bytes::<T>()),
        }
    }

    fn reports_leaks(&self) -> bool {
        true
    }
}

/// `len` rows of `T` out of `capacity`, with no high-water mark kept: the peak is the current.
#[cfg(feature = "alloc")]
fn rows<T>(len: usize, capacity: usize) -> Usage {
    let current = len.saturating_mul(size_of::<T>());
    Usage {
        current,
        peak: current,
        allocations: len,
        reserved: capacity.saturating_mul(size_of::<T>()),
    }
}

/// Current = rows × `size_of::<T>()` (an upper bound: columns store no padding between fields),
/// reserved = capacity × the same. A `SoaVec` keeps no high-water mark, so the peak is the
/// current value; the [`Registry`](super::Registry) history keeps the per-frame values.
#[cfg(feature = "alloc")]
impl<T: crate::soa::Soa> MemoryUsage for crate::soa::SoaVec<T> {
    fn usage(&self) -> Usage {
        rows::<T>(self.len(), self.capacity())
    }
}

/// As for [`SoaVec`](crate::soa::SoaVec): live values × `size_of::<T>()`, no high-water mark.
/// Live values at drop are reported as leaks, as for [`Pool`].
#[cfg(feature = "alloc")]
impl<T: crate::soa::Soa> MemoryUsage for crate::soa::SoaPool<T> {
    fn usage(&self) -> Usage {
        rows::<T>(self.len(), self.capacity())
    }

    fn reports_leaks(&self) -> bool {
        true
    }
}
