//! Numbers about a heap: [`HeapStats`] and the block walk ([`BlockInfo`], [`Blocks`]).

use core::fmt;

use super::block::{GRANULE, MIN_BLOCK, OVERHEAD, Region};

/// A snapshot of a heap's usage, from [`FreeListHeap::stats`](super::FreeListHeap::stats).
///
/// Byte counts include the 16 bytes of tags each block carries, so `used + free == capacity`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapStats {
    /// Bytes of block space (the heap's own bitmap is not counted).
    pub capacity: usize,
    /// Bytes in live blocks.
    pub used: usize,
    /// Bytes in free blocks.
    pub free: usize,
    /// Bytes callers asked for in the live blocks (`used` minus tags and rounding).
    pub requested: usize,
    /// Live blocks.
    pub live_blocks: usize,
    /// Free blocks.
    pub free_blocks: usize,
    /// Size of the largest free block.
    pub largest_free: usize,
    /// The highest `used` seen.
    pub peak_used: usize,
    /// Successful allocations since the heap was made (reallocations that moved count too).
    pub allocations: u64,
}

impl HeapStats {
    /// `1 - largest free / total free`: 0 when all free space is one block, near 1 when it is
    /// scattered in small pieces. 0 when nothing is free.
    pub fn fragmentation(&self) -> f64 {
        if self.free == 0 {
            0.0
        } else {
            1.0 - self.largest_free as f64 / self.free as f64
        }
    }

    /// The largest request (alignment up to 16) that would succeed now.
    pub fn largest_request(&self) -> usize {
        self.largest_free.saturating_sub(OVERHEAD)
    }
}

impl fmt::Display for HeapStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "used {} / {} bytes (peak {}, {} live blocks), free {} in {} blocks, largest free {}, \
             fragmentation {:.1}%",
            self.used,
            self.capacity,
            self.peak_used,
            self.live_blocks,
            self.free,
            self.free_blocks,
            self.largest_free,
            self.fragmentation() * 100.0
        )
    }
}

/// Whether a block is handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockState {
    /// Live, holding `requested` bytes the caller asked for.
    Allocated {
        /// Bytes asked for (at most the payload size).
        requested: usize,
    },
    /// On a free list.
    Free,
}

/// One block, as [`FreeListHeap::blocks`](super::FreeListHeap::blocks) walks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockInfo {
    /// Offset of the block's header from the start of the block space.
    pub offset: usize,
    /// Total size, tags included.
    pub size: usize,
    /// Live or free.
    pub state: BlockState,
}

impl BlockInfo {
    /// Bytes a caller can use: the size minus the 8-byte header and 8-byte footer.
    pub fn payload_size(&self) -> usize {
        self.size - OVERHEAD
    }

    /// Whether the block is free.
    pub fn is_free(&self) -> bool {
        self.state == BlockState::Free
    }
}

/// Prints the block's layout entry: `[Size: 100, Allocated]` with the size the caller asked for,
/// or `[Size: 656, Free]` with the payload a free block could hold.
impl fmt::Display for BlockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.state {
            BlockState::Allocated { requested } => write!(f, "[Size: {requested}, Allocated]"),
            BlockState::Free => write!(f, "[Size: {}, Free]", self.payload_size()),
        }
    }
}

/// Iterator over a heap's blocks in address order, from
/// [`FreeListHeap::blocks`](super::FreeListHeap::blocks). Stops early at a corrupted header
/// (run [`check`](super::FreeListHeap::check) to find out why).
///
/// # Variance
///
/// Covariant in `'h`, the borrow of the heap: it only reads.
pub struct Blocks<'h> {
    pub(crate) region: &'h Region,
    pub(crate) at: usize,
    pub(crate) first: usize,
    pub(crate) end: usize,
}

impl Iterator for Blocks<'_> {
    type Item = BlockInfo;

    fn next(&mut self) -> Option<BlockInfo> {
        if self.at >= self.end {
            return None;
        }
        let b = self.at;
        let h = self.region.header(b);
        if h.size < MIN_BLOCK || !h.size.is_multiple_of(GRANULE) || h.size > self.end - b {
            self.at = self.end;
            return None;
        }
        let state = match self.region.footer(b, h.size) {
            Err(requested) if h.used => BlockState::Allocated { requested },
            _ => BlockState::Free,
        };
        self.at = b + h.size;
        Some(BlockInfo {
            offset: b - self.first,
            size: h.size,
            state,
        })
    }
}
