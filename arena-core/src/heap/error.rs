//! What can go wrong, and what to do about it: one error type per kind of operation, and
//! [`HeapError`] for operations that can fail in more than one way.
//!
//! | type | returned by | means |
//! | --- | --- | --- |
//! | [`BuildError`] | `try_with_capacity`, `try_from_buffer` | no heap could be built |
//! | [`RequestError`] | `try_alloc`, and `try_realloc` through [`HeapError::Request`] | no block for this layout; nothing changed |
//! | [`FreeError`] | `free`, and `try_realloc` through [`HeapError::Free`] | the pointer is not a live allocation; nothing changed |
//! | [`Corruption`] | `check` | the heap's bookkeeping was overwritten |
//! | [`HeapError`] | `try_realloc`, `LockedHeap`'s methods | one of the above, or the heap is in use |
//!
//! A failed operation changes nothing: no block is lost, split, or freed.

use core::fmt;

use crate::arena::GuardViolation;
use crate::tags::BudgetExceeded;

/// Why no heap could be built ([`try_with_capacity`](super::FreeListHeap::try_with_capacity),
/// [`try_from_buffer`](super::FreeListHeap::try_from_buffer)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// The buffer or capacity given is too small to hold one block.
    BufferTooSmall {
        /// Bytes given.
        len: usize,
        /// Bytes needed at least.
        min: usize,
    },
    /// The capacity asked for, with the heap's bitmap, is larger than any allocation can be.
    TooLarge {
        /// Bytes asked for.
        bytes: usize,
        /// The largest allocation there can be (`isize::MAX`).
        max: usize,
    },
    /// The global allocator could not provide the heap's own memory.
    BackingAllocFailed {
        /// Bytes asked of it.
        bytes: usize,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::BufferTooSmall { len, min } => write!(
                f,
                "{len} bytes cannot hold a heap; give at least {min} bytes"
            ),
            BuildError::TooLarge { bytes, max } => write!(
                f,
                "a {bytes}-byte heap (with its bitmap) is larger than the {max} bytes any \
                 allocation can have; ask for less"
            ),
            BuildError::BackingAllocFailed { bytes } => write!(
                f,
                "the system allocator could not provide {bytes} bytes for the heap; ask for less"
            ),
        }
    }
}

impl core::error::Error for BuildError {}

/// Why an allocation request got no block ([`try_alloc`](super::FreeListHeap::try_alloc), the
/// growing part of [`try_realloc`](super::FreeListHeap::try_realloc)). Nothing was allocated and
/// the heap's usage is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// The layout asked for zero bytes.
    ZeroSize,
    /// The request can never fit: it is larger than the whole heap (or than any size at all).
    TooLarge {
        /// Bytes asked for.
        requested: usize,
        /// The heap's capacity in bytes (tags included).
        capacity: usize,
    },
    /// The alignment is larger than the heap supports.
    AlignmentTooLarge {
        /// Alignment asked for.
        align: usize,
        /// The largest supported alignment ([`MAX_ALIGN`](super::MAX_ALIGN)).
        max: usize,
    },
    /// No free block is large enough right now.
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Free bytes in all free blocks (tags included).
        free: usize,
        /// The largest request with 16-byte alignment that would succeed now.
        largest: usize,
    },
    /// The heap's [`Budget`](crate::tags::Budget) (a [`Policy::Fail`](crate::tags::Policy::Fail)
    /// one) refused the block: the bytes in live blocks would go over it.
    OverBudget(BudgetExceeded),
}

impl RequestError {
    /// The budget error, if the heap's budget refused the request.
    pub fn budget_exceeded(&self) -> Option<&BudgetExceeded> {
        match self {
            RequestError::OverBudget(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::ZeroSize => f.write_str(
                "zero-size allocation: a heap block must hold at least one byte; \
                 skip the allocation or use a dangling pointer for zero-size values",
            ),
            RequestError::TooLarge {
                requested,
                capacity,
            } => write!(
                f,
                "{requested} bytes can never fit in this {capacity}-byte heap; \
                 build a larger heap or split the data"
            ),
            RequestError::AlignmentTooLarge { align, max } => write!(
                f,
                "alignment {align} is larger than the {max} bytes this heap supports; \
                 allocate page-aligned memory from the system instead"
            ),
            RequestError::OutOfMemory {
                requested,
                free,
                largest,
            } => write!(
                f,
                "out of memory: no free block holds {requested} bytes ({free} bytes free, the \
                 largest request that fits now is {largest}); free something first, or build a \
                 larger heap{}",
                if *free > *requested {
                    " (the free space is fragmented)"
                } else {
                    ""
                }
            ),
            RequestError::OverBudget(e) => write!(f, "{e}; nothing was allocated"),
        }
    }
}

impl core::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            RequestError::OverBudget(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a pointer handed back ([`free`](super::FreeListHeap::free), the pointer given to
/// [`try_realloc`](super::FreeListHeap::try_realloc)) was refused. Nothing was freed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FreeError {
    /// The pointer is not inside this heap's memory.
    ForeignPointer {
        /// Its address.
        addr: usize,
    },
    /// The pointer is inside this heap but is not the start of a live allocation: it was freed
    /// already, or points into the middle of a block or into free space.
    NotAllocated {
        /// Its offset from the start of the heap's block space.
        offset: usize,
    },
    /// The block's own tags were overwritten, so it cannot be freed safely.
    Corrupt(Corruption),
    /// [`free_sized`](super::FreeListHeap::free_sized) was told another size than the one the
    /// block was allocated (or last resized) with: a layout that is not the block's, which
    /// `Allocator::deallocate` and `GlobalAlloc::dealloc` forbid.
    SizeMismatch {
        /// The block's payload offset from the start of the heap's block space.
        offset: usize,
        /// The size the block was allocated (or last resized) with.
        allocated: usize,
        /// The size given.
        given: usize,
    },
    /// A [`GuardedHeap`](super::GuardedHeap) found a guard byte of the allocation overwritten;
    /// the allocation stays live (and the guard damaged) so that it can be inspected, until
    /// [`GuardedHeap::free_despite_guards`](super::GuardedHeap::free_despite_guards) frees it.
    GuardDamaged(GuardViolation),
}

impl fmt::Display for FreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FreeError::ForeignPointer { addr } => write!(
                f,
                "pointer {addr:#x} does not belong to this heap; free it with the allocator that \
                 handed it out"
            ),
            FreeError::NotAllocated { offset } => write!(
                f,
                "nothing is allocated at offset {offset}: the block was freed already (double \
                 free), or the pointer is not the start of a block; nothing was changed"
            ),
            FreeError::SizeMismatch {
                offset,
                allocated,
                given,
            } => write!(
                f,
                "the block at offset {offset} was allocated with {allocated} bytes but freed as \
                 {given}: free it with the layout it was allocated (or last resized) with; \
                 nothing was changed"
            ),
            FreeError::Corrupt(c) => write!(f, "{c}; the block was not freed"),
            FreeError::GuardDamaged(v) => write!(f, "{v}; the allocation was not freed"),
        }
    }
}

impl core::error::Error for FreeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            FreeError::Corrupt(c) => Some(c),
            FreeError::GuardDamaged(v) => Some(v),
            _ => None,
        }
    }
}

/// Broken bookkeeping, found by [`check`](super::FreeListHeap::check) or by a free: usually a
/// write past the end of a block (or before its start) overwrote a tag.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Corruption {
    /// Offset of the block (or list) where the problem was found, from the start of the heap's
    /// block space.
    pub offset: usize,
    /// What is wrong.
    pub problem: &'static str,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "heap corrupted at offset {}: {}; look for a write past the end of the block before it",
            self.offset, self.problem
        )
    }
}

impl core::error::Error for Corruption {}

/// Why a heap operation that can fail in more than one way failed: split by what failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeapError {
    /// The heap could not be built (a [`LockedHeap`](super::LockedHeap)'s first use).
    Build(BuildError),
    /// An allocation request got no block.
    Request(RequestError),
    /// A pointer handed back is not a live allocation.
    Free(FreeError),
    /// The heap's bookkeeping was overwritten.
    Corrupt(Corruption),
    /// The heap is in use by this very thread already: the call came from inside an operation
    /// that holds its lock (a `LockedHeap::with` closure, or code it runs or drops). Without
    /// `std`, where threads cannot be told apart, any call made while a `with` closure runs.
    /// Nothing was changed.
    InUse,
}

impl fmt::Display for HeapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeapError::Build(e) => e.fmt(f),
            HeapError::Request(e) => e.fmt(f),
            HeapError::Free(e) => e.fmt(f),
            HeapError::Corrupt(e) => e.fmt(f),
            #[cfg(feature = "std")]
            HeapError::InUse => f.write_str(
                "the heap is in use by this thread already (called from inside `with`, or from \
                 code running under the heap's lock); nothing was changed; do it after the outer \
                 operation returns",
            ),
            #[cfg(not(feature = "std"))]
            HeapError::InUse => f.write_str(
                "the heap is in use by a `with` closure (this one, or, without std, any thread's); \
                 nothing was changed; do it after the closure returns",
            ),
        }
    }
}

impl core::error::Error for HeapError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            HeapError::Build(e) => Some(e),
            HeapError::Request(e) => Some(e),
            HeapError::Free(e) => Some(e),
            HeapError::Corrupt(e) => Some(e),
            HeapError::InUse => None,
        }
    }
}

impl From<BuildError> for HeapError {
    fn from(e: BuildError) -> HeapError {
        HeapError::Build(e)
    }
}

impl From<RequestError> for HeapError {
    fn from(e: RequestError) -> HeapError {
        HeapError::Request(e)
    }
}

impl From<FreeError> for HeapError {
    fn from(e: FreeError) -> HeapError {
        HeapError::Free(e)
    }
}

impl From<Corruption> for HeapError {
    fn from(e: Corruption) -> HeapError {
        HeapError::Corrupt(e)
    }
}

impl From<Corruption> for FreeError {
    fn from(e: Corruption) -> FreeError {
        FreeError::Corrupt(e)
    }
}
