//! Typed pools: [`Pool<T>`] with generational [`Handle<T>`]s.
//!
//! The seeds' pool allocator, done with handles instead of pointers: fixed-size slots, a free list
//! threaded through the free slots themselves, O(1) insert, remove and lookup, no fragmentation.
//! A [`Handle<T>`] is an index plus the slot's generation, so a handle to a value that was removed
//! (its slot freed, or freed and reused) is simply rejected: the seeds' double-free cycle and every
//! stale-pointer bug become a `None`.
//!
//! **Pick it** for many objects of one type with independent lifetimes (bullets, particles,
//! enemies, network packets) when you want to refer to them by a small `Copy` key that survives
//! their death safely, and want their addresses to stay put. Capacity is fixed at construction
//! ([`Pool::with_capacity`]); [`Pool::growable`] adds fixed-size chunks instead of reallocating.
//!
//! **Don't pick it** for values that all die together (a frame arena frees them in one step), for
//! values of many sizes (a general heap), or when you mostly iterate and rarely look up (a dense
//! `Vec` iterates without skipping holes).
//!
//! ```
//! use arena_core::pool::Pool;
//!
//! struct Bullet { x: f32, speed: f32 }
//!
//! let mut bullets = Pool::with_capacity(4);
//! let a = bullets.insert(Bullet { x: 0.0, speed: 2.0 });
//! let b = bullets.insert(Bullet { x: 1.0, speed: 3.0 });
//! for (_, bullet) in bullets.iter_mut() {
//!     bullet.x += bullet.speed;
//! }
//! assert_eq!(bullets[b].x, 4.0);
//! assert!(bullets.remove(a).is_some());
//! assert!(bullets.remove(a).is_none()); // a double free is just `None`
//! assert!(bullets.get(a).is_none());    // and so is every later use of `a`
//! ```
//!
//! # Design
//!
//! - **Slots**: a `union` of the value and the next-free index, plus a `u32`
//!   generation that is odd while the slot holds a value (slotmap's layout). A 64-byte value takes
//!   a 72-byte slot.
//! - **Handles**: `u32` index + `NonZeroU32` generation = 8 bytes; the generation is never zero
//!   (occupied generations are odd), which gives `Option<Handle<T>>` its niche.
//! - **Lookup** is a bounds check and a generation compare; there is nothing else on the hit path.
//! - **Generations never wrap.** A slot can hold 2^30 values in its life (2^23 in debug builds);
//!   then it is *retired*: never reused, counted in [`PoolStats::retired`]. slotmap wraps instead,
//!   so a key becomes valid again after 2^31 reuses of its slot.
//!   [`Pool::with_capacity_and_generation_budget`] starts slots near the end of their counter,
//!   to test this.
//! - **Handles from another pool** of the same type: in debug builds (and with the `debug-checks`
//!   feature) each pool gets one of 128 tags, stored in the top byte of every generation it makes.
//!   The generations of different pools never match, and on a miss the pool compares tags and
//!   panics, naming both, instead of returning `None` (slotmap, thunderdome and generational-arena
//!   return the other container's value). Release builds use the whole counter and skip the check.
//! - **Free list**: LIFO through the free slots, as in the seeds. Slots that were never used are
//!   handed out in index order after the free list is empty; iteration stops at the highest slot
//!   ever used (and, in a growable pool, opens no further chunk once every live value was seen).
//! - **Serialization** (feature `serde`) keeps generations, the free-list order and the
//!   statistics, so the next handle after a round trip is the one the original would have given
//!   (slotmap#104 is still open for slotmap). Loading validates everything first (a tampered
//!   free list cannot revive a stale handle) and allocates at most a limit
//!   (`DEFAULT_MAX_BYTES`, or `PoolSeed`'s), refusing with a `PoolDecodeError`.

mod chunks;
mod error;
pub(crate) mod generation;
mod handle;
mod iter;
#[cfg(feature = "serde")]
mod serde;
mod slot;

use core::fmt;
use core::num::NonZeroU32;
use core::ops::{Index, IndexMut};

#[cfg(feature = "serde")]
pub use self::serde::{DEFAULT_MAX_BYTES, PoolDecodeError, PoolSeed};
pub use chunks::MAX_CAPACITY;
pub use error::{PoolCapacityError, PoolFull};
pub use handle::Handle;
pub use iter::{Drain, IntoIter, Iter, IterMut};

use chunks::Chunks;
use generation::Generations;
use slot::{NO_SLOT, Slot};

/// Counters a pool keeps as plain fields, read with [`Pool::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    /// Live values now.
    pub len: usize,
    /// Slots now (live, free and retired).
    pub capacity: usize,
    /// The most values live at once.
    pub peak_live: usize,
    /// Values inserted over the pool's life.
    pub inserts: u64,
    /// Values removed over the pool's life (by `remove`, `retain`, `drain` or `clear`).
    pub removes: u64,
    /// Slots whose generation is exhausted and that will never be reused.
    pub retired: usize,
    /// Memory blocks: 1 for a fixed pool, the number of chunks for a growable one.
    pub blocks: usize,
}

/// A pool of `T`s in fixed slots, addressed by generational [`Handle<T>`]s.
///
/// See the [module documentation](self) for when to use it and how it works.
///
/// # Variance
///
/// Covariant in `T`, like `Vec<T>`: it owns its values, so a `Pool<&'static str>` can be used as a
/// `Pool<&'a str>`.
pub struct Pool<T> {
    chunks: Chunks<T>,
    /// Head of the free list (`NO_SLOT` = empty).
    free_head: u32,
    /// Slots `high_water..capacity` were never used and are not on the free list.
    high_water: u32,
    len: u32,
    generations: Generations,
    peak_live: u32,
    /// Values inserted over the pool's life; removals are `inserts - len`, so the hot path keeps
    /// one counter instead of two.
    inserts: u64,
    retired: u32,
    drop_report: Option<fn(&PoolStats)>,
}

/// Converts a requested slot count to `u32`, or says why not.
fn slot_count(requested: usize) -> Result<u32, PoolCapacityError> {
    u32::try_from(requested)
        .ok()
        .filter(|&n| n as usize <= MAX_CAPACITY)
        .ok_or(PoolCapacityError::TooManySlots {
            requested,
            max: MAX_CAPACITY,
        })
}

impl<T> Pool<T> {
    /// A pool of exactly `capacity` slots, allocated now and never reallocated.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_CAPACITY`] or the memory cannot be allocated; see
    /// [`try_with_capacity`](Self::try_with_capacity).
    pub fn with_capacity(capacity: usize) -> Self {
        Self::try_with_capacity(capacity).unwrap_or_else(|e| panic!("Pool::with_capacity: {e}"))
    }

    /// A pool of exactly `capacity` slots, or an error if too many or out of memory.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, PoolCapacityError> {
        Self::build(capacity, None, None)
    }

    /// A pool of `capacity` slots in which each slot can hold at most `budget` values over its
    /// life (clamped to at least 1 and at most 2^30, or 2^23 in debug builds) before it retires.
    ///
    /// Real pools use the whole budget ([`with_capacity`](Self::with_capacity)); this exists to
    /// test what happens when generations run out without 2^30 reuses first.
    ///
    /// ```
    /// use arena_core::pool::Pool;
    /// let mut pool = Pool::with_capacity_and_generation_budget(1, 2);
    /// let a = pool.insert('a');
    /// pool.remove(a);
    /// let b = pool.insert('b'); // the slot's last generation
    /// pool.remove(b);           // the slot retires instead of wrapping
    /// assert!(pool.try_insert('c').is_err());
    /// assert_eq!(pool.stats().retired, 1);
    /// ```
    ///
    /// # Panics
    /// As [`with_capacity`](Self::with_capacity).
    pub fn with_capacity_and_generation_budget(capacity: usize, budget: u32) -> Self {
        Self::build(capacity, None, Some(budget))
            .unwrap_or_else(|e| panic!("Pool::with_capacity_and_generation_budget: {e}"))
    }

    /// A pool that starts with one chunk of `chunk_capacity` slots (rounded up to a power of two)
    /// and adds another chunk of the same size whenever it is full. Chunks are never moved, so
    /// addresses stay stable; lookups into the first chunk are as fast as in a fixed pool, later
    /// chunks cost one more indirection.
    ///
    /// # Panics
    /// If the chunk size exceeds 2^31 slots or the memory cannot be allocated; see
    /// [`try_growable`](Self::try_growable).
    pub fn growable(chunk_capacity: usize) -> Self {
        Self::try_growable(chunk_capacity).unwrap_or_else(|e| panic!("Pool::growable: {e}"))
    }

    /// As [`growable`](Self::growable), returning an error instead of panicking.
    pub fn try_growable(chunk_capacity: usize) -> Result<Self, PoolCapacityError> {
        let chunk = chunk_capacity
            .max(1)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX);
        let too_many = PoolCapacityError::TooManySlots {
            requested: chunk_capacity,
            max: 1 << 31,
        };
        if chunk > 1 << 31 {
            return Err(too_many);
        }
        Self::build(chunk, Some(chunk.trailing_zeros()), None)
    }

    fn build(
        capacity: usize,
        shift: Option<u32>,
        budget: Option<u32>,
    ) -> Result<Self, PoolCapacityError> {
        let count = slot_count(capacity)?;
        let generations = Generations::for_new_pool(budget);
        let chunks = match shift {
            None => Chunks::fixed(count, generations.first()),
            Some(shift) => Chunks::growable(shift, generations.first()),
        }
        .ok_or(PoolCapacityError::OutOfMemory {
            requested: capacity,
        })?;
        Ok(Self::from_parts(chunks, generations))
    }

    fn from_parts(chunks: Chunks<T>, generations: Generations) -> Self {
        Pool {
            chunks,
            free_head: NO_SLOT,
            high_water: 0,
            len: 0,
            generations,
            peak_live: 0,
            inserts: 0,
            retired: 0,
            drop_report: None,
        }
    }

    /// The number of live values. O(1).
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no value is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of slots (for a growable pool, the slots allocated so far).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.chunks.capacity() as usize
    }

    /// Whether the pool grows by chunks when full.
    pub fn is_growable(&self) -> bool {
        self.chunks.chunk_len().is_some()
    }

    /// The pool's counters.
    pub fn stats(&self) -> PoolStats {
        PoolStats {
            len: self.len(),
            capacity: self.capacity(),
            peak_live: self.peak_live as usize,
            inserts: self.inserts,
            removes: self.inserts - u64::from(self.len),
            retired: self.retired as usize,
            blocks: self.chunks.blocks(),
        }
    }

    /// Calls `report` with the pool's final [`PoolStats`] when it is dropped, e.g. to log how many
    /// values were still live (a leak report in debug builds):
    ///
    /// ```
    /// use arena_core::pool::{Pool, PoolStats};
    /// fn report(stats: &PoolStats) {
    ///     if cfg!(debug_assertions) && stats.len > 0 {
    ///         eprintln!("bullet pool dropped with {} bullets live", stats.len);
    ///     }
    /// }
    /// let mut pool = Pool::with_capacity(8);
    /// pool.set_drop_report(report);
    /// pool.insert(1u8);
    /// ```
    pub fn set_drop_report(&mut self, report: fn(&PoolStats)) {
        self.drop_report = Some(report);
    }

    /// The index of the slot the next insert would use, growing the pool if needed, or `None` if
    /// full. Changes nothing but the capacity.
    #[inline(always)]
    fn next_slot(&mut self) -> Option<u32> {
        if self.free_head != NO_SLOT {
            Some(self.free_head)
        } else if self.high_water < self.chunks.capacity() {
            Some(self.high_water)
        } else {
            self.grow_for_insert()
        }
    }

    #[cold]
    fn grow_for_insert(&mut self) -> Option<u32> {
        self.chunks
            .grow(self.generations.first())
            .then_some(self.high_water)
    }

    /// Puts the value `f` builds from its handle into slot `index`, which [`next_slot`]
    /// returned. If `f` panics, nothing has changed.
    ///
    /// [`next_slot`]: Self::next_slot
    #[inline(always)]
    fn fill(&mut self, index: u32, f: impl FnOnce(Handle<T>) -> T) -> Handle<T> {
        let free_head = self.free_head;
        let slot = self
            .chunks
            .get_mut(index)
            .expect("next_slot returns a slot index");
        let generation = Generations::occupy(slot.generation());
        let handle = Handle::new(index, generation);
        let value = f(handle);
        if index == free_head {
            self.free_head = slot.next_free().expect("the free-list head is vacant");
        } else {
            self.high_water += 1;
        }
        slot.occupy(value, generation.get());
        self.len += 1;
        self.inserts += 1;
        if self.len > self.peak_live {
            self.peak_live = self.len;
        }
        handle
    }

    /// Inserts `value` and returns its handle, or gives it back inside [`PoolFull`] if every slot
    /// is in use (and the pool cannot grow). O(1).
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<Handle<T>, PoolFull<T>> {
        let index = self.free_head;
        match self.chunks.get_mut_in_first(index) {
            Some(slot) => {
                let (generation, next) = slot.occupy_vacant(value);
                Ok(self.popped_free_head(index, generation, next))
            }
            None => self.try_insert_slow(value),
        }
    }

    /// The bookkeeping after the inserts' fast path put a value into the free-list head `index`
    /// (in block 0, every slot of a fixed pool). The fast path is kept small (one compare for the
    /// index, one vacancy check, no growth or panic code, the value moved once) so that `insert`
    /// inlines into callers' loops; everything else (never-used slots, later chunks, growth, a
    /// full pool) is in the out-of-line slow paths.
    #[inline(always)]
    fn popped_free_head(&mut self, index: u32, generation: NonZeroU32, next: u32) -> Handle<T> {
        self.free_head = next;
        self.len += 1;
        self.inserts += 1;
        if self.len > self.peak_live {
            self.peak_live = self.len;
        }
        Handle::new(index, generation)
    }

    #[inline(never)]
    fn try_insert_slow(&mut self, value: T) -> Result<Handle<T>, PoolFull<T>> {
        match self.next_slot() {
            Some(index) => Ok(self.fill(index, |_| value)),
            None => Err(PoolFull::new(value, self.capacity())),
        }
    }

    /// The slow path of [`insert`](Self::insert): claims a vacant slot that is not the block-0
    /// free-list head (a never-used slot, a later chunk's, after growing), with the bookkeeping
    /// of a filled slot already done, or panics if the pool is full. The caller moves the value
    /// in at once (nothing can fail in between): the value is never passed to this out-of-line
    /// function, so the inlined `insert` keeps it out of memory LLVM must keep addressable.
    #[inline(never)]
    #[track_caller]
    fn claim_slow(&mut self) -> (u32, &mut Slot<T>) {
        let Some(index) = self.next_slot() else {
            self.full_panic()
        };
        if index == self.free_head {
            let head = self
                .chunks
                .get(index)
                .expect("next_slot returns a slot index");
            self.free_head = head.next_free().expect("the free-list head is vacant");
        } else {
            self.high_water += 1;
        }
        self.len += 1;
        self.inserts += 1;
        if self.len > self.peak_live {
            self.peak_live = self.len;
        }
        let slot = self
            .chunks
            .get_mut(index)
            .expect("next_slot returns a slot index");
        (index, slot)
    }

    /// Inserts `value` and returns its handle. O(1).
    ///
    /// # Panics
    /// If the pool is full, with a message naming its capacity; see
    /// [`try_insert`](Self::try_insert).
    #[inline(always)]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> Handle<T> {
        let index = self.free_head;
        match self.chunks.get_mut_in_first(index) {
            Some(slot) => {
                let (generation, next) = slot.occupy_vacant(value);
                self.popped_free_head(index, generation, next)
            }
            None => {
                let (index, slot) = self.claim_slow();
                let (generation, _) = slot.occupy_vacant(value);
                Handle::new(index, generation)
            }
        }
    }

    /// Inserts the value `f` builds from its own handle (for objects that need to know their own
    /// handle), and returns the handle. If `f` panics, the pool is unchanged.
    ///
    /// ```
    /// use arena_core::pool::{Handle, Pool};
    /// struct Enemy { me: Handle<Enemy>, hp: u32 }
    /// let mut enemies = Pool::with_capacity(4);
    /// let h = enemies.insert_with(|me| Enemy { me, hp: 10 });
    /// assert_eq!(enemies[h].me, h);
    /// ```
    ///
    /// # Panics
    /// If the pool is full (before calling `f`); see [`try_insert_with`](Self::try_insert_with).
    #[track_caller]
    pub fn insert_with(&mut self, f: impl FnOnce(Handle<T>) -> T) -> Handle<T> {
        match self.next_slot() {
            Some(index) => self.fill(index, f),
            None => self.full_panic(),
        }
    }

    /// As [`insert_with`](Self::insert_with), but returns `None` without calling `f` if the pool
    /// is full.
    pub fn try_insert_with(&mut self, f: impl FnOnce(Handle<T>) -> T) -> Option<Handle<T>> {
        let index = self.next_slot()?;
        Some(self.fill(index, f))
    }

    #[cold]
    #[track_caller]
    fn full_panic(&self) -> ! {
        panic!(
            "Pool::insert on a full pool: all {} slots are in use (or retired); use try_insert to \
             get the value back, or a larger or growable pool",
            self.capacity()
        )
    }

    /// The value `handle` points to, or `None` if it was removed. O(1): a bounds check and a
    /// generation compare.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    pub fn get(&self, handle: Handle<T>) -> Option<&T> {
        // Block 0 (every slot of a fixed pool) inline; later chunks and out-of-range indexes out
        // of line, so the common path is one compare and one add, as in a `Vec`.
        let Some(slot) = self.chunks.get_in_first(handle.index()) else {
            return self.get_beyond_first(handle);
        };
        if let Some(value) = slot.get(handle.generation()) {
            return Some(value);
        }
        self.miss(handle);
        None
    }

    /// [`get`](Self::get) for an index past block 0.
    #[inline(never)]
    #[track_caller]
    fn get_beyond_first(&self, handle: Handle<T>) -> Option<&T> {
        if let Some(slot) = self.chunks.get(handle.index())
            && let Some(value) = slot.get(handle.generation())
        {
            return Some(value);
        }
        self.miss(handle);
        None
    }

    /// The value `handle` points to, mutably, or `None` if it was removed. O(1).
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<&mut T> {
        let generation = self.generations;
        if let Some(slot) = self.chunks.get_mut(handle.index())
            && let Some(value) = slot.get_mut(handle.generation())
        {
            return Some(value);
        }
        generation.check_foreign(handle);
        None
    }

    /// Whether `handle` points to a live value.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    pub fn contains(&self, handle: Handle<T>) -> bool {
        self.get(handle).is_some()
    }

    /// A lookup failed: the handle is stale, or (caught here) from another tagged pool.
    #[inline]
    fn miss(&self, handle: Handle<T>) {
        self.generations.check_foreign(handle);
    }

    /// Removes and returns the value `handle` points to, or `None` if it was already removed
    /// (a double free does nothing). O(1). The slot goes to the front of the free list, or
    /// retires if its generations are exhausted.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        let index = handle.index();
        let generation = handle.generation().get();
        // Block 0 inline, as in `get`; later chunks out of line.
        let Some(slot) = self.chunks.get_mut_in_first(index) else {
            return self.remove_beyond_first(handle);
        };
        if slot.generation() != generation {
            self.remove_miss(handle);
            return None;
        }
        let Some(vacant) = self.generations.vacate(generation) else {
            return Some(self.remove_retiring(index));
        };
        let value = slot.vacate(vacant, self.free_head);
        self.free_head = index;
        self.len -= 1;
        Some(value)
    }

    /// [`remove`](Self::remove) for an index past block 0.
    #[inline(never)]
    #[track_caller]
    fn remove_beyond_first(&mut self, handle: Handle<T>) -> Option<T> {
        let index = handle.index();
        match self.chunks.get(index) {
            Some(slot) if slot.generation() == handle.generation().get() => {
                Some(self.remove_at(index))
            }
            _ => {
                self.miss(handle);
                None
            }
        }
    }

    /// `remove` of the last value a slot can hold (once per 2^30 uses): out of line, so that
    /// `remove` inlines into callers' loops.
    #[cold]
    #[inline(never)]
    fn remove_retiring(&mut self, index: u32) -> T {
        self.remove_at(index)
    }

    /// `remove` found no live value: kept out of line so `remove` inlines into callers' loops.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn remove_miss(&self, handle: Handle<T>) {
        self.miss(handle);
    }

    /// Removes the value in occupied slot `index`.
    #[inline]
    fn remove_at(&mut self, index: u32) -> T {
        let free_head = self.free_head;
        let generations = self.generations;
        let slot = self
            .chunks
            .get_mut(index)
            .expect("remove_at on a slot index");
        let value = match generations.vacate(slot.generation()) {
            Some(vacant) => {
                let value = slot.vacate(vacant, free_head);
                self.free_head = index;
                value
            }
            None => {
                let value = slot.vacate(generations.retired(), NO_SLOT);
                self.retired += 1;
                value
            }
        };
        self.len -= 1;
        value
    }

    /// Mutable references to the values of `N` distinct handles at once, or `None` if any handle
    /// is stale or two handles are equal. O(N): each slot is marked while checking, so a repeat
    /// fails its generation compare.
    ///
    /// ```
    /// use arena_core::pool::Pool;
    /// let mut pool = Pool::with_capacity(4);
    /// let (a, b) = (pool.insert(1), pool.insert(2));
    /// let [x, y] = pool.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((pool[a], pool[b]), (2, 1));
    /// assert!(pool.get_disjoint_mut([a, a]).is_none());
    /// ```
    ///
    /// # Panics
    /// In debug builds, if a handle was made by a different pool.
    pub fn get_disjoint_mut<const N: usize>(
        &mut self,
        handles: [Handle<T>; N],
    ) -> Option<[&mut T; N]> {
        let mut slots = [core::ptr::null_mut::<Slot<T>>(); N];
        let mut claimed = 0;
        for (i, handle) in handles.iter().enumerate() {
            let Some(slot) = self.chunks.ptr(handle.index()) else {
                break;
            };
            // SAFETY: `ptr` gives a pointer to an initialized slot of this pool, which we borrow
            // mutably; no reference to any slot exists during this loop.
            if unsafe { Slot::generation_raw(slot) } != handle.generation().get() {
                break;
            }
            // SAFETY: as above; every claimed slot is flipped back in the loop below.
            unsafe { Slot::flip_raw(slot) };
            slots[i] = slot;
            claimed += 1;
        }
        for &slot in &slots[..claimed] {
            // SAFETY: flipping back the slots claimed above, still unreferenced.
            unsafe { Slot::flip_raw(slot) };
        }
        if claimed < N {
            self.miss(handles[claimed]);
            return None;
        }
        // SAFETY: every pointer is to a distinct (a repeat would have failed the compare after
        // the flip) occupied slot (its generation equals an odd handle generation) of this pool,
        // which stays mutably borrowed for the lifetime of the references.
        Some(slots.map(|slot| unsafe { &mut *Slot::value_raw(slot) }))
    }

    /// Live values with their handles, in slot order. Free slots are skipped by testing their
    /// generation; slots above the highest one ever used are not visited.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter::new(&self.chunks, self.high_water, self.len as usize)
    }

    /// Live values, mutably, with their handles, in slot order.
    pub fn iter_mut(&mut self) -> IterMut<'_, T> {
        IterMut::new(&mut self.chunks, self.high_water, self.len as usize)
    }

    /// The live values, in slot order.
    pub fn values(&self) -> impl Iterator<Item = &T> + '_ {
        self.iter().map(|(_, value)| value)
    }

    /// The live values mutably, in slot order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.iter_mut().map(|(_, value)| value)
    }

    /// Keeps only the values for which `keep` returns `true`; the others are removed (and
    /// dropped) as by [`remove`](Self::remove).
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, &mut T) -> bool) {
        let mut seen = 0;
        let live = self.len;
        let mut index = 0;
        while seen < live && index < self.high_water {
            let slot = self.chunks.get_mut(index).expect("index below high water");
            if let Some((generation, value)) = slot.occupied_mut() {
                seen += 1;
                let handle = Handle::new(index, Generations::occupy(generation));
                if !keep(handle, value) {
                    drop(self.remove_at(index));
                }
            }
            index += 1;
        }
    }

    /// Removes every value, yielding each with its handle. Values not consumed are removed when
    /// the iterator is dropped. The handles are stale afterwards, as after `remove`.
    pub fn drain(&mut self) -> Drain<'_, T> {
        Drain::new(self)
    }

    /// Removes (and drops) every value. Their handles become stale; slots keep their
    /// generations, so old handles stay rejected.
    pub fn clear(&mut self) {
        self.retain(|_, _| false);
    }

    /// The next occupied slot at or after `*index`, removed: `(handle, value)`. Used by the
    /// draining iterators.
    fn take_next(&mut self, index: &mut u32) -> Option<(Handle<T>, T)> {
        while self.len > 0 && *index < self.high_water {
            let at = *index;
            *index += 1;
            let slot = self.chunks.get(at).expect("index below high water");
            if slot.is_occupied() {
                let handle = Handle::new(at, Generations::occupy(slot.generation()));
                return Some((handle, self.remove_at(at)));
            }
        }
        None
    }
}

impl<T> Drop for Pool<T> {
    fn drop(&mut self) {
        if let Some(report) = self.drop_report {
            report(&self.stats());
        }
        if core::mem::needs_drop::<T>() {
            /// Goes on clearing while unwinding from a value's panicking drop, so the values
            /// after it are still dropped (as `Vec` does); a second panic aborts, as there.
            struct ClearRest<'p, T>(&'p mut Pool<T>);
            impl<T> Drop for ClearRest<'_, T> {
                fn drop(&mut self) {
                    self.0.clear();
                }
            }
            let rest = ClearRest(self);
            rest.0.clear();
            core::mem::forget(rest);
        }
    }
}

/// A copy with the same slots, generations, free list and counters: every handle of `self` is
/// valid in the clone and the next inserts return the same handles in both (a snapshot for
/// rollback). The clone shares the original's debug tag.
impl<T: Clone> Clone for Pool<T> {
    fn clone(&self) -> Self {
        let chunks = Chunks::with_layout(
            self.chunks.chunk_len(),
            self.chunks.capacity(),
            self.generations.first(),
        );
        let chunks = chunks
            .unwrap_or_else(|| panic!("Pool::clone: out of memory for {} slots", self.capacity()));
        let mut copy = Self::from_parts(chunks, self.generations);
        for index in 0..self.high_water {
            let from = self.chunks.get(index).expect("index below high water");
            let to = copy.chunks.get_mut(index).expect("same capacity");
            match from.content() {
                slot::Content::Occupied(value) => {
                    to.occupy(value.clone(), from.generation());
                    // Counted as it goes, so a panicking `clone` leaves a pool that drops what
                    // was cloned so far.
                    copy.len += 1;
                    copy.high_water = index + 1;
                }
                slot::Content::Vacant(next) => {
                    *to = Slot::vacant(from.generation());
                    to.set_next_free(next);
                }
            }
        }
        copy.high_water = self.high_water;
        copy.free_head = self.free_head;
        copy.peak_live = self.peak_live;
        copy.inserts = self.inserts;
        copy.retired = self.retired;
        copy
    }
}

/// Panics if `handle` is stale, with a message saying so.
impl<T> Index<Handle<T>> for Pool<T> {
    type Output = T;

    #[track_caller]
    fn index(&self, handle: Handle<T>) -> &T {
        match self.get(handle) {
            Some(value) => value,
            None => panic!("{handle:?} is stale: its value was removed from this pool"),
        }
    }
}

/// Panics if `handle` is stale, with a message saying so.
impl<T> IndexMut<Handle<T>> for Pool<T> {
    #[track_caller]
    fn index_mut(&mut self, handle: Handle<T>) -> &mut T {
        match self.get_mut(handle) {
            Some(value) => value,
            None => panic!("{handle:?} is stale: its value was removed from this pool"),
        }
    }
}

/// Prints the live values as a map from handle to value.
impl<T: fmt::Debug> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a, T> IntoIterator for &'a Pool<T> {
    type Item = (Handle<T>, &'a T);
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Pool<T> {
    type Item = (Handle<T>, &'a mut T);
    type IntoIter = IterMut<'a, T>;

    fn into_iter(self) -> IterMut<'a, T> {
        self.iter_mut()
    }
}

impl<T> IntoIterator for Pool<T> {
    type Item = (Handle<T>, T);
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        IntoIter::new(self)
    }
}
