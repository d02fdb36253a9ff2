//! Iterators over a [`Pool`]: [`Iter`] and [`IterMut`] walk the live values with their handles;
//! [`Drain`] and [`IntoIter`] remove them.
//!
//! The walks go block by block over the slots below the highest slot ever used, test each slot's
//! generation (one load, the same as slotmap), and open no further block once every live value
//! has been seen.

use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::slice;

use super::Pool;
use super::chunks::Chunks;
use super::handle::Handle;
use super::slot::Slot;

/// The blocks of a pool still to visit, cut at the high-water mark, as raw parts.
struct Blocks<'a, T> {
    chunks: &'a Chunks<T>,
    /// Index of the first slot of the next block.
    next_block_start: u32,
    /// Number of the next block.
    next_block: usize,
    /// Slots at or above this were never used.
    end: u32,
}

impl<'a, T> Blocks<'a, T> {
    fn new(chunks: &'a Chunks<T>, end: u32) -> Self {
        Blocks {
            chunks,
            next_block_start: 0,
            next_block: 0,
            end,
        }
    }

    /// The next block: its first index, pointer and the number of slots to visit in it.
    fn next(&mut self) -> Option<(u32, NonNull<Slot<T>>, usize)> {
        if self.next_block_start >= self.end {
            return None;
        }
        let (ptr, len) = self.chunks.block(self.next_block)?;
        let start = self.next_block_start;
        let visit = len.min(self.end - start);
        self.next_block += 1;
        self.next_block_start = start + len;
        Some((start, ptr, visit as usize))
    }
}

/// The walk shared by [`Iter`] and [`IterMut`]: yields the next occupied slot (read with
/// `$occupied`) with its handle, opening the next block with `$open` when one runs out, unless
/// every live value has been seen. (Testing `remaining` per slot instead of per block costs a
/// branch in the hot loop and measured about 1.5x slower over 100,000 values.)
macro_rules! walk_live {
    ($it:ident, $occupied:ident, |$ptr:ident, $len:ident| $open:expr) => {{
        loop {
            match $it.slots.next() {
                Some(slot) => {
                    let index = $it.index;
                    $it.index += 1;
                    if let Some((generation, value)) = slot.$occupied() {
                        $it.remaining -= 1;
                        return Some((Handle::new(index, generation), value));
                    }
                }
                None => {
                    if $it.remaining == 0 {
                        return None;
                    }
                    let (start, block, $len) = $it.blocks.next()?;
                    let $ptr = block.as_ptr();
                    $it.slots = $open;
                    $it.index = start;
                }
            }
        }
    }};
}

/// Live values with their handles, in slot order: [`Pool::iter`].
///
/// # Variance
///
/// Covariant in `'a` and in `T`, like `slice::Iter<'a, T>`: it only gives shared access.
pub struct Iter<'a, T> {
    slots: slice::Iter<'a, Slot<T>>,
    /// Index of the next slot of `slots`.
    index: u32,
    blocks: Blocks<'a, T>,
    remaining: usize,
}

impl<'a, T> Iter<'a, T> {
    pub(super) fn new(chunks: &'a Chunks<T>, high_water: u32, len: usize) -> Self {
        Iter {
            slots: [].iter(),
            index: 0,
            blocks: Blocks::new(chunks, high_water),
            remaining: len,
        }
    }
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = (Handle<T>, &'a T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the block has at least `len` initialized slots, shared-borrowed for 'a
        // through `blocks.chunks`.
        walk_live!(self, occupied, |ptr, len| unsafe {
            slice::from_raw_parts(ptr, len)
        }
        .iter())
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}
impl<T> FusedIterator for Iter<'_, T> {}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            slots: self.slots.clone(),
            index: self.index,
            blocks: Blocks { ..self.blocks },
            remaining: self.remaining,
        }
    }
}

/// Live values, mutably, with their handles, in slot order: [`Pool::iter_mut`].
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`, like `slice::IterMut<'a, T>`: with `&mut T` a shorter-lived
/// value could be written into a slot that the pool keeps for the longer type.
pub struct IterMut<'a, T> {
    slots: slice::IterMut<'a, Slot<T>>,
    index: u32,
    blocks: Blocks<'a, T>,
    remaining: usize,
    _unique: PhantomData<&'a mut T>,
}

impl<'a, T> IterMut<'a, T> {
    pub(super) fn new(chunks: &'a mut Chunks<T>, high_water: u32, len: usize) -> Self {
        IterMut {
            slots: [].iter_mut(),
            index: 0,
            blocks: Blocks::new(chunks, high_water),
            remaining: len,
            _unique: PhantomData,
        }
    }
}

impl<'a, T> Iterator for IterMut<'a, T> {
    type Item = (Handle<T>, &'a mut T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the block has at least `len` initialized slots; the pool is borrowed mutably
        // for 'a and the blocks never overlap, so each slot is handed out once.
        walk_live!(self, occupied_mut, |ptr, len| unsafe {
            slice::from_raw_parts_mut(ptr, len)
        }
        .iter_mut())
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T> ExactSizeIterator for IterMut<'_, T> {}
impl<T> FusedIterator for IterMut<'_, T> {}

/// Removes every value of a pool, yielding each with its (now stale) handle: [`Pool::drain`].
/// Dropping it removes the rest.
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`, because it holds the `&'a mut Pool<T>` (it would be sound
/// covariant, as it only yields values, but nothing needs that).
pub struct Drain<'a, T> {
    pool: &'a mut Pool<T>,
    index: u32,
}

impl<'a, T> Drain<'a, T> {
    pub(super) fn new(pool: &'a mut Pool<T>) -> Self {
        Drain { pool, index: 0 }
    }
}

impl<T> Iterator for Drain<'_, T> {
    type Item = (Handle<T>, T);

    fn next(&mut self) -> Option<Self::Item> {
        self.pool.take_next(&mut self.index)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pool.len(), Some(self.pool.len()))
    }
}

impl<T> ExactSizeIterator for Drain<'_, T> {}
impl<T> FusedIterator for Drain<'_, T> {}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

/// The values of a pool, by value, with their handles: `Pool::into_iter`.
///
/// # Variance
///
/// Covariant in `T`, like `vec::IntoIter<T>`: it owns the values it yields.
pub struct IntoIter<T> {
    pool: Pool<T>,
    index: u32,
}

impl<T> IntoIter<T> {
    pub(super) fn new(pool: Pool<T>) -> Self {
        IntoIter { pool, index: 0 }
    }
}

impl<T> Iterator for IntoIter<T> {
    type Item = (Handle<T>, T);

    fn next(&mut self) -> Option<Self::Item> {
        self.pool.take_next(&mut self.index)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pool.len(), Some(self.pool.len()))
    }
}

impl<T> ExactSizeIterator for IntoIter<T> {}
impl<T> FusedIterator for IntoIter<T> {}
