//! [`SoaPool<T>`]: generational handles over dense SoA columns.
//!
//! Live values are packed at the front of the columns, so [`SoaPool::slices_mut`] walks
//! contiguous columns of live values only (what bevy's tables do for entities). Removing a value
//! moves the last one into its place and updates the handle map; handles stay valid, their rows
//! do not (a row index is not a stable name, a [`Handle`] is).

use alloc::vec::Vec;
use core::num::NonZeroU32;

use super::{Iter, Soa, SoaVec};
use crate::pool::generation::Generations;
use crate::pool::{Handle, PoolFull};

/// A slot of the handle map: an odd generation while a value lives there, with its row; an even
/// one while vacant, with the next vacant slot. Generations follow [`Pool`](crate::pool::Pool)'s
/// scheme: in debug builds they carry the pool's tag, so a handle from another pool is caught.
#[derive(Clone, Copy, Debug)]
struct Slot {
    generation: u32,
    /// The value's row while occupied; the next vacant slot (or [`NONE`]) while vacant.
    index: u32,
}

const NONE: u32 = u32::MAX;

/// A fixed-capacity pool of `T` stored as dense SoA columns, addressed by [`Handle<T>`].
///
/// ```
/// use arena_core::soa::{Col, Columns, Soa, SoaPool};
/// # struct Enemy { x: f32, health: f32 }
/// # impl Soa for Enemy {
/// #     type Columns = (Col<f32>, (Col<f32>, ()));
/// #     type Ref<'a> = (&'a f32, (&'a f32, ()));
/// #     type Mut<'a> = (&'a mut f32, (&'a mut f32, ()));
/// #     type Slices<'a> = (&'a [f32], (&'a [f32], ()));
/// #     type SlicesMut<'a> = (&'a mut [f32], (&'a mut [f32], ()));
/// #     fn into_columns(self) -> (f32, (f32, ())) { (self.x, (self.health, ())) }
/// #     fn from_columns((x, (health, ())): (f32, (f32, ()))) -> Self { Enemy { x, health } }
/// #     fn view<'a>(c: Self::Ref<'a>) -> Self::Ref<'a> { c }
/// #     fn view_mut<'a>(c: Self::Mut<'a>) -> Self::Mut<'a> { c }
/// #     fn view_slices<'a>(c: Self::Slices<'a>) -> Self::Slices<'a> { c }
/// #     fn view_slices_mut<'a>(c: Self::SlicesMut<'a>) -> Self::SlicesMut<'a> { c }
/// # }
/// let mut enemies = SoaPool::with_capacity(8);
/// let orc = enemies.insert(Enemy { x: 0.0, health: 100.0 });
/// let imp = enemies.insert(Enemy { x: 1.0, health: 50.0 });
/// enemies.remove(orc);
/// for h in enemies.slices_mut().1.0 {
///     *h -= 10.0; // only live enemies, in one contiguous column
/// }
/// assert_eq!(*enemies.get(imp).unwrap().1.0, 40.0);
/// assert!(enemies.get(orc).is_none());
/// ```
///
/// # Variance
///
/// Invariant in `T`, because it stores `T::Columns` (an associated type). That is also what
/// soundness asks of a container whose rows can be written through `&mut self`.
pub struct SoaPool<T: Soa> {
    values: SoaVec<T>,
    /// The slot of each row.
    owners: Vec<u32>,
    slots: Vec<Slot>,
    free: u32,
    capacity: usize,
    /// The generation scheme (and, in debug builds, the tag) shared with `Pool`.
    generations: Generations,
}

impl<T: Soa> SoaPool<T> {
    /// A pool for up to `capacity` live values; its columns are allocated at once.
    ///
    /// # Panics
    /// If `capacity` does not fit in memory or exceeds `u32::MAX - 1` handles.
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(
            capacity < NONE as usize,
            "a SoaPool holds at most u32::MAX - 1 values"
        );
        SoaPool {
            values: SoaVec::with_capacity(capacity),
            owners: Vec::with_capacity(capacity),
            slots: Vec::with_capacity(capacity),
            free: NONE,
            capacity,
            generations: Generations::for_new_pool(None),
        }
    }

    /// The number of live values.
    #[inline]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no value is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// How many values can be live at once.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Inserts `value` and returns its handle, or gives it back if the pool is full. O(1);
    /// never allocates after the first `capacity` distinct slots.
    pub fn try_insert(&mut self, value: T) -> Result<Handle<T>, PoolFull<T>> {
        if self.values.len() == self.capacity
            || (self.free == NONE && self.slots.len() >= NONE as usize)
        {
            return Err(PoolFull::new(value, self.capacity));
        }
        let row = self.values.len() as u32;
        // The value goes in first: if splitting it panics, nothing else has changed.
        self.values.push(value);
        self.owners.push(0);
        let index = if self.free != NONE {
            let index = self.free;
            let slot = &mut self.slots[index as usize];
            self.free = slot.index;
            slot.generation = Generations::occupy(slot.generation).get();
            slot.index = row;
            index
        } else {
            self.slots.push(Slot {
                generation: Generations::occupy(self.generations.first()).get(),
                index: row,
            });
            (self.slots.len() - 1) as u32
        };
        self.owners[row as usize] = index;
        let generation = self.slots[index as usize].generation;
        Ok(Handle::new(
            index,
            NonZeroU32::new(generation).expect("occupied generations are odd"),
        ))
    }

    /// Inserts `value` and returns its handle.
    ///
    /// # Panics
    /// If the pool is full; see [`try_insert`](Self::try_insert).
    #[track_caller]
    pub fn insert(&mut self, value: T) -> Handle<T> {
        match self.try_insert(value) {
            Ok(h) => h,
            Err(full) => panic!("{full}"),
        }
    }

    /// The row of a live handle. On a miss, a handle carrying another pool's tag panics (debug
    /// builds), as in [`Pool`](crate::pool::Pool).
    #[inline]
    #[track_caller]
    fn row(&self, handle: Handle<T>) -> Option<usize> {
        match self.slots.get(handle.index() as usize) {
            // Handle generations are odd, so equality means the slot is occupied.
            Some(slot) if slot.generation == handle.generation().get() => Some(slot.index as usize),
            _ => {
                self.generations.check_foreign(handle);
                None
            }
        }
    }

    /// Whether `handle`'s value is still live.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    pub fn contains(&self, handle: Handle<T>) -> bool {
        self.row(handle).is_some()
    }

    /// References to the fields of `handle`'s value, or `None` if it was removed.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    pub fn get(&self, handle: Handle<T>) -> Option<T::Ref<'_>> {
        self.values.get(self.row(handle)?)
    }

    /// Exclusive references to the fields of `handle`'s value, or `None` if it was removed.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    #[inline]
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<T::Mut<'_>> {
        let row = self.row(handle)?;
        self.values.get_mut(row)
    }

    /// Removes `handle`'s value and returns it; `None` if it was already removed. The last value
    /// moves into the freed row. O(1).
    ///
    /// The handle map and the length are final before the value is rebuilt (user code: its
    /// `from_columns`), so a panic there still leaves a consistent pool.
    ///
    /// # Panics
    /// In debug builds, if `handle` was made by a different pool.
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        let row = self.row(handle)?;
        // The handle map is fixed up before the value is rebuilt (user code that may panic).
        self.owners.swap_remove(row);
        if let Some(&moved) = self.owners.get(row) {
            self.slots[moved as usize].index = row as u32;
        }
        let index = handle.index();
        let slot = &mut self.slots[index as usize];
        match self.generations.vacate(slot.generation) {
            Some(vacant) => {
                slot.generation = vacant;
                slot.index = self.free;
                self.free = index;
            }
            None => {
                // Out of generations: the slot is retired, never reused, so no handle can alias.
                slot.generation = self.generations.retired();
                slot.index = NONE;
            }
        }
        Some(self.values.swap_remove(row))
    }

    /// Every live value with its handle, in row order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Handle<T>, T::Ref<'_>)> + '_ {
        let slots = &self.slots;
        self.owners
            .iter()
            .zip(self.values.iter())
            .map(move |(&index, row)| {
                let generation = slots[index as usize].generation;
                let generation = NonZeroU32::new(generation).expect("occupied generations are odd");
                (Handle::new(index, generation), row)
            })
    }

    /// The live values as [`Soa::Ref`] views, in row order, without handles.
    pub fn values(&self) -> Iter<'_, T> {
        self.values.iter()
    }

    /// Every column of the live values as a shared slice (contiguous, no holes).
    #[inline]
    pub fn slices(&self) -> T::Slices<'_> {
        self.values.slices()
    }

    /// Every column of the live values as an exclusive slice (contiguous, no holes).
    #[inline]
    pub fn slices_mut(&mut self) -> T::SlicesMut<'_> {
        self.values.slices_mut()
    }
}
