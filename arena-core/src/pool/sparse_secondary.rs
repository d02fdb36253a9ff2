//! [`SparseSecondaryPool<T, V, S>`]: a side table for a few of a pool's values, in a `HashMap`
//! keyed by slot index (feature `std`).
//!
//! **Pick it** when only some of a pool's values get an entry (the selected enemies, the ones on
//! fire): memory and iteration are proportional to the entries, not to the pool's highest slot.
//! **Don't pick it** when most values get one: [`SecondaryPool`](super::SecondaryPool) looks up
//! by indexing instead of hashing, iterates in slot order and works without `std`.
//!
//! The generation rules are the dense table's, word for word: see
//! [generations](super::secondary#generations). Iteration order is the `HashMap`'s (arbitrary);
//! serialization writes the entries in slot order.
//!
//! ```
//! use arena_kit::Pool;
//! use arena_kit::pool::SparseSecondaryPool;
//!
//! let mut enemies = Pool::with_capacity(1000);
//! let handles: Vec<_> = (0..1000).map(|hp| enemies.insert(hp)).collect();
//! let mut burning = SparseSecondaryPool::new();
//! burning.insert(handles[998], 3.5_f32); // seconds left
//! assert_eq!(burning.len(), 1);
//! assert!(!burning.contains(handles[0]));
//! enemies.remove(handles[998]);
//! let newcomer = enemies.insert(5);
//! assert_eq!(newcomer.index(), handles[998].index());
//! assert!(burning.get(newcomer).is_none()); // the slot's new value is not burning
//! ```

use core::fmt;
use core::hash::BuildHasher;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem;
use core::ops::{Index, IndexMut};
use std::collections::hash_map::{self, HashMap, RandomState};

use super::Handle;
use super::secondary::{
    Admitted, InsertRefused, NO_SLOT, Owner, Stored, disjoint_values, retag_each, side_table_shared,
};

const KIND: &str = "SparseSecondaryPool";

/// A sparse side table: a `V` for some of a [`Pool<T>`](super::Pool)'s handles, in a
/// `HashMap<u32, (generation, V), S>` keyed by slot index, generation-checked.
///
/// See the [module documentation](self) for when to use it, and
/// [generations](super::secondary#generations) for the rules it follows.
///
/// ```
/// use arena_kit::Pool;
/// use arena_kit::pool::SparseSecondaryPool;
///
/// let mut pool = Pool::with_capacity(4);
/// let k = pool.insert("foo");
/// let mut notes = SparseSecondaryPool::new();
/// notes.insert(k, "bar");
/// assert_eq!(notes.get(k), Some(&"bar"));
/// assert_eq!(notes.remove(k), Some("bar"));
/// assert_eq!(notes.get(k), None);
/// ```
///
/// # Panic safety
///
/// `clear`, `retain`, `insert`, `drain` and the owning iterator drop each removed value exactly
/// once even if a `Drop` panics. Dropping the whole table is `HashMap`'s drop: if a value's
/// `Drop` panics there, the values not yet dropped are leaked (never dropped twice); call
/// [`clear`](Self::clear) first if that matters.
pub struct SparseSecondaryPool<T, V, S = RandomState> {
    map: HashMap<u32, Stored<V>, S>,
    owner: Owner,
    _type: PhantomData<fn() -> T>,
}

impl<T, V> SparseSecondaryPool<T, V, RandomState> {
    /// An empty table. Allocates nothing until the first insert.
    pub fn new() -> Self {
        Self::with_hasher(RandomState::new())
    }

    /// An empty table with room for `capacity` entries before it reallocates.
    ///
    /// # Panics
    /// If the memory cannot be allocated.
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_hasher(capacity, RandomState::new())
    }
}

impl<T, V, S> SparseSecondaryPool<T, V, S> {
    /// An empty table hashing with `hasher`.
    pub fn with_hasher(hasher: S) -> Self {
        SparseSecondaryPool {
            map: HashMap::with_hasher(hasher),
            owner: Owner::default(),
            _type: PhantomData,
        }
    }

    /// An empty table with room for `capacity` entries, hashing with `hasher`.
    ///
    /// # Panics
    /// If the memory cannot be allocated.
    #[track_caller]
    pub fn with_capacity_and_hasher(capacity: usize, hasher: S) -> Self {
        SparseSecondaryPool {
            map: HashMap::with_capacity_and_hasher(capacity, hasher),
            owner: Owner::default(),
            _type: PhantomData,
        }
    }

    /// The number of values stored. O(1).
    #[inline]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no value is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The number of entries the table holds without reallocating.
    pub fn capacity(&self) -> usize {
        self.map.capacity()
    }

    /// The table's hasher.
    pub fn hasher(&self) -> &S {
        self.map.hasher()
    }

    /// Keeps only the values for which `keep` returns `true`; the others are removed and dropped.
    /// If `keep` or a value's `Drop` panics, the values visited so far are kept or removed as
    /// decided and the rest stay.
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, &mut V) -> bool) {
        self.map
            .retain(|&index, s| keep(s.handle(index), &mut s.value));
    }

    /// Removes (and drops) every value; keeps the memory. If a value's `Drop` panics, the table
    /// is already empty and the other values are still dropped.
    pub fn clear(&mut self) {
        // Not `HashMap::clear`, which leaks the values after one whose `Drop` panics: dropping a
        // half-consumed `Drain` drops the rest.
        self.map.drain().for_each(drop);
    }

    /// Removes every value, yielding each with its handle (in arbitrary order). Values not
    /// consumed are removed when the iterator is dropped.
    pub fn drain(&mut self) -> Drain<'_, T, V> {
        Drain {
            inner: self.map.drain(),
            _type: PhantomData,
        }
    }

    /// The values with their handles, in arbitrary order.
    pub fn iter(&self) -> Iter<'_, T, V> {
        Iter {
            inner: self.map.iter(),
            _type: PhantomData,
        }
    }

    /// The values, mutably, with their handles, in arbitrary order.
    pub fn iter_mut(&mut self) -> IterMut<'_, T, V> {
        IterMut {
            inner: self.map.iter_mut(),
            _type: PhantomData,
        }
    }
}

impl<T, V, S: BuildHasher> SparseSecondaryPool<T, V, S> {
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
        // Room first, and a stale handle refused, as in `SecondaryPool::try_insert`: a refusal
        // binds the table to no pool.
        let Some(normalized) = self.owner.normalize(handle, KIND) else {
            return Err(InsertRefused::no_slot(value, handle));
        };
        if self.map.try_reserve(1).is_err() {
            return Err(InsertRefused::out_of_memory(value, handle));
        }
        let stored = self.map.get(&handle.index()).map(|s| s.generation);
        let retag = |tag| retag_each(|f| self.map.values_mut().for_each(f), tag);
        let admitted = match self.owner.admit(handle, normalized, stored, KIND, retag) {
            Err(newer) => return Err(InsertRefused::stale(value, handle, newer)),
            Ok(admitted) => admitted,
        };
        match (self.map.entry(handle.index()), admitted) {
            (hash_map::Entry::Occupied(mut e), Admitted::Same(_)) => {
                Ok(Some(mem::replace(&mut e.get_mut().value, value)))
            }
            // The pool reused the slot: dropped after the table holds the new value.
            (hash_map::Entry::Occupied(mut e), Admitted::Fresh(handle)) => {
                drop(mem::replace(e.get_mut(), Stored::new(handle, value)));
                Ok(None)
            }
            (hash_map::Entry::Vacant(e), admitted) => {
                e.insert(Stored::new(admitted.handle(), value));
                Ok(None)
            }
        }
    }

    /// The stored entry at slot `index`, if any (of any generation).
    #[inline]
    fn stored(&self, index: u32) -> Option<&Stored<V>> {
        self.map.get(&index)
    }

    #[inline]
    fn stored_mut(&mut self, index: u32) -> Option<&mut Stored<V>> {
        self.map.get_mut(&index)
    }

    /// Removes and returns the value stored for `handle`, or `None` if there is none (a value of
    /// another generation of the slot stays).
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by another pool than the handles in the table.
    #[track_caller]
    pub fn remove(&mut self, handle: Handle<T>) -> Option<V> {
        // Not through `entry`, which may allocate.
        let handle = self.owner.normalize(handle, KIND)?;
        if !self.contains(handle) {
            return None;
        }
        self.map.remove(&handle.index()).map(|s| s.value)
    }

    /// Mutable references to the values of `N` handles at once, or `None` if any handle has no
    /// value here or two handles name the same slot. O(N²) index comparisons.
    ///
    /// ```
    /// use arena_kit::Pool;
    /// use arena_kit::pool::SparseSecondaryPool;
    /// let mut pool = Pool::with_capacity(4);
    /// let (a, b) = (pool.insert(()), pool.insert(()));
    /// let mut side = SparseSecondaryPool::new();
    /// side.insert(a, 1);
    /// side.insert(b, 2);
    /// let [x, y] = side.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((side[a], side[b]), (2, 1));
    /// assert!(side.get_disjoint_mut([b, b]).is_none());
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
        // `HashMap::get_disjoint_mut` panics on a repeated key: refuse repeats first.
        let indexes = handles.map(|h| h.index());
        for (i, index) in indexes.iter().enumerate() {
            if indexes[..i].contains(index) {
                return None;
            }
        }
        Some(disjoint_values(
            self.map.get_disjoint_mut(indexes.each_ref()),
        ))
    }

    /// The entry of `handle`, to insert or update in place; `None` if `handle` is older than the
    /// handle whose value the slot holds (it is stale). An older handle's value is only replaced
    /// when a vacant entry is filled.
    ///
    /// ```
    /// use arena_kit::Pool;
    /// use arena_kit::pool::SparseSecondaryPool;
    /// let mut pool = Pool::with_capacity(2);
    /// let k = pool.insert("pony");
    /// let mut hits = SparseSecondaryPool::new();
    /// hits.entry(k).unwrap().and_modify(|n| *n += 1).or_insert(10);
    /// hits.entry(k).unwrap().and_modify(|n| *n += 1).or_insert(10);
    /// assert_eq!(hits[k], 11);
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
        let stored = self.map.get(&handle.index()).map(|s| s.generation);
        let retag = |tag| retag_each(|f| self.map.values_mut().for_each(f), tag);
        // A stale handle is refused before binding, so its `None` binds nothing.
        let admitted = self
            .owner
            .admit(handle, normalized, stored, KIND, retag)
            .ok()?;
        let handle = admitted.handle();
        let inner = match (self.map.entry(handle.index()), admitted) {
            (hash_map::Entry::Occupied(e), Admitted::Same(_)) => {
                return Some(Entry::Occupied(OccupiedEntry { inner: e, handle }));
            }
            (hash_map::Entry::Vacant(e), _) => Vacancy::Empty(e),
            (hash_map::Entry::Occupied(e), Admitted::Fresh(_)) => Vacancy::Older(e),
        };
        Some(Entry::Vacant(VacantEntry { inner, handle }))
    }

    /// Rebuilds a table from checked parts (deserialization).
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(map: HashMap<u32, Stored<V>, S>, owner: Owner) -> Self {
        SparseSecondaryPool {
            map,
            owner,
            _type: PhantomData,
        }
    }

    /// The entries as stored (serialization).
    #[cfg(feature = "serde")]
    pub(crate) fn map(&self) -> &HashMap<u32, Stored<V>, S> {
        &self.map
    }
}

/// A handle with a value in a [`SparseSecondaryPool`].
pub struct OccupiedEntry<'a, T, V> {
    inner: hash_map::OccupiedEntry<'a, u32, Stored<V>>,
    handle: Handle<T>,
}

/// A handle without a value in a [`SparseSecondaryPool`] (but not older than the slot's value).
pub struct VacantEntry<'a, T, V> {
    inner: Vacancy<'a, V>,
    handle: Handle<T>,
}

enum Vacancy<'a, V> {
    /// No value at the slot index.
    Empty(hash_map::VacantEntry<'a, u32, Stored<V>>),
    /// An older handle's value, replaced on insert.
    Older(hash_map::OccupiedEntry<'a, u32, Stored<V>>),
}

impl<'a, T, V> OccupiedEntry<'a, T, V> {
    /// The entry's handle.
    pub fn key(&self) -> Handle<T> {
        self.handle
    }

    /// The value.
    pub fn get(&self) -> &V {
        &self.inner.get().value
    }

    /// The value, mutably, for as long as the entry lives.
    pub fn get_mut(&mut self) -> &mut V {
        &mut self.inner.get_mut().value
    }

    /// The value, mutably, for as long as the table is borrowed.
    pub fn into_mut(self) -> &'a mut V {
        &mut self.inner.into_mut().value
    }

    /// Replaces the value, returning the old one.
    pub fn insert(&mut self, value: V) -> V {
        mem::replace(self.get_mut(), value)
    }

    /// Removes the value and returns it.
    pub fn remove(self) -> V {
        self.inner.remove().value
    }

    /// Removes the value and returns it with its handle.
    pub fn remove_entry(self) -> (Handle<T>, V) {
        (self.handle, self.inner.remove().value)
    }
}

impl<'a, T, V> VacantEntry<'a, T, V> {
    /// The entry's handle.
    pub fn key(&self) -> Handle<T> {
        self.handle
    }

    /// Stores `value` for the handle (replacing and dropping an older handle's value) and returns
    /// it, mutably.
    pub fn insert(self, value: V) -> &'a mut V {
        let stored = Stored::new(self.handle, value);
        match self.inner {
            Vacancy::Empty(e) => &mut e.insert(stored).value,
            Vacancy::Older(mut e) => {
                drop(mem::replace(e.get_mut(), stored));
                &mut e.into_mut().value
            }
        }
    }
}

/// The values of a [`SparseSecondaryPool`] with their handles: [`SparseSecondaryPool::iter`].
pub struct Iter<'a, T, V> {
    inner: hash_map::Iter<'a, u32, Stored<V>>,
    _type: PhantomData<fn() -> T>,
}

/// The values of a [`SparseSecondaryPool`], mutably, with their handles:
/// [`SparseSecondaryPool::iter_mut`].
pub struct IterMut<'a, T, V> {
    inner: hash_map::IterMut<'a, u32, Stored<V>>,
    _type: PhantomData<fn() -> T>,
}

/// The values of a [`SparseSecondaryPool`], moved out with their handles: its `IntoIterator`.
/// Dropping it drops the values not yielded, each exactly once even if one's `Drop` panics.
pub struct IntoIter<T, V> {
    inner: hash_map::IntoIter<u32, Stored<V>>,
    _type: PhantomData<fn() -> T>,
}

/// The values removed from a [`SparseSecondaryPool`] with their handles:
/// [`SparseSecondaryPool::drain`].
pub struct Drain<'a, T, V> {
    inner: hash_map::Drain<'a, u32, Stored<V>>,
    _type: PhantomData<fn() -> T>,
}

impl<'a, T, V> Iterator for Iter<'a, T, V> {
    type Item = (Handle<T>, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(&i, s)| (s.handle(i), &s.value))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<'a, T, V> Iterator for IterMut<'a, T, V> {
    type Item = (Handle<T>, &'a mut V);
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(&i, s)| (s.handle(i), &mut s.value))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T, V> Iterator for IntoIter<T, V> {
    type Item = (Handle<T>, V);
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(i, s)| (s.handle(i), s.value))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T, V> Iterator for Drain<'_, T, V> {
    type Item = (Handle<T>, V);
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(i, s)| (s.handle(i), s.value))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

// Dropping the values one by one here (instead of leaving it to the std iterator's drop, which
// leaks the rest after a panicking `Drop`): if one panics, unwinding drops the std iterator,
// which drops the remaining values.

/// Removes the values not yielded yet.
impl<T, V> Drop for Drain<'_, T, V> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

/// Drops the values not yielded yet.
impl<T, V> Drop for IntoIter<T, V> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

impl<T, V> Clone for Iter<'_, T, V> {
    fn clone(&self) -> Self {
        Iter {
            inner: self.inner.clone(),
            _type: PhantomData,
        }
    }
}

impl<T, V, S> IntoIterator for SparseSecondaryPool<T, V, S> {
    type Item = (Handle<T>, V);
    type IntoIter = IntoIter<T, V>;
    fn into_iter(self) -> IntoIter<T, V> {
        IntoIter {
            inner: self.map.into_iter(),
            _type: PhantomData,
        }
    }
}

impl<T, V, S: Default> Default for SparseSecondaryPool<T, V, S> {
    fn default() -> Self {
        Self::with_hasher(S::default())
    }
}

/// Copies every value, the hasher and the pool binding.
impl<T, V: Clone, S: Clone> Clone for SparseSecondaryPool<T, V, S> {
    fn clone(&self) -> Self {
        SparseSecondaryPool {
            map: self.map.clone(),
            owner: self.owner,
            _type: PhantomData,
        }
    }
}

/// Prints the values as a map from handle to value.
impl<T, V: fmt::Debug, S> fmt::Debug for SparseSecondaryPool<T, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Equal when both store values for the same handles and those values are equal.
impl<T, V: PartialEq, S: BuildHasher> PartialEq for SparseSecondaryPool<T, V, S> {
    fn eq(&self, other: &Self) -> bool {
        self.map == other.map
    }
}

impl<T, V: Eq, S: BuildHasher> Eq for SparseSecondaryPool<T, V, S> {}

side_table_shared!(SparseSecondaryPool [S] where [S: BuildHasher,]);
