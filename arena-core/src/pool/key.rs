//! [`PoolHandle`]: the handle types a [`Pool`](super::Pool) can hand out, and [`Key`], the sealed
//! part of it that the slot map reads.
//!
//! A handle is a slot index and the odd generation the slot had when the value went in. The two
//! handle types differ in how many bits each gets, and so in how many slots a pool can have and
//! how many values one slot can hold in its life:
//!
//! | handle | size (`Option` too) | slots | values per slot | debug pool tag |
//! | --- | --- | --- | --- | --- |
//! | [`Handle<T>`] | 8 bytes | 2^32 - 1 | 2^30 (2^23 with the tag) | yes |
//! | [`Handle32<T>`] | 4 bytes | 2^20 - 1 | 2^11 | no |
//!
//! The slot map does everything else the same way for both: one insert, remove and lookup path,
//! one free list, retirement instead of wrapping.

use core::fmt;
use core::hash::Hash;
use core::num::NonZeroU32;

use super::{Handle, Handle32};

/// What the slot map needs from a handle type. Sealed: the trait's module is private to the
/// crate, so no other type can implement [`PoolHandle`], and a handle is only ever made by a pool
/// (or checked on the way in: `from_bits`, deserialization).
pub trait Key: Copy + fmt::Debug {
    /// Whether pools of this handle carry a pool tag in debug builds (the generation has room).
    const TAGGED_IN_DEBUG: bool;
    /// The counter bits of an untagged generation: every generation this handle can hold is at
    /// most this, and the last odd value below it is a slot's last life.
    const COUNTER_MASK: u32;
    /// The most slots a pool of this handle can have; also the index of the null handle, which
    /// no slot has.
    const MAX_SLOTS: u32;

    /// The slot index.
    fn index(self) -> u32;

    /// The slot's generation when the handle was made: odd, so never zero.
    fn generation(self) -> NonZeroU32;

    /// The handle of slot `index` at (odd) `generation`. The slot map only passes an index below
    /// [`MAX_SLOTS`](Self::MAX_SLOTS) and a generation within its scheme's bits.
    ///
    /// Code outside the crate can reach this method through a `H: PoolHandle<T>` bound (methods
    /// of a bound's supertraits need no import), so it takes a [`Token`], which only this crate
    /// can make: a made-up handle with an even generation would let a lookup read a vacant
    /// slot's free-list link as a value. Both handle types also force the generation odd.
    fn from_parts(index: u32, generation: NonZeroU32, token: Token) -> Self;

    /// The name of the value type, for panic messages.
    fn value_type_name() -> &'static str;
}

/// Proof that the caller is this crate, for [`Key::from_parts`]: its field is private, so no
/// other crate can make one.
#[derive(Clone, Copy, Debug)]
pub struct Token(());

/// `K`'s handle of slot `index` at (odd) `generation`: what the slot map and the iterators call.
#[inline(always)]
pub(crate) fn make<K: Key>(index: u32, generation: NonZeroU32) -> K {
    K::from_parts(index, generation, Token(()))
}

/// A handle type a [`Pool<T, H>`](super::Pool) hands out and takes back: [`Handle<T>`] (8 bytes,
/// the default) or [`Handle32<T>`] (4 bytes, for pools of up to about a million slots whose
/// handles are stored by the million). Sealed: exactly these two implement it.
///
/// ```
/// use arena_kit::pool::{Handle32, Pool};
///
/// // The handle type is the pool's second parameter; `Pool<T>` is `Pool<T, Handle<T>>`.
/// let mut small: Pool<char, Handle32<char>> = Pool::with_capacity_and_key(16);
/// let a: Handle32<char> = small.insert('a');
/// assert_eq!(small[a], 'a');
/// assert_eq!(size_of::<Option<Handle32<char>>>(), 4);
/// ```
pub trait PoolHandle<T>:
    Key + Copy + Eq + Ord + Hash + fmt::Debug + Default + Send + Sync + Unpin
{
}

impl<T> Key for Handle<T> {
    const TAGGED_IN_DEBUG: bool = true;
    const COUNTER_MASK: u32 = super::generation::UNTAGGED_COUNTER;
    const MAX_SLOTS: u32 = u32::MAX;

    #[inline(always)]
    fn index(self) -> u32 {
        Handle::index(self)
    }

    #[inline(always)]
    fn generation(self) -> NonZeroU32 {
        Handle::generation(self)
    }

    #[inline(always)]
    fn from_parts(index: u32, generation: NonZeroU32, _: Token) -> Self {
        Handle::new(index, generation | 1)
    }

    fn value_type_name() -> &'static str {
        core::any::type_name::<T>()
    }
}

impl<T> PoolHandle<T> for Handle<T> {}

impl<T> Key for Handle32<T> {
    const TAGGED_IN_DEBUG: bool = false;
    const COUNTER_MASK: u32 = Handle32::<T>::GENERATION_MASK;
    const MAX_SLOTS: u32 = Handle32::<T>::MAX_SLOTS;

    #[inline(always)]
    fn index(self) -> u32 {
        Handle32::index(self)
    }

    #[inline(always)]
    fn generation(self) -> NonZeroU32 {
        Handle32::generation(self)
    }

    #[inline(always)]
    fn from_parts(index: u32, generation: NonZeroU32, _: Token) -> Self {
        Handle32::new(index, generation)
    }

    fn value_type_name() -> &'static str {
        core::any::type_name::<T>()
    }
}

impl<T> PoolHandle<T> for Handle32<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Defence in depth behind the token: even a generation the slot map never passes comes out
    /// odd, so no handle can equal a vacant slot's generation.
    #[test]
    fn both_handle_types_force_an_odd_generation() {
        let two = NonZeroU32::new(2).unwrap();
        assert_eq!(make::<Handle<u8>>(5, two).generation().get(), 3);
        assert_eq!(make::<Handle32<u8>>(5, two).generation().get(), 3);
        assert_eq!(make::<Handle32<u8>>(5, two).index(), 5);
    }
}
