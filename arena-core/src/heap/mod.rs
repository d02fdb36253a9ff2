//! A general-purpose free-list heap over one fixed region: boundary tags, coalescing, O(1)
//! segregated good fit, safe frees, and fragmentation you can see.
//!
//! **Pick it** for irregular, long-lived allocations of many sizes freed in any order: a level's
//! assets, streaming buffers, tool data. It asks for its memory once (or runs in a buffer you
//! give it) and never calls the system allocator again.
//!
//! **Don't pick it** for per-frame scratch (a bump arena resets in one step and cannot fragment)
//! or for many objects of one type (a pool is faster and cannot fragment either). Like any
//! general-purpose allocator it fragments under mixed lifetimes; [`FreeListHeap::stats`] and the
//! memory map show how much.
//!
//! How it works: every block carries an 8-byte header (size, in-use bit) and an 8-byte footer
//! (a free block's size, so its right neighbour can find it), which lets [`FreeListHeap::free`]
//! merge with both neighbours in O(1). Free blocks sit on TLSF-style segregated lists with
//! bitmaps; [`Fit`] picks first fit, best fit, or the O(1) segregated good fit (the default).
//! A side bitmap with one bit per possible block start marks live blocks, so freeing anything
//! that is not a live block of this heap (a double free, an interior pointer, a pointer from
//! elsewhere) returns a [`FreeError`] and changes nothing, in release builds too.
//! [`FreeListHeap::free_sized`], which the allocator interfaces call, is also told the block's
//! size, as talc's and the standard traits' frees are: it refuses any other size, and starts
//! loading the block's end before its header arrives.
//!
//! [`FreeListHeap::alloc`] panics when no block fits; [`FreeListHeap::try_alloc`] returns a
//! [`RequestError`] instead. A [`Budget`](crate::tags::Budget) set on the heap
//! ([`Budgeted`](crate::tags::Budgeted)) caps the bytes in live blocks; it is checked where the
//! heap checks that a request can fit at all, so a heap without one pays nothing for it.
//!
//! ```
//! use arena_kit::FreeListHeap;
//! use core::alloc::Layout;
//!
//! let mut heap = FreeListHeap::with_capacity(1024);
//! let a = heap.alloc(Layout::from_size_align(100, 8).unwrap());
//! let b = heap.try_alloc(Layout::from_size_align(200, 8).unwrap()).unwrap();
//! assert_eq!(heap.to_string(), "[Size: 100, Allocated] [Size: 200, Allocated] [Size: 656, Free]");
//! heap.free(a).unwrap();
//! assert!(heap.free(a).is_err()); // a double free is an error, not a corrupted heap
//! heap.free(b).unwrap();
//! assert_eq!(heap.to_string(), "[Size: 1008, Free]"); // coalesced back into one block
//! heap.check().unwrap();
//! ```
//!
//! Sizes in the layout line: a live block shows the bytes its caller asked for; a free block shows
//! the payload it could hand out (its size minus the 16 bytes of tags). A `with_capacity(1024)`
//! heap has 1024 bytes of block space, so one free block of 1008 payload bytes.

mod block;
mod check;
mod error;
mod fit;
#[cfg(feature = "alloc")]
mod guarded;
mod map;
mod stats;
mod usage;

mod alloc_api;

#[cfg(feature = "allocator-api2")]
pub use alloc_api::HeapCell;
pub use alloc_api::{LockedHeap, MIN_LOCKED_HEAP};
pub use error::{BuildError, Corruption, FreeError, HeapError, RequestError};
pub use fit::Fit;
#[cfg(feature = "alloc")]
pub use guarded::GuardedHeap;
pub use map::MemoryMap;
pub use stats::{BlockInfo, BlockState, Blocks, HeapStats};

use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use block::{GRANULE, MIN_BLOCK, OVERHEAD, Region, TAG, block_size_for};
use fit::FreeLists;

use crate::poison;
use crate::tags::{BudgetExceeded, BudgetGate};

/// The most bytes a block may hold beyond the `need` it was found for: a tail smaller than a
/// block (`MIN_BLOCK - GRANULE`) stays in it.
const MAX_KEPT_TAIL: usize = MIN_BLOCK - GRANULE;

/// The largest alignment [`FreeListHeap::alloc`] supports: 4 KiB.
pub const MAX_ALIGN: usize = 4096;

/// A general-purpose heap over one fixed region. See the [module docs](self).
///
/// `'buf` is the lifetime of the memory it manages: `'static` for [`with_capacity`] (the heap owns
/// its memory), the buffer's borrow for [`from_buffer`].
///
/// [`with_capacity`]: FreeListHeap::with_capacity
/// [`from_buffer`]: FreeListHeap::from_buffer
///
/// ```
/// use arena_kit::FreeListHeap;
/// use core::alloc::Layout;
///
/// let mut assets = FreeListHeap::with_capacity(64 * 1024);
/// let mesh = assets.alloc(Layout::from_size_align(12_000, 16).unwrap());
/// let texture = assets.alloc(Layout::from_size_align(24_000, 16).unwrap());
/// let sound = assets.alloc(Layout::from_size_align(6_000, 8).unwrap());
/// assets.free(texture).unwrap(); // unloaded: its block is free for the next asset
/// let music = assets.try_alloc(Layout::from_size_align(20_000, 8).unwrap()).unwrap();
/// assert_eq!(assets.stats().live_blocks, 3);
/// for asset in [mesh, sound, music] {
///     assets.free(asset).unwrap();
/// }
/// assert_eq!(assets.stats().free_blocks, 1); // the neighbours coalesced back into one block
/// assets.check().unwrap();
/// ```
///
/// # Variance
///
/// Covariant in `'buf`, like the `&'buf mut [MaybeUninit<u8>]` it manages: a heap over a longer
/// borrow can be used as one over a shorter borrow.
pub struct FreeListHeap<'buf> {
    region: Region,
    /// Offset of the live-start bitmap (one bit per granule of block space).
    bitmap: usize,
    /// Block space: `[first, end)`, `first` 8 bytes below a 16-byte boundary. Invariants the
    /// unchecked tag accesses rely on, set by `init` and never changed: `end <= region` length,
    /// `end - first` a multiple of 16, and the bitmap's `bitmap_bytes(end - first)` bytes lie
    /// in the region below `first`.
    first: usize,
    /// `end - first - 8`: a pointer's distance from the first payload (`payload_start`) is
    /// below it exactly when the pointer lies in `[first + 8, end)` (the range check of
    /// [`check_live`](Self::check_live), one compare against a field). Set by `init` with
    /// `first` and `end`, never changed, like them.
    payload_span: usize,
    /// `end - first - 32`: the highest offset from `first` a block of at least [`MIN_BLOCK`]
    /// bytes can start at (the in-bounds check of a free-list head, one compare against a
    /// field). Set by `init`, never changed.
    last_block_start: usize,
    /// The address of the first payload (`first + 8` in the region): kept with the region's
    /// base (see [`rebase`](Self::rebase)), so that the range check subtracts one field.
    payload_start: usize,
    lists: FreeLists,
    fit: Fit,
    // The counters below are updated together on every alloc and free. No two of them sit next
    // to each other (the compiler keeps declaration order for fields of one size): adjacent, the
    // compiler pairs their updates into vector operations that take more instructions (a
    // load, a shuffle with a constant, an add, a store) than the two scalar updates they replace.
    /// Bytes in live blocks (tags included).
    used: usize,
    /// Highest `used` seen.
    peak_used: usize,
    /// Bytes callers asked for in live blocks.
    requested: usize,
    /// The fast path allocates while `used + need` stays within this: the capacity, or the
    /// budget below it, less the 16 bytes a block may keep beyond `need` (a tail too small to
    /// split off), so that no block found under it can pass the budget. The slow path checks
    /// the exact limit.
    limit: usize,
    /// `limit` while the fit is [`Fit::Segregated`], else 0: the fast path's one compare
    /// against it also sends every request of another policy to the general search.
    fast_limit: usize,
    /// Live blocks.
    live: usize,
    /// End of block space (see `first`).
    end: usize,
    /// Successful allocations, ever.
    allocations: u64,
    /// The budget, if any (see [`Budgeted`](crate::tags::Budgeted)).
    budget: Option<BudgetGate>,
    /// Where a `Warn` budget's warning goes when it is crossed: raised there (user code: the
    /// report sink, a logger), or held for the heap's owner to raise once it may run user code
    /// (a [`HeapCell`] holds the heap mutably while it allocates).
    warnings: Warnings,
    /// The name and tag a `Tracked` wrapper put on the heap: its allocations and frees are
    /// reported to the profiler sink (the block's payload address, the requested size).
    #[cfg(feature = "profiler")]
    profiler: Option<crate::tags::ProfilerLabel>,
    /// The layout of the memory this heap allocated itself, to give back on drop.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    owned: Option<Layout>,
    _buf: PhantomData<&'buf mut [MaybeUninit<u8>]>,
}

// SAFETY: the heap owns its region exclusively (an owned allocation, a `&mut` borrow, or a
// `LockedHeap`'s inline region reached only under its lock), like a `Box<[u8]>` or `&mut [u8]`,
// both `Send`; the raw base pointer is the only reason this is not automatic, and no thread-bound
// state is involved.
unsafe impl Send for FreeListHeap<'_> {}
// SAFETY: `&self` methods only read the region (tags, free-list links, the bitmap), never a live
// payload, and never write; every write to the bookkeeping needs `&mut self`. The one write made
// beside a `&FreeListHeap` (`HeapCell`'s deferred-free link) goes into a live payload, which no
// `&self` method reads, so shared references on several threads never race with anything.
unsafe impl Sync for FreeListHeap<'_> {}

/// Bytes of bitmap for `area` bytes of block space, a multiple of 8.
fn bitmap_bytes(area: usize) -> usize {
    (area / GRANULE).div_ceil(64) * 8
}

impl FreeListHeap<'static> {
    /// A heap with `bytes` bytes of block space (rounded down to 16), allocated once from the
    /// global allocator, using the default [`Fit::Segregated`] policy.
    ///
    /// # Panics
    ///
    /// If `bytes` is below 32 or the memory cannot be allocated; see
    /// [`try_with_capacity`](Self::try_with_capacity).
    #[cfg(feature = "alloc")]
    #[track_caller]
    pub fn with_capacity(bytes: usize) -> Self {
        match Self::try_with_capacity(bytes) {
            Ok(heap) => heap,
            Err(e) => panic!("FreeListHeap::with_capacity({bytes}): {e}"),
        }
    }

    /// [`with_capacity`](Self::with_capacity), returning an error instead of panicking.
    ///
    /// # Errors
    ///
    /// [`BuildError`]: `bytes` below 32, too large for any allocation, or the global allocator
    /// failed.
    #[cfg(feature = "alloc")]
    pub fn try_with_capacity(bytes: usize) -> Result<Self, BuildError> {
        let area = bytes & !(GRANULE - 1);
        if area < MIN_BLOCK {
            return Err(BuildError::BufferTooSmall {
                len: bytes,
                min: MIN_BLOCK,
            });
        }
        let bitmap = bitmap_bytes(area);
        // The allocation is 16-aligned; block space starts 8 bytes below a 16-byte boundary.
        let first = if bitmap % GRANULE == TAG {
            bitmap
        } else {
            bitmap + TAG
        };
        let too_large = BuildError::TooLarge {
            bytes,
            max: isize::MAX as usize,
        };
        let total = first.checked_add(area).ok_or(too_large.clone())?;
        let layout = Layout::from_size_align(total, GRANULE).map_err(|_| too_large)?;
        // SAFETY: `layout` has a non-zero size (at least 32 bytes of block space).
        let base = unsafe { alloc::alloc::alloc(layout) };
        let base = NonNull::new(base).ok_or(BuildError::BackingAllocFailed { bytes: total })?;
        // SAFETY: the fresh allocation is valid for `total` bytes and only this heap uses it.
        let region = unsafe { Region::new(base, total) };
        Ok(Self::init(region, 0, first, first + area, Some(layout)))
    }
}

impl<'buf> FreeListHeap<'buf> {
    /// A heap managing `buf`, using the default [`Fit::Segregated`] policy. A small part of the
    /// buffer (1 bit per 16 bytes, plus alignment) holds the heap's bitmap of live blocks.
    ///
    /// # Panics
    ///
    /// If `buf` is too small to hold one block; see [`try_from_buffer`](Self::try_from_buffer).
    #[track_caller]
    pub fn from_buffer(buf: &'buf mut [MaybeUninit<u8>]) -> Self {
        let len = buf.len();
        match Self::try_from_buffer(buf) {
            Ok(heap) => heap,
            Err(e) => panic!("FreeListHeap::from_buffer (len {len}): {e}"),
        }
    }

    /// [`from_buffer`](Self::from_buffer), returning an error instead of panicking.
    ///
    /// # Errors
    ///
    /// [`BuildError::BufferTooSmall`] when `buf` cannot hold the bitmap and one block.
    pub fn try_from_buffer(buf: &'buf mut [MaybeUninit<u8>]) -> Result<Self, BuildError> {
        let len = buf.len();
        let base =
            NonNull::new(buf.as_mut_ptr().cast::<u8>()).expect("slice pointers are non-null");
        // SAFETY: `buf` is valid for `len` bytes and borrowed mutably for `'buf`, which the heap's
        // `PhantomData` ties it to, so nothing else touches it meanwhile.
        unsafe { Self::from_raw_parts(base, len) }
    }

    /// A heap over `len` bytes at `base` (the bitmap inside, as for
    /// [`from_buffer`](Self::from_buffer)); writes the bitmap and the first block's tags.
    ///
    /// # Safety
    ///
    /// `base` is valid for reads and writes of `len` bytes for as long as the heap (or a heap
    /// [`rebase`](Self::rebase)d from it) uses them, and nothing else accesses those bytes
    /// meanwhile except through the payload pointers the heap hands out.
    pub(crate) unsafe fn from_raw_parts(base: NonNull<u8>, len: usize) -> Result<Self, BuildError> {
        let addr = base.as_ptr().addr();
        let bitmap_at = addr.wrapping_neg() & 7;
        let bitmap = bitmap_bytes(len);
        let min = 64 + 2 * GRANULE;
        let fits = bitmap_at.checked_add(bitmap).and_then(|b| {
            let first_addr = addr.checked_add(b)?;
            let first = b + (first_addr.wrapping_neg().wrapping_add(TAG) & (GRANULE - 1));
            let area = len.checked_sub(first)? & !(GRANULE - 1);
            (area >= MIN_BLOCK).then_some((first, area))
        });
        let (first, area) = fits.ok_or(BuildError::BufferTooSmall { len, min })?;
        // SAFETY: the caller's contract is `Region::new`'s.
        let region = unsafe { Region::new(base, len) };
        Ok(Self::init(region, bitmap_at, first, first + area, None))
    }

    /// Points the heap at `base`, where a byte-for-byte copy of its region now lives (the
    /// inline region of a `LockedHeap` that was moved). The bookkeeping is offsets, so it stays
    /// valid if `base` has the old base's alignment modulo 16.
    ///
    /// # Safety
    ///
    /// As for [`from_raw_parts`](Self::from_raw_parts), for `base` and the heap's length; the
    /// bytes at `base` are the region's current contents; `base` is congruent to the old base
    /// modulo 16; the heap does not own its region (`owned` is `None`).
    #[inline]
    pub(crate) unsafe fn rebase(&mut self, base: NonNull<u8>) {
        debug_assert!(self.owned.is_none());
        // SAFETY: forwarded to the caller.
        unsafe { self.region.rebase(base) }
        self.payload_start = self.region.addr_of(self.first + TAG);
    }

    fn init(
        mut region: Region,
        bitmap: usize,
        first: usize,
        end: usize,
        owned: Option<Layout>,
    ) -> Self {
        // The checked fill proves the bitmap lies in the region.
        region.fill(bitmap, bitmap_bytes(end - first), 0);
        debug_assert!(bitmap + bitmap_bytes(end - first) <= first);
        debug_assert!((end - first).is_multiple_of(GRANULE) && end - first >= MIN_BLOCK);
        // The checked writes prove `end <= len`.
        region.write_free(first, end - first);
        let mut lists = FreeLists::new();
        lists.insert(&mut region, first, end - first);
        let payload_start = region.addr_of(first + TAG);
        FreeListHeap {
            region,
            bitmap,
            first,
            payload_span: end - first - TAG,
            last_block_start: end - first - MIN_BLOCK,
            payload_start,
            end,
            lists,
            fit: Fit::default(),
            used: 0,
            peak_used: 0,
            requested: 0,
            live: 0,
            allocations: 0,
            limit: (end - first).saturating_sub(MAX_KEPT_TAIL),
            fast_limit: (end - first).saturating_sub(MAX_KEPT_TAIL),
            budget: None,
            warnings: Warnings::Raise,
            #[cfg(feature = "profiler")]
            profiler: None,
            owned,
            _buf: PhantomData,
        }
    }

    /// This heap with `fit` as its search policy (see [`Fit`]).
    pub fn with_fit(mut self, fit: Fit) -> Self {
        self.set_fit(fit);
        self
    }

    /// The search policy in use.
    pub fn fit(&self) -> Fit {
        self.fit
    }

    /// Changes the search policy; blocks already placed stay where they are.
    pub fn set_fit(&mut self, fit: Fit) {
        self.fit = fit;
        self.sync_limit();
    }

    /// Bytes of block space (tags included).
    pub fn capacity(&self) -> usize {
        self.end - self.first
    }

    /// The offset of address `addr`, inside this heap, from the start of its block space: the
    /// offset [`FreeError::NotAllocated`] and a [`GuardedHeap`]'s guard reports give.
    pub(crate) fn block_space_offset(&self, addr: usize) -> usize {
        addr - self.region.addr_of(self.first)
    }

    /// Whether `ptr` points into this heap's memory (live or not).
    pub fn contains(&self, ptr: NonNull<u8>) -> bool {
        self.region
            .offset_of(ptr)
            .is_some_and(|o| o >= self.first && o < self.end)
    }

    /// Allocates a block for `layout` (any power-of-two alignment up to [`MAX_ALIGN`]).
    ///
    /// The memory is uninitialised (filled with [`poison::FRESH`] when [`poison::ENABLED`]).
    ///
    /// # Panics
    ///
    /// When [`try_alloc`](Self::try_alloc) would return an error (zero size, too large, out of
    /// memory, over a `Fail` budget), with that error's text; also over a `Panic` budget.
    #[inline]
    #[track_caller]
    pub fn alloc(&mut self, layout: Layout) -> NonNull<u8> {
        // Everything past the segregated fast path is one tail call, so the inlined fast path
        // keeps no value alive across a call and needs no callee-saved registers.
        match self.alloc_fast(layout) {
            Some(p) => p,
            None => self.alloc_general(layout),
        }
    }

    /// Allocates a block for `layout`, or says why there is none. On error nothing changes.
    ///
    /// # Errors
    ///
    /// [`RequestError`]: zero size, an alignment above [`MAX_ALIGN`], larger than the heap, no
    /// free block large enough now, or over the heap's `Fail` budget
    /// ([`RequestError::OverBudget`]).
    ///
    /// # Panics
    ///
    /// Over a [`Policy::Panic`](crate::tags::Policy::Panic) budget.
    #[inline]
    #[track_caller]
    pub fn try_alloc(&mut self, layout: Layout) -> Result<NonNull<u8>, RequestError> {
        // The fast path answers with a pointer or nothing, so that no error value (a budget
        // error is 56 bytes) is built or moved on it; the general path says why, or allocates
        // past a `Warn` budget.
        match self.alloc_fast(layout) {
            Some(p) => Ok(p),
            None => self.try_alloc_general(layout),
        }
    }

    /// Frees the live block starting at `ptr` and merges it with free neighbours.
    ///
    /// A pointer that is not the start of a live block of this heap (freed already, inside a
    /// block, from elsewhere) returns an error and changes nothing: checked in O(1) against the
    /// bitmap of live block starts, in every build. There is no panicking form: the `Result`
    /// is the check.
    ///
    /// # Errors
    ///
    /// [`FreeError`]: a pointer from elsewhere, not a live block's start, or a block whose tags
    /// were overwritten.
    #[inline(always)]
    pub fn free(&mut self, ptr: NonNull<u8>) -> Result<(), FreeError> {
        self.free_checked(ptr, None)
    }

    /// [`free`](Self::free), told the size the block was allocated (or last resized) with, as
    /// `Allocator::deallocate` and `GlobalAlloc::dealloc` are told their layout: the same
    /// checks, plus that the size is the block's, and faster when the heap is larger than the
    /// caches.
    ///
    /// The size says where the block ends, so the heap starts loading the block's end tag and
    /// the next block's header while its header is still on the way, instead of after it: on a
    /// heap of 100,000 blocks the two cache misses overlap rather than follow one another. The
    /// alignment is not recorded, so it is not checked.
    ///
    /// ```
    /// use arena_kit::heap::{FreeError, FreeListHeap};
    /// use core::alloc::Layout;
    ///
    /// let mut heap = FreeListHeap::with_capacity(4096);
    /// let layout = Layout::from_size_align(100, 8).unwrap();
    /// let p = heap.alloc(layout);
    /// // The wrong size is refused, and nothing changes.
    /// let wrong = Layout::from_size_align(64, 8).unwrap();
    /// assert!(matches!(
    ///     heap.free_sized(p, wrong),
    ///     Err(FreeError::SizeMismatch { allocated: 100, given: 64, .. })
    /// ));
    /// heap.free_sized(p, layout).unwrap();
    /// assert_eq!(heap.stats().live_blocks, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`free`](Self::free), and [`FreeError::SizeMismatch`] when the block's size is not
    /// `layout.size()`. Nothing is freed.
    #[inline(always)]
    pub fn free_sized(&mut self, ptr: NonNull<u8>, layout: Layout) -> Result<(), FreeError> {
        // A block of `requested` bytes is `block_size_for(requested)` long and its payload
        // starts 8 bytes in, 16-aligned, so its end tag and the next block's header fill the
        // 16 bytes at `ptr + round_up(requested, 16)`: `ptr + requested + 15` is inside them,
        // on their cache line (one addition, no rounding). A block that kept the sliver of a
        // split, or a wrong size, ends elsewhere; the hint then loads a line for nothing.
        // Wrapping: the address is only a hint.
        crate::prefetch(
            ptr.as_ptr()
                .wrapping_add(layout.size())
                .wrapping_add(GRANULE - 1),
        );
        self.free_checked(ptr, Some(layout.size()))
    }

    /// [`free`](Self::free) and [`free_sized`](Self::free_sized): the checks, then the free.
    /// `size` is the size the block must have been allocated with, if known.
    #[inline(always)]
    fn free_checked(&mut self, ptr: NonNull<u8>, size: Option<usize>) -> Result<(), FreeError> {
        // Inlined whole, as rlsf's generic `deallocate` can be: as a call of its own it saved
        // and restored five registers and set up a frame, 6.4 instructions of the 273.5 a
        // free+alloc pair took in `heap-256`. (`alloc` stays a call: inlined,
        // the caller's loop spilled more than that saved, 281.9; and a free that calls its
        // merging half out of line took 276.5.)
        let Ok((b, block, requested)) = self.check_live(ptr, |_| ()) else {
            return Err(self.rejected(ptr));
        };
        if let Some(given) = size
            && given != requested
        {
            return Err(self.size_mismatch(ptr, requested, given));
        }
        // SAFETY: `check_live` just returned the block and nothing released it since.
        unsafe { self.release(b, block, requested) };
        #[cfg(feature = "profiler")]
        crate::tags::profiler::free(self.profiler, ptr.addr().get(), requested);
        Ok(())
    }

    /// The error of [`free_sized`](Self::free_sized) told `given` bytes for the live block at
    /// `ptr`, allocated with `allocated`.
    #[cold]
    #[inline(never)]
    fn size_mismatch(&self, ptr: NonNull<u8>, allocated: usize, given: usize) -> FreeError {
        FreeError::SizeMismatch {
            offset: self.block_space_offset(ptr.as_ptr().addr()),
            allocated,
            given,
        }
    }

    /// Resizes the live block at `ptr` to `new_layout`; see [`try_realloc`](Self::try_realloc).
    ///
    /// # Panics
    ///
    /// When [`try_realloc`](Self::try_realloc) would return an error, with that error's text
    /// (the old block is then untouched and still live); also over a `Panic` budget.
    #[track_caller]
    pub fn realloc(&mut self, ptr: NonNull<u8>, new_layout: Layout) -> NonNull<u8> {
        match self.try_realloc(ptr, new_layout) {
            Ok(p) => p,
            Err(e) => realloc_failed(&e),
        }
    }

    /// Resizes the live block at `ptr` to `new_layout`: in place when the block, or the block
    /// plus its free right neighbour, can hold it at the same address; otherwise allocates,
    /// copies the bytes both sizes share, and frees the old block (under a budget, both blocks
    /// count until the copy is done).
    ///
    /// # Errors
    ///
    /// [`HeapError::Free`] when `ptr` is not a live block of this heap, [`HeapError::Request`]
    /// when no block holds `new_layout` (over a `Fail` budget included). The old block is then
    /// untouched and still live.
    ///
    /// # Panics
    ///
    /// Over a [`Policy::Panic`](crate::tags::Policy::Panic) budget.
    #[track_caller]
    pub fn try_realloc(
        &mut self,
        ptr: NonNull<u8>,
        new_layout: Layout,
    ) -> Result<NonNull<u8>, HeapError> {
        let block = self.live_block(ptr)?;
        self.realloc_block(ptr, block, new_layout)
    }

    /// [`try_realloc`](Self::try_realloc) of a block the caller says has `old_size` bytes (the
    /// old layout `GlobalAlloc::realloc` is given): another size is refused
    /// ([`FreeError::SizeMismatch`]), as [`free_sized`](Self::free_sized) refuses it.
    #[track_caller]
    pub(crate) fn try_realloc_sized(
        &mut self,
        ptr: NonNull<u8>,
        old_size: usize,
        new_layout: Layout,
    ) -> Result<NonNull<u8>, HeapError> {
        let block = self.live_block_sized(ptr, old_size)?;
        self.realloc_block(ptr, block, new_layout)
    }

    /// The live block at `ptr`, if it was allocated (or last resized) with `size` bytes:
    /// [`live_block`](Self::live_block), then [`FreeError::SizeMismatch`] for another size.
    fn live_block_sized(
        &self,
        ptr: NonNull<u8>,
        size: usize,
    ) -> Result<(usize, usize, usize), FreeError> {
        let block = self.live_block(ptr)?;
        if block.2 != size {
            return Err(self.size_mismatch(ptr, block.2, size));
        }
        Ok(block)
    }

    /// [`try_realloc`](Self::try_realloc) of the live block `(b, size, old_requested)` at `ptr`
    /// (what [`live_block`](Self::live_block) returned).
    #[track_caller]
    fn realloc_block(
        &mut self,
        ptr: NonNull<u8>,
        (b, size, old_requested): (usize, usize, usize),
        new_layout: Layout,
    ) -> Result<NonNull<u8>, HeapError> {
        if let Some(p) = self.resize_if_in_place(ptr, (b, size, old_requested), new_layout)? {
            return Ok(p);
        }
        let payload = b + TAG;
        let new_requested = new_layout.size();
        let new = self.try_alloc(new_layout)?;
        let dst = self
            .region
            .offset_of(new)
            .expect("alloc returns pointers into the region");
        self.region
            .copy_within(payload, dst, old_requested.min(new_requested));
        // SAFETY: `live_block` returned the block above; the allocation and the copy changed
        // neither it nor its tags.
        unsafe { self.release(b, size, old_requested) };
        // (`try_alloc` reported the new block.)
        #[cfg(feature = "profiler")]
        crate::tags::profiler::free(self.profiler, ptr.addr().get(), old_requested);
        Ok(new)
    }

    /// [`try_realloc`](Self::try_realloc) when it can resize in place: `Ok(Some(ptr))` then,
    /// `Ok(None)` when the block would have to move (nothing changed). For `HeapCell`, which
    /// moves a block itself so that the old block is freed only once the new one is the
    /// caller's. `old_size` is the size the caller says the block has: another is refused
    /// ([`FreeError::SizeMismatch`]), as [`free_sized`](Self::free_sized) refuses it.
    #[cfg(feature = "allocator-api2")]
    #[track_caller]
    pub(crate) fn try_realloc_in_place(
        &mut self,
        ptr: NonNull<u8>,
        old_size: usize,
        new_layout: Layout,
    ) -> Result<Option<NonNull<u8>>, HeapError> {
        let block = self.live_block_sized(ptr, old_size)?;
        self.resize_if_in_place(ptr, block, new_layout)
    }

    /// Resizes live block `(b, size, old_requested)` at `ptr` (what
    /// [`live_block`](Self::live_block) returned) to `new_layout` if it can stay where it is:
    /// `ptr` aligned for it and the block, or the block and its free right neighbour, big
    /// enough. `Ok(None)` otherwise, with nothing changed.
    #[track_caller]
    fn resize_if_in_place(
        &mut self,
        ptr: NonNull<u8>,
        (b, size, old_requested): (usize, usize, usize),
        new_layout: Layout,
    ) -> Result<Option<NonNull<u8>>, HeapError> {
        let need = self.block_size(new_layout)?;
        let new_requested = new_layout.size();
        if ptr.as_ptr().addr() & (new_layout.align() - 1) != 0 {
            return Ok(None);
        }
        if need <= size {
            self.resize_in_place(b, size, need, old_requested, new_requested);
            #[cfg(feature = "profiler")]
            self.report_resized(ptr, old_requested, new_requested);
            return Ok(Some(ptr));
        }
        let next = b + size;
        if next < self.end {
            let h = self.region.header(next);
            if !h.used && size + h.size >= need {
                let joined = size + h.size;
                let kept = if joined - need >= MIN_BLOCK {
                    need
                } else {
                    joined
                };
                let grows = kept - size;
                if self.used + grows > self.limit && self.used + grows > self.exact_limit() {
                    self.over_limit(grows)?;
                }
                self.lists.remove(&mut self.region, next, h.size);
                self.used += h.size;
                self.resize_in_place(b, joined, need, old_requested, new_requested);
                #[cfg(feature = "profiler")]
                self.report_resized(ptr, old_requested, new_requested);
                return Ok(Some(ptr));
            }
        }
        Ok(None)
    }

    /// A block resized in place: to the profiler, the old size freed and the new one allocated
    /// at the same address.
    #[cfg(feature = "profiler")]
    #[track_caller]
    fn report_resized(&self, ptr: NonNull<u8>, old: usize, new: usize) {
        crate::tags::profiler::free(self.profiler, ptr.addr().get(), old);
        crate::tags::profiler::alloc(self.profiler, ptr.addr().get(), new);
    }

    /// Usage numbers: used, free, largest free block, free-block count, peak, fragmentation.
    /// O(1) except for the largest free block, which scans the highest non-empty free list.
    pub fn stats(&self) -> HeapStats {
        HeapStats {
            capacity: self.capacity(),
            used: self.used,
            free: self.capacity() - self.used,
            requested: self.requested,
            live_blocks: self.live,
            free_blocks: self.lists.count,
            largest_free: self.lists.largest(&self.region),
            peak_used: self.peak_used,
            allocations: self.allocations,
        }
    }

    /// Walks every block in address order. `Display` on the heap prints the same walk as a
    /// layout line.
    pub fn blocks(&self) -> Blocks<'_> {
        Blocks {
            region: &self.region,
            at: self.first,
            first: self.first,
            end: self.end,
        }
    }

    /// A picture of the heap: see [`MemoryMap`].
    pub fn memory_map(&self) -> MemoryMap<'_, 'buf> {
        MemoryMap::new(self)
    }

    // ----- internals ---------------------------------------------------------------------

    /// The need of `layout`'s block if it fits within `limit` (the capacity, or a budget below
    /// it): the heap's one limit check, so a budget costs the fast path nothing. `None` for
    /// anything else (an error, a request near the limit, the budget's say), which
    /// [`alloc_slow`](Self::alloc_slow) sorts out.
    #[inline(always)]
    fn need_within_limit(&self, layout: Layout) -> Option<usize> {
        self.need_within(layout, self.limit)
    }

    /// [`need_within_limit`](Self::need_within_limit) against `limit` (`self.limit`, or the
    /// fast path's `fast_limit`, which is `self.limit` or 0).
    #[inline(always)]
    fn need_within(&self, layout: Layout, limit: usize) -> Option<usize> {
        if layout.size() == 0 || layout.align() > MAX_ALIGN {
            return None;
        }
        let need = block_size_for(layout.size())?;
        // Both terms are at most about `isize::MAX`, so the sum cannot wrap. `limit` leaves
        // room for the largest block a search can return for `need`, so there is nothing more
        // to check.
        (self.used + need <= limit).then_some(need)
    }

    /// The inlined part of an allocation: a block from the segregated fit (the default policy,
    /// alignment up to 16) within `limit`, reported to the profiler. It calls nothing; `None`
    /// sends the request to [`try_alloc_general`](Self::try_alloc_general), which decides
    /// everything else.
    #[inline(always)]
    #[track_caller]
    fn alloc_fast(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        // The segregated fit takes alignments up to 16; tested first, this also settles
        // `MAX_ALIGN`.
        if layout.align() > GRANULE {
            return None;
        }
        // `fast_limit` is 0 unless the fit is segregated, so this also settles the policy.
        let need = self.need_within(layout, self.fast_limit)?;
        // Under `limit` no block found can pass it (`used + whole > usize::MAX` folds away).
        let p = self
            .take_segregated(need, layout.size(), usize::MAX)?
            .ok()?;
        #[cfg(feature = "profiler")]
        crate::tags::profiler::alloc(self.profiler, p.addr().get(), layout.size());
        Some(p)
    }

    /// [`alloc`](Self::alloc) past the fast path: the general search, or the panic that says
    /// why there is no block.
    #[inline(never)]
    #[track_caller]
    fn alloc_general(&mut self, layout: Layout) -> NonNull<u8> {
        match self.try_alloc_general(layout) {
            Ok(p) => p,
            Err(e) => alloc_failed(&e),
        }
    }

    /// [`try_alloc`](Self::try_alloc) past the fast path: the search of the heap's [`Fit`]
    /// (alignments above 16, an overwritten list head) within `limit`, else the slow path.
    #[inline(never)]
    #[track_caller]
    fn try_alloc_general(&mut self, layout: Layout) -> Result<NonNull<u8>, RequestError> {
        // The segregated fit changed nothing when it declined, so the search starts afresh.
        let found = self.need_within_limit(layout).and_then(|need| {
            self.place_searched(need, layout.align(), layout.size(), usize::MAX)
                .ok()
        });
        let p = match found {
            Some(p) => Ok(p),
            None => self.alloc_slow(layout),
        };
        #[cfg(feature = "profiler")]
        if let Ok(p) = p {
            crate::tags::profiler::alloc(self.profiler, p.addr().get(), layout.size());
        }
        p
    }

    /// [`try_alloc`](Self::try_alloc) past the fast path: the error that says why there is no
    /// block, or the budget's verdict (a `Warn` budget lets the request through, warning once
    /// per crossing, and the block is allocated here).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn alloc_slow(&mut self, layout: Layout) -> Result<NonNull<u8>, RequestError> {
        let need = self.block_size(layout)?;
        self.over_limit(need)?;
        if self.used + need > self.capacity() {
            return Err(self.out_of_memory(layout.size()));
        }
        let (align, size) = (layout.align(), layout.size());
        match self.place(need, align, size, self.exact_limit()) {
            Ok(p) => Ok(p),
            Err(0) => Err(self.out_of_memory(size)),
            Err(whole) => {
                // The block found keeps a tail too small to split off; it is `whole` bytes.
                self.over_limit(whole)?;
                self.place(need, align, size, usize::MAX)
                    .map_err(|_| self.out_of_memory(size))
            }
        }
    }

    /// Finds a free block for `need` bytes aligned to `align` and makes it live, holding
    /// `requested` bytes. Fails, changing nothing, with `Err(0)` when no free block fits and with
    /// `Err(whole)` when the block would keep a tail too small to split off (so it is `whole`
    /// bytes, up to `MIN_BLOCK - 16` more than `need`) and that would take `used` past `limit`.
    #[inline]
    fn place(
        &mut self,
        need: usize,
        align: usize,
        requested: usize,
        limit: usize,
    ) -> Result<NonNull<u8>, usize> {
        match self.place_segregated(need, align, requested, limit) {
            Some(placed) => placed,
            None => self.place_searched(need, align, requested, limit),
        }
    }

    /// [`place`](Self::place) by the default policy for alignments up to 16: the head of the
    /// list found is taken whole (no alignment gap), and its class is already known for
    /// unlinking it. `None`, having changed nothing, when this does not apply (another policy,
    /// a larger alignment, no list qualifies, or the head's tags were overwritten).
    #[inline(always)]
    fn place_segregated(
        &mut self,
        need: usize,
        align: usize,
        requested: usize,
        limit: usize,
    ) -> Option<Result<NonNull<u8>, usize>> {
        if self.fit != Fit::Segregated || align > GRANULE {
            return None;
        }
        self.take_segregated(need, requested, limit)
    }

    /// [`place_segregated`](Self::place_segregated) once the policy and the alignment are
    /// known to allow it.
    #[inline(always)]
    fn take_segregated(
        &mut self,
        need: usize,
        requested: usize,
        limit: usize,
    ) -> Option<Result<NonNull<u8>, usize>> {
        let (fl, sl) = self.lists.good_fit_class(need)?;
        let b = self.lists.head(fl, sl);
        let size = self.free_block_size(b);
        // Every block of a rounded-up class holds `need`; a smaller one means its tags were
        // overwritten, and the general search deals with it.
        if size < need {
            return None;
        }
        let split = size - need >= MIN_BLOCK;
        if !split && self.used + size > limit {
            return Some(Err(size));
        }
        // SAFETY: `free_block_size` proved `first <= b` and `b + size <= end <= len`, and
        // `size >= need >= MIN_BLOCK`, so `b`'s links lie inside the block; `b` is the head of
        // `(fl, sl)`.
        unsafe {
            self.lists.take_head_unchecked(&mut self.region, fl, sl, b);
        }
        // SAFETY: the block `[b, b + size)` lies in block space (above), is off its list, has
        // no gap, and `need <= size`, `split` as required.
        let payload = unsafe { self.carve(b, 0, size, split, need, requested) };
        self.allocations += 1;
        // SAFETY: `payload = b + 8 < b + size <= end <= len`.
        Some(Ok(unsafe { self.region.ptr_unchecked(payload) }))
    }

    /// [`place`](Self::place) past the segregated fast path: the search of the heap's
    /// [`Fit`], alignments above 16, and a list head whose tags were overwritten.
    #[inline(never)]
    fn place_searched(
        &mut self,
        need: usize,
        align: usize,
        requested: usize,
        limit: usize,
    ) -> Result<NonNull<u8>, usize> {
        let Some(p) = self.lists.find(&self.region, self.fit, need, align) else {
            return Err(0);
        };
        let size = self.free_block_size(p.block);
        debug_assert_eq!(size, p.size);
        let gap = p.payload - TAG - p.block;
        let avail = size - gap;
        let split = avail - need >= MIN_BLOCK;
        // With no budget `limit` is the capacity, which a free block always fits.
        if !split && self.used + avail > limit {
            return Err(avail);
        }
        // SAFETY: `free_block_size` proved `[p.block, p.block + size)` lies in block space, and
        // `place` found `need >= MIN_BLOCK` bytes in it, so its links lie inside it.
        unsafe { self.lists.take_unchecked(&mut self.region, p.block, size) };
        // SAFETY: the block lies in block space (above) and is off its list; `place` made the
        // gap zero or a whole block and `need <= avail`; `split` as required.
        let payload = unsafe { self.carve(p.block, gap, avail, split, need, requested) };
        self.allocations += 1;
        Ok(self.region.ptr(payload))
    }

    /// The size in the header of the free block at `b` (an offset from the free lists, which
    /// the links in memory wrote), once proved to lie in block space: `first <= b` and
    /// `b + size <= end`. The unchecked tag accesses on the block rely on this one check.
    ///
    /// # Panics
    ///
    /// When it does not: the free lists were overwritten (an overrun of a live block).
    #[inline(always)]
    fn free_block_size(&self, b: usize) -> usize {
        let rel = b.wrapping_sub(self.first);
        if rel > self.last_block_start {
            bookkeeping_corrupted(rel);
        }
        // SAFETY: `first <= b <= end - 32`, and `end <= len` (an invariant of the heap).
        let size = unsafe { self.region.header_unchecked(b) }.size;
        if size > self.end - b {
            bookkeeping_corrupted(rel);
        }
        size
    }

    /// The size of a free neighbour read from its tag (`at` is the freed block's start, for the
    /// message), once proved to fit the `room` it can have: at least [`MIN_BLOCK`] and at most
    /// `room` (up to `end` for the block after, down to `first` for the block before).
    ///
    /// # Panics
    ///
    /// When it does not: the tag was overwritten (an overrun of the live block before it).
    #[inline(always)]
    fn neighbour_size(&self, at: usize, size: usize, room: usize) -> usize {
        if !(MIN_BLOCK..=room).contains(&size) {
            bookkeeping_corrupted(at - self.first);
        }
        size
    }

    /// The block size for `layout`, or the error that says no block can ever hold it.
    fn block_size(&self, layout: Layout) -> Result<usize, RequestError> {
        if layout.size() == 0 {
            return Err(RequestError::ZeroSize);
        }
        if layout.align() > MAX_ALIGN {
            return Err(RequestError::AlignmentTooLarge {
                align: layout.align(),
                max: MAX_ALIGN,
            });
        }
        match block_size_for(layout.size()) {
            Some(need) if need <= self.capacity() => Ok(need),
            _ => Err(RequestError::TooLarge {
                requested: layout.size(),
                capacity: self.capacity(),
            }),
        }
    }

    /// `bytes` more in live blocks would pass `limit`: applies the budget, if that is what
    /// `limit` holds back. `Ok` when there is no budget, the budget allows it, or a `Warn`
    /// budget let it through (warning once per crossing).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn over_limit(&mut self, bytes: usize) -> Result<(), RequestError> {
        let used = self.used;
        if let Some(gate) = &mut self.budget {
            // A `Warn` budget that let usage through stays lifted while usage stays over it;
            // once usage is back under (a free), the next crossing warns again. Settled here,
            // lazily, so `free` pays nothing for it.
            gate.settle(used);
            // A `Panic` budget's panic runs the panic hook (user code): while the heap is held
            // (its owner has it borrowed), the refusal is held too, for the owner to panic
            // with once it let go, like a warning.
            if let Warnings::Hold(_, refused) = &mut self.warnings
                && gate.budget().policy == crate::tags::Policy::Panic
                && !gate.allows(used, bytes)
            {
                let e = gate.error(used, bytes);
                *refused = Some(e);
                return Err(RequestError::OverBudget(e));
            }
            let warning = gate
                .exceeded_quietly(used, bytes)
                .map_err(RequestError::OverBudget)?;
            if let Some(warning) = warning {
                match &mut self.warnings {
                    Warnings::Raise => crate::tags::raise_warning(&warning),
                    Warnings::Hold(held, _) => *held = Some(warning),
                }
            }
        }
        Ok(())
    }

    /// From now on a `Warn` budget's warning is held, not raised, until
    /// [`take_held_warning`](Self::take_held_warning) (see `warnings`); `false` goes back to
    /// raising them where they are crossed.
    #[cfg(feature = "allocator-api2")]
    pub(crate) fn hold_warnings(&mut self, hold: bool) {
        self.warnings = if hold {
            Warnings::Hold(None, None)
        } else {
            Warnings::Raise
        };
    }

    /// The warning held since the last call, if any.
    #[cfg(feature = "allocator-api2")]
    pub(crate) fn take_held_warning(&mut self) -> Option<BudgetExceeded> {
        match &mut self.warnings {
            Warnings::Raise => None,
            Warnings::Hold(held, _) => held.take(),
        }
    }

    /// The `Panic` budget's refusal held since the last call, if any (see `hold_warnings`):
    /// the owner panics with it.
    #[cfg(feature = "allocator-api2")]
    pub(crate) fn take_held_refusal(&mut self) -> Option<BudgetExceeded> {
        match &mut self.warnings {
            Warnings::Raise => None,
            Warnings::Hold(_, refused) => refused.take(),
        }
    }

    /// The most bytes live blocks may hold: the capacity, or the budget below it.
    fn exact_limit(&self) -> usize {
        let budget = self.budget.map_or(usize::MAX, |g| g.budget().bytes);
        self.capacity().min(budget)
    }

    /// Sets the fast path's `limit` from the exact one, and `fast_limit` from it and the fit.
    fn sync_limit(&mut self) {
        self.limit = self.exact_limit().saturating_sub(MAX_KEPT_TAIL);
        self.fast_limit = if self.fit == Fit::Segregated {
            self.limit
        } else {
            0
        };
    }

    fn out_of_memory(&self, requested: usize) -> RequestError {
        let stats = self.stats();
        RequestError::OutOfMemory {
            requested,
            free: stats.free,
            largest: stats.largest_request(),
        }
    }

    /// The block whose payload starts at `ptr`, if it is live: its offset, size and requested
    /// length.
    #[inline]
    fn live_block(&self, ptr: NonNull<u8>) -> Result<(usize, usize, usize), FreeError> {
        self.check_live(ptr, |failure| self.free_error(ptr, failure))
    }

    /// [`live_block`](Self::live_block), with the error made by `not_live` from the check that
    /// failed. [`free`](Self::free) passes one that ignores it, so that its checks carry no
    /// error data, and builds the error out of line.
    #[inline(always)]
    fn check_live<E>(
        &self,
        ptr: NonNull<u8>,
        not_live: impl FnOnce(NotLive) -> E,
    ) -> Result<(usize, usize, usize), E> {
        // The distance of `ptr` from the first payload (`first + 8`), wrapping: below
        // `end - first - 8` exactly when `ptr` lies in `[first + 8, end)` (the region does not
        // wrap around the address space), and then it is also its block's start relative to
        // `first`. One subtraction and one compare for the whole range check.
        let rel = ptr.as_ptr().addr().wrapping_sub(self.payload_start);
        if rel >= self.payload_span {
            return Err(not_live(NotLive::NotPayload));
        }
        let b = self.first + rel;
        if !rel.is_multiple_of(GRANULE) {
            return Err(not_live(NotLive::NotAllocated));
        }
        let i = rel / GRANULE;
        // SAFETY: `rel < end - first`, so bit `i` is in the bitmap, which lies in the region
        // (an invariant of the heap).
        let live = unsafe { self.region.word_unchecked(self.bitmap + (i / 64) * TAG) }
            & (1 << (i % 64))
            != 0;
        if !live {
            return Err(not_live(NotLive::NotAllocated));
        }
        // SAFETY: `b` is 16-aligned relative to `first` and `b + 8 < end`, and `end - first` is a
        // multiple of 16, so `b + 16 <= end <= len`.
        let h = unsafe { self.region.header_unchecked(b) };
        if !h.used || h.size < MIN_BLOCK || h.size > self.end - b {
            return Err(not_live(NotLive::Overwritten));
        }
        // SAFETY: `MIN_BLOCK <= h.size <= end - b`, and `end <= len`.
        match unsafe { self.region.footer_unchecked(b, h.size) } {
            Err(requested) => Ok((b, h.size, requested)),
            Ok(_) => Err(not_live(NotLive::Overwritten)),
        }
    }

    /// The error for freeing `ptr`, which failed [`check_live`](Self::check_live): the checks
    /// again through [`live_block`](Self::live_block), which names the one that failed. (They
    /// read what the failed run read, so one fails again; were none to, the pointer would still
    /// not be freed.)
    #[cold]
    #[inline(never)]
    fn rejected(&self, ptr: NonNull<u8>) -> FreeError {
        match self.live_block(ptr) {
            Err(e) => e,
            Ok(_) => self.free_error(ptr, NotLive::NotAllocated),
        }
    }

    /// The error that says why `ptr` is not a live block's payload.
    #[cold]
    #[inline(never)]
    fn free_error(&self, ptr: NonNull<u8>, failure: NotLive) -> FreeError {
        // Inside block space, the offset of `ptr` from its start.
        let offset = || self.block_space_offset(ptr.as_ptr().addr());
        match failure {
            // The first block's header is inside the heap but never a payload.
            NotLive::NotPayload if !self.contains(ptr) => FreeError::ForeignPointer {
                addr: ptr.as_ptr().addr(),
            },
            NotLive::NotPayload | NotLive::NotAllocated => {
                FreeError::NotAllocated { offset: offset() }
            }
            NotLive::Overwritten => FreeError::Corrupt(Corruption {
                offset: offset() - TAG,
                problem: "live block's tags were overwritten",
            }),
        }
    }

    /// If `ptr` is the start of a live block of this heap, a pointer to it with the region's
    /// provenance (the caller's pointer may carry a narrower one, e.g. only its layout's size),
    /// and the size it was allocated (or last resized) with. Its payload is at least 16 bytes.
    #[cfg_attr(not(feature = "allocator-api2"), allow(dead_code))]
    pub(crate) fn live_payload(&self, ptr: NonNull<u8>) -> Option<(NonNull<u8>, usize)> {
        let (b, _, requested) = self.live_block(ptr).ok()?;
        Some((self.region.ptr(b + TAG), requested))
    }

    /// The error for handing `ptr` back when it is not the start of a live allocation of the
    /// caller (a wrapper such as the guarded heap hands out pointers inside blocks, so a block's
    /// own start is not one of its allocations): the heap's own error for it, or
    /// [`FreeError::NotAllocated`] when it happens to be a live block's start. Changes nothing.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn not_an_allocation(&self, ptr: NonNull<u8>) -> FreeError {
        match self.live_block(ptr) {
            Err(e) => e,
            Ok((b, ..)) => FreeError::NotAllocated {
                offset: b + TAG - self.first,
            },
        }
    }

    /// Turns the free block at `b` (already off its list, still counted among the free blocks)
    /// into a live block of `need` bytes
    /// holding `requested`: the first `gap` bytes go back as a free block (alignment), the
    /// remaining `size` bytes hold the block, and a tail beyond `need` goes back too when `split`
    /// (it is a block's worth). Returns the payload offset.
    ///
    /// # Safety
    ///
    /// - `[b, b + gap + size)` lies in block space (`first <= b`, `b + gap + size <= end`);
    /// - `gap` is 0 or at least [`MIN_BLOCK`]; `MIN_BLOCK <= need <= size`;
    /// - `split` only when `size - need >= MIN_BLOCK`.
    #[inline(always)]
    unsafe fn carve(
        &mut self,
        mut b: usize,
        gap: usize,
        mut size: usize,
        split: bool,
        need: usize,
        requested: usize,
    ) -> usize {
        debug_assert!(b >= self.first && b + gap + size <= self.end);
        debug_assert!((gap == 0 || gap >= MIN_BLOCK) && need >= MIN_BLOCK && need <= size);
        debug_assert!(!split || size - need >= MIN_BLOCK);
        if gap > 0 {
            // SAFETY: `[b, b + gap)` lies in block space (`end <= len`) and holds at least a
            // minimum block (header, two links, footer).
            unsafe {
                self.region.write_free_unchecked(b, gap);
                self.lists.insert_unchecked(&mut self.region, b, gap);
            }
            b += gap;
        }
        if split {
            let tail = b + need;
            // SAFETY: `[tail, b + size)` lies in block space and holds at least a minimum block.
            unsafe {
                self.region.write_free_unchecked(tail, size - need);
                // The tail takes the block's place in the count.
                self.lists
                    .put_unchecked(&mut self.region, tail, size - need);
            }
            size = need;
        } else {
            self.lists.count -= 1;
        }
        // SAFETY: `[b, b + size)` lies in block space and `size >= need >= MIN_BLOCK`; bit
        // `(b - first) / 16` is in the bitmap, which lies in the region.
        unsafe {
            self.region.write_used_unchecked(b, size, requested);
            self.region
                .swap_bit_unchecked(self.bitmap, (b - self.first) / GRANULE, true);
        }
        self.used += size;
        // A branch, not a `max`: in steady state the peak stands, and nothing is stored.
        if self.used > self.peak_used {
            self.peak_used = self.used;
        }
        self.requested += requested;
        self.live += 1;
        if poison::ENABLED {
            self.region.fill(b + TAG, size - OVERHEAD, poison::FRESH);
        }
        b + TAG
    }

    /// Frees the live block `b` of `size` bytes, coalescing both ways.
    ///
    /// # Safety
    ///
    /// `(b, size, requested)` is what [`live_block`](Self::live_block) returned for a block not
    /// released since: `b` a block start in block space, 16-aligned relative to `first`, and
    /// `MIN_BLOCK <= size <= end - b`.
    #[inline(always)]
    unsafe fn release(&mut self, mut b: usize, mut size: usize, requested: usize) {
        debug_assert!(b >= self.first && (b - self.first).is_multiple_of(GRANULE));
        debug_assert!(size >= MIN_BLOCK && size <= self.end - b);
        // SAFETY: `b` lies in block space, so its bit is in the bitmap, inside the region.
        unsafe {
            self.region
                .swap_bit_unchecked(self.bitmap, (b - self.first) / GRANULE, false);
        }
        self.used -= size;
        self.requested -= requested;
        self.live -= 1;
        if poison::ENABLED {
            self.region.fill(b + TAG, size - OVERHEAD, poison::FREED);
        }
        let at = b + size;
        if at < self.end {
            // SAFETY: `at` is 16-aligned relative to `first` and below `end`, and `end - first`
            // is a multiple of 16, so `at + 16 <= end <= len`.
            let h = unsafe { self.region.header_unchecked(at) };
            if !h.used {
                let next = self.neighbour_size(at, h.size, self.end - at);
                // SAFETY: `neighbour_size` proved `[at, at + next)` lies in block space and
                // holds at least a minimum block, so its links do.
                unsafe { self.lists.remove_unchecked(&mut self.region, at, next) };
                size += next;
            }
        }
        if b > self.first
            // SAFETY: `b >= first + 16 >= 16` when `b > first`, and `b <= end <= len`.
            && let Some(prev) = unsafe { self.region.free_size_before_unchecked(b) }
        {
            let prev = self.neighbour_size(b, prev, b - self.first);
            // SAFETY: `neighbour_size` proved `first <= b - prev` and `prev >= MIN_BLOCK`, so
            // the block's links lie in `[b - prev, b)`.
            unsafe {
                self.lists
                    .remove_unchecked(&mut self.region, b - prev, prev);
            }
            b -= prev;
            size += prev;
        }
        // SAFETY: `[b, b + size)` is the freed block with the neighbours proved above, all in
        // block space (`end <= len`), and `size >= MIN_BLOCK`.
        unsafe {
            self.region.write_free_unchecked(b, size);
            self.lists.insert_unchecked(&mut self.region, b, size);
        }
    }

    /// If a free block starts at `at`, takes it off its list and returns its size (to be merged
    /// into the block before it); otherwise 0.
    #[inline]
    fn take_free_block_at(&mut self, at: usize) -> usize {
        if at >= self.end {
            return 0;
        }
        let h = self.region.header(at);
        if h.used {
            return 0;
        }
        self.lists.remove(&mut self.region, at, h.size);
        h.size
    }

    /// Makes the live block `b` (now `size` bytes, counted in `used`) hold `need` bytes /
    /// `requested`, splitting off and coalescing a free tail when one fits.
    fn resize_in_place(
        &mut self,
        b: usize,
        mut size: usize,
        need: usize,
        old_requested: usize,
        requested: usize,
    ) {
        if size - need >= MIN_BLOCK {
            let tail = b + need;
            let mut tail_size = size - need;
            self.used -= tail_size;
            tail_size += self.take_free_block_at(b + size);
            if poison::ENABLED {
                self.region
                    .fill(tail + TAG, size - need - OVERHEAD, poison::FREED);
            }
            self.region.write_free(tail, tail_size);
            self.lists.insert(&mut self.region, tail, tail_size);
            size = need;
        }
        self.region.write_used(b, size, requested);
        self.requested = self.requested - old_requested + requested;
        self.peak_used = self.peak_used.max(self.used);
        if poison::ENABLED && requested > old_requested {
            self.region.fill(
                b + TAG + old_requested,
                requested - old_requested,
                poison::FRESH,
            );
        }
    }
}

impl FreeListHeap<'_> {
    /// `f(payload address, requested size)` for each allocated block, in address order.
    #[cfg(feature = "profiler")]
    fn each_live_block(&self, mut f: impl FnMut(usize, usize)) {
        for block in self.blocks() {
            if let crate::heap::BlockState::Allocated { requested } = block.state {
                f(
                    self.region.addr_of(self.first + block.offset + TAG),
                    requested,
                );
            }
        }
    }
}

impl Drop for FreeListHeap<'_> {
    fn drop(&mut self) {
        // Blocks still live go with the heap: to the profiler, freed; then its label ends.
        #[cfg(feature = "profiler")]
        crate::tags::Budgeted::set_profiler_label(self, None);
        #[cfg(feature = "alloc")]
        if let Some(layout) = self.owned {
            // SAFETY: `owned` is set only by `try_with_capacity`, which allocated the region's
            // base with exactly this layout; the heap is being dropped, so nothing uses it again.
            unsafe { alloc::alloc::dealloc(self.region.base().as_ptr(), layout) }
        }
    }
}

impl core::fmt::Debug for FreeListHeap<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FreeListHeap")
            .field("fit", &self.fit)
            .field("stats", &self.stats())
            .finish()
    }
}

/// Which check of a pointer to free failed.
#[derive(Clone, Copy)]
enum NotLive {
    /// Not in `[first + 8, end)`.
    NotPayload,
    /// Not a live block's start (granule, live-start bit).
    NotAllocated,
    /// A live block's header or footer was overwritten.
    Overwritten,
}

/// The panic of [`FreeListHeap::alloc`], out of line so the inlined fast path stays small.
#[cold]
#[inline(never)]
#[track_caller]
fn alloc_failed(e: &RequestError) -> ! {
    panic!("FreeListHeap::alloc: {e}")
}

/// The panic for tags or free-list links that point outside block space: a live block was
/// overrun. The heap stops rather than read or write outside its region.
#[cold]
#[inline(never)]
fn bookkeeping_corrupted(offset: usize) -> ! {
    panic!(
        "FreeListHeap: heap bookkeeping overwritten near offset {offset} (a live block was overrun)"
    )
}

/// The panic of [`FreeListHeap::realloc`].
#[cold]
#[inline(never)]
#[track_caller]
fn realloc_failed(e: &HeapError) -> ! {
    panic!("FreeListHeap::realloc: {e}")
}

/// The budget caps the bytes in live blocks (tags included: [`Usage::current`]). It is checked
/// where the heap checks that a block can fit at all (one compare it made already, against
/// `min(capacity, budget)` instead of the capacity), so the fast path pays nothing for it. Over
/// a `Fail` budget, [`try_alloc`](FreeListHeap::try_alloc) and
/// [`try_realloc`](FreeListHeap::try_realloc) return [`RequestError::OverBudget`] and nothing
/// changes; the panicking forms panic with its text.
///
/// [`Usage::current`]: crate::tags::Usage::current
impl crate::tags::Budgeted for FreeListHeap<'_> {
    fn budget(&self) -> Option<BudgetGate> {
        self.budget.map(|mut gate| {
            // Re-arming is lazy (see `over_limit`); report the state as of now.
            gate.settle(self.used);
            gate
        })
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.budget = gate.map(BudgetGate::ensure_stamped);
        self.sync_limit();
    }

    /// Allocations and frees (and resizes) are `Alloc`/`Free` of the block's payload.
    /// The blocks live when the label changes are freed under the old label, the old label
    /// ends (`PoolEnd`), and they are allocated under the new one, so every `Free` matches an
    /// `Alloc`. The heap's drop takes its label off here too.
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        let old = core::mem::replace(&mut self.profiler, label);
        if old == label {
            return;
        }
        if old.is_some() {
            self.each_live_block(|at, requested| crate::tags::profiler::free(old, at, requested));
        }
        crate::tags::profiler::pool_end(old);
        if label.is_some() {
            self.each_live_block(|at, requested| {
                crate::tags::profiler::alloc_block(label, at, requested);
            });
        }
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.budget.as_ref().map_or(0, BudgetGate::stamp)
    }
}

/// Where a `Warn` budget's warning goes (see [`FreeListHeap`]'s `warnings`).
#[derive(Clone, Copy, Debug)]
enum Warnings {
    /// Raised where it is crossed.
    Raise,
    /// Held, the latest one, for the owner to raise; with a `Panic` budget's refusal, for the
    /// owner to panic with (a panic runs the panic hook, user code).
    #[cfg_attr(not(feature = "allocator-api2"), allow(dead_code))]
    Hold(Option<BudgetExceeded>, Option<BudgetExceeded>),
}
