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
    #[inline]
    pub(crate) const fn new(index: u32, generation: NonZeroU32) -> Self {
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
    /// its top byte. Two handles to the same slot are equal only if their generations are.
    #[inline]
    pub const fn generation(self) -> NonZeroU32 {
        self.generation
    }
}

impl<T> Clone for Handle<T> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle<T> {}

impl<T> PartialEq for Handle<T> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.generation == other.generation
    }
}

impl<T> Eq for Handle<T> {}

impl<T> PartialOrd for Handle<T> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Handles order by slot index, then generation.
impl<T> Ord for Handle<T> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (self.index, self.generation).cmp(&(other.index, other.generation))
    }
}

impl<T> Hash for Handle<T> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        // One write of the packed 64 bits: cheaper than two for most hashers.
        (u64::from(self.generation.get()) << 32 | u64::from(self.index)).hash(state);
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
