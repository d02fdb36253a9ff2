//! [`SecondaryPool<T, V>`]: a dense side table that stores one `V` per live [`Handle<T>`] of a
//! [`Pool<T>`](super::Pool) (or a [`SoaPool<T>`](crate::soa::SoaPool)), generation-checked.
//!
//! **Pick it** to attach data to most of a pool's values without putting it in `T`: sprites for
//! enemies, a debug name, a cached path. It is a `Vec` indexed by the handle's slot index, so a
//! lookup is a bounds check and a generation compare, and iteration is in slot order.
//!
//! **Don't pick it** when only a few of the pool's values get an entry: the table is as long as
//! the highest slot index it was given, and iteration visits every slot up to there. Use
//! [`SparseSecondaryPool`](super::SparseSecondaryPool) (a `HashMap`, feature `std`) then.
//!
//! ```
//! use arena_kit::Pool;
//! use arena_kit::pool::SecondaryPool;
//!
//! struct Enemy { hp: u32 }
//!
//! let mut enemies = Pool::with_capacity(8);
//! let mut names = SecondaryPool::new();
//! let orc = enemies.insert(Enemy { hp: 10 });
//! let elf = enemies.insert(Enemy { hp: 7 });
//! names.insert(orc, "Grak");
//! names.insert(elf, "Ilya");
//!
//! enemies.remove(orc); // the pool frees the slot...
//! let bat = enemies.insert(Enemy { hp: 2 }); // ...and reuses it with a new generation
//! assert_eq!(bat.index(), orc.index());
//! assert_eq!(names.get(bat), None); // the new handle does not see the old name
//! names.insert(bat, "Flit"); // and replaces it
//! assert_eq!(names.get(orc), None); // the stale handle never sees the new one
//! assert_eq!(names[bat], "Flit");
//! assert_eq!(enemies[elf].hp + enemies[bat].hp, 9);
//! ```
//!
//! # Generations
//!
//! Both side tables follow slotmap's `SecondaryMap`, with the handle's generation deciding:
//!
//! - A value stored for a handle is visible only through that exact handle (same index, same
//!   generation): [`get`](SecondaryPool::get), [`remove`](SecondaryPool::remove) and the rest miss
//!   for every other handle, in particular for an older (stale) or newer handle of the same slot.
//! - [`insert`](SecondaryPool::insert) with the same handle replaces the value and returns the old
//!   one. With a *newer* handle of the same slot (the pool reused it) it replaces the older
//!   handle's value, drops it, and returns `None`. With an *older* handle than the one stored it
//!   changes nothing: the value is dropped and `None` returned
//!   ([`try_insert`](SecondaryPool::try_insert) hands it back instead, in an [`InsertRefused`]).
//!   Pool generations never wrap, so "older" is a plain comparison (slotmap compares with
//!   wrap-around).
//! - [`entry`](SecondaryPool::entry) returns `None` for a handle older than the stored one; for a
//!   newer one it returns a vacant entry whose insert replaces the older value.
//! - Removing a value from the *pool* does not remove it here: it stays, reachable through its
//!   (now stale) handle, until removed or replaced by a newer handle's value. A vacant slot keeps
//!   no generation, so after [`remove`](SecondaryPool::remove) an older handle can be inserted
//!   again (as in slotmap); the live handles never see its value.
//! - A handle with slot index `u32::MAX` (no pool has that slot; the null handle) is never
//!   stored: `insert` drops the value and returns `None`, `try_insert` hands it back, `entry`
//!   returns `None`, lookups miss, as for slotmap's null key.
//! - **Handles from another pool**: in debug builds (and with the `debug-checks` feature) every
//!   pool stamps a tag into its generations. The table binds to the tag of the first handle it is
//!   given and panics, naming both, on a handle with another tag (in every operation that takes
//!   a handle, before changing anything), as a [`Pool`](super::Pool) does. An untagged handle
//!   ([`Handle::from_bits`]) given to a table of a tagged pool's handles is adopted, as the pool
//!   adopts it: it finds the value its tagged original finds. A debug-build table first given
//!   untagged handles is bound by the first tagged one it is given (in a mutable operation), and
//!   what it stored takes that tag then, so handles rebuilt from bits and the pool's own find the
//!   same values in either order. The binding lasts for the table's life (`clear` keeps it; a
//!   loaded table is bound by its first entry). Release builds cannot tell pools apart: mixing
//!   them is a logic error with unspecified (but safe) results.
//!
//! The code is safe Rust: a `Vec<Option<(generation, V)>>`, with the generation's niche, so a
//! slot costs what `(NonZeroU32, V)` costs.

use alloc::collections::TryReserveError;
use alloc::vec::{self, Vec};
use core::fmt;
use core::iter::{Enumerate, FusedIterator};
use core::marker::PhantomData;
use core::mem;
use core::num::NonZeroU32;
use core::ops::{Index, IndexMut};
use core::slice;

use super::Handle;
use super::generation;

/// One stored value and the generation of the handle it was stored for.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Stored<V> {
    pub(crate) generation: NonZeroU32,
    pub(crate) value: V,
}

impl<V> Stored<V> {
    pub(crate) fn new<T>(handle: Handle<T>, value: V) -> Self {
        Stored {
            generation: handle.generation(),
            value,
        }
    }

    /// The handle this value was stored for, at slot `index`.
    pub(crate) fn handle<T>(&self, index: u32) -> Handle<T> {
        Handle::new(index, self.generation)
    }

    /// The stored generation with pool tag `tag` (see [`Owner::bind`]): itself if tagged,
    /// `None` if its counter is too large for a tagged generation (no debug-build pool made it).
    fn tagged(&self, tag: u8) -> Option<NonZeroU32> {
        let raw = self.generation.get();
        match generation::tag_of(raw) {
            Some(_) => Some(self.generation),
            None => generation::tagged(raw, tag),
        }
    }
}

/// Gives every stored generation pool tag `tag`, for [`Owner::bind`]: all of them, or, if one
/// cannot carry it, none, returning that one. `each` hands every stored value to its argument
/// (it runs twice).
pub(crate) fn retag_each<V>(
    mut each: impl FnMut(&mut dyn FnMut(&mut Stored<V>)),
    tag: u8,
) -> Result<(), NonZeroU32> {
    let mut untaggable = None;
    each(&mut |s| {
        if untaggable.is_none() && s.tagged(tag).is_none() {
            untaggable = Some(s.generation);
        }
    });
    if let Some(generation) = untaggable {
        return Err(generation);
    }
    each(&mut |s| {
        if let Some(tagged) = s.tagged(tag) {
            s.generation = tagged;
        }
    });
    Ok(())
}

/// What a side table's mutable operation found at a handle's slot, once [`Owner::admit`] let
/// it in: the handle as the bound pool writes it, and whether the stored value is its.
pub(crate) enum Admitted<T> {
    /// The stored value is this handle's.
    Same(Handle<T>),
    /// The slot is vacant, or holds an older generation's value (the pool reused the slot).
    Fresh(Handle<T>),
}

impl<T> Admitted<T> {
    /// The handle as the bound pool writes it.
    pub(crate) fn handle(&self) -> Handle<T> {
        match *self {
            Admitted::Same(handle) | Admitted::Fresh(handle) => handle,
        }
    }
}

/// A slot index no pool has (pools have at most `u32::MAX` slots): the null handle's. A handle
/// with it is never stored and binds no pool.
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// The pool a side table's handles come from, as far as generations tell (see "Handles from
/// another pool" in the [module docs](self)): unbound, or the tag of the first handle (`None` for
/// an untagged, release-build pool).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Owner(Option<Option<u8>>);

impl Owner {
    /// Lets `handle` into a mutable operation (`try_insert`, `entry`) on a slot whose stored
    /// generation is `stored` (`None` if vacant). `normalized` is what
    /// [`normalize`](Self::normalize) gave for `handle`. A handle older than the stored one is
    /// stale: refused with the stored entry's handle, before binding, so the refusal changes
    /// nothing. Otherwise the table is bound ([`bind`](Self::bind), with `retag`) and the answer
    /// says whether the stored value is the handle's; binding retags every stored generation
    /// alike, which keeps that answer.
    #[inline]
    #[track_caller]
    pub(crate) fn admit<T>(
        &mut self,
        handle: Handle<T>,
        normalized: Handle<T>,
        stored: Option<NonZeroU32>,
        kind: &str,
        retag: impl FnOnce(u8) -> Result<(), NonZeroU32>,
    ) -> Result<Admitted<T>, Handle<T>> {
        let same = match stored {
            Some(newer) if normalized.generation() < newer => {
                return Err(Handle::new(handle.index(), newer));
            }
            Some(stored) => normalized.generation() == stored,
            None => false,
        };
        let bound = self.bind(handle, normalized, kind, retag);
        Ok(if same {
            Admitted::Same(bound)
        } else {
            Admitted::Fresh(bound)
        })
    }

    /// Binds to `handle`'s pool if unbound and returns `handle` as the bound pool writes it;
    /// `normalized` is what [`normalize`](Self::normalize) gave for it before binding (a caller
    /// checks it against the table first, so that a refusal binds nothing). A table that so far
    /// held only untagged handles ([`Handle::from_bits`] in a debug build) is bound by the first
    /// tagged one: `retag` must then give every stored generation that tag, as the pool adopts
    /// untagged handles ([`retag_each`]), or return one that cannot carry it. Such a handle's
    /// counter is past any debug-build pool's, so it came from another pool: that panics as a
    /// foreign handle, with the table unchanged. Retagging keeps every stored generation's order
    /// against the handle, so an age taken with `normalized` still holds.
    #[inline]
    #[track_caller]
    fn bind<T>(
        &mut self,
        handle: Handle<T>,
        normalized: Handle<T>,
        kind: &str,
        retag: impl FnOnce(u8) -> Result<(), NonZeroU32>,
    ) -> Handle<T> {
        let theirs = generation::tag_of(handle.generation().get());
        match (self.0, theirs) {
            (None, _) => {
                self.0 = Some(theirs);
                handle
            }
            (Some(None), Some(tag)) if crate::poison::ENABLED => {
                if let Err(stored) = retag(tag) {
                    mixed(handle, stored, kind);
                }
                self.0 = Some(Some(tag));
                handle
            }
            _ => normalized,
        }
    }

    /// `handle` as the bound pool writes it: itself if it carries the table's tag (or the table
    /// is unbound); retagged if it is untagged ([`Handle::from_bits`]) and the table holds a
    /// tagged (debug-build) pool's handles, as a [`Pool`](super::Pool) adopts it, or `None` if its
    /// counter is too large for any tagged generation (it matches nothing). Panics if it is
    /// another pool's.
    #[inline]
    #[track_caller]
    pub(crate) fn normalize<T>(self, handle: Handle<T>, kind: &str) -> Option<Handle<T>> {
        let raw = handle.generation().get();
        match self.0 {
            // Untagged so far (debug build): a tagged handle is looked up by its counter, as
            // the table will hold it once a mutable operation binds it (`bind`).
            Some(None) if crate::poison::ENABLED && generation::tag_of(raw).is_some() => {
                let counter = NonZeroU32::new(generation::counter_of(raw))?;
                Some(Handle::new(handle.index(), counter))
            }
            Some(ours) if ours != generation::tag_of(raw) => adopt(handle, ours, kind),
            _ => Some(handle),
        }
    }

    /// Whether a raw generation could come from the bound pool (binding to it if unbound): what
    /// the deserializers check each entry with.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn accepts(&mut self, raw: u32) -> bool {
        let tag = generation::tag_of(raw);
        *self.0.get_or_insert(tag) == tag
    }
}

/// [`retag_each`] over a dense table's stored values.
fn retag_all<V>(slots: &mut [Option<Stored<V>>], tag: u8) -> Result<(), NonZeroU32> {
    retag_each(|f| slots.iter_mut().flatten().for_each(f), tag)
}

/// [`Owner::normalize`] for a handle whose tag is not the table's `ours`.
#[cold]
#[inline(never)]
#[track_caller]
fn adopt<T>(handle: Handle<T>, ours: Option<u8>, kind: &str) -> Option<Handle<T>> {
    let raw = handle.generation().get();
    match ours {
        Some(tag) if generation::tag_of(raw).is_none() => {
            Some(Handle::new(handle.index(), generation::tagged(raw, tag)?))
        }
        _ => foreign(handle, ours, kind),
    }
}

/// [`Owner::bind`] found a stored generation, `stored`, that `handle`'s tagged pool cannot have
/// made.
#[cold]
#[inline(never)]
#[track_caller]
fn mixed<T>(handle: Handle<T>, stored: NonZeroU32, kind: &str) -> ! {
    let ty = core::any::type_name::<T>();
    panic!(
        "{handle:?} was made by the debug-build pool tagged {} of {ty}, but this {kind} holds a \
         handle of generation {stored}, which no debug-build pool makes (its counter is past 24 \
         bits): a release-build (untagged) pool's; a side table holds the handles of one pool",
        generation::tag_of(handle.generation().get()).unwrap_or_default(),
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn foreign<T>(handle: Handle<T>, ours: Option<u8>, kind: &str) -> ! {
    let ty = core::any::type_name::<T>();
    let theirs = generation::tag_of(handle.generation().get());
    let name = |tag: Option<u8>| match tag {
        Some(tag) => alloc::format!("the debug-build pool tagged {tag}"),
        None => "a release-build (untagged) pool".into(),
    };
    panic!(
        "{handle:?} was made by {} of {ty}, but this {kind} holds handles of {}; a side table \
         holds the handles of one pool",
        name(theirs),
        name(ours)
    )
}

/// A handle refused by [`SecondaryPool::try_insert`] or
/// [`SparseSecondaryPool::try_insert`](super::SparseSecondaryPool::try_insert), with the value
/// handed back. Nothing was changed.
///
/// ```
/// use arena_kit::Pool;
/// use arena_kit::pool::SecondaryPool;
///
/// let mut pool = Pool::with_capacity(1);
/// let old = pool.insert(());
/// pool.remove(old);
/// let new = pool.insert(());
/// let mut side = SecondaryPool::new();
/// side.insert(new, "new");
/// let refused = side.try_insert(old, "old").unwrap_err();
/// assert_eq!(refused.newer(), Some(new));
/// assert_eq!(refused.into_inner(), "old");
/// assert_eq!(side[new], "new");
/// ```
pub struct InsertRefused<T, V> {
    value: V,
    handle: Handle<T>,
    reason: Refusal<T>,
}

/// Why a side table refused a handle.
enum Refusal<T> {
    /// This newer handle of the slot has the value.
    Stale(Handle<T>),
    /// The table could not grow.
    OutOfMemory,
    /// The handle's index is [`NO_SLOT`].
    NoSlot,
}

impl<T, V> InsertRefused<T, V> {
    pub(crate) fn stale(value: V, handle: Handle<T>, newer: Handle<T>) -> Self {
        let reason = Refusal::Stale(newer);
        InsertRefused {
            value,
            handle,
            reason,
        }
    }

    pub(crate) fn out_of_memory(value: V, handle: Handle<T>) -> Self {
        let reason = Refusal::OutOfMemory;
        InsertRefused {
            value,
            handle,
            reason,
        }
    }

    pub(crate) fn no_slot(value: V, handle: Handle<T>) -> Self {
        let reason = Refusal::NoSlot;
        InsertRefused {
            value,
            handle,
            reason,
        }
    }

    /// Whether the table could not allocate room for the handle (the only refusal `insert`
    /// panics on).
    pub(crate) fn is_out_of_memory(&self) -> bool {
        matches!(self.reason, Refusal::OutOfMemory)
    }

    /// The value, given back.
    pub fn into_inner(self) -> V {
        self.value
    }

    /// The handle that was refused.
    pub fn handle(&self) -> Handle<T> {
        self.handle
    }

    /// The newer handle of the same slot whose value the table holds, if that is why the handle
    /// was refused (it is stale); `None` if the table could not allocate room for it, or if the
    /// handle names no slot (slot index `u32::MAX`, which no pool has: a null handle).
    pub fn newer(&self) -> Option<Handle<T>> {
        match self.reason {
            Refusal::Stale(newer) => Some(newer),
            Refusal::OutOfMemory | Refusal::NoSlot => None,
        }
    }
}

/// Does not print the value (it need not be `Debug`).
impl<T, V> fmt::Debug for InsertRefused<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InsertRefused")
            .field("handle", &self.handle)
            .field("newer", &self.newer())
            .finish_non_exhaustive()
    }
}

impl<T, V> fmt::Display for InsertRefused<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            Refusal::Stale(newer) => write!(
                f,
                "{:?} is stale: the side table holds a value for the newer {newer:?} of the same \
                 slot; the value was handed back (insert with the pool's current handle)",
                self.handle
            ),
            Refusal::OutOfMemory => write!(
                f,
                "out of memory growing the side table to slot index {}; the value was handed \
                 back (a SparseSecondaryPool stores only the entries it holds)",
                self.handle.index()
            ),
            Refusal::NoSlot => write!(
                f,
                "{:?} names no slot of the table's pool (slot index u32::MAX, past the last slot \
                 of any pool: a null handle; or an untagged generation too large for the debug \
                 pool whose handles the table holds); the value was handed back",
                self.handle
            ),
        }
    }
}

impl<T, V> core::error::Error for InsertRefused<T, V> {}

/// A dense side table: one optional `V` per slot of a [`Pool<T>`](super::Pool), looked up by the
/// pool's [`Handle<T>`]s and checked against their generations.
///
/// See the [module documentation](self) for when to use it and the generation rules.
///
/// ```
/// use arena_kit::Pool;
/// use arena_kit::pool::SecondaryPool;
///
/// let mut players = Pool::with_capacity(4);
/// let mut health = SecondaryPool::new();
/// let mut ammo = SecondaryPool::new();
/// let alice = players.insert("alice");
/// let bob = players.insert("bob");
/// for (p, _) in &players {
///     health.insert(p, 100);
///     ammo.insert(p, 30);
/// }
/// health[bob] -= ammo[alice] * 3; // alice fires everything at bob
/// ammo[alice] = 0;
/// assert_eq!((health[bob], ammo[alice]), (10, 0));
/// ```
///
/// # Variance
///
/// Covariant in `T` and `V`: it owns its values and refers to no `T`.
pub struct SecondaryPool<T, V> {
    slots: Vec<Option<Stored<V>>>,
    len: usize,
    owner: Owner,
    _type: PhantomData<fn() -> T>,
}

const KIND: &str = "SecondaryPool";

impl<T, V> SecondaryPool<T, V> {
    /// An empty table. Allocates nothing until the first insert.
    pub const fn new() -> Self {
        SecondaryPool {
            slots: Vec::new(),
            len: 0,
            owner: Owner(None),
            _type: PhantomData,
        }
    }

    /// An empty table with room for slot indexes `0..capacity` (a pool's
    /// [`capacity`](super::Pool::capacity)) before it reallocates.
    ///
    /// # Panics
    /// If the memory cannot be allocated; see [`try_with_capacity`](Self::try_with_capacity).
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        match Self::try_with_capacity(capacity) {
            Ok(table) => table,
            Err(e) => panic!("SecondaryPool::with_capacity({capacity}): {e}"),
        }
    }

    /// As [`with_capacity`](Self::with_capacity), returning the allocator's refusal instead of
    /// panicking.
    pub fn try_with_capacity(capacity: usize) -> Result<Self, TryReserveError> {
        let mut table = Self::new();
        table.slots.try_reserve_exact(capacity)?;
        Ok(table)
    }

    /// The number of slot indexes the table has room for without reallocating.
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// The number of values stored. O(1).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// As [`insert`](Self::insert), but hands the value back in an [`InsertRefused`] if `handle`
    /// is older than the stored one or the table cannot grow. Nothing changes on failure.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by another pool than the handles already in the
    /// table.
    #[track_caller]
    pub fn try_insert(
        &mut self,
        handle: Handle<T>,
        value: V,
    ) -> Result<Option<V>, InsertRefused<T, V>> {
        if handle.index() == NO_SLOT {
            return Err(InsertRefused::no_slot(value, handle));
        }
        // Grown, and a stale handle refused, before binding (which keeps the index): a refused
        // insert leaves the table bound to no pool, or to the one it was. Growth adds vacant
        // slots only, and not for a handle the binding would refuse (`normalize` refuses exactly
        // those, changing nothing).
        let Some(normalized) = self.owner.normalize(handle, KIND) else {
            return Err(InsertRefused::no_slot(value, handle));
        };
        let index = handle.index() as usize;
        if index >= self.slots.len() && self.grow_to(index).is_err() {
            return Err(InsertRefused::out_of_memory(value, handle));
        }
        let stored = self.slots[index].as_ref().map(|s| s.generation);
        let retag = |tag| retag_all(&mut self.slots, tag);
        let admitted = match self.owner.admit(handle, normalized, stored, KIND, retag) {
            Err(newer) => return Err(InsertRefused::stale(value, handle, newer)),
            Ok(admitted) => admitted,
        };
        if let (Admitted::Same(_), Some(stored)) = (&admitted, &mut self.slots[index]) {
            return Ok(Some(mem::replace(&mut stored.value, value)));
        }
        let handle = admitted.handle();
        // Dropped last, so a panicking `Drop` finds the table already holding the new value.
        drop(self.put(index, Stored::new(handle, value)));
        Ok(None)
    }

    /// Makes slot `index` exist (vacant).
    fn grow_to(&mut self, index: usize) -> Result<(), TryReserveError> {
        let needed = index + 1 - self.slots.len();
        self.slots.try_reserve(needed)?;
        self.slots.resize_with(index + 1, || None);
        Ok(())
    }

    /// Puts `stored` into the existing slot `index`, counting it, and returns what was there (the
    /// caller drops it after the table is consistent).
    fn put(&mut self, index: usize, stored: Stored<V>) -> Option<Stored<V>> {
        let old = self.slots[index].replace(stored);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// The stored entry at slot `index`, if any (of any generation).
    #[inline]
    fn stored(&self, index: u32) -> Option<&Stored<V>> {
        self.slots.get(index as usize)?.as_ref()
    }

    #[inline]
    fn stored_mut(&mut self, index: u32) -> Option<&mut Stored<V>> {
        self.slots.get_mut(index as usize)?.as_mut()
    }

    /// Removes and returns the value stored for `handle`, or `None` if there is none (a value of
    /// another generation of the slot stays). O(1).
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by another pool than the handles in the table.
    #[track_caller]
    pub fn remove(&mut self, handle: Handle<T>) -> Option<V> {
        let handle = self.owner.normalize(handle, KIND)?;
        let index = handle.index() as usize;
        if !matches!(self.slots.get(index), Some(Some(s)) if s.generation == handle.generation()) {
            return None;
        }
        self.len -= 1;
        self.slots[index].take().map(|s| s.value)
    }

    /// Mutable references to the values of `N` handles at once, or `None` if any handle has no
    /// value here or two handles name the same slot (as
    /// [`Pool::get_disjoint_mut`](super::Pool::get_disjoint_mut)). O(N²) index comparisons.
    ///
    /// ```
    /// use arena_kit::Pool;
    /// use arena_kit::pool::SecondaryPool;
    /// let mut pool = Pool::with_capacity(4);
    /// let (a, b, c) = (pool.insert(()), pool.insert(()), pool.insert(()));
    /// let mut side = SecondaryPool::new();
    /// side.insert(a, "butter");
    /// side.insert(b, "apples");
    /// assert!(side.get_disjoint_mut([a, b, c]).is_none()); // c has no value
    /// assert!(side.get_disjoint_mut([a, a]).is_none()); // not disjoint
    /// let [x, y] = side.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((side[a], side[b]), ("apples", "butter"));
    /// ```
    ///
    /// # Panics
    /// In debug builds, if a handle was made by another pool than the handles in the table.
    #[track_caller]
    pub fn get_disjoint_mut<const N: usize>(
        &mut self,
        handles: [Handle<T>; N],
    ) -> Option<[&mut V; N]> {
        if !handles.iter().all(|&h| self.contains(h)) {
            return None;
        }
        // Every slot holds its handle's value; the only failure left is a repeated index.
        let slots = self
            .slots
            .get_disjoint_mut(handles.map(|h| h.index() as usize))
            .ok()?;
        Some(disjoint_values(slots.map(Option::as_mut)))
    }

    /// The entry of `handle`, to insert or update in place; `None` if `handle` is older than the
    /// handle whose value the slot holds (it is stale). Allocates nothing until a vacant entry is
    /// filled.
    ///
    /// ```
    /// use arena_kit::Pool;
    /// use arena_kit::pool::SecondaryPool;
    /// let mut pool = Pool::with_capacity(2);
    /// let k = pool.insert("pony");
    /// let mut hits = SecondaryPool::new();
    /// *hits.entry(k).unwrap().or_insert(0) += 1;
    /// *hits.entry(k).unwrap().or_insert(0) += 1;
    /// assert_eq!(hits[k], 2);
    /// ```
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by another pool than the handles in the table.
    #[track_caller]
    pub fn entry(&mut self, handle: Handle<T>) -> Option<Entry<'_, T, V>> {
        if handle.index() == NO_SLOT {
            return None;
        }
        let normalized = self.owner.normalize(handle, KIND)?;
        let stored = self.stored(handle.index()).map(|s| s.generation);
        let retag = |tag| retag_all(&mut self.slots, tag);
        // A stale handle is refused before binding, so its `None` binds nothing.
        Some(
            match self
                .owner
                .admit(handle, normalized, stored, KIND, retag)
                .ok()?
            {
                Admitted::Same(handle) => Entry::Occupied(OccupiedEntry {
                    table: self,
                    handle,
                }),
                Admitted::Fresh(handle) => Entry::Vacant(VacantEntry {
                    table: self,
                    handle,
                }),
            },
        )
    }

    /// Keeps only the values for which `keep` returns `true`; the others are removed and dropped.
    /// If `keep` or a value's `Drop` panics, the values visited so far are kept or removed as
    /// decided and the rest stay.
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, &mut V) -> bool) {
        for (index, slot) in (0u32..).zip(self.slots.iter_mut()) {
            if let Some(s) = slot
                && !keep(s.handle(index), &mut s.value)
            {
                self.len -= 1;
                drop(slot.take());
            }
        }
    }

    /// Removes (and drops) every value; keeps the memory. If a value's `Drop` panics, the table
    /// is already empty and the other values are still dropped (as `Vec::clear`).
    pub fn clear(&mut self) {
        self.len = 0;
        self.slots.clear();
    }

    /// Removes every value, yielding each with its handle, in slot order. Values not consumed are
    /// removed when the iterator is dropped; if it is leaked, the ones not yielded stay.
    pub fn drain(&mut self) -> Drain<'_, T, V> {
        Drain {
            table: self,
            next: 0,
        }
    }

    /// The values with their handles, in slot order. Visits every slot up to the highest index
    /// given to the table.
    pub fn iter(&self) -> Iter<'_, T, V> {
        Iter {
            slots: self.slots.iter().enumerate(),
            left: self.len,
            _type: PhantomData,
        }
    }

    /// The values, mutably, with their handles, in slot order.
    pub fn iter_mut(&mut self) -> IterMut<'_, T, V> {
        IterMut {
            slots: self.slots.iter_mut().enumerate(),
            left: self.len,
            _type: PhantomData,
        }
    }

    /// Rebuilds a table from checked parts (deserialization).
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(slots: Vec<Option<Stored<V>>>, len: usize, owner: Owner) -> Self {
        SecondaryPool {
            slots,
            len,
            owner,
            _type: PhantomData,
        }
    }
}

/// A handle with a value in a [`SecondaryPool`].
pub struct OccupiedEntry<'a, T, V> {
    table: &'a mut SecondaryPool<T, V>,
    handle: Handle<T>,
}

/// A handle without a value in a [`SecondaryPool`] (but not older than the slot's value).
pub struct VacantEntry<'a, T, V> {
    table: &'a mut SecondaryPool<T, V>,
    handle: Handle<T>,
}

impl<'a, T, V> OccupiedEntry<'a, T, V> {
    fn slot(&self) -> &Stored<V> {
        match &self.table.slots[self.handle.index() as usize] {
            Some(s) => s,
            None => unreachable!("an occupied entry's slot holds its value"),
        }
    }

    fn slot_mut(&mut self) -> &mut Stored<V> {
        match &mut self.table.slots[self.handle.index() as usize] {
            Some(s) => s,
            None => unreachable!("an occupied entry's slot holds its value"),
        }
    }

    /// The entry's handle.
    pub fn key(&self) -> Handle<T> {
        self.handle
    }

    /// The value.
    pub fn get(&self) -> &V {
        &self.slot().value
    }

    /// The value, mutably, for as long as the entry lives.
    pub fn get_mut(&mut self) -> &mut V {
        &mut self.slot_mut().value
    }

    /// The value, mutably, for as long as the table is borrowed.
    pub fn into_mut(self) -> &'a mut V {
        match &mut self.table.slots[self.handle.index() as usize] {
            Some(s) => &mut s.value,
            None => unreachable!("an occupied entry's slot holds its value"),
        }
    }

    /// Replaces the value, returning the old one.
    pub fn insert(&mut self, value: V) -> V {
        mem::replace(self.get_mut(), value)
    }

    /// Removes the value and returns it.
    pub fn remove(self) -> V {
        self.remove_entry().1
    }

    /// Removes the value and returns it with its handle.
    pub fn remove_entry(self) -> (Handle<T>, V) {
        let slot = &mut self.table.slots[self.handle.index() as usize];
        match slot.take() {
            Some(s) => {
                self.table.len -= 1;
                (self.handle, s.value)
            }
            None => unreachable!("an occupied entry's slot holds its value"),
        }
    }
}

impl<'a, T, V> VacantEntry<'a, T, V> {
    /// The entry's handle.
    pub fn key(&self) -> Handle<T> {
        self.handle
    }

    /// Stores `value` for the handle (growing the table if needed, replacing and dropping an
    /// older handle's value) and returns it, mutably.
    ///
    /// # Panics
    /// If the table cannot grow (out of memory).
    #[track_caller]
    pub fn insert(self, value: V) -> &'a mut V {
        let index = self.handle.index() as usize;
        let table = self.table;
        if index >= table.slots.len()
            && let Err(e) = table.grow_to(index)
        {
            panic!("SecondaryPool: growing the table to slot index {index}: {e}");
        }
        drop(table.put(index, Stored::new(self.handle, value)));
        match &mut table.slots[index] {
            Some(s) => &mut s.value,
            None => unreachable!("just stored"),
        }
    }
}

/// The values of a [`SecondaryPool`] with their handles: [`SecondaryPool::iter`].
pub struct Iter<'a, T, V> {
    slots: Enumerate<slice::Iter<'a, Option<Stored<V>>>>,
    left: usize,
    _type: PhantomData<fn() -> T>,
}

/// The values of a [`SecondaryPool`], mutably, with their handles: [`SecondaryPool::iter_mut`].
pub struct IterMut<'a, T, V> {
    slots: Enumerate<slice::IterMut<'a, Option<Stored<V>>>>,
    left: usize,
    _type: PhantomData<fn() -> T>,
}

/// The values of a [`SecondaryPool`], moved out with their handles: its `IntoIterator`.
pub struct IntoIter<T, V> {
    slots: Enumerate<vec::IntoIter<Option<Stored<V>>>>,
    left: usize,
    _type: PhantomData<fn() -> T>,
}

/// The values removed from a [`SecondaryPool`] with their handles: [`SecondaryPool::drain`].
pub struct Drain<'a, T, V> {
    table: &'a mut SecondaryPool<T, V>,
    next: usize,
}

/// Yields `(handle, value)` for the next occupied slot of `slots`, counting down `left`.
fn next_stored<T, S, V>(
    slots: &mut impl Iterator<Item = (usize, S)>,
    left: &mut usize,
    take: impl Fn(S) -> Option<(NonZeroU32, V)>,
) -> Option<(Handle<T>, V)> {
    for (index, slot) in slots {
        if let Some((generation, value)) = take(slot) {
            *left -= 1;
            return Some((Handle::new(index as u32, generation), value));
        }
    }
    None
}

impl<'a, T, V> Iterator for Iter<'a, T, V> {
    type Item = (Handle<T>, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        next_stored(
            &mut self.slots,
            &mut self.left,
            |s: &'a Option<Stored<V>>| s.as_ref().map(|s| (s.generation, &s.value)),
        )
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<'a, T, V> Iterator for IterMut<'a, T, V> {
    type Item = (Handle<T>, &'a mut V);
    fn next(&mut self) -> Option<Self::Item> {
        next_stored(
            &mut self.slots,
            &mut self.left,
            |s: &'a mut Option<Stored<V>>| s.as_mut().map(|s| (s.generation, &mut s.value)),
        )
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T, V> Iterator for IntoIter<T, V> {
    type Item = (Handle<T>, V);
    fn next(&mut self) -> Option<Self::Item> {
        next_stored(&mut self.slots, &mut self.left, |s: Option<Stored<V>>| {
            s.map(|s| (s.generation, s.value))
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T, V> Iterator for Drain<'_, T, V> {
    type Item = (Handle<T>, V);
    fn next(&mut self) -> Option<Self::Item> {
        while let Some(slot) = self.table.slots.get_mut(self.next) {
            let index = self.next as u32;
            self.next += 1;
            if let Some(s) = slot.take() {
                self.table.len -= 1;
                return Some((s.handle(index), s.value));
            }
        }
        None
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.table.len, Some(self.table.len))
    }
}

/// Removes the values not yielded yet.
impl<T, V> Drop for Drain<'_, T, V> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

impl<T, V> Clone for Iter<'_, T, V> {
    fn clone(&self) -> Self {
        Iter {
            slots: self.slots.clone(),
            left: self.left,
            _type: PhantomData,
        }
    }
}

/// The values with their handles, in slot order.
impl<T, V> IntoIterator for SecondaryPool<T, V> {
    type Item = (Handle<T>, V);
    type IntoIter = IntoIter<T, V>;
    fn into_iter(self) -> IntoIter<T, V> {
        IntoIter {
            left: self.len,
            slots: self.slots.into_iter().enumerate(),
            _type: PhantomData,
        }
    }
}

impl<T, V> Default for SecondaryPool<T, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// Copies every value and the pool binding. If a `V::clone` panics, the copies made so far are
/// dropped and `self` is untouched.
impl<T, V: Clone> Clone for SecondaryPool<T, V> {
    fn clone(&self) -> Self {
        SecondaryPool {
            slots: self.slots.clone(),
            len: self.len,
            owner: self.owner,
            _type: PhantomData,
        }
    }
}

/// Prints the values as a map from handle to value, in slot order.
impl<T, V: fmt::Debug> fmt::Debug for SecondaryPool<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Equal when both store values for the same handles and those values are equal (capacity and
/// vacant slots do not count).
impl<T, V: PartialEq> PartialEq for SecondaryPool<T, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self.iter().all(|(h, v)| {
                other.slots.get(h.index() as usize).is_some_and(|s| {
                    s.as_ref()
                        .is_some_and(|s| s.generation == h.generation() && s.value == *v)
                })
            })
    }
}

impl<T, V: Eq> Eq for SecondaryPool<T, V> {}

/// The values of `N` entries already checked to be there, for `get_disjoint_mut`.
pub(crate) fn disjoint_values<V, const N: usize>(
    found: [Option<&mut Stored<V>>; N],
) -> [&mut V; N] {
    found.map(|s| match s {
        Some(s) => &mut s.value,
        None => unreachable!("checked by the caller: every handle has a value"),
    })
}

/// The panic of a side table's `Index` impl.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn missing<T>(handle: Handle<T>, kind: &str) -> ! {
    panic!(
        "{handle:?} has no value in this {kind}: none was inserted for it, or it was removed, or \
         replaced by a newer handle's value (use get to test first)"
    )
}

/// The parts of [`SecondaryPool`] and [`SparseSecondaryPool`](super::SparseSecondaryPool) that
/// are the same code over each table's own entry and iterator types: the `Entry` enum and its
/// methods, `Keys`/`Values`/`ValuesMut`, borrowing `IntoIterator`, `FromIterator`, `Extend`,
/// `Index`. Invoked once in each table's module, with the table's extra type parameters and
/// their bounds. Each module defines `OccupiedEntry`/`VacantEntry` (with `handle`, `get`,
/// `get_mut`, `into_mut`, `insert`), `Iter`, `IterMut`, `IntoIter`, `Drain` and `KIND`.
macro_rules! side_table_shared {
    ($Table:ident [$($g:ident),*] where [$($b:tt)*]) => {
        impl<T, V $(, $g)*> $Table<T, V $(, $g)*>
        where
            $($b)*
        {
            /// Stores `value` for `handle`. Returns the value it replaces if one was stored for
            /// this same handle; `None` otherwise, also when a newer handle of the slot holds a
            /// value, and then `value` is dropped and nothing changes (see
            /// [generations](crate::pool::secondary#generations);
            /// [`try_insert`](Self::try_insert) hands it back).
            ///
            /// ```
            /// use arena_kit::Pool;
            #[doc = concat!("use arena_kit::pool::", stringify!($Table), ";")]
            /// let mut pool = Pool::with_capacity(2);
            /// let k = pool.insert(4);
            #[doc = concat!("let mut squares = ", stringify!($Table), "::new();")]
            /// assert_eq!(squares.insert(k, 0), None);
            /// assert_eq!(squares.insert(k, 16), Some(0));
            /// ```
            ///
            /// # Panics
            /// If the table cannot grow (out of memory), or in debug builds if `handle` was made
            /// by another pool than the handles already in the table.
            #[inline]
            #[track_caller]
            pub fn insert(&mut self, handle: Handle<T>, value: V) -> Option<V> {
                match self.try_insert(handle, value) {
                    Ok(old) => old,
                    Err(refused) if !refused.is_out_of_memory() => None,
                    Err(refused) => panic!("{}::insert: {refused}", KIND),
                }
            }

            /// The value stored for `handle`, or `None` (never a value stored for another
            /// generation of its slot).
            ///
            /// # Panics
            /// In debug builds, if `handle` was made by another pool than the handles in the
            /// table.
            #[inline]
            #[track_caller]
            pub fn get(&self, handle: Handle<T>) -> Option<&V> {
                match self.stored(handle.index()) {
                    Some(s) if s.generation == handle.generation() => Some(&s.value),
                    // A miss: the handle may be an untagged one to adopt (looked up once more).
                    _ => match self.owner.normalize(handle, KIND) {
                        Some(h) if h.generation() != handle.generation() => self.get(h),
                        _ => None,
                    },
                }
            }

            /// The value stored for `handle`, mutably, or `None`.
            ///
            /// # Panics
            /// In debug builds, if `handle` was made by another pool than the handles in the
            /// table.
            #[inline]
            #[track_caller]
            pub fn get_mut(&mut self, handle: Handle<T>) -> Option<&mut V> {
                let handle = self.owner.normalize(handle, KIND)?;
                match self.stored_mut(handle.index()) {
                    Some(s) if s.generation == handle.generation() => Some(&mut s.value),
                    _ => None,
                }
            }

            /// Whether a value is stored for `handle`.
            ///
            /// # Panics
            /// In debug builds, if `handle` was made by another pool than the handles in the
            /// table.
            #[inline]
            #[track_caller]
            pub fn contains(&self, handle: Handle<T>) -> bool {
                self.get(handle).is_some()
            }
        }

        impl<T, V $(, $g)*> $Table<T, V $(, $g)*> {
            /// The handles that have a value, in [`iter`](Self::iter)'s order.
            pub fn keys(&self) -> Keys<'_, T, V> {
                Keys(self.iter())
            }

            /// The values, in [`iter`](Self::iter)'s order.
            pub fn values(&self) -> Values<'_, T, V> {
                Values(self.iter())
            }

            /// The values, mutably, in [`iter`](Self::iter)'s order.
            pub fn values_mut(&mut self) -> ValuesMut<'_, T, V> {
                ValuesMut(self.iter_mut())
            }
        }

        #[doc = concat!("An entry of a [`", stringify!($Table), "`], from [`",
            stringify!($Table), "::entry`]: a value is stored for the handle, or not yet.")]
        pub enum Entry<'a, T, V> {
            /// A value is stored for this handle.
            Occupied(OccupiedEntry<'a, T, V>),
            /// No value is stored for this handle (the slot may hold an older handle's value,
            /// which a [`VacantEntry::insert`] replaces).
            Vacant(VacantEntry<'a, T, V>),
        }

        impl<'a, T, V> Entry<'a, T, V> {
            /// The value, inserting `default` first if the entry is vacant.
            #[track_caller]
            pub fn or_insert(self, default: V) -> &'a mut V {
                self.or_insert_with(|| default)
            }

            /// The value, inserting what `default` returns first if the entry is vacant. If
            /// `default` panics, nothing changes.
            #[track_caller]
            pub fn or_insert_with(self, default: impl FnOnce() -> V) -> &'a mut V {
                match self {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(e) => e.insert(default()),
                }
            }

            /// The entry's handle.
            pub fn key(&self) -> Handle<T> {
                match self {
                    Entry::Occupied(e) => e.handle,
                    Entry::Vacant(e) => e.handle,
                }
            }

            /// Calls `f` on the value if the entry is occupied, and returns the entry.
            pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
                if let Entry::Occupied(e) = &mut self {
                    f(e.get_mut());
                }
                self
            }
        }

        impl<'a, T, V: Default> Entry<'a, T, V> {
            /// The value, inserting `V::default()` first if the entry is vacant.
            #[track_caller]
            pub fn or_default(self) -> &'a mut V {
                self.or_insert_with(V::default)
            }
        }

        /// Prints the handle, and the value if occupied.
        impl<T, V: fmt::Debug> fmt::Debug for Entry<'_, T, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    Entry::Occupied(e) => f.debug_tuple("Occupied").field(e).finish(),
                    Entry::Vacant(e) => f.debug_tuple("Vacant").field(e).finish(),
                }
            }
        }

        impl<T, V: fmt::Debug> fmt::Debug for OccupiedEntry<'_, T, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("OccupiedEntry")
                    .field("key", &self.handle)
                    .field("value", self.get())
                    .finish()
            }
        }

        impl<T, V> fmt::Debug for VacantEntry<'_, T, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("VacantEntry").field("key", &self.handle).finish()
            }
        }

        #[doc = concat!("The handles of a [`", stringify!($Table), "`]: [`",
            stringify!($Table), "::keys`].")]
        pub struct Keys<'a, T, V>(Iter<'a, T, V>);

        #[doc = concat!("The values of a [`", stringify!($Table), "`]: [`",
            stringify!($Table), "::values`].")]
        pub struct Values<'a, T, V>(Iter<'a, T, V>);

        #[doc = concat!("The values of a [`", stringify!($Table), "`], mutably: [`",
            stringify!($Table), "::values_mut`].")]
        pub struct ValuesMut<'a, T, V>(IterMut<'a, T, V>);

        impl<'a, T, V> Iterator for Keys<'a, T, V> {
            type Item = Handle<T>;
            fn next(&mut self) -> Option<Handle<T>> {
                self.0.next().map(|(h, _)| h)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<'a, T, V> Iterator for Values<'a, T, V> {
            type Item = &'a V;
            fn next(&mut self) -> Option<&'a V> {
                self.0.next().map(|(_, v)| v)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<'a, T, V> Iterator for ValuesMut<'a, T, V> {
            type Item = &'a mut V;
            fn next(&mut self) -> Option<&'a mut V> {
                self.0.next().map(|(_, v)| v)
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.0.size_hint()
            }
        }

        impl<T, V> Clone for Keys<'_, T, V> {
            fn clone(&self) -> Self {
                Keys(self.0.clone())
            }
        }

        impl<T, V> Clone for Values<'_, T, V> {
            fn clone(&self) -> Self {
                Values(self.0.clone())
            }
        }

        $crate::pool::secondary::side_table_shared!(@exact_and_fused
            Iter<'_, T, V>, IterMut<'_, T, V>, Keys<'_, T, V>, Values<'_, T, V>,
            ValuesMut<'_, T, V>, IntoIter<T, V>, Drain<'_, T, V>);

        impl<'a, T, V $(, $g)*> IntoIterator for &'a $Table<T, V $(, $g)*> {
            type Item = (Handle<T>, &'a V);
            type IntoIter = Iter<'a, T, V>;
            fn into_iter(self) -> Iter<'a, T, V> {
                self.iter()
            }
        }

        impl<'a, T, V $(, $g)*> IntoIterator for &'a mut $Table<T, V $(, $g)*> {
            type Item = (Handle<T>, &'a mut V);
            type IntoIter = IterMut<'a, T, V>;
            fn into_iter(self) -> IterMut<'a, T, V> {
                self.iter_mut()
            }
        }

        /// Inserts each pair in order, as `insert` does (a later pair for the same handle
        /// replaces an earlier one).
        impl<T, V $(, $g)*> FromIterator<(Handle<T>, V)> for $Table<T, V $(, $g)*>
        where
            $($b)*
            Self: Default,
        {
            #[track_caller]
            fn from_iter<I: IntoIterator<Item = (Handle<T>, V)>>(iter: I) -> Self {
                let mut table = Self::default();
                table.extend(iter);
                table
            }
        }

        /// Inserts each pair in order, as `insert` does.
        impl<T, V $(, $g)*> Extend<(Handle<T>, V)> for $Table<T, V $(, $g)*>
        where
            $($b)*
        {
            #[track_caller]
            fn extend<I: IntoIterator<Item = (Handle<T>, V)>>(&mut self, iter: I) {
                for (handle, value) in iter {
                    self.insert(handle, value);
                }
            }
        }

        /// Inserts a copy of each value, as `insert` does.
        impl<'a, T, V: Copy + 'a $(, $g)*> Extend<(Handle<T>, &'a V)> for $Table<T, V $(, $g)*>
        where
            $($b)*
        {
            #[track_caller]
            fn extend<I: IntoIterator<Item = (Handle<T>, &'a V)>>(&mut self, iter: I) {
                for (handle, value) in iter {
                    self.insert(handle, *value);
                }
            }
        }

        /// Panics if no value is stored for `handle`, with a message saying so.
        impl<T, V $(, $g)*> Index<Handle<T>> for $Table<T, V $(, $g)*>
        where
            $($b)*
        {
            type Output = V;

            #[track_caller]
            fn index(&self, handle: Handle<T>) -> &V {
                match self.get(handle) {
                    Some(value) => value,
                    None => $crate::pool::secondary::missing(handle, KIND),
                }
            }
        }

        /// Panics if no value is stored for `handle`, with a message saying so.
        impl<T, V $(, $g)*> IndexMut<Handle<T>> for $Table<T, V $(, $g)*>
        where
            $($b)*
        {
            #[track_caller]
            fn index_mut(&mut self, handle: Handle<T>) -> &mut V {
                match self.get_mut(handle) {
                    Some(value) => value,
                    None => $crate::pool::secondary::missing(handle, KIND),
                }
            }
        }
    };
    (@exact_and_fused $($ty:ty),*) => {$(
        impl<T, V> ExactSizeIterator for $ty {}
        impl<T, V> FusedIterator for $ty {}
    )*};
}
pub(crate) use side_table_shared;

side_table_shared!(SecondaryPool [] where []);
