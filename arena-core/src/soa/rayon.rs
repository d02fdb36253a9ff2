//! Parallel iteration over rows (feature `rayon`).

use rayon::prelude::*;

use super::{Columns, Soa, SoaSlice, SoaSliceMut, SoaVec};

/// The columns, shareable across rayon's threads; each index is read (or, for the exclusive
/// iterator, borrowed mutably) by exactly one task.
struct Shared<C>(C);

// SAFETY: rayon's tasks share `&Shared` and each reads rows through `get` (`&F`), possibly at the
// same time: that needs every field `Sync` (`C: Sync`), as sharing a `&[F]` does.
unsafe impl<C: Columns + Sync> Sync for Shared<C> {}
// SAFETY: moving the wrapper (into the closure rayon sends) moves only column addresses whose
// values are then read as above: `&[F]` is `Send` exactly when `F: Sync`.
unsafe impl<C: Columns + Sync> Send for Shared<C> {}

/// As [`Shared`], for exclusive iteration: hands out `&mut F` (one per index) to other threads.
struct Exclusive<C>(C);

// SAFETY: tasks share `&Exclusive`, but each calls `get_mut` only for the indexes rayon gives it,
// each index once, so no two threads ever reach the same value: that is splitting a `&mut [F]`
// into disjoint parts sent to other threads, which needs `F: Send` and not `F: Sync`.
unsafe impl<C: Columns + Send> Sync for Exclusive<C> {}
// SAFETY: moving the wrapper moves column addresses whose values are then handed out as
// disjoint `&mut F` as above: `F: Send`.
unsafe impl<C: Columns + Send> Send for Exclusive<C> {}

impl<'a, T: Soa + 'a> SoaSlice<'a, T> {
    /// The rows as [`Soa::Ref`] views, in parallel.
    pub fn par_iter(self) -> impl IndexedParallelIterator<Item = T::Ref<'a>> + 'a
    where
        T::Columns: Sync,
        T::Ref<'a>: Send,
    {
        let cols = Shared(self.columns());
        (0..self.len()).into_par_iter().map(move |i| {
            let cols = &cols;
            // SAFETY: `i < len`, an initialised row shared for `'a`.
            T::view(unsafe { cols.0.get(i) })
        })
    }
}

impl<'a, T: Soa + 'a> SoaSliceMut<'a, T> {
    /// The rows as [`Soa::Mut`] views, in parallel (each row to one task).
    pub fn into_par_iter_mut(self) -> impl IndexedParallelIterator<Item = T::Mut<'a>> + 'a
    where
        T::Columns: Send,
        T::Mut<'a>: Send,
    {
        let cols = Exclusive(self.columns());
        (0..self.len()).into_par_iter().map(move |i| {
            let cols = &cols;
            // SAFETY: `i < len`, an initialised row; rayon visits each index once, so the
            // exclusive borrows are disjoint, and `self` (the only other access) is consumed.
            T::view_mut(unsafe { cols.0.get_mut(i) })
        })
    }
}

impl<T: Soa> SoaVec<T> {
    /// The rows as [`Soa::Ref`] views, in parallel. (The bound names this borrow's views, so
    /// rows that borrow, `T` not `'static`, iterate too.)
    pub fn par_iter<'s>(&'s self) -> impl IndexedParallelIterator<Item = T::Ref<'s>> + 's
    where
        T::Columns: Sync,
        T::Ref<'s>: Send,
    {
        self.as_soa_slice().par_iter()
    }

    /// The rows as [`Soa::Mut`] views, in parallel (each row to one task).
    pub fn par_iter_mut<'s>(&'s mut self) -> impl IndexedParallelIterator<Item = T::Mut<'s>> + 's
    where
        T::Columns: Send,
        T::Mut<'s>: Send,
    {
        self.as_soa_slice_mut().into_par_iter_mut()
    }
}
