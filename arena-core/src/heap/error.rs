//! What can go wrong, and what to do about it.

use core::fmt;

/// Why a [`FreeListHeap`](super::FreeListHeap) operation failed. A failed operation changes
/// nothing: no block is lost, split, or freed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeapError {
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
    /// The pointer is not inside this heap's memory.
    ForeignPointer {
        /// Its address.
        addr: usize,
    },
    /// The pointer is inside this heap but is not the start of a live block: it was freed
    /// already, or points into the middle of a block or into free space.
    NotAllocated {
        /// Its offset from the start of the heap's memory.
        offset: usize,
    },
    /// The buffer or capacity given to build a heap is too small to hold one block.
    BufferTooSmall {
        /// Bytes given.
        len: usize,
        /// Bytes needed at least.
        min: usize,
    },
    /// The global allocator could not provide the heap's own memory.
    BackingAllocFailed {
        /// Bytes asked of it.
        bytes: usize,
    },
    /// The heap is in use by this very thread already: the call came from inside an operation
    /// that holds its lock (a `LockedHeap::with` closure, or code it
    /// runs or drops). Nothing was changed.
    InUse,
    /// [`check`](super::FreeListHeap::check) found broken bookkeeping: usually a write past the
    /// end of a block (or before its start) overwrote a tag.
    Corrupt {
        /// Offset of the block (or list) where the problem was found.
        offset: usize,
        /// What is wrong.
        problem: &'static str,
    },
}

impl fmt::Display for HeapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeapError::ZeroSize => f.write_str(
                "zero-size allocation: a heap block must hold at least one byte; \
                 skip the allocation or use a dangling pointer for zero-size values",
            ),
            HeapError::TooLarge {
                requested,
                capacity,
            } => write!(
                f,
                "{requested} bytes can never fit in this {capacity}-byte heap; \
                 build a larger heap or split the data"
            ),
            HeapError::AlignmentTooLarge { align, max } => write!(
                f,
                "alignment {align} is larger than the {max} bytes this heap supports; \
                 allocate page-aligned memory from the system instead"
            ),
            HeapError::OutOfMemory {
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
            HeapError::ForeignPointer { addr } => write!(
                f,
                "pointer {addr:#x} does not belong to this heap; free it with the allocator that \
                 handed it out"
            ),
            HeapError::NotAllocated { offset } => write!(
                f,
                "nothing is allocated at offset {offset}: the block was freed already (double \
                 free), or the pointer is not the start of a block; nothing was changed"
            ),
            HeapError::BufferTooSmall { len, min } => write!(
                f,
                "{len} bytes cannot hold a heap; give at least {min} bytes"
            ),
            HeapError::BackingAllocFailed { bytes } => write!(
                f,
                "the system allocator could not provide {bytes} bytes for the heap; ask for less"
            ),
            HeapError::InUse => f.write_str(
                "the heap is in use by this thread already (called from inside `with`, or from \
                 code running under the heap's lock); nothing was changed; do it after the outer \
                 operation returns",
            ),
            HeapError::Corrupt { offset, problem } => write!(
                f,
                "heap corrupted at offset {offset}: {problem}; look for a write past the end of \
                 the block before it"
            ),
        }
    }
}

impl core::error::Error for HeapError {}
