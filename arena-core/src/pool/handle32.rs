//! [`Handle32<T>`]: a 4-byte generational key, for a [`Pool<T, Handle32<T>>`](super::Pool).
//!
//! Layout: one [`NonZeroU32`], the slot index in the high 20 bits and the generation in the low
//! 12. The generation is odd while its slot is occupied, so the whole is never zero and
//! `Option<Handle32<T>>` is 4 bytes too.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::num::NonZeroU32;

/// A 4-byte key to one value in a [`Pool<T, Handle32<T>>`](super::Pool): a 20-bit slot index and
/// a 12-bit generation. Half the size of [`Handle<T>`](super::Handle), for data that stores
/// handles by the million (an entity's links, a spatial grid's cells, a network snapshot).
///
/// What the smaller size costs, and how the pool stays safe with it:
/// - **A pool has at most [`MAX_CAPACITY`](Self::MAX_CAPACITY) slots** (2^20 - 1, just over a
///   million). Asking for more fails with a [`PoolCapacityError`](super::PoolCapacityError); a
///   growable pool stops growing there.
/// - **A slot holds at most [`LIVES_PER_SLOT`](Self::LIVES_PER_SLOT) values in its life**
///   (2^11 = 2048). Removing the last one *retires* the slot: it is never reused, so a stale
///   handle can never match a newer value (slotmap wraps its generations instead, and so can
///   alias after enough reuse). The pool's free list is LIFO, so a pool that churns a few values
///   retires slots one after another: over its life a pool of `n` slots holds at most `n` ×
///   2048 values. [`PoolStats::retired`](super::PoolStats::retired) counts the retired slots;
///   a growable pool adds chunks to replace them, up to its maximum.
/// - **No debug pool tag.** A [`Handle<T>`](super::Handle) pool made in a debug build stamps its
///   handles with a tag and panics when shown another pool's handle; 12 bits leave no room for
///   one. A handle from another pool of the same `T` is caught only when its index is outside
///   this pool's slots; inside them it is looked up like this pool's own (a miss, or another
///   value). Keep one `T` per pool, or use [`Handle<T>`](super::Handle) where pools of one type
///   coexist.
///
/// ```
/// use arena_kit::pool::{Handle32, Pool};
///
/// struct Particle { x: f32 }
///
/// let mut particles: Pool<Particle, Handle32<Particle>> = Pool::with_capacity_and_key(1024);
/// let spark = particles.insert(Particle { x: 1.0 });
/// particles.remove(spark);
/// let smoke = particles.insert(Particle { x: 2.0 }); // the same slot, the next generation
/// assert!(particles.get(spark).is_none());
/// assert_eq!(particles[smoke].x, 2.0);
/// assert_eq!(size_of::<Option<Handle32<Particle>>>(), 4);
/// assert_eq!(smoke.to_bits(), 3); // slot 0, generation 3
/// ```
///
/// # Variance
///
/// Covariant in `T` (`PhantomData<fn() -> T>`), `Send` and `Sync` whatever `T` is, like
/// [`Handle<T>`](super::Handle).
pub struct Handle32<T> {
    bits: NonZeroU32,
    _type: PhantomData<fn() -> T>,
}

impl<T> Handle32<T> {
    /// The most slots a pool of `Handle32`s can have: 2^20 - 1 (index 2^20 - 1 is
    /// [`Handle32::null`]'s).
    pub const MAX_CAPACITY: usize = Self::MAX_SLOTS as usize;

    /// The most values one slot of a `Handle32` pool holds in its life before it retires: 2^11.
    pub const LIVES_PER_SLOT: u32 = (Self::GENERATION_MASK >> 1) + 1;

    /// Bits of the generation.
    const GENERATION_BITS: u32 = 12;
    /// The generation's bits, as a mask.
    pub(crate) const GENERATION_MASK: u32 = (1 << Self::GENERATION_BITS) - 1;
    /// The index of [`Handle32::null`], one past the last slot a pool can have.
    pub(crate) const MAX_SLOTS: u32 = u32::MAX >> Self::GENERATION_BITS;

    /// Builds a handle from its parts. Crate-internal: pools hand handles out. The slot map passes
    /// only an index below [`MAX_SLOTS`](Self::MAX_SLOTS) and an odd 12-bit generation.
    #[inline(always)]
    pub(crate) const fn new(index: u32, generation: NonZeroU32) -> Self {
        debug_assert!(index <= Self::MAX_SLOTS && generation.get() <= Self::GENERATION_MASK);
        // `| 1` keeps a generation odd (the slot map's always are; anything else would name a
        // vacant slot) and lets the compiler see the non-zero.
        match NonZeroU32::new(index << Self::GENERATION_BITS | generation.get() | 1) {
            Some(bits) => Handle32 {
                bits,
                _type: PhantomData,
            },
            None => unreachable!(),
        }
    }

    /// The slot index this handle points at (below [`MAX_CAPACITY`](Self::MAX_CAPACITY), or
    /// 2^20 - 1 for [`Handle32::null`]).
    #[inline(always)]
    pub const fn index(self) -> u32 {
        self.bits.get() >> Self::GENERATION_BITS
    }

    /// The generation stored in the handle: odd and below 2^12.
    #[inline(always)]
    pub const fn generation(self) -> NonZeroU32 {
        // Odd (every constructor makes it so), hence non-zero.
        match NonZeroU32::new(self.bits.get() & Self::GENERATION_MASK | 1) {
            Some(generation) => generation,
            None => unreachable!(),
        }
    }

    /// The handle that points at nothing: its index, 2^20 - 1, is past the last slot any pool of
    /// `Handle32`s has, so every lookup with it misses. Also [`Handle32::default`].
    ///
    /// ```
    /// use arena_kit::pool::{Handle32, Pool};
    /// let mut pool: Pool<u8, Handle32<u8>> = Pool::with_key();
    /// pool.insert(7);
    /// assert!(pool.get(Handle32::null()).is_none());
    /// assert!(Handle32::<u8>::default().is_null());
    /// ```
    #[inline]
    pub const fn null() -> Self {
        Handle32::new(Self::MAX_SLOTS, NonZeroU32::MIN)
    }

    /// Whether this is [`Handle32::null`]. No pool returns a null handle.
    #[inline]
    pub const fn is_null(self) -> bool {
        self.index() == Self::MAX_SLOTS
    }

    /// The handle as 32 bits, for a script or a network message: the slot index in the high 20
    /// bits, the generation in the low 12.
    ///
    /// ```
    /// use arena_kit::pool::{Handle32, Pool};
    /// let mut pool: Pool<&str, Handle32<&str>> = Pool::with_key();
    /// pool.insert("first");
    /// let second = pool.insert("second");
    /// assert_eq!(second.to_bits(), 1 << 12 | 1); // slot 1, generation 1
    /// assert_eq!(Handle32::<&str>::from_bits(second.to_bits()), Some(second));
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u32 {
        self.bits.get()
    }

    /// The handle whose [`to_bits`](Self::to_bits) is `bits`, or `None` if no handle has that
    /// pattern: an even generation (a handle's is odd), or slot index 2^20 - 1 with any other
    /// generation than [`Handle32::null`]'s 1. A stale or made-up handle is simply not found when
    /// used.
    ///
    /// ```
    /// use arena_kit::pool::Handle32;
    /// assert!(Handle32::<u8>::from_bits(0).is_none());
    /// assert!(Handle32::<u8>::from_bits(1 << 12 | 2).is_none()); // an even generation
    /// let null = Handle32::<u8>::null().to_bits();
    /// assert!(Handle32::<u8>::from_bits(null).unwrap().is_null());
    /// assert!(Handle32::<u8>::from_bits(null + 2).is_none());
    /// ```
    #[inline]
    pub const fn from_bits(bits: u32) -> Option<Self> {
        let generation = bits & Self::GENERATION_MASK;
        let index = bits >> Self::GENERATION_BITS;
        if generation & 1 == 0 || (index == Self::MAX_SLOTS && generation != 1) {
            return None;
        }
        match NonZeroU32::new(bits) {
            Some(bits) => Some(Handle32 {
                bits,
                _type: PhantomData,
            }),
            None => None,
        }
    }
}

/// [`Handle32::null`].
impl<T> Default for Handle32<T> {
    #[inline]
    fn default() -> Self {
        Handle32::null()
    }
}

impl<T> Clone for Handle32<T> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle32<T> {}

/// Equal when the bits are: the same slot and generation.
impl<T> PartialEq for Handle32<T> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits
    }
}

impl<T> Eq for Handle32<T> {}

impl<T> PartialOrd for Handle32<T> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// By slot index, then generation (the order of the bits).
impl<T> Ord for Handle32<T> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.bits.cmp(&other.bits)
    }
}

impl<T> Hash for Handle32<T> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bits.hash(state);
    }
}

/// Prints `Handle32 { index: 3, generation: 1 }`.
impl<T> fmt::Debug for Handle32<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle32")
            .field("index", &self.index())
            .field("generation", &self.generation())
            .finish()
    }
}
