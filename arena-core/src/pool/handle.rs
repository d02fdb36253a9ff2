//! [`Handle<T>`]: the 8-byte generational key a [`Pool<T>`](super::Pool) hands out.
//!
//! Layout: a `u32` slot index and a [`NonZeroU32`] generation. The generation is odd while the slot
//! is occupied (as in slotmap), so it is never zero and `Option<Handle<T>>` uses that niche: both
//! are 8 bytes. Bit 31 of the generation says whether the pool that made the handle is *tagged*
//! (debug builds): a tagged generation carries the pool's 7-bit tag in bits 24..=30 and a 24-bit
//! counter below it; an untagged one is a 31-bit counter. See [`generation`](super::generation).

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::num::NonZeroU32;

use super::generation;

/// A key to one value in a [`Pool<T>`](super::Pool): a slot index and the slot's generation when
/// the value was inserted.
///
/// Handles are `Copy` and 8 bytes (`Option<Handle<T>>` too). A handle whose value was removed is
/// *stale*: lookups with it return `None`, even after its slot was reused, because the slot's
/// generation moved on. A `Handle<Bullet>` cannot be used with a `Pool<Enemy>`: the type parameter
/// is checked at compile time, and the handle is `Send + Sync` whatever `T` is.
///
/// ```
/// use arena_kit::{Handle, Pool};
///
/// struct Sound { volume: f32 }
///
/// let mut sounds = Pool::with_capacity(1);
/// let explosion: Handle<Sound> = sounds.insert(Sound { volume: 1.0 });
/// sounds.remove(explosion);
/// let footstep = sounds.insert(Sound { volume: 0.2 }); // the same slot, a new generation
/// assert_ne!(explosion, footstep);
/// assert!(sounds.get(explosion).is_none()); // the old handle misses instead of aliasing
/// assert_eq!(sounds[footstep].volume, 0.2);
/// assert_eq!(core::mem::size_of::<Option<Handle<Sound>>>(), 8);
/// ```
///
/// # Variance
///
/// Covariant in `T` (`PhantomData<fn() -> T>`): a handle is an index and a generation, it owns and
/// borrows nothing, and every use is checked against the pool it is given to.
pub struct Handle<T> {
    index: u32,
    generation: NonZeroU32,
    _type: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// Builds a handle from its parts. Crate-internal: pools and SoA pools hand handles out; users
    /// never forge one.
    ///
    /// `generation` is odd: a pool's lookups take a slot whose generation equals a handle's
    /// as occupied without testing it, which holds because vacant slots have even ones. Every
    /// caller passes an occupied slot's generation, 1 ([`Handle::null`]) or one
    /// [`from_bits`](Self::from_bits) checked.
    #[inline]
    pub(crate) const fn new(index: u32, generation: NonZeroU32) -> Self {
        debug_assert!(generation.get() & 1 == 1, "a handle's generation is odd");
        Handle {
            index,
            generation,
            _type: PhantomData,
        }
    }

    /// The slot index this handle points at (stable for the value's whole life; useful to index a
    /// side array of the same capacity).
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The raw generation stored in the handle: odd, and in debug builds carrying the pool tag in
    /// its top byte. Handles are compared without the tag (see [`PartialEq`](#impl-PartialEq-for-Handle<T>)).
    #[inline]
    pub const fn generation(self) -> NonZeroU32 {
        self.generation
    }

    /// The handle that points at nothing: no pool ever holds a value for it (its index is
    /// `u32::MAX`, past the last slot any pool can have), so `get(Handle::null())` is `None` on
    /// every pool. Also [`Handle::default`]. For a field that needs a handle before its value
    /// exists; `Option<Handle<T>>` (also 8 bytes) says the same in the type.
    ///
    /// ```
    /// use arena_kit::{Handle, Pool};
    /// let mut pool = Pool::new();
    /// pool.insert(5);
    /// let nothing: Handle<i32> = Handle::null();
    /// assert!(nothing.is_null() && pool.get(nothing).is_none());
    /// assert_eq!(Handle::<i32>::default(), nothing);
    /// ```
    #[inline]
    pub const fn null() -> Self {
        Handle::new(NULL_INDEX, NonZeroU32::MIN)
    }

    /// Whether this is [`Handle::null`]. No pool returns a null handle.
    #[inline]
    pub const fn is_null(self) -> bool {
        self.index == NULL_INDEX
    }

    /// The handle as 64 bits, for a scripting language or a network message: the slot index in
    /// the low 32 bits and the generation in the high 32 bits (odd, below 2^31). The layout is
    /// the same in every build profile; the pool tag a debug-build handle carries is not part of
    /// it (see [`from_bits`](Self::from_bits)).
    ///
    /// ```
    /// use arena_kit::{Handle, Pool};
    /// let mut pool = Pool::new();
    /// pool.insert("first");
    /// let second = pool.insert("second");
    /// let bits = second.to_bits();
    /// assert_eq!(bits, 1 << 32 | 1); // generation 1, slot 1
    /// let back: Handle<&str> = Handle::from_bits(bits).unwrap();
    /// assert_eq!(pool[back], "second");
    /// assert_eq!(Handle::<&str>::null().to_bits(), 1 << 32 | 0xFFFF_FFFF);
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u64 {
        (generation::counter_of(self.generation.get()) as u64) << 32 | self.index as u64
    }

    /// The handle whose [`to_bits`](Self::to_bits) is `bits`, or `None` if no handle has that
    /// pattern: an even generation (slots of live values have odd ones), a generation of 2^31
    /// or more, or slot index `u32::MAX` (past [`MAX_CAPACITY`](super::MAX_CAPACITY)) other than
    /// [`Handle::null`]'s pattern, which gives the null handle.
    ///
    /// The handle is checked like any other when used: a stale or made-up one is simply not
    /// found. In debug builds, where each pool's handles carry its tag, the handle from
    /// `from_bits` carries none: a pool accepts it by index and generation (so it finds the
    /// value the original handle found), and it equals the original (equality ignores the tag).
    /// (One case misses instead: a pool saved by a debug build and loaded by a release build
    /// keeps its tag, and a release build does not adopt untagged handles.)
    ///
    /// ```
    /// use arena_kit::Handle;
    /// assert!(Handle::<u8>::from_bits(0).is_none()); // generation 0
    /// assert!(Handle::<u8>::from_bits(2 << 32 | 7).is_none()); // an even generation
    /// assert!(Handle::<u8>::from_bits(Handle::<u8>::null().to_bits()).unwrap().is_null());
    /// ```
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<Self> {
        let index = bits as u32;
        let raw = (bits >> 32) as u32;
        if index == NULL_INDEX {
            return if raw == 1 { Some(Self::null()) } else { None };
        }
        if raw & 1 == 0 || raw & (1 << 31) != 0 {
            return None;
        }
        match NonZeroU32::new(raw) {
            Some(generation) => Some(Handle::new(index, generation)),
            None => None,
        }
    }
}

/// The index of [`Handle::null`]: past the last slot of a pool of
/// [`MAX_CAPACITY`](super::MAX_CAPACITY) slots.
const NULL_INDEX: u32 = u32::MAX;

/// [`Handle::null`].
impl<T> Default for Handle<T> {
    #[inline]
    fn default() -> Self {
        Handle::null()
    }
}

impl<T> Clone for Handle<T> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle<T> {}

/// Handles are equal when their [`to_bits`](Handle::to_bits) are: the same slot and generation.
/// A debug build's pool tag is not compared, so equality (and `Ord`, `Hash`) is the same in every
/// build profile and a handle back from [`from_bits`](Handle::from_bits) equals the original.
impl<T> PartialEq for Handle<T> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits()
    }
}

impl<T> Eq for Handle<T> {}

impl<T> PartialOrd for Handle<T> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Handles order by slot index, then generation (the pool tag is not compared).
impl<T> Ord for Handle<T> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        let counter = |h: &Self| generation::counter_of(h.generation.get());
        (self.index, counter(self)).cmp(&(other.index, counter(other)))
    }
}

impl<T> Hash for Handle<T> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        // One write of the packed 64 bits: cheaper than two for most hashers.
        self.to_bits().hash(state);
    }
}

/// Prints `Handle { index: 3, generation: 1 }`, plus `pool: <tag>` for a handle from a tagged
/// (debug-build) pool, where `generation` is the counter without the tag.
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = self.generation.get();
        let mut s = f.debug_struct("Handle");
        s.field("index", &self.index);
        match generation::tag_of(raw) {
            Some(tag) => s
                .field("generation", &generation::counter_of(raw))
                .field("pool", &tag),
            None => s.field("generation", &raw),
        };
        s.finish()
    }
}
