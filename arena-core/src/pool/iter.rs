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
use super::key::{PoolHandle, make};
use super::slot::Slot;

/// The blocks of a pool still to visit from either end, cut at the high-water mark.
struct Blocks<'a, T> {
    chunks: &'a Chunks<T>,
    /// Number of the next block to open from the front.
    front: usize,
    /// One past the number of the next block to open from the back.
    back: usize,
    /// Slots at or above this were never used.
    end: u32,
}

impl<'a, T> Blocks<'a, T> {
    fn new(chunks: &'a Chunks<T>, end: u32) -> Self {
        let first = chunks.first_len();
        let back = match chunks.chunk_len() {
            _ if end == 0 => 0,
            Some(chunk) if end > first => 1 + (end - first).div_ceil(chunk) as usize,
            _ => 1,
        };
        Blocks {
            chunks,
            front: 0,
            back,
            end,
        }
    }

    /// Block `n`: its first index, pointer and the number of slots to visit in it.
    fn open(&self, n: usize) -> (u32, NonNull<Slot<T>>, usize) {
        let (ptr, len) = self.chunks.block(n).expect("a block below the high water");
        let start = match n.checked_sub(1) {
            None => 0,
            // Below the high water, so within `u32`.
            Some(i) => self.chunks.first_len() + i as u32 * len,
        };
        (start, ptr, len.min(self.end - start) as usize)
    }

    /// The next block from the front.
    fn next_front(&mut self) -> Option<(u32, NonNull<Slot<T>>, usize)> {
        (self.front < self.back).then(|| {
            self.front += 1;
            self.open(self.front - 1)
        })
    }

    /// The next block from the back.
    fn next_back(&mut self) -> Option<(u32, NonNull<Slot<T>>, usize)> {
        (self.front < self.back).then(|| {
            self.back -= 1;
            self.open(self.back)
        })
    }
}

impl<T> Clone for Blocks<'_, T> {
    fn clone(&self) -> Self {
        Blocks { ..*self }
    }
}

/// The walk shared by [`Iter`] and [`IterMut`], from either end: yields the next occupied slot
/// of the `$near` slice (stepped with `$step`, read with `$occupied`) with its handle (index
/// from `$index`), opening the next block from this end (`$open_next`, made a slice with
/// `$open`, starting at `$near_index`) when one runs out, unless every live value has been seen;
/// once no block is left, it goes on into what the other end (`$far`) has opened. (Testing
/// `remaining` per slot instead of per block costs a branch in the hot loop and measured about
/// 1.5x slower over 100,000 values.)
macro_rules! walk {
    (
        $it:ident, $occupied:ident, $near:ident . $step:ident, $index:expr,
        $near_index:ident, $far:ident, $far_index:ident, $open_next:ident,
        |$ptr:ident, $len:ident| $open:expr
    ) => {{
        loop {
            match $it.$near.$step() {
                Some(slot) => {
                    let index = $index;
                    if let Some((generation, value)) = slot.$occupied() {
                        $it.remaining -= 1;
                        return Some((make::<H>(index, generation), value));
                    }
                }
                None => {
                    if $it.remaining == 0 {
                        return None;
                    }
                    match $it.blocks.$open_next() {
                        Some((start, block, $len)) => {
                            let $ptr = block.as_ptr();
                            $it.$near = $open;
                            $it.$near_index = start;
                        }
                        None if $it.$far.len() == 0 => return None,
                        None => {
                            $it.$near = core::mem::take(&mut $it.$far);
                            $it.$near_index = $it.$far_index;
                        }
                    }
                }
            }
        }
    }};
}

/// [`walk`] from the front: slot indexes count up from `front_index`.
macro_rules! walk_front {
    ($it:ident, $occupied:ident, |$ptr:ident, $len:ident| $open:expr) => {
        walk!(
            $it,
            $occupied,
            front.next,
            {
                $it.front_index += 1;
                $it.front_index - 1
            },
            front_index,
            back,
            back_index,
            next_front,
            |$ptr, $len| $open
        )
    };
}

/// [`walk`] from the back: `back` holds the slots before the one just taken, from `back_index`.
macro_rules! walk_back {
    ($it:ident, $occupied:ident, |$ptr:ident, $len:ident| $open:expr) => {
        walk!(
            $it,
            $occupied,
            back.next_back,
            $it.back_index + $it.back.len() as u32,
            back_index,
            front,
            front_index,
            next_back,
            |$ptr, $len| $open
        )
    };
}

/// `fold` for [`Iter`] and [`IterMut`]: the front slice, every block not opened yet, then the
/// back slice, each walked by one plain loop over its slots. Per slot that is the occupancy test
/// and the call, as in slotmap's loop: no per-slot test of `remaining` (which [`walk`] pays per
/// block too) and no index kept unless the closure reads the handle. No block is opened once
/// every live value has been seen. `$open` makes block `$ptr`'s `$len` slots a slice iterator.
macro_rules! fold_walk {
    ($it:ident, $init:ident, $f:ident, $occupied:ident, |$ptr:ident, $len:ident| $open:expr) => {{
        let mut remaining = $it.remaining;
        let mut blocks = $it.blocks;
        let mut visit = |acc, slots, start: u32, remaining: &mut usize| {
            let mut acc = acc;
            // Slots first: `zip` stops on the slots' end before advancing the index, whose
            // last step is then to one past the block's last slot, at most `u32::MAX` (indexes
            // stop below it). The other order steps past `u32::MAX` at the end of a block that
            // ends at the last index (an overflow panic in debug builds).
            for (slot, index) in Iterator::zip(slots, start..) {
                if let Some((generation, value)) = Slot::$occupied(slot) {
                    *remaining -= 1;
                    acc = $f(acc, (make::<H>(index, generation), value));
                }
            }
            acc
        };
        let mut acc = visit($init, $it.front, $it.front_index, &mut remaining);
        while remaining != 0 {
            let Some((start, block, $len)) = blocks.next_front() else {
                break;
            };
            let $ptr = block.as_ptr();
            acc = visit(acc, $open, start, &mut remaining);
        }
        if remaining != 0 {
            acc = visit(acc, $it.back, $it.back_index, &mut remaining);
        }
        acc
    }};
}

/// Live values with their handles, in slot order (or reversed, from the back): [`Pool::iter`].
///
/// # Variance
///
/// Covariant in `'a` and in `T`, like `slice::Iter<'a, T>`: it only gives shared access.
pub struct Iter<'a, T, H = Handle<T>> {
    /// The slots of the block opened from the front, not yet visited.
    front: slice::Iter<'a, Slot<T>>,
    /// Index of the next slot of `front`.
    front_index: u32,
    /// The slots of the block opened from the back, not yet visited.
    back: slice::Iter<'a, Slot<T>>,
    /// Index of the first slot of `back`.
    back_index: u32,
    blocks: Blocks<'a, T>,
    /// Live values not yet yielded from either end.
    remaining: usize,
    _handle: PhantomData<fn() -> H>,
}

impl<'a, T, H> Iter<'a, T, H> {
    pub(super) fn new(chunks: &'a Chunks<T>, high_water: u32, len: usize) -> Self {
        Iter {
            front: [].iter(),
            front_index: 0,
            back: [].iter(),
            back_index: 0,
            blocks: Blocks::new(chunks, high_water),
            remaining: len,
            _handle: PhantomData,
        }
    }
}

impl<'a, T, H: PoolHandle<T>> Iterator for Iter<'a, T, H> {
    type Item = (H, &'a T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the block has at least `len` initialized slots, shared-borrowed for 'a
        // through `blocks.chunks`.
        walk_front!(self, occupied, |ptr, len| unsafe {
            slice::from_raw_parts(ptr, len)
        }
        .iter())
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, mut f: F) -> B {
        // SAFETY: as in `next`.
        fold_walk!(self, init, f, occupied, |ptr, len| unsafe {
            slice::from_raw_parts(ptr, len)
        }
        .iter())
    }
}

impl<T, H: PoolHandle<T>> DoubleEndedIterator for Iter<'_, T, H> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        // SAFETY: as in `next`.
        walk_back!(self, occupied, |ptr, len| unsafe {
            slice::from_raw_parts(ptr, len)
        }
        .iter())
    }
}

impl<T, H: PoolHandle<T>> ExactSizeIterator for Iter<'_, T, H> {}
impl<T, H: PoolHandle<T>> FusedIterator for Iter<'_, T, H> {}

impl<T, H> Clone for Iter<'_, T, H> {
    fn clone(&self) -> Self {
        Iter {
            front: self.front.clone(),
            front_index: self.front_index,
            back: self.back.clone(),
            back_index: self.back_index,
            blocks: self.blocks.clone(),
            remaining: self.remaining,
            _handle: PhantomData,
        }
    }
}

/// Live values, mutably, with their handles, in slot order (or reversed, from the back):
/// [`Pool::iter_mut`].
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`, like `slice::IterMut<'a, T>`: with `&mut T` a shorter-lived
/// value could be written into a slot that the pool keeps for the longer type.
pub struct IterMut<'a, T, H = Handle<T>> {
    front: slice::IterMut<'a, Slot<T>>,
    front_index: u32,
    back: slice::IterMut<'a, Slot<T>>,
    back_index: u32,
    blocks: Blocks<'a, T>,
    remaining: usize,
    _unique: PhantomData<&'a mut T>,
    _handle: PhantomData<fn() -> H>,
}

// SAFETY: an `IterMut` is the pool's exclusive borrow (it is made from `&'a mut Chunks<T>`), like
// `slice::IterMut<'a, T>`, which is `Send` when `T` is. Its shared `&Chunks<T>` (in `Blocks`) only
// reads the chunk table (block pointers and lengths, no `T`), and no other reference to the pool
// exists while it lives, so moving it to another thread shares nothing: each `&mut T` it yields
// moves a `T` to that thread, which `T: Send` allows. (The derived bound was `T: Sync`, from that
// `&Chunks<T>`.) `Sync` stays derived: `T: Sync`, as for `slice::IterMut`.
unsafe impl<T: Send, H> Send for IterMut<'_, T, H> {}

impl<'a, T, H> IterMut<'a, T, H> {
    pub(super) fn new(chunks: &'a mut Chunks<T>, high_water: u32, len: usize) -> Self {
        IterMut {
            front: [].iter_mut(),
            front_index: 0,
            back: [].iter_mut(),
            back_index: 0,
            blocks: Blocks::new(chunks, high_water),
            remaining: len,
            _unique: PhantomData,
            _handle: PhantomData,
        }
    }
}

impl<'a, T, H: PoolHandle<T>> Iterator for IterMut<'a, T, H> {
    type Item = (H, &'a mut T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: the block has at least `len` initialized slots; the pool is borrowed mutably
        // for 'a and each block is opened once (from the front or the back), so each slot is
        // handed out once.
        walk_front!(self, occupied_mut, |ptr, len| unsafe {
            slice::from_raw_parts_mut(ptr, len)
        }
        .iter_mut())
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, mut f: F) -> B {
        // SAFETY: as in `next`: each block not opened yet is opened once, here.
        fold_walk!(self, init, f, occupied_mut, |ptr, len| unsafe {
            slice::from_raw_parts_mut(ptr, len)
        }
        .iter_mut())
    }
}

impl<T, H: PoolHandle<T>> DoubleEndedIterator for IterMut<'_, T, H> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        // SAFETY: as in `next`.
        walk_back!(self, occupied_mut, |ptr, len| unsafe {
            slice::from_raw_parts_mut(ptr, len)
        }
        .iter_mut())
    }
}

impl<T, H: PoolHandle<T>> ExactSizeIterator for IterMut<'_, T, H> {}
impl<T, H: PoolHandle<T>> FusedIterator for IterMut<'_, T, H> {}

/// Removes every value of a pool, yielding each with its (now stale) handle: [`Pool::drain`].
/// Dropping it removes the rest.
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`, because it holds the `&'a mut Pool<T>` (it would be sound
/// covariant, as it only yields values, but nothing needs that).
pub struct Drain<'a, T, H: PoolHandle<T> = Handle<T>> {
    pool: &'a mut Pool<T, H>,
    /// Slots `front..back` may still hold values.
    front: u32,
    back: u32,
}

impl<'a, T, H: PoolHandle<T>> Drain<'a, T, H> {
    pub(super) fn new(pool: &'a mut Pool<T, H>) -> Self {
        let back = pool.slots.high_water();
        Drain {
            pool,
            front: 0,
            back,
        }
    }
}

impl<T, H: PoolHandle<T>> Iterator for Drain<'_, T, H> {
    type Item = (H, T);

    fn next(&mut self) -> Option<Self::Item> {
        self.pool.slots.take_front(&mut self.front, self.back)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pool.len(), Some(self.pool.len()))
    }
}

impl<T, H: PoolHandle<T>> DoubleEndedIterator for Drain<'_, T, H> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.pool.slots.take_back(self.front, &mut self.back)
    }
}

impl<T, H: PoolHandle<T>> ExactSizeIterator for Drain<'_, T, H> {}
impl<T, H: PoolHandle<T>> FusedIterator for Drain<'_, T, H> {}

impl<T, H: PoolHandle<T>> Drop for Drain<'_, T, H> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

/// The values of a pool, by value, with their handles: `Pool::into_iter`.
///
/// # Variance
///
/// Covariant in `T`, like `vec::IntoIter<T>`: it owns the values it yields.
pub struct IntoIter<T, H: PoolHandle<T> = Handle<T>> {
    pool: Pool<T, H>,
    /// Slots `front..back` may still hold values.
    front: u32,
    back: u32,
}

impl<T, H: PoolHandle<T>> IntoIter<T, H> {
    pub(super) fn new(pool: Pool<T, H>) -> Self {
        let back = pool.slots.high_water();
        IntoIter {
            pool,
            front: 0,
            back,
        }
    }
}

impl<T, H: PoolHandle<T>> Iterator for IntoIter<T, H> {
    type Item = (H, T);

    fn next(&mut self) -> Option<Self::Item> {
        self.pool.slots.take_front(&mut self.front, self.back)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.pool.len(), Some(self.pool.len()))
    }
}

impl<T, H: PoolHandle<T>> DoubleEndedIterator for IntoIter<T, H> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.pool.slots.take_back(self.front, &mut self.back)
    }
}

impl<T, H: PoolHandle<T>> ExactSizeIterator for IntoIter<T, H> {}
impl<T, H: PoolHandle<T>> FusedIterator for IntoIter<T, H> {}

/// One of the projecting iterators ([`Keys`], [`Values`], [`ValuesMut`], [`IntoValues`]): a
/// wrapper around a pair iterator that keeps one half of each pair, with the same directions and
/// exact length.
macro_rules! projection {
    (
        $(#[$doc:meta])*
        $name:ident<$($lt:lifetime,)? T, H $(: $bound:path)?> over $inner:ty => $item:ty,
        |$pair:pat_param| $keep:expr
    ) => {
        $(#[$doc])*
        pub struct $name<$($lt,)? T, H $(: $bound)? = Handle<T>> {
            inner: $inner,
        }

        impl<$($lt,)? T, H: PoolHandle<T>> $name<$($lt,)? T, H> {
            pub(super) fn new(inner: $inner) -> Self {
                $name { inner }
            }
        }

        impl<$($lt,)? T, H: PoolHandle<T>> Iterator for $name<$($lt,)? T, H> {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<$item> {
                self.inner.next().map(|$pair| $keep)
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                self.inner.size_hint()
            }
        }

        impl<$($lt,)? T, H: PoolHandle<T>> DoubleEndedIterator for $name<$($lt,)? T, H> {
            #[inline]
            fn next_back(&mut self) -> Option<$item> {
                self.inner.next_back().map(|$pair| $keep)
            }
        }

        impl<$($lt,)? T, H: PoolHandle<T>> ExactSizeIterator for $name<$($lt,)? T, H> {}
        impl<$($lt,)? T, H: PoolHandle<T>> FusedIterator for $name<$($lt,)? T, H> {}
    };
}

projection! {
    /// The handles of the live values, in slot order: [`Pool::keys`].
    ///
    /// # Variance
    ///
    /// Covariant in `'a` and in `T`, as [`Iter`].
    Keys<'a, T, H> over Iter<'a, T, H> => H, |(handle, _)| handle
}

projection! {
    /// The live values, in slot order: [`Pool::values`].
    ///
    /// # Variance
    ///
    /// Covariant in `'a` and in `T`, as [`Iter`].
    Values<'a, T, H> over Iter<'a, T, H> => &'a T, |(_, value)| value
}

projection! {
    /// The live values, mutably, in slot order: [`Pool::values_mut`].
    ///
    /// # Variance
    ///
    /// Covariant in `'a`; invariant in `T`, as [`IterMut`].
    ValuesMut<'a, T, H> over IterMut<'a, T, H> => &'a mut T, |(_, value)| value
}

projection! {
    /// The values of a pool, by value, in slot order: [`Pool::into_values`].
    ///
    /// # Variance
    ///
    /// Covariant in `T`, as [`IntoIter`].
    IntoValues<T, H: PoolHandle<T>> over IntoIter<T, H> => T, |(_, value)| value
}

impl<T, H: PoolHandle<T>> Clone for Keys<'_, T, H> {
    fn clone(&self) -> Self {
        Keys::new(self.inner.clone())
    }
}

impl<T, H: PoolHandle<T>> Clone for Values<'_, T, H> {
    fn clone(&self) -> Self {
        Values::new(self.inner.clone())
    }
}
