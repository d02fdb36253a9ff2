//! [`Chunks<T>`]: the pool's slot memory. One block for a fixed pool, or equal power-of-two
//! chunks for a growable one. A block is allocated once and never moved, so a value's address is
//! stable for its whole life; blocks are freed only when the pool is dropped or shrunk past them.
//!
//! **Block 0 of a growable pool grows in place** where the platform can reserve address space
//! ([`Reservation`], 64-bit Unix): its first chunk reserves a range for up to
//! [`RESERVE_CHUNKS`] chunks or [`RESERVE_BYTES`] of slots and every later chunk is committed right after the one before,
//! so block 0 keeps one base pointer and every lookup stays on block 0's path (one compare),
//! as in a fixed pool. Only once the range is full (or where there is none: other platforms,
//! Miri, a finite `ulimit -v`, the process-wide bounds of [`crate::vm`]) do chunks come from the
//! global allocator, reached through the chunk table. Committed pages are charged to the
//! tagging allocator's tags as the chunks they replace would be.
//!
//! Blocks are kept as raw pointers (not `Box`es) so that pointers into several slots at once (for
//! [`Pool::get_disjoint_mut`](super::Pool::get_disjoint_mut)) never have to be re-derived from a
//! uniquely borrowed box.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::alloc::Layout;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};

use super::slot::Slot;
use crate::vm::Reservation;

/// The most address space block 0 of a growable pool reserves: 1 GiB, 14.9 million slots of
/// 72 bytes (a 64-byte value), and at most [`RESERVE_CHUNKS`] chunks. Past it, chunks come from
/// the global allocator.
pub(crate) const RESERVE_BYTES: usize = 1 << 30;

/// The most chunks block 0 of a growable pool reserves: 16,384, so a pool of small chunks
/// reserves in proportion (`Pool::new()` of 64-byte values: 36 MiB, 524,288 values) and a
/// process's 1,024 ranges stay within [`MAX_RESERVED_BYTES`](crate::vm::MAX_RESERVED_BYTES).
pub(crate) const RESERVE_CHUNKS: usize = 1 << 14;

/// The address space block 0 may reserve: [`RESERVE_BYTES`], or in this crate's unit tests what
/// the test set for its thread (to reach the end of a range with a few small values).
fn reserve_limit() -> usize {
    #[cfg(test)]
    {
        tests::RESERVE_LIMIT.with(core::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        RESERVE_BYTES
    }
}

/// The largest number of slots a pool can have: indexes are `u32` and `u32::MAX` ends the free
/// list.
pub const MAX_CAPACITY: usize = u32::MAX as usize;

pub(crate) struct Chunks<T> {
    /// Block 0: the whole pool if fixed, the first chunk if growable.
    first: NonNull<Slot<T>>,
    first_len: u32,
    /// Further chunks of a growable pool, `1 << shift` slots each.
    rest: Vec<NonNull<Slot<T>>>,
    /// `Some(shift)` if growable.
    shift: Option<u32>,
    /// `shift` and `(1 << shift) - 1` for the lookups past block 0, read without unwrapping
    /// `shift` (0 and 0 if fixed: `rest` is empty then, so no lookup gets that far).
    rest_shift: u32,
    rest_mask: u32,
    capacity: u32,
    /// Block 0's reserved range, if it has one (see the module docs); `first` is its base then.
    reserved: Option<Reserved>,
    _owns: PhantomData<Slot<T>>,
}

/// A growable block 0's reserved range.
struct Reserved {
    range: Reservation,
    /// The slots block 0 may grow to: a whole number of chunks within the range.
    slots: u32,
}

// SAFETY: `Chunks<T>` owns its slots (values of `T` or `u32` links) like a `Vec<Slot<T>>` and
// holds no other shared state; the raw block pointers are never aliased by another `Chunks`.
// Sending it moves the `T`s: `T: Send`.
unsafe impl<T: Send> Send for Chunks<T> {}
// SAFETY: `&Chunks<T>` only gives out `&Slot<T>` (so `&T`); mutation needs `&mut Chunks`:
// `T: Sync`.
unsafe impl<T: Sync> Sync for Chunks<T> {}

/// Allocates `len` vacant slots of generation `generation`, or `None` if out of memory.
///
/// When `generation` is 0 (every release-build pool with the full generation budget), the block
/// comes from the allocator already zeroed: all-zero bytes are a vacant slot of generation 0, and
/// a fresh block's pages are only touched when values first arrive, as with a `Vec` that grows.
fn alloc_block<T>(len: u32, generation: u32) -> Option<NonNull<Slot<T>>> {
    let layout = Layout::array::<Slot<T>>(len as usize).ok()?;
    if generation != 0 || layout.size() == 0 {
        let mut block: Vec<Slot<T>> = Vec::new();
        block.try_reserve_exact(len as usize).ok()?;
        block.extend((0..len).map(|_| Slot::vacant(generation)));
        let raw = Box::into_raw(block.into_boxed_slice());
        return NonNull::new(raw.cast::<Slot<T>>());
    }
    // SAFETY: the layout has a non-zero size. Zero bytes are a valid `Slot<T>`: a `u32`
    // generation 0 (even: vacant) and a union whose `next_free` field reads 0; the value field
    // is never read while the generation is even.
    NonNull::new(unsafe { alloc::alloc::alloc_zeroed(layout) }.cast::<Slot<T>>())
}

/// The block 0 of a growable layout with no slots (lazy, or given back): `alloc_block(0, _)`,
/// an empty boxed slice's dangling pointer, which allocates nothing and so cannot fail.
fn empty_block<T>() -> NonNull<Slot<T>> {
    alloc_block(0, 0).expect("an empty block allocates nothing")
}

/// Frees a block made by [`alloc_block`].
///
/// # Safety
/// - `block` came from `alloc_block::<T>(len, _)` and is not used afterwards.
unsafe fn free_block<T>(block: NonNull<Slot<T>>, len: u32) {
    // SAFETY: the caller guarantees `block` holds `len` slots allocated with the global
    // allocator and the layout of `[Slot<T>; len]` (a boxed slice, or `alloc_zeroed` with
    // `Layout::array`, which is the layout `Box<[Slot<T>]>` frees with); slots have no drop glue
    // of their own (values are dropped by the pool before this).
    drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(block.as_ptr(), len as usize)) });
}

impl<T> Chunks<T> {
    /// One block of `capacity` slots; `None` if out of memory.
    pub(crate) fn fixed(capacity: u32, generation: u32) -> Option<Self> {
        let first = alloc_block(capacity, generation)?;
        Some(Chunks {
            first,
            first_len: capacity,
            rest: Vec::new(),
            shift: None,
            rest_shift: 0,
            rest_mask: 0,
            capacity,
            reserved: None,
            _owns: PhantomData,
        })
    }

    /// One chunk of `1 << shift` slots, growing by more of the same; `None` if out of memory.
    pub(crate) fn growable(shift: u32, generation: u32) -> Option<Self> {
        let mut chunks = Chunks::lazy(shift)?;
        chunks.grow(generation, false).then_some(chunks)
    }

    /// Chunks of `1 << shift` slots, none allocated yet: block 0 is empty (and allocates nothing)
    /// until the first [`grow`](Self::grow).
    pub(crate) fn lazy(shift: u32) -> Option<Self> {
        let mut chunks = Chunks::fixed(0, 0)?;
        chunks.set_shift(shift);
        Some(chunks)
    }

    /// Makes the layout growable by chunks of `1 << shift` slots.
    fn set_shift(&mut self, shift: u32) {
        debug_assert!(shift < 32);
        self.shift = Some(shift);
        self.rest_shift = shift;
        self.rest_mask = (1 << shift) - 1;
    }

    /// Whether this is a growable layout whose block 0 has no slots yet.
    #[inline]
    fn is_lazy(&self) -> bool {
        self.first_len == 0 && self.shift.is_some()
    }

    /// The bytes of the first `slots` slots of block 0 (within the reserved range: no overflow).
    const fn bytes_of(slots: u32) -> usize {
        slots as usize * size_of::<Slot<T>>()
    }

    /// Gives a lazy growable layout a reserved range for block 0, if the platform has one and
    /// it holds at least two chunks; otherwise nothing changes (block 0 then takes its chunks from
    /// the global allocator).
    fn reserve_first(&mut self, shift: u32) {
        debug_assert!(self.is_lazy() && self.rest.is_empty() && self.reserved.is_none());
        let Some(chunk_bytes) = size_of::<Slot<T>>().checked_mul(1 << shift) else {
            return;
        };
        let chunks = (reserve_limit() / chunk_bytes).min(RESERVE_CHUNKS);
        // At most `MAX_CAPACITY` slots, in whole chunks.
        let slots = chunks
            .checked_mul(1 << shift)
            .map_or(0, |s| s.min(MAX_CAPACITY >> shift << shift));
        if chunks < 2 || slots == 0 {
            return;
        }
        let Some(range) = Reservation::new(Self::bytes_of(slots as u32)) else {
            return;
        };
        if range.base().as_ptr().align_offset(align_of::<Slot<T>>()) != 0 {
            return;
        }
        // SAFETY: the empty block 0 came from `alloc_block(0, _)` and is replaced here.
        unsafe { free_block(self.first, 0) };
        self.first = range.base().cast();
        self.reserved = Some(Reserved {
            range,
            slots: slots as u32,
        });
    }

    /// Grows block 0 in place by one chunk of `len` slots, within its reserved range: commits
    /// the chunk's pages (charged to the current tag, see [`Reservation::commit`]) and writes
    /// vacant slots of `generation` (fresh pages already read as vacant slots of generation 0).
    /// `false`, with nothing changed, if block 0 has no range, the range is full, or the system
    /// refused.
    fn grow_in_place(&mut self, len: u32, generation: u32, populate: bool) -> bool {
        let Some(reserved) = &mut self.reserved else {
            return false;
        };
        let Some(end) = self
            .first_len
            .checked_add(len)
            .filter(|&e| e <= reserved.slots)
        else {
            return false;
        };
        if !reserved.range.commit(Self::bytes_of(end), populate) {
            return false;
        }
        if generation != 0 {
            for index in self.first_len..end {
                // SAFETY: slots `first_len..end` of block 0 lie in committed pages of the range
                // and hold no value: they were never handed out (or were given back).
                unsafe {
                    self.first
                        .as_ptr()
                        .add(index as usize)
                        .write(Slot::vacant(generation))
                };
            }
        }
        self.first_len = end;
        true
    }

    /// Shrinks block 0 within its reserved range to its first `keep` chunks, giving the pages
    /// of the others back. Their slots must hold no values.
    fn shrink_in_place(&mut self, keep: usize, shift: u32) {
        let Some(reserved) = &mut self.reserved else {
            return;
        };
        let kept = (keep << shift) as u32;
        // SAFETY: the slots past `kept` hold no values (the caller's guarantee) and nothing
        // references them.
        unsafe { reserved.range.decommit(Self::bytes_of(kept)) };
        self.capacity -= self.first_len - kept;
        self.first_len = kept;
    }

    /// `capacity` slots laid out as a fixed pool (`chunk_len` = `None`) or as whole chunks of
    /// `chunk_len` (a power of two); `None` if out of memory or the layout is impossible.
    pub(crate) fn with_layout(
        chunk_len: Option<u32>,
        capacity: u32,
        generation: u32,
    ) -> Option<Self> {
        let Some(len) = chunk_len else {
            return Chunks::fixed(capacity, generation);
        };
        if capacity == 0 && len.is_power_of_two() {
            return Chunks::lazy(len.trailing_zeros());
        }
        if !len.is_power_of_two() || capacity < len || !capacity.is_multiple_of(len) {
            return None;
        }
        let mut chunks = Chunks::growable(len.trailing_zeros(), generation)?;
        while chunks.capacity < capacity {
            if !chunks.grow(generation, false) {
                return None;
            }
        }
        Some(chunks)
    }

    /// The number of slots.
    #[inline]
    pub(crate) const fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The number of slots in block 0 (every slot of a fixed pool).
    #[inline(always)]
    pub(crate) const fn first_len(&self) -> u32 {
        self.first_len
    }

    /// A raw pointer to slot `index` of block 0, without a bounds check. The pointer is valid
    /// until the pool is dropped; writing through it needs the pool borrowed mutably.
    ///
    /// # Safety
    /// `index < self.first_len()`.
    #[inline(always)]
    pub(crate) unsafe fn ptr_in_first_unchecked(&self, index: u32) -> *mut Slot<T> {
        debug_assert!(index < self.first_len);
        // SAFETY: the caller guarantees `index` is within block 0.
        unsafe { self.first.as_ptr().add(index as usize) }
    }

    /// The chunk size if growable.
    pub(crate) fn chunk_len(&self) -> Option<u32> {
        self.shift.map(|s| 1 << s)
    }

    /// The number of allocated blocks: 1 for a fixed layout (even of capacity 0), the number of
    /// chunks for a growable one (those block 0 grew by in place included).
    pub(crate) fn blocks(&self) -> usize {
        match self.shift {
            None => 1,
            Some(shift) => (self.first_len >> shift) as usize + self.rest.len(),
        }
    }

    /// The capacity once [`grow`](Self::grow) adds a chunk: `None` if not growable or past the
    /// `u32` index limit.
    fn capacity_after_growth(&self) -> Option<u32> {
        self.capacity.checked_add(1 << self.shift?)
    }

    /// Whether [`grow`](Self::grow) can add a chunk to a map allowed `max_slots` slots: growable,
    /// below `max_slots`, and within the `u32` index limit. Whether the system allocator will give
    /// the memory is not foreseen. The one statement of those conditions: a map's growth and its
    /// early refusal when full ([`SlotMap`](super::slot_map::SlotMap)) both ask here.
    pub(crate) fn can_grow(&self, max_slots: u32) -> bool {
        self.capacity < max_slots && self.capacity_after_growth().is_some()
    }

    /// Adds one chunk of vacant slots (block 0 first, if it is not allocated yet); `false` if not
    /// growable, out of indexes or out of memory. With `populate`, pages block 0 commits for it
    /// are made resident at once (see [`Reservation::commit`]): for an insert that is about to
    /// write them, not for a reservation.
    pub(crate) fn grow(&mut self, generation: u32, populate: bool) -> bool {
        let (Some(shift), Some(capacity)) = (self.shift, self.capacity_after_growth()) else {
            return false;
        };
        let len = 1u32 << shift;
        if self.rest.is_empty() {
            if self.is_lazy() && self.reserved.is_none() {
                self.reserve_first(shift);
            }
            if self.grow_in_place(len, generation, populate) {
                self.capacity = capacity;
                return true;
            }
            if self.is_lazy() && self.reserved.take().is_some() {
                // A range that cannot take even its first chunk: back to the global allocator.
                self.first = empty_block();
            }
        }
        if self.is_lazy() {
            let Some(block) = alloc_block(len, generation) else {
                return false;
            };
            // SAFETY: the empty block 0 came from `alloc_block(0, _)` and is replaced here.
            unsafe { free_block(self.first, 0) };
            self.first = block;
            self.first_len = len;
        } else {
            if self.rest.try_reserve(1).is_err() {
                return false;
            }
            let Some(block) = alloc_block(len, generation) else {
                return false;
            };
            self.rest.push(block);
        }
        self.capacity = capacity;
        true
    }

    /// The capacity a growable layout reaches with the fewest whole chunks added to hold at least
    /// `slots`: `Some(capacity)` if it has that many already, `None` if not growable or the
    /// chunks would pass [`MAX_CAPACITY`].
    pub(crate) fn capacity_for(&self, slots: u32) -> Option<u32> {
        if slots <= self.capacity {
            return Some(self.capacity);
        }
        let len = 1u32 << self.shift?;
        let missing = slots - self.capacity;
        let chunks = missing.div_ceil(len);
        self.capacity.checked_add(chunks.checked_mul(len)?)
    }

    /// Grows by whole chunks to `capacity` (from [`capacity_for`](Self::capacity_for)); `false`
    /// if out of memory, and then the chunks added by this call are freed again: nothing changed.
    pub(crate) fn grow_to(&mut self, capacity: u32, generation: u32) -> bool {
        let (blocks, old_capacity) = (self.blocks(), self.capacity);
        while self.capacity < capacity {
            if !self.grow(generation, false) {
                self.release_blocks_after(blocks);
                debug_assert_eq!(self.capacity, old_capacity);
                return false;
            }
        }
        true
    }

    /// Frees the trailing chunks of a growable layout that start at or above slot `used` (slots
    /// no value was ever in, so their generations are the first one and nothing is lost); block
    /// 0 too if `used` is 0. Returns the number of slots freed. A fixed layout frees nothing.
    pub(crate) fn release_unused(&mut self, used: u32) -> u32 {
        let Some(shift) = self.shift else {
            return 0;
        };
        let before = self.capacity;
        // Every chunk has `1 << shift` slots and block 0 is a whole number of them: keep the
        // chunks that start below `used`.
        self.release_blocks_after(used.div_ceil(1 << shift) as usize);
        before - self.capacity
    }

    /// Frees every chunk after the first `blocks` (as [`blocks`](Self::blocks) counts them;
    /// block 0 shrinks in place, or, without a range, is freed if `blocks` is 0, leaving the
    /// layout lazy); their slots must hold no values.
    fn release_blocks_after(&mut self, blocks: usize) {
        let Some(shift) = self.shift else {
            return;
        };
        let len = 1u32 << shift;
        let first_chunks = (self.first_len >> shift) as usize;
        let keep_rest = blocks.saturating_sub(first_chunks);
        while self.rest.len() > keep_rest {
            let block = self.rest.pop().expect("more blocks than kept");
            // SAFETY: every chunk in `rest` came from `alloc_block(len, _)`; it is out of `rest`
            // now, so never used again.
            unsafe { free_block(block, len) };
            self.capacity -= len;
        }
        if blocks >= first_chunks {
            return;
        }
        if self.reserved.is_some() {
            self.shrink_in_place(blocks, shift);
        } else if blocks == 0 && !self.is_lazy() {
            let block = core::mem::replace(&mut self.first, empty_block());
            // SAFETY: block 0 came from `alloc_block(first_len, _)` and was just replaced.
            unsafe { free_block(block, self.first_len) };
            self.capacity -= self.first_len;
            self.first_len = 0;
        }
    }

    /// A raw pointer to slot `index`, or `None` if out of range. The pointer is valid until the
    /// pool is dropped; writing through it needs the pool borrowed mutably.
    #[inline(always)]
    pub(crate) fn ptr(&self, index: u32) -> Option<*mut Slot<T>> {
        if index < self.first_len {
            // SAFETY: `index` is within block 0.
            Some(unsafe { self.first.as_ptr().add(index as usize) })
        } else {
            self.ptr_in_rest(index)
        }
    }

    /// A raw pointer to slot `index` if it is in block 0 (every slot of a fixed pool): the
    /// removes' fast path, one compare. Valid as [`ptr`](Self::ptr)'s.
    #[inline(always)]
    pub(crate) fn ptr_in_first(&self, index: u32) -> Option<*mut Slot<T>> {
        // SAFETY: `index` is within block 0.
        (index < self.first_len).then(|| unsafe { self.first.as_ptr().add(index as usize) })
    }

    /// Slot `index` if it is in block 0 (every slot of a fixed pool): the lookups' fast path,
    /// one compare.
    #[inline(always)]
    pub(crate) fn get_in_first(&self, index: u32) -> Option<&Slot<T>> {
        if index < self.first_len {
            // SAFETY: `index` is within block 0, whose slots are initialized and owned by `self`;
            // the shared borrow of `self` keeps writers away.
            Some(unsafe { &*self.first.as_ptr().add(index as usize) })
        } else {
            None
        }
    }

    /// A raw pointer to slot `index` if it lies past block 0 in an allocated chunk: the chunk
    /// table's entry `(index - first_len) >> shift`, offset by the low bits. Inline, for the
    /// lookups of a growable pool past its first chunk; a fixed pool has no chunks here, so
    /// every index misses. The pointer is valid until the pool is dropped.
    ///
    /// Block 0's length is read afresh (a volatile read: a plain load the compiler cannot merge
    /// with another). The callers test `index < first_len` just before, on their block-0 path;
    /// sharing that load kept the length in a register, so the block-0 path loaded it with a
    /// `mov` of its own instead of comparing against memory: one more instruction on every
    /// lookup (`get` 21 instead of 20 per lookup in the `pool-lookup` job).
    #[inline(always)]
    pub(crate) fn ptr_in_rest(&self, index: u32) -> Option<*mut Slot<T>> {
        // SAFETY: `&self.first_len` is a reference to an initialized, aligned `u32` field, valid
        // for reads for the borrow of `self`; a volatile read of it is an ordinary read.
        let first_len = unsafe { ptr::read_volatile(&self.first_len) };
        let rel = index.checked_sub(first_len)?;
        let block = self.rest.get((rel >> self.rest_shift) as usize)?;
        // SAFETY: every chunk in `rest` has `1 << rest_shift` slots and the offset is masked
        // below that.
        Some(unsafe { block.as_ptr().add((rel & self.rest_mask) as usize) })
    }

    /// Slot `index`.
    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<&Slot<T>> {
        // SAFETY: `ptr` returns a pointer to an initialized slot owned by `self`; the shared
        // borrow of `self` keeps writers away.
        self.ptr(index).map(|p| unsafe { &*p })
    }

    /// Slot `index` mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, index: u32) -> Option<&mut Slot<T>> {
        // SAFETY: as in `get`; the unique borrow of `self` makes this the only reference.
        self.ptr(index).map(|p| unsafe { &mut *p })
    }

    /// Block `n` (in index order) as `(pointer, length)`.
    pub(crate) fn block(&self, n: usize) -> Option<(NonNull<Slot<T>>, u32)> {
        match n.checked_sub(1) {
            None => Some((self.first, self.first_len)),
            Some(i) => Some((*self.rest.get(i)?, self.chunk_len()?)),
        }
    }
}

impl<T> Drop for Chunks<T> {
    fn drop(&mut self) {
        let chunk = self.chunk_len().unwrap_or(0);
        // SAFETY: every block was made by `alloc_block` with these lengths and is dropped once
        // (block 0 only if it is not a reserved range's, which is unmapped with `reserved`).
        unsafe {
            if self.reserved.is_none() {
                free_block(self.first, self.first_len);
            }
            for &block in &self.rest {
                free_block(block, chunk);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::{Handle, Pool};
    use alloc::string::{String, ToString};
    use core::cell::Cell;

    std::thread_local! {
        /// [`reserve_limit`] for this test thread.
        pub(super) static RESERVE_LIMIT: Cell<usize> = const { Cell::new(RESERVE_BYTES) };
    }

    /// Runs `f` with block 0 reserving at most `bytes` on this thread.
    fn with_reserve_limit<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
        let old = RESERVE_LIMIT.with(|l| l.replace(bytes));
        let r = f();
        RESERVE_LIMIT.with(|l| l.set(old));
        r
    }

    /// Whether this platform reserves address space (64-bit Unix, not Miri).
    fn reserves() -> bool {
        cfg!(all(
            unix,
            target_pointer_width = "64",
            feature = "std",
            not(miri)
        ))
    }

    /// The layout of a pool's memory: (slots in block 0, chunks from the global allocator,
    /// whether block 0 is a reserved range).
    fn shape<T>(pool: &Pool<T>) -> (u32, usize, bool) {
        let c = pool.slots.chunks();
        (c.first_len, c.rest.len(), c.reserved.is_some())
    }

    /// A growable pool whose reserved range holds two chunks of four: block 0 grows in place to
    /// eight slots, then chunks come from the global allocator. Every value stays where it was
    /// and every walk sees the same values as a plain list, across removes, reinserts, growth by
    /// `reserve` and `shrink_to_fit` back into the range.
    #[test]
    fn a_pool_past_its_reserved_range_keeps_every_value_in_place() {
        let _ranges = crate::vm::tests::ranges_to_spare();
        let chunk_bytes = 4 * size_of::<Slot<String>>();
        with_reserve_limit(2 * chunk_bytes, || {
            let mut pool = Pool::growable(4);
            let mut model: Vec<(Handle<String>, String, usize)> = Vec::new();
            let check = |pool: &Pool<String>, model: &[(Handle<String>, String, usize)]| {
                assert_eq!(pool.len(), model.len());
                for (h, v, at) in model {
                    assert_eq!(pool.get(*h), Some(v));
                    assert_eq!(core::ptr::from_ref(&pool[*h]).addr(), *at, "{v} moved");
                }
                let walked: Vec<_> = pool.iter().map(|(h, v)| (h, v.clone())).collect();
                let mut expected: Vec<_> = model.iter().map(|(h, v, _)| (*h, v.clone())).collect();
                expected.sort_by_key(|(h, _)| h.index());
                assert_eq!(walked, expected);
                let mut back: Vec<_> = pool.iter().rev().map(|(h, _)| h).collect();
                back.reverse();
                assert_eq!(back, expected.iter().map(|(h, _)| *h).collect::<Vec<_>>());
            };
            let insert = |pool: &mut Pool<String>, model: &mut Vec<_>, v: String| {
                let h = pool.insert(v.clone());
                let at = core::ptr::from_ref(&pool[h]).addr();
                model.push((h, v, at));
            };
            for i in 0..20 {
                insert(&mut pool, &mut model, i.to_string());
            }
            let in_range = if reserves() { 8 } else { 4 };
            assert_eq!(
                shape(&pool),
                (in_range, (20 - in_range as usize) / 4, reserves())
            );
            assert_eq!((pool.capacity(), pool.stats().blocks), (20, 5));
            check(&pool, &model);
            // Remove every third value (in the range and past it), then fill the holes again.
            let mut i = 0;
            model.retain(|(h, _, _)| {
                i += 1;
                i % 3 != 0 || pool.remove(*h).is_none()
            });
            check(&pool, &model);
            for i in 20..30 {
                insert(&mut pool, &mut model, i.to_string());
            }
            check(&pool, &model);
            pool.reserve(40);
            assert!(pool.shrink_to_fit() > 0);
            check(&pool, &model);
            for (h, ..) in model.drain(..) {
                pool.remove(h).unwrap();
            }
            check(&pool, &model);

            // A pool that never held a value gives every chunk back, the range's too, and grows
            // in place again afterwards.
            let mut fresh: Pool<String> = Pool::growable(4);
            fresh.reserve(6);
            let two_chunks = if reserves() {
                (8, 0, true)
            } else {
                (4, 1, false)
            };
            assert_eq!(shape(&fresh), two_chunks);
            assert_eq!(fresh.shrink_to_fit(), 8);
            assert_eq!((fresh.capacity(), fresh.stats().blocks), (0, 0));
            let h = fresh.insert("again".to_string());
            assert_eq!((fresh[h].as_str(), fresh.capacity()), ("again", 4));
            assert_eq!(shape(&fresh), (4, 0, reserves()));
        });
        // A range that could not hold two chunks is not taken: chunks come from the global
        // allocator from the first.
        with_reserve_limit(chunk_bytes * 3 / 2, || {
            let mut pool = Pool::growable(4);
            let hs: Vec<_> = (0..9).map(|i| pool.insert(i.to_string())).collect();
            assert_eq!(shape(&pool), (4, 2, false));
            assert_eq!(pool[hs[8]], "8");
        });
    }

    /// A clone lays its slots out afresh: a pool whose block 0 grew in place, cloned where no
    /// range can be had, gets a block 0 of one chunk and the rest in chunks. The copy's inline
    /// insert must not take a free-list head past its own block 0 (the original's `fast_end`).
    #[test]
    fn a_clone_with_a_smaller_block_0_inserts_through_its_chunks() {
        let _ranges = crate::vm::tests::ranges_to_spare();
        let mut pool: Pool<u64> = Pool::growable(4);
        let hs: Vec<_> = (0..16).map(|i| pool.insert(i)).collect();
        let mut copy = with_reserve_limit(0, || pool.clone());
        assert_eq!(shape(&copy), (4, 3, false));
        assert_eq!(shape(&pool).0, if reserves() { 16 } else { 4 });
        // Slot 12 heads the copy's free list: in its fourth chunk, past its block 0.
        assert_eq!(copy.remove(hs[12]), Some(12));
        let h = copy.insert(99);
        assert_eq!(h.index(), 12);
        assert_eq!(copy.get(h), Some(&99));
        assert_eq!(copy.len(), 16);
        assert_eq!(
            copy.iter().map(|(_, v)| *v).sum::<u64>(),
            (0..16).sum::<u64>() - 12 + 99
        );
    }

    /// A small xorshift generator for the randomized tests.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Every slot of `pool` past its high water, committed again after a shrink or fresh, is
    /// vacant with the pool's first generation.
    fn check_fresh<T, H: crate::pool::PoolHandle<T>>(pool: &Pool<T, H>) {
        let first = pool.slots.scheme().1;
        let c = pool.slots.chunks();
        for index in pool.slots.high_water()..c.capacity() {
            let slot = c.get(index).unwrap();
            assert_eq!(
                (slot.generation(), slot.is_occupied()),
                (first, false),
                "slot {index}"
            );
        }
    }

    /// A `Handle32` pool (generation 0, zeroed pages, in debug builds too) and a `Handle` pool
    /// (tagged generations in debug builds, written on commit) shrunk and grown again, in place
    /// and past the range: the slots committed again are vacant, with the first generation, and
    /// values below the high water keep theirs.
    #[test]
    fn slots_committed_again_are_vacant_with_the_first_generation() {
        fn cycle<H: crate::pool::PoolHandle<u64>>(mut pool: Pool<u64, H>) {
            let hs: Vec<_> = (0..10).map(|i| pool.insert(i)).collect();
            for round in 0..6 {
                pool.reserve(20 + round * 8);
                check_fresh(&pool);
                pool.shrink_to_fit();
                check_fresh(&pool);
                for (i, h) in hs.iter().enumerate() {
                    assert_eq!(pool.get(*h), Some(&(i as u64)));
                }
            }
            for h in hs {
                pool.remove(h);
            }
            pool.shrink_to_fit();
            check_fresh(&pool);
            let again: Vec<_> = (0..40).map(|i| pool.insert(i)).collect();
            check_fresh(&pool);
            assert!(again.iter().enumerate().all(|(i, h)| pool[*h] == i as u64));
        }
        // 64 slots of 16 bytes in the range: a page holds many chunks, so a shrink keeps the
        // rest of a page whose slots must still read as never used.
        with_reserve_limit(64 * size_of::<Slot<u64>>(), || {
            cycle(Pool::<u64, crate::pool::Handle32<u64>>::growable_with_key(
                4,
            ));
            cycle(Pool::<u64>::growable(4));
        });
    }

    /// Checks `pool` against `model` (live handles and values, in any order) and `dead`
    /// (handles whose values were removed): lookups, both walks, the counts and the layout.
    fn check_model(
        pool: &Pool<String>,
        model: &[(Handle<String>, String)],
        dead: &[Handle<String>],
    ) {
        assert_eq!(pool.len(), model.len());
        for (h, v) in model {
            assert_eq!(pool.get(*h), Some(v));
        }
        for h in dead {
            assert!(pool.get(*h).is_none(), "{h:?} was removed");
        }
        let mut expected: Vec<_> = model.iter().map(|(h, v)| (*h, v.clone())).collect();
        expected.sort_by_key(|(h, _)| h.index());
        let walked: Vec<_> = pool.iter().map(|(h, v)| (h, v.clone())).collect();
        assert_eq!(walked, expected);
        let mut back: Vec<_> = pool.iter().rev().map(|(h, v)| (h, v.clone())).collect();
        back.reverse();
        assert_eq!(back, expected);
        check_fresh(pool);
        let c = pool.slots.chunks();
        let chunk = c.chunk_len().unwrap();
        assert_eq!(c.capacity, c.first_len + c.rest.len() as u32 * chunk);
        assert_eq!(c.first_len % chunk, 0);
        if let Some(r) = &c.reserved {
            assert!(c.first_len <= r.slots);
            assert!(Chunks::<String>::bytes_of(c.first_len) <= r.range.committed());
        }
    }

    /// Random inserts, removes, reserves, shrinks, retains, drains and clones of a growable pool
    /// whose range holds three chunks (block 0 grows in place, then chunks follow), under a
    /// `Fail` budget of `FIT` values: checked against a model after every step. Clones are made
    /// with and without a range, so a copy's block 0 can differ from the original's; the budget
    /// must refuse exactly the insert past `FIT` whichever path the insert takes.
    #[test]
    fn random_operations_across_the_end_of_the_range_match_a_model() {
        use crate::tags::{Budget, Tracked};
        const FIT: usize = 20;
        let chunk = 4;
        let limit = 3 * chunk * size_of::<Slot<String>>();
        let seeds = if cfg!(miri) { 2 } else { 60 };
        for seed in 1..=seeds {
            with_reserve_limit(limit, || {
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed);
                let budget = Budget::fail(FIT * size_of::<String>());
                let mut pool =
                    Tracked::new(Pool::growable(chunk), "model", "model").with_budget(budget);
                let mut model: Vec<(Handle<String>, String)> = Vec::new();
                let mut dead: Vec<Handle<String>> = Vec::new();
                let mut next = 0u32;
                for _ in 0..if cfg!(miri) { 100 } else { 600 } {
                    match rng.below(100) {
                        0..40 => {
                            next += 1;
                            let v = next.to_string();
                            match pool.try_insert(v.clone()) {
                                Ok(h) => {
                                    assert!(model.len() < FIT, "over the budget");
                                    model.push((h, v));
                                }
                                Err(e) => {
                                    assert_eq!(model.len(), FIT, "refused under the budget");
                                    assert_eq!(e.into_inner(), v);
                                }
                            }
                        }
                        40..65 if !model.is_empty() => {
                            let (h, v) = model.swap_remove(rng.below(model.len()));
                            assert_eq!(pool.remove(h), Some(v));
                            dead.push(h);
                        }
                        65..70 if !dead.is_empty() => {
                            assert!(pool.remove(dead[rng.below(dead.len())]).is_none());
                        }
                        70..76 => pool.reserve(rng.below(3 * chunk)),
                        76..82 => {
                            pool.shrink_to_fit();
                        }
                        82..86 => {
                            let cut = rng.below(3);
                            pool.retain(|h, _| h.index() % 3 != cut as u32);
                            model.retain(|(h, _)| {
                                let kept = h.index() % 3 != cut as u32;
                                if !kept {
                                    dead.push(*h);
                                }
                                kept
                            });
                        }
                        86..88 => {
                            let mut d = pool.drain();
                            let (a, b) = (d.next(), d.next_back());
                            drop(d);
                            assert_eq!(a.is_some(), !model.is_empty());
                            assert_eq!(b.is_some(), model.len() > 1);
                            dead.extend(model.drain(..).map(|(h, _)| h));
                        }
                        88..94 => {
                            let reserve = if rng.below(2) == 0 { 0 } else { limit };
                            let mut copy = with_reserve_limit(reserve, || (*pool).clone());
                            check_model(&copy, &model, &dead);
                            // Free a few, then fill the copy to its budget and one more.
                            let mut live = model.clone();
                            for _ in 0..rng.below(live.len() + 1) {
                                let (h, v) = live.swap_remove(rng.below(live.len()));
                                assert_eq!(copy.remove(h), Some(v));
                            }
                            while live.len() < FIT {
                                let h = copy.try_insert("copy".to_string()).expect("in budget");
                                live.push((h, "copy".to_string()));
                            }
                            assert!(copy.try_insert("over".to_string()).is_err());
                            check_model(&copy, &live, &[]);
                        }
                        _ => {}
                    }
                    assert!(pool.len() <= FIT);
                    check_model(&pool, &model, &dead);
                }
            });
        }
    }

    /// Serialization writes a pool's slots and chunk size, not where its blocks are: a pool
    /// grown past its range and shrunk back reads back with the same capacity, blocks, handles
    /// and free list whether the reader gets a range (and one of another size) or not, and the
    /// same operations then give the same handles.
    #[cfg(feature = "serde")]
    #[test]
    fn a_pool_across_the_end_of_its_range_reads_back_the_same() {
        let chunk_bytes = 4 * size_of::<Slot<String>>();
        let mut pool = with_reserve_limit(2 * chunk_bytes, || {
            let mut pool = Pool::growable(4);
            let hs: Vec<_> = (0..30).map(|i| pool.insert(i.to_string())).collect();
            for i in [3, 29, 9, 17, 0] {
                pool.remove(hs[i]);
            }
            pool.reserve(40);
            assert!(pool.shrink_to_fit() > 0);
            pool
        });
        let json = serde_json::to_string(&pool).unwrap();
        for limit in [0, chunk_bytes * 3, RESERVE_BYTES] {
            let mut back: Pool<String> =
                with_reserve_limit(limit, || serde_json::from_str(&json).unwrap());
            assert_eq!(back.stats(), pool.stats());
            assert_eq!(serde_json::to_string(&back).unwrap(), json);
            let walked =
                |p: &Pool<String>| -> Vec<_> { p.iter().map(|(h, v)| (h, v.clone())).collect() };
            assert_eq!(walked(&back), walked(&pool));
            let mut again = pool.clone();
            for i in 0..12 {
                let (a, b) = (again.insert(i.to_string()), back.insert(i.to_string()));
                assert_eq!(a, b);
                if i % 3 == 0 {
                    assert_eq!(again.remove(a), back.remove(b));
                }
            }
            assert_eq!(walked(&back), walked(&again));
            assert_eq!(back.stats(), again.stats());
        }
        pool.clear();
        assert_eq!(pool.shrink_to_fit(), 0, "every chunk left held a value");
    }

    /// Generation 0 takes the zeroed-allocation path (release pools); Miri checks the zero bytes
    /// read as vacant slots and that the block is freed with the layout it was allocated with.
    #[test]
    fn zeroed_and_initialized_blocks_are_vacant_and_freed() {
        for generation in [0, 2] {
            let mut chunks = Chunks::<String>::fixed(5, generation).unwrap();
            for i in 0..5 {
                let slot = chunks.get(i).unwrap();
                assert_eq!((slot.generation(), slot.is_occupied()), (generation, false));
            }
            let slot = chunks.get_mut(3).unwrap();
            slot.occupy(String::from("x"), generation + 1);
            // SAFETY: the slot was just occupied; `generation + 2` is even.
            assert_eq!(unsafe { slot.vacate(generation + 2, 7) }, "x");
            assert!(chunks.get(5).is_none());
        }
        let mut grown = Chunks::<u64>::growable(1, 0).unwrap();
        assert!(grown.grow(0, false) && grown.grow(0, true));
        assert_eq!((grown.capacity(), grown.blocks()), (6, 3));
        assert_eq!(grown.get(5).map(Slot::generation), Some(0));
        assert!(Chunks::<u8>::fixed(0, 0).is_some());
    }
}
