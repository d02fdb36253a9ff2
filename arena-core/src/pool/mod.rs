//! Typed pools: [`Pool<T>`] with generational [`Handle<T>`]s.
//!
//! A pool allocator, done with handles instead of pointers: fixed-size slots, a free list
//! threaded through the free slots themselves, O(1) insert, remove and lookup, no fragmentation.
//! A [`Handle<T>`] is an index plus the slot's generation, so a handle to a value that was removed
//! (its slot freed, or freed and reused) is simply rejected: a double-free cycle and every
//! stale-pointer bug become a `None`.
//!
//! **Pick it** for many objects of one type with independent lifetimes (bullets, particles,
//! enemies, network packets) when you want to refer to them by a small `Copy` key that survives
//! their death safely, and want their addresses to stay put. Capacity is fixed at construction
//! ([`Pool::with_capacity`]); [`Pool::growable`] adds fixed-size chunks instead of reallocating
//! (on 64-bit Unix, one after the other in a reserved address range, so lookups stay as fast as
//! a fixed pool's), and [`Pool::new`] does the same with 4 KiB chunks, allocating nothing before
//! the first insert.
//!
//! **Don't pick it** for values that all die together (a frame arena frees them in one step), for
//! values of many sizes (a general heap), or when you mostly iterate and rarely look up (a dense
//! `Vec` iterates without skipping holes).
//!
//! ```
//! use arena_kit::Pool;
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
//! - **One slot map** (`slot_map.rs`) under [`Pool`] (payload: the value) and
//!   [`SoaPool`](crate::soa::SoaPool) (payload: the value's row): its insert, remove and lookup
//!   are the only code that touches generations, the debug tag, the free list and the budget,
//!   so both containers give the same guarantees.
//! - **Budgets** ([`Budgeted`](crate::tags::Budgeted)): counted as live values ×
//!   `size_of::<T>()`, checked on the out-of-line insert path only. The inlined path takes a
//!   block-0 free-list head only while reusing any free slot keeps usage within the budget;
//!   otherwise every insert goes out of line, so the hot path pays nothing for a budget.
//! - **Slots**: a `union` of the value and the next-free index, plus a `u32`
//!   generation that is odd while the slot holds a value (slotmap's layout). A 64-byte value takes
//!   a 72-byte slot.
//! - **Handles**: `u32` index + `NonZeroU32` generation = 8 bytes; the generation is never zero
//!   (occupied generations are odd), which gives `Option<Handle<T>>` its niche.
//!   [`Handle::to_bits`] packs one into a `u64` for scripts and network messages (the same layout
//!   in every build profile), [`Handle::from_bits`] unpacks it, and [`Handle::null`] is found in
//!   no pool.
//! - **4-byte handles**: `Pool<T, Handle32<T>>` hands out [`Handle32<T>`]s (a 20-bit index and a
//!   12-bit generation in one `NonZeroU32`), for data that stores handles by the million. The
//!   same slot map serves both handle types (the sealed [`PoolHandle`] trait says how many bits
//!   each part gets); a `Handle32` pool has at most 2^20 - 1 slots, 2^11 values per slot over its
//!   life, and no debug pool tag. See [`Handle32`].
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
//!   A handle without a tag ([`Handle::from_bits`]) is taken by index and generation, on the
//!   miss path only, so hits cost the same.
//! - **Free list**: LIFO through the free slots, as in a classic pool allocator. Slots that were never used are
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
mod handle32;
mod iter;
pub(crate) mod key;
pub mod secondary;
#[cfg(feature = "serde")]
mod secondary_serde;
#[cfg(feature = "serde")]
pub(crate) mod serde;
mod slot;
pub(crate) mod slot_map;
#[cfg(feature = "std")]
pub mod sparse_secondary;

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

#[cfg(feature = "serde")]
pub use self::serde::{DEFAULT_MAX_BYTES, PoolDecodeError, PoolSeed};
pub use chunks::MAX_CAPACITY;
pub use error::{PoolCapacityError, PoolFull, PoolReserveError};
pub use handle::Handle;
pub use handle32::Handle32;
pub use iter::{Drain, IntoIter, IntoValues, Iter, IterMut, Keys, Values, ValuesMut};
pub use key::PoolHandle;
pub use secondary::{InsertRefused, SecondaryPool};
#[cfg(feature = "serde")]
pub use secondary_serde::{SecondaryDecodeError, SecondaryPoolSeed};
#[cfg(feature = "std")]
pub use sparse_secondary::SparseSecondaryPool;

use crate::or_panic::OrPanic;
use slot::Slot;
use slot_map::SlotMap;

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

/// A pool of `T`s in fixed slots, addressed by generational handles: [`Handle<T>`] (8 bytes, the
/// default `H`) or [`Handle32<T>`] (4 bytes; at most about a million slots and 2048 values per
/// slot over its life: see its page).
///
/// See the [module documentation](self) for when to use it and how it works. The constructors
/// of `Pool<T>` ([`new`](Self::new), [`with_capacity`](Self::with_capacity),
/// [`growable`](Self::growable)) have `_key` forms for any handle type:
/// [`with_key`](Self::with_key), [`with_capacity_and_key`](Self::with_capacity_and_key),
/// [`growable_with_key`](Self::growable_with_key) (as in slotmap).
///
/// ```
/// use arena_kit::{Handle, Pool};
///
/// struct Bullet { x: f32, vx: f32 }
///
/// let mut bullets = Pool::with_capacity(256);
/// let fired: Vec<Handle<Bullet>> =
///     (0..3).map(|i| bullets.insert(Bullet { x: 0.0, vx: i as f32 })).collect();
/// for (_, bullet) in bullets.iter_mut() {
///     bullet.x += bullet.vx;
/// }
/// bullets.remove(fired[0]); // it hit something
/// assert_eq!(bullets.len(), 2);
/// assert!(bullets.get(fired[0]).is_none()); // its handle is stale now
/// assert_eq!(bullets[fired[2]].x, 2.0); // the others did not move
/// ```
///
/// # Variance
///
/// Covariant in `T`, like `Vec<T>`: it owns its values, so a `Pool<&'static str>` can be used as a
/// `Pool<&'a str>`. Covariant in `H` (it stores no handle).
pub struct Pool<T, H = Handle<T>> {
    slots: SlotMap<T>,
    drop_report: Option<fn(&PoolStats)>,
    _handle: PhantomData<fn() -> H>,
}

// A 64-byte value takes a 72-byte slot: the value (or free-list link) and a `u32` generation.
const _: () = assert!(size_of::<Slot<[u64; 8]>>() == 72);

/// The bytes of one slot holding a `T` (the value or free-list link, and the generation): what a
/// pool's usage reports as reserved per slot, and what the serde reader bounds allocation by.
pub(crate) const fn slot_bytes<T>() -> usize {
    size_of::<Slot<T>>()
}

/// The bytes of slots in one chunk of a [`Pool::new`] pool: as many slots as fit, rounded down to
/// a power of two, at least [`NEW_CHUNK_MIN`] (a slot is at least 8 bytes, so at most 512).
const NEW_CHUNK_BYTES: usize = 4096;
/// The fewest slots in a chunk of a [`Pool::new`] pool (for values over 256 bytes).
const NEW_CHUNK_MIN: usize = 16;

/// The chunk size of [`Pool::new`] for `T`, as a power-of-two shift.
const fn new_chunk_shift<T>() -> u32 {
    let fit = NEW_CHUNK_BYTES / slot_bytes::<T>();
    let slots = if fit < NEW_CHUNK_MIN {
        NEW_CHUNK_MIN
    } else {
        fit
    };
    usize::BITS - 1 - slots.leading_zeros()
}

impl<T> Pool<T> {
    /// An empty growable pool that allocates nothing until the first insert (or
    /// [`reserve`](Self::reserve)); then it allocates chunks of as many slots as fit in 4 KiB
    /// (a power of two, from 16 slots for values over 256 bytes to 512 for values of at most 4
    /// bytes), as [`growable`](Self::growable) does. The same as [`Pool::default`].
    ///
    /// ```
    /// use arena_kit::Pool;
    ///
    /// let mut names: Pool<&str> = Pool::new();
    /// assert_eq!((names.capacity(), names.stats().blocks), (0, 0)); // nothing allocated
    /// let ada = names.insert("Ada");
    /// assert_eq!(names.capacity(), 128); // one chunk: 128 slots of 24 bytes
    /// assert!(names.is_growable());
    /// assert_eq!(names[ada], "Ada");
    /// ```
    pub fn new() -> Self {
        Self::with_key()
    }

    /// A pool of exactly `capacity` slots, allocated now and never reallocated.
    ///
    /// # Panics
    /// If `capacity` exceeds [`MAX_CAPACITY`] or the memory cannot be allocated; see
    /// [`try_with_capacity`](Self::try_with_capacity).
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::try_with_capacity(capacity).or_panic("Pool::with_capacity: ")
    }

    /// A pool of exactly `capacity` slots, or an error if too many or out of memory.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, PoolCapacityError> {
        Self::try_with_capacity_and_key(capacity)
    }

    /// A pool of `capacity` slots in which each slot can hold at most `budget` values over its
    /// life (clamped to at least 1 and at most 2^30, or 2^23 in debug builds) before it retires.
    ///
    /// Real pools use the whole budget ([`with_capacity`](Self::with_capacity)); this exists to
    /// test what happens when generations run out without 2^30 reuses first.
    ///
    /// ```
    /// use arena_kit::Pool;
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
    #[track_caller]
    pub fn with_capacity_and_generation_budget(capacity: usize, budget: u32) -> Self {
        Self::build(capacity, None, Some(budget))
            .or_panic("Pool::with_capacity_and_generation_budget: ")
    }

    /// A pool that starts with one chunk of `chunk_capacity` slots (rounded up to a power of two)
    /// and adds another chunk of the same size whenever it is full. Chunks are never moved, so
    /// addresses stay stable.
    ///
    /// On 64-bit Unix the pool reserves address space for up to 16,384 chunks (at most 1 GiB of
    /// slots) when it takes its first chunk (no memory: the pages are committed as it grows),
    /// and every chunk lands right after the one before: all of it is looked up, inserted into
    /// and removed from as in a fixed pool. Past that range, and on other platforms (or under a
    /// finite `ulimit -v`, or when the process already holds 1,024 such ranges or 64 GiB of
    /// them), chunks come from the global allocator and lookups past the first chunk cost one
    /// more indirection. The committed pages count as the pool's
    /// memory under a [`TaggingAllocator`](crate::tags::TaggingAllocator), as chunks would.
    ///
    /// # Panics
    /// If the chunk size exceeds 2^31 slots or the memory cannot be allocated; see
    /// [`try_growable`](Self::try_growable).
    #[track_caller]
    pub fn growable(chunk_capacity: usize) -> Self {
        Self::try_growable(chunk_capacity).or_panic("Pool::growable: ")
    }

    /// As [`growable`](Self::growable), returning an error instead of panicking.
    pub fn try_growable(chunk_capacity: usize) -> Result<Self, PoolCapacityError> {
        Self::try_growable_with_key(chunk_capacity)
    }
}

impl<T, H: PoolHandle<T>> Pool<T, H> {
    /// [`Pool::new`] for any handle type: an empty growable pool that allocates nothing until
    /// the first insert, then chunks of as many slots as fit in 4 KiB.
    ///
    /// ```
    /// use arena_kit::pool::{Handle32, Pool};
    /// let mut names: Pool<&str, Handle32<&str>> = Pool::with_key();
    /// assert_eq!(names.capacity(), 0);
    /// let ada = names.insert("Ada");
    /// assert_eq!(names[ada], "Ada");
    /// ```
    pub fn with_key() -> Self {
        Self::from_slots(SlotMap::lazy::<H>(
            new_chunk_shift::<T>(),
            size_of::<T>(),
            "Pool",
        ))
    }

    /// [`Pool::with_capacity`] for any handle type: exactly `capacity` slots, allocated now.
    ///
    /// ```
    /// use arena_kit::pool::{Handle32, Pool};
    /// let pool: Pool<u32, Handle32<u32>> = Pool::with_capacity_and_key(100);
    /// assert_eq!(pool.capacity(), 100);
    /// ```
    ///
    /// # Panics
    /// If `capacity` is more than the handle type can index ([`MAX_CAPACITY`] for
    /// [`Handle`], [`Handle32::MAX_CAPACITY`] for [`Handle32`]) or the memory cannot be
    /// allocated; see [`try_with_capacity_and_key`](Self::try_with_capacity_and_key).
    #[track_caller]
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        Self::try_with_capacity_and_key(capacity).or_panic("Pool::with_capacity_and_key: ")
    }

    /// As [`with_capacity_and_key`](Self::with_capacity_and_key), returning an error if the
    /// handle type cannot index that many slots or out of memory.
    ///
    /// ```
    /// use arena_kit::pool::{Handle32, Pool, PoolCapacityError};
    /// let too_many = Pool::<u8, Handle32<u8>>::try_with_capacity_and_key(1 << 20);
    /// assert!(matches!(too_many, Err(PoolCapacityError::TooManySlots { max: 1_048_575, .. })));
    /// ```
    pub fn try_with_capacity_and_key(capacity: usize) -> Result<Self, PoolCapacityError> {
        Self::build(capacity, None, None)
    }

    /// [`Pool::growable`] for any handle type: chunks of `chunk_capacity` slots (rounded up to a
    /// power of two), added when full. A [`Handle32`] pool stops growing at
    /// [`Handle32::MAX_CAPACITY`] slots.
    ///
    /// # Panics
    /// If the chunk size is more than the handle type can index or the memory cannot be
    /// allocated; see [`try_growable_with_key`](Self::try_growable_with_key).
    #[track_caller]
    pub fn growable_with_key(chunk_capacity: usize) -> Self {
        Self::try_growable_with_key(chunk_capacity).or_panic("Pool::growable_with_key: ")
    }

    /// As [`growable_with_key`](Self::growable_with_key), returning an error instead of
    /// panicking.
    pub fn try_growable_with_key(chunk_capacity: usize) -> Result<Self, PoolCapacityError> {
        let shift = chunk_shift(chunk_capacity)?;
        Self::build(1 << shift, Some(shift), None)
    }

    fn build(
        capacity: usize,
        shift: Option<u32>,
        budget: Option<u32>,
    ) -> Result<Self, PoolCapacityError> {
        SlotMap::build::<H>(capacity, shift, budget, size_of::<T>(), "Pool").map(Self::from_slots)
    }

    fn from_slots(slots: SlotMap<T>) -> Self {
        Pool {
            slots,
            drop_report: None,
            _handle: PhantomData,
        }
    }

    /// The number of live values. O(1).
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len() as usize
    }

    /// Whether no value is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.len() == 0
    }

    /// The number of slots (for a growable pool, the slots allocated so far).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.capacity() as usize
    }

    /// Makes room for at least `additional` more values, so that that many inserts allocate
    /// nothing: free slots count, and a growable pool adds whole chunks for the rest (existing
    /// values do not move).
    ///
    /// ```
    /// use arena_kit::Pool;
    /// let mut pool: Pool<u64> = Pool::new();
    /// pool.reserve(300);
    /// assert_eq!(pool.capacity(), 512); // two chunks of 256 slots
    /// ```
    ///
    /// # Panics
    /// If the pool has a fixed capacity with fewer free slots, the slots would pass
    /// [`MAX_CAPACITY`], or out of memory; see [`try_reserve`](Self::try_reserve).
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        if let Err(e) = self.try_reserve(additional) {
            panic!("Pool::reserve: {e}");
        }
    }

    /// As [`reserve`](Self::reserve), returning an error instead of panicking; nothing changes
    /// on failure. A fixed-capacity pool succeeds if it has `additional` free slots.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), PoolReserveError> {
        self.slots.reserve(additional)
    }

    /// Frees what a growable pool allocated but never used: the chunks past the highest slot
    /// any value was ever in (for a [`new`](Self::new) pool with no insert yet, everything).
    /// Returns the number of slots freed; [`capacity`](Self::capacity) drops by as much.
    ///
    /// Slots that held a value keep their memory even when free: a slot's generation is what
    /// makes old handles to it stale, and it lives in the slot, so releasing the slot would let
    /// a later insert there hand out a generation an old handle still holds. A fixed-capacity
    /// pool frees nothing.
    ///
    /// ```
    /// use arena_kit::Pool;
    /// let mut pool: Pool<u64> = Pool::new();
    /// pool.reserve(1000);
    /// let first = pool.insert(1);
    /// assert_eq!(pool.shrink_to_fit(), 768); // three of four chunks never held a value
    /// assert_eq!(pool.capacity(), 256);
    /// pool.remove(first);
    /// assert_eq!(pool.shrink_to_fit(), 0); // slot 0 keeps its generation
    /// assert!(pool.get(first).is_none());
    /// ```
    pub fn shrink_to_fit(&mut self) -> usize {
        self.slots.shrink_to_fit() as usize
    }

    /// Whether the pool grows by chunks when full.
    pub fn is_growable(&self) -> bool {
        self.slots.chunk_len().is_some()
    }

    /// The pool's counters.
    pub fn stats(&self) -> PoolStats {
        self.slots.stats()
    }

    /// Calls `report` with the pool's final [`PoolStats`] when it is dropped, e.g. to log how many
    /// values were still live (a leak report in debug builds):
    ///
    /// ```
    /// use arena_kit::Pool;
    /// use arena_kit::pool::PoolStats;
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

    /// Inserts `value` and returns its handle, or gives it back inside [`PoolFull`] if every slot
    /// is in use (and the pool cannot grow) or a [`Budget`](crate::tags::Budget) with
    /// [`Policy::Fail`](crate::tags::Policy::Fail) refuses it
    /// ([`PoolFull::budget_exceeded`]). O(1); nothing changes on failure.
    ///
    /// # Panics
    /// Over a budget with [`Policy::Panic`](crate::tags::Policy::Panic).
    #[inline(always)]
    #[track_caller]
    pub fn try_insert(&mut self, value: T) -> Result<H, PoolFull<T>> {
        self.slots
            .try_insert(value)
            .map_err(|(value, refusal)| PoolFull::new(value, self.capacity(), refusal))
    }

    /// Inserts `value` and returns its handle. O(1).
    ///
    /// # Panics
    /// If the pool is full or over a `Fail` or `Panic` budget, with a message saying which; see
    /// [`try_insert`](Self::try_insert).
    #[inline(always)]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> H {
        self.slots.insert_or_panic(value)
    }

    /// Inserts the value `f` builds from its own handle (for objects that need to know their own
    /// handle), and returns the handle. If `f` panics, the pool is unchanged but for the
    /// generation of the handle `f` was given, which is spent: that handle never names a value,
    /// even if `f` kept it somewhere, and the next value in the slot gets another handle. (A
    /// slot with a generation budget counts it as one of its lives.)
    ///
    /// ```
    /// use arena_kit::{Handle, Pool};
    /// struct Enemy { me: Handle<Enemy>, hp: u32 }
    /// let mut enemies = Pool::with_capacity(4);
    /// let h = enemies.insert_with(|me| Enemy { me, hp: 10 });
    /// assert_eq!(enemies[h].me, h);
    /// ```
    ///
    /// # Panics
    /// If the pool is full or over a `Fail` or `Panic` budget (before calling `f`); see
    /// [`try_insert_with`](Self::try_insert_with).
    #[track_caller]
    pub fn insert_with(&mut self, f: impl FnOnce(H) -> T) -> H {
        let capacity = self.capacity();
        let mut claim = match self.slots.claim() {
            Ok(claim) => claim,
            Err(refusal) => refused("Pool", "insert_with", capacity, refusal),
        };
        let value = f(claim.issue_handle());
        claim.commit(value)
    }

    /// As [`insert_with`](Self::insert_with), but returns `None` without calling `f` if the pool
    /// is full or a `Fail` budget refuses the value. If `f` panics, its handle is spent, as in
    /// `insert_with`.
    ///
    /// # Panics
    /// Over a budget with [`Policy::Panic`](crate::tags::Policy::Panic).
    #[track_caller]
    pub fn try_insert_with(&mut self, f: impl FnOnce(H) -> T) -> Option<H> {
        let mut claim = self.slots.claim().ok()?;
        let value = f(claim.issue_handle());
        Some(claim.commit(value))
    }

    /// The value `handle` points to, or `None` if it was removed. O(1): a bounds check and a
    /// generation compare.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn get(&self, handle: H) -> Option<&T> {
        self.slots.get(handle)
    }

    /// The value `handle` points to, mutably, or `None` if it was removed. O(1).
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn get_mut(&mut self, handle: H) -> Option<&mut T> {
        self.slots.get_mut(handle)
    }

    /// Whether `handle` points to a live value.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn contains(&self, handle: H) -> bool {
        self.slots.get(handle).is_some()
    }

    /// Removes and returns the value `handle` points to, or `None` if it was already removed
    /// (a double free does nothing). O(1). The slot goes to the front of the free list, or
    /// retires if its generations are exhausted.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    #[track_caller]
    pub fn remove(&mut self, handle: H) -> Option<T> {
        self.slots.remove(handle)
    }

    /// Mutable references to the values of `N` distinct handles at once, or `None` if any handle
    /// is stale or two handles are equal. O(N): each slot is marked while checking, so a repeat
    /// fails its generation compare.
    ///
    /// ```
    /// use arena_kit::Pool;
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
    #[track_caller]
    pub fn get_disjoint_mut<const N: usize>(&mut self, handles: [H; N]) -> Option<[&mut T; N]> {
        self.slots.get_disjoint_mut(handles)
    }

    /// Live values with their handles, in slot order; from the back ([`Iterator::rev`],
    /// [`DoubleEndedIterator::next_back`]) in reverse slot order, and from both ends at once.
    /// Free slots are skipped by testing their generation; slots above the highest one ever used
    /// are not visited. The length is exact ([`ExactSizeIterator`]).
    ///
    /// ```
    /// use arena_kit::Pool;
    /// let mut pool = Pool::new();
    /// let [a, b, c] = ['a', 'b', 'c'].map(|v| pool.insert(v));
    /// pool.remove(b);
    /// let mut it = pool.iter();
    /// assert_eq!(it.len(), 2);
    /// assert_eq!(it.next_back(), Some((c, &'c')));
    /// assert_eq!(it.next(), Some((a, &'a')));
    /// assert_eq!(it.next(), None);
    /// ```
    pub fn iter(&self) -> Iter<'_, T, H> {
        Iter::new(self.slots.chunks(), self.slots.high_water(), self.len())
    }

    /// Live values, mutably, with their handles, in slot order (from either end, as
    /// [`iter`](Self::iter)).
    pub fn iter_mut(&mut self) -> IterMut<'_, T, H> {
        let (high_water, len) = (self.slots.high_water(), self.len());
        IterMut::new(self.slots.chunks_mut(), high_water, len)
    }

    /// The handles of the live values, in slot order (from either end, as
    /// [`iter`](Self::iter)).
    ///
    /// ```
    /// use arena_kit::Pool;
    /// let mut pool = Pool::new();
    /// let (a, b) = (pool.insert(1), pool.insert(2));
    /// assert_eq!(pool.keys().collect::<Vec<_>>(), [a, b]);
    /// assert_eq!(pool.keys().rev().collect::<Vec<_>>(), [b, a]);
    /// ```
    pub fn keys(&self) -> Keys<'_, T, H> {
        Keys::new(self.iter())
    }

    /// The live values, in slot order (from either end, as [`iter`](Self::iter)).
    pub fn values(&self) -> Values<'_, T, H> {
        Values::new(self.iter())
    }

    /// The live values mutably, in slot order (from either end, as [`iter`](Self::iter)).
    pub fn values_mut(&mut self) -> ValuesMut<'_, T, H> {
        ValuesMut::new(self.iter_mut())
    }

    /// The values, by value, in slot order (from either end); the pool is consumed, and values
    /// not taken are dropped with the iterator.
    ///
    /// ```
    /// use arena_kit::Pool;
    /// let pool: Pool<String> = ["x", "y", "z"].map(String::from).into_iter().collect();
    /// let mut values = pool.into_values();
    /// assert_eq!(values.next_back().as_deref(), Some("z"));
    /// assert_eq!(values.collect::<Vec<_>>(), ["x", "y"]);
    /// ```
    pub fn into_values(self) -> IntoValues<T, H> {
        IntoValues::new(self.into_iter())
    }

    /// Keeps only the values for which `keep` returns `true`; the others are removed (and
    /// dropped) as by [`remove`](Self::remove).
    pub fn retain(&mut self, keep: impl FnMut(H, &mut T) -> bool) {
        self.slots.retain(keep, drop);
    }

    /// Removes every value, yielding each with its handle, in slot order (or reversed, from the
    /// back). Values not consumed are removed when the iterator is dropped. The handles are
    /// stale afterwards, as after `remove`.
    pub fn drain(&mut self) -> Drain<'_, T, H> {
        Drain::new(self)
    }

    /// Removes (and drops) every value. Their handles become stale; slots keep their
    /// generations, so old handles stay rejected.
    pub fn clear(&mut self) {
        self.retain(|_, _| false);
    }
}

/// The budget is checked where the pool looks for a slot outside its inlined insert path (see
/// [`try_insert`](Pool::try_insert)); it counts live values × `size_of::<T>()`. Under
/// [`Policy::Fail`](crate::tags::Policy::Fail) `try_insert` returns a [`PoolFull`] whose
/// [`budget_exceeded`](PoolFull::budget_exceeded) is the [`BudgetExceeded`](crate::tags::BudgetExceeded),
/// handing the value back; `insert`, `insert_with` panic with its text; `try_insert_with` returns
/// `None`. A lifted `Warn` budget re-arms once removes bring usage back under.
impl<T, H: PoolHandle<T>> crate::tags::Budgeted for Pool<T, H> {
    fn budget(&self) -> Option<crate::tags::BudgetGate> {
        self.slots.budget()
    }

    fn set_budget(&mut self, gate: Option<crate::tags::BudgetGate>) {
        self.slots.set_budget(gate);
    }

    /// Inserts and removes are `Alloc`/`Free` of one slot (its address, the value's size).
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        self.slots.set_profiler_label(label);
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.slots.budget_stamp()
    }

    /// The chunks a growable pool takes from now on (a fixed pool's one block is taken when it
    /// is made, or at its first insert if it was made lazily).
    fn charge_pages_to(&mut self, tag: crate::tags::PageTag) {
        self.slots.charge_pages_to(tag);
    }
}

/// Panics for an insert that found no slot, saying why and what to do.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn refused(kind: &str, method: &str, capacity: usize, refusal: slot_map::Refusal) -> ! {
    match refusal {
        slot_map::Refusal::Full => panic!(
            "{kind}::{method} on a full pool: all {capacity} slots are in use (or retired); use the try_ \
             form to get the value back, or a larger or growable pool"
        ),
        slot_map::Refusal::OverBudget(e) => panic!("{kind}::{method}: {e}"),
    }
}

/// The chunk size of a growable pool asked for `chunk_capacity` slots, as a power-of-two shift.
pub(crate) fn chunk_shift(chunk_capacity: usize) -> Result<u32, PoolCapacityError> {
    let chunk = chunk_capacity
        .max(1)
        .checked_next_power_of_two()
        .unwrap_or(usize::MAX);
    if chunk > 1 << 31 {
        return Err(PoolCapacityError::TooManySlots {
            requested: chunk_capacity,
            max: 1 << 31,
        });
    }
    Ok(chunk.trailing_zeros())
}

/// [`Pool::new`] ([`Pool::with_key`]): an empty growable pool that allocates nothing yet.
impl<T, H: PoolHandle<T>> Default for Pool<T, H> {
    fn default() -> Self {
        Pool::with_key()
    }
}

/// Reports (see [`set_drop_report`](Pool::set_drop_report)), then drops the live values; if one's
/// drop panics, the values after it are still dropped (as `Vec` does).
impl<T, H> Drop for Pool<T, H> {
    fn drop(&mut self) {
        if let Some(report) = self.drop_report {
            report(&self.slots.stats());
        }
    }
}

/// A copy with the same slots, generations, free list, counters and budget: every handle of
/// `self` is valid in the clone and the next inserts return the same handles in both (a snapshot
/// for rollback). The clone shares the original's debug tag.
impl<T: Clone, H: PoolHandle<T>> Clone for Pool<T, H> {
    fn clone(&self) -> Self {
        Pool::from_slots(self.slots.clone_with(T::clone))
    }
}

/// A [`Pool::new`] pool holding the values, inserted in order (so the `n`th value is in slot
/// `n`).
///
/// ```
/// use arena_kit::Pool;
/// let pool: Pool<u32> = (1..=3).collect();
/// assert_eq!(pool.values().sum::<u32>(), 6);
/// ```
impl<T, H: PoolHandle<T>> FromIterator<T> for Pool<T, H> {
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let mut pool = Pool::with_key();
        pool.extend(values);
        pool
    }
}

/// Inserts each value as [`Pool::insert`] does (the handles are not returned: use
/// [`Pool::keys`], or `insert` in a loop).
///
/// # Panics
/// As [`insert`](Pool::insert): on a full fixed-capacity pool or over a `Fail` or `Panic`
/// budget; the values inserted before stay.
impl<T, H: PoolHandle<T>> Extend<T> for Pool<T, H> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.insert(value);
        }
    }
}

/// Two pools are equal when the same handles are live in both, with equal values. Capacity,
/// fixed or growable layout, free-list order, retired slots, counters and budgets do not count.
/// Handles are compared by index and generation counter, so pools built separately with the same
/// operations are equal in debug builds too (where each pool's handles also carry its tag).
///
/// ```
/// use arena_kit::Pool;
/// let mut a = Pool::with_capacity(8);
/// let mut b = Pool::new();
/// for pool in [&mut a, &mut b] {
///     let x = pool.insert('x');
///     pool.insert('y');
///     pool.remove(x);
/// }
/// assert_eq!(a, b);
/// b.insert('z');
/// assert_ne!(a, b);
/// ```
impl<T: PartialEq, H: PoolHandle<T>> PartialEq for Pool<T, H> {
    fn eq(&self, other: &Self) -> bool {
        // Both walk in slot order; handles compare by index and generation (not the debug tag).
        self.len() == other.len()
            && (self.iter().zip(other.iter())).all(|((h, v), (g, w))| h == g && v == w)
    }
}

impl<T: Eq, H: PoolHandle<T>> Eq for Pool<T, H> {}

/// Panics if `handle` is stale, with a message saying so.
impl<T, H: PoolHandle<T>> Index<H> for Pool<T, H> {
    type Output = T;

    #[track_caller]
    fn index(&self, handle: H) -> &T {
        match self.get(handle) {
            Some(value) => value,
            None => panic!("{handle:?} is stale: its value was removed from this pool"),
        }
    }
}

/// Panics if `handle` is stale, with a message saying so.
impl<T, H: PoolHandle<T>> IndexMut<H> for Pool<T, H> {
    #[track_caller]
    fn index_mut(&mut self, handle: H) -> &mut T {
        match self.get_mut(handle) {
            Some(value) => value,
            None => panic!("{handle:?} is stale: its value was removed from this pool"),
        }
    }
}

/// Prints the live values as a map from handle to value.
impl<T: fmt::Debug, H: PoolHandle<T>> fmt::Debug for Pool<T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a, T, H: PoolHandle<T>> IntoIterator for &'a Pool<T, H> {
    type Item = (H, &'a T);
    type IntoIter = Iter<'a, T, H>;

    fn into_iter(self) -> Iter<'a, T, H> {
        self.iter()
    }
}

impl<'a, T, H: PoolHandle<T>> IntoIterator for &'a mut Pool<T, H> {
    type Item = (H, &'a mut T);
    type IntoIter = IterMut<'a, T, H>;

    fn into_iter(self) -> IterMut<'a, T, H> {
        self.iter_mut()
    }
}

impl<T, H: PoolHandle<T>> IntoIterator for Pool<T, H> {
    type Item = (H, T);
    type IntoIter = IntoIter<T, H>;

    fn into_iter(self) -> IntoIter<T, H> {
        IntoIter::new(self)
    }
}
