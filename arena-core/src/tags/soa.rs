//! Budget-checked inserts for tracked SoA containers.

use core::ops::Deref;

use super::budget::BudgetExceeded;
use super::tag::Tag;
use super::tracked::{Refused, Tracked};
use crate::pool::{Handle, PoolFull};
use crate::soa::{Soa, SoaPool, SoaVec};

#[cold]
#[inline(never)]
#[track_caller]
fn over_budget(exceeded: BudgetExceeded) -> ! {
    panic!("{exceeded}")
}

impl<T: Soa, G: Tag> Tracked<SoaPool<T>, G> {
    /// [`SoaPool::try_insert`] after checking one more `size_of::<T>()` against the budget.
    ///
    /// # Errors
    ///
    /// [`Refused::OverBudget`] under [`Policy::Fail`](super::Policy::Fail), or
    /// [`Refused::Allocator`] when the pool is full; both hand the value back.
    pub fn try_insert(&mut self, value: T) -> Result<Handle<T>, Refused<PoolFull<T>, T>> {
        let current = self.inner.len().saturating_mul(size_of::<T>());
        if self.has_budget()
            && let Err(exceeded) = self.check(current, size_of::<T>())
        {
            return Err(Refused::OverBudget { exceeded, value });
        }
        self.inner.try_insert(value).map_err(Refused::Allocator)
    }

    /// [`try_insert`](Self::try_insert), panicking on failure.
    ///
    /// # Panics
    ///
    /// When the pool is full, or over budget under a `Fail` or `Panic` policy.
    #[track_caller]
    pub fn insert(&mut self, value: T) -> Handle<T> {
        let current = self.inner.len().saturating_mul(size_of::<T>());
        if self.has_budget()
            && let Err(exceeded) = self.check(current, size_of::<T>())
        {
            over_budget(exceeded)
        }
        self.inner.insert(value)
    }

    /// [`SoaPool::remove`].
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        self.inner.remove(handle)
    }
}

impl<T: Soa, G: Tag> Tracked<SoaVec<T>, G> {
    /// [`SoaVec::push`] after checking one more `size_of::<T>()` against the budget.
    ///
    /// # Errors
    ///
    /// [`Refused::OverBudget`] under [`Policy::Fail`](super::Policy::Fail), handing the value
    /// back; nothing changes.
    ///
    /// # Panics
    ///
    /// As [`SoaVec::push`] when memory runs out, or over budget under a `Panic` policy.
    #[track_caller]
    pub fn try_push(&mut self, value: T) -> Result<(), Refused<core::convert::Infallible, T>> {
        let current = self.inner.len().saturating_mul(size_of::<T>());
        if self.has_budget()
            && let Err(exceeded) = self.check(current, size_of::<T>())
        {
            return Err(Refused::OverBudget { exceeded, value });
        }
        self.inner.push(value);
        Ok(())
    }

    /// [`try_push`](Self::try_push), panicking on failure.
    ///
    /// # Panics
    ///
    /// Over budget under a `Fail` or `Panic` policy, or as [`SoaVec::push`].
    #[track_caller]
    pub fn push(&mut self, value: T) {
        if let Err(Refused::OverBudget { exceeded, .. }) = self.try_push(value) {
            over_budget(exceeded)
        }
    }

    /// [`SoaVec::pop`].
    pub fn pop(&mut self) -> Option<T> {
        self.inner.pop()
    }

    /// [`SoaVec::clear`].
    pub fn clear(&mut self) {
        self.inner.clear();
    }
}

/// Reading a tracked SoA pool is reading the pool; inserting needs `&mut` and goes through the
/// budget check.
impl<T: Soa, G: Tag> Deref for Tracked<SoaPool<T>, G> {
    type Target = SoaPool<T>;
    fn deref(&self) -> &SoaPool<T> {
        &self.inner
    }
}

/// Reading a tracked `SoaVec` is reading the vector (slices, iteration); pushing needs `&mut`
/// and goes through the budget check.
impl<T: Soa, G: Tag> Deref for Tracked<SoaVec<T>, G> {
    type Target = SoaVec<T>;
    fn deref(&self) -> &SoaVec<T> {
        &self.inner
    }
}
