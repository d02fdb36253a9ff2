//! Borrowing iterators over SoA storage: rows as views, and fixed-size chunks of every column.

use core::iter::FusedIterator;
use core::marker::PhantomData;

use super::{Columns, Soa};

/// Rows of a SoA container as [`Soa::Ref`] views, front to back. From `iter()`.
///
/// # Variance
///
/// Covariant in `'a`. Invariant in `T`, because it stores `T::Columns` (an associated type). (As
/// for [`SoaSlice`](super::SoaSlice), a shared iterator would be sound covariant.)
pub struct Iter<'a, T: Soa> {
    cols: T::Columns,
    front: usize,
    back: usize,
    _marker: PhantomData<&'a T>,
}

/// Rows of a SoA container as [`Soa::Mut`] views, front to back. From `iter_mut()`.
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`, as soundness requires of an iterator handing out mutable
/// rows (see [`SoaSliceMut`](super::SoaSliceMut)).
pub struct IterMut<'a, T: Soa> {
    cols: T::Columns,
    front: usize,
    back: usize,
    _marker: PhantomData<&'a mut T>,
}

macro_rules! row_iter {
    ($name:ident, $item:ident, $get:ident, $view:ident) => {
        impl<'a, T: Soa> $name<'a, T> {
            /// # Safety
            /// - rows `front..back` of `cols` are initialised and borrowed as this iterator's
            ///   kind (shared or exclusive) for `'a`.
            #[inline]
            pub(crate) unsafe fn new(cols: T::Columns, front: usize, back: usize) -> Self {
                $name {
                    cols,
                    front,
                    back,
                    _marker: PhantomData,
                }
            }
        }

        impl<'a, T: Soa + 'a> Iterator for $name<'a, T> {
            type Item = T::$item<'a>;
            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                if self.front < self.back {
                    let i = self.front;
                    self.front += 1;
                    // SAFETY: `i` is in the borrowed range and is yielded once.
                    Some(T::$view(unsafe { self.cols.$get(i) }))
                } else {
                    None
                }
            }
            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                let n = self.back - self.front;
                (n, Some(n))
            }
            #[inline]
            fn nth(&mut self, n: usize) -> Option<Self::Item> {
                self.front = self.front.saturating_add(n).min(self.back);
                self.next()
            }
        }

        impl<'a, T: Soa + 'a> DoubleEndedIterator for $name<'a, T> {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                if self.front < self.back {
                    self.back -= 1;
                    // SAFETY: `back` is in the borrowed range and is yielded once.
                    Some(T::$view(unsafe { self.cols.$get(self.back) }))
                } else {
                    None
                }
            }
        }

        impl<'a, T: Soa + 'a> ExactSizeIterator for $name<'a, T> {}
        impl<'a, T: Soa + 'a> FusedIterator for $name<'a, T> {}
    };
}

row_iter!(Iter, Ref, get, view);
row_iter!(IterMut, Mut, get_mut, view_mut);

impl<T: Soa> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            cols: self.cols,
            front: self.front,
            back: self.back,
            _marker: PhantomData,
        }
    }
}

/// Every column in chunks of exactly `N` rows, as [`Soa::Slices`] views whose slices all have
/// length `N`; the last `len % N` rows are in [`remainder`](Self::remainder). Because `N` is a
/// constant, a loop over `0..N` inside a chunk has no bounds checks and vectorises. From
/// `chunks_exact::<N>()`.
///
/// # Variance
///
/// Covariant in `'a`. Invariant in `T`, because it stores `T::Columns` (an associated type).
pub struct ChunksExact<'a, T: Soa, const N: usize> {
    chunks: Chunks<T::Columns, N>,
    _marker: PhantomData<&'a T>,
}

/// Every column in exclusive chunks of exactly `N` rows, as [`Soa::SlicesMut`] views; the last
/// `len % N` rows are in [`into_remainder`](Self::into_remainder). From `chunks_exact_mut::<N>()`.
///
/// # Variance
///
/// Covariant in `'a`; invariant in `T`, as soundness requires of mutable chunks (see
/// [`SoaSliceMut`](super::SoaSliceMut)).
pub struct ChunksExactMut<'a, T: Soa, const N: usize> {
    chunks: Chunks<T::Columns, N>,
    _marker: PhantomData<&'a mut T>,
}

/// The walk both chunk iterators share. It steps the columns by `N` rows per chunk (a pointer
/// bump per column, as `<[T]>::chunks_exact` does) rather than computing each chunk from its
/// first row's index: the optimiser then sees each chunk's rows follow the previous chunk's, and
/// vectorises a `0..N` loop inside the chunk as it does a zip.
struct Chunks<C, const N: usize> {
    /// The next chunk's first row in every column.
    next: C,
    /// Chunks not yet yielded.
    left: usize,
    /// The rows after the last chunk, and how many.
    rest: C,
    rest_len: usize,
}

impl<C: Columns, const N: usize> Chunks<C, N> {
    /// # Safety
    /// - `cols` has at least `len` rows.
    #[inline(always)]
    unsafe fn new(cols: C, len: usize) -> Self {
        const {
            assert!(
                N > 0,
                "chunks_exact::<N>() and chunks_exact_mut::<N>() need N > 0"
            )
        };
        let whole = len - len % N;
        Chunks {
            next: cols,
            left: whole / N,
            // SAFETY: `whole <= len`, in bounds of the columns.
            rest: unsafe { cols.offset(whole) },
            rest_len: len - whole,
        }
    }

    /// The next chunk's first row, each chunk once.
    #[inline(always)]
    fn step(&mut self) -> Option<C> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let chunk = self.next;
        // SAFETY: a chunk was left, so its `N` rows are in bounds, and the next chunk (or the
        // remainder) starts right after them.
        self.next = unsafe { chunk.offset(N) };
        Some(chunk)
    }
}

impl<'a, T: Soa + 'a, const N: usize> ChunksExact<'a, T, N> {
    /// # Safety
    /// - rows `0..len` of `cols` are initialised and shared for `'a`.
    pub(crate) unsafe fn new(cols: T::Columns, len: usize) -> Self {
        ChunksExact {
            // SAFETY: forwarded from the caller.
            chunks: unsafe { Chunks::new(cols, len) },
            _marker: PhantomData,
        }
    }

    /// The last `len % N` rows, which no chunk covers.
    pub fn remainder(&self) -> T::Slices<'a> {
        let c = &self.chunks;
        // SAFETY: the remainder's rows are in the borrowed range.
        T::view_slices(unsafe { c.rest.slices(0, c.rest_len) })
    }
}

impl<'a, T: Soa + 'a, const N: usize> Iterator for ChunksExact<'a, T, N> {
    type Item = T::Slices<'a>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let chunk = self.chunks.step()?;
        // SAFETY: the chunk's `N` rows are in the borrowed range.
        Some(T::view_slices(unsafe { chunk.slices(0, N) }))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.chunks.left, Some(self.chunks.left))
    }
}

impl<'a, T: Soa + 'a, const N: usize> ExactSizeIterator for ChunksExact<'a, T, N> {}
impl<'a, T: Soa + 'a, const N: usize> FusedIterator for ChunksExact<'a, T, N> {}

impl<'a, T: Soa + 'a, const N: usize> ChunksExactMut<'a, T, N> {
    /// # Safety
    /// - rows `0..len` of `cols` are initialised and exclusively borrowed for `'a`.
    pub(crate) unsafe fn new(cols: T::Columns, len: usize) -> Self {
        ChunksExactMut {
            // SAFETY: forwarded from the caller.
            chunks: unsafe { Chunks::new(cols, len) },
            _marker: PhantomData,
        }
    }

    /// The last `len % N` rows, which no chunk covers.
    pub fn into_remainder(self) -> T::SlicesMut<'a> {
        let c = &self.chunks;
        // SAFETY: the remainder's rows are in the borrowed range and never yielded by `next`.
        T::view_slices_mut(unsafe { c.rest.slices_mut(0, c.rest_len) })
    }
}

impl<'a, T: Soa + 'a, const N: usize> Iterator for ChunksExactMut<'a, T, N> {
    type Item = T::SlicesMut<'a>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let chunk = self.chunks.step()?;
        // SAFETY: the chunk's `N` rows are in the borrowed range, and `step` yields each chunk
        // once, so the chunks are disjoint.
        Some(T::view_slices_mut(unsafe { chunk.slices_mut(0, N) }))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.chunks.left, Some(self.chunks.left))
    }
}

impl<'a, T: Soa + 'a, const N: usize> ExactSizeIterator for ChunksExactMut<'a, T, N> {}
impl<'a, T: Soa + 'a, const N: usize> FusedIterator for ChunksExactMut<'a, T, N> {}

// SAFETY: a shared iterator yields `&'a F`s of rows other holders of the borrow may read at the
// same time: sending it needs every field `Sync`, as `slice::Iter<T>: Send` needs `T: Sync`.
unsafe impl<T: Soa> Send for Iter<'_, T> where T::Columns: Sync {}
// SAFETY: `&Iter` only allows cloning it (more shared `&F`s): every field `Sync`.
unsafe impl<T: Soa> Sync for Iter<'_, T> where T::Columns: Sync {}
// SAFETY: an exclusive iterator yields each row's `&'a mut F`s once and is their only holder:
// sending it moves exclusive access, which needs every field `Send` (as `slice::IterMut`).
unsafe impl<T: Soa> Send for IterMut<'_, T> where T::Columns: Send {}
// SAFETY: `&IterMut` gives no access to the values (every method takes `&mut self` or `self`);
// `Sync` when the fields are `Sync`, as `slice::IterMut<T>: Sync` needs `T: Sync`.
unsafe impl<T: Soa> Sync for IterMut<'_, T> where T::Columns: Sync {}
// SAFETY: yields shared column slices (`&'a [F]`), like `Iter`: every field `Sync`.
unsafe impl<T: Soa, const N: usize> Send for ChunksExact<'_, T, N> where T::Columns: Sync {}
// SAFETY: `&ChunksExact` gives shared slices (`remainder`): every field `Sync`.
unsafe impl<T: Soa, const N: usize> Sync for ChunksExact<'_, T, N> where T::Columns: Sync {}
// SAFETY: yields disjoint exclusive column slices once each, like `IterMut`: every field `Send`.
unsafe impl<T: Soa, const N: usize> Send for ChunksExactMut<'_, T, N> where T::Columns: Send {}
// SAFETY: `&ChunksExactMut` gives no access to the values (methods take `&mut self`/`self`).
unsafe impl<T: Soa, const N: usize> Sync for ChunksExactMut<'_, T, N> where T::Columns: Sync {}
