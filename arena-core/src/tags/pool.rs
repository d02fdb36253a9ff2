//! Budget-checked inserts for tracked pools.

use core::ops::Deref;

use super::budget::BudgetExceeded;
use super::tag::Tag;
use super::tracked::{Refused, Tracked};
use crate::pool::{Handle, Pool, PoolFull};

impl<T, G: Tag> Tracked<Pool<T>, G> {
    /// [`Pool::try_insert`] after checking one more `size_of::<T>()` against the budget.
    ///
    /// # Errors
    ///
    /// [`Refused::OverBudget`] under [`Policy::Fail`](super::Policy::Fail), or
    /// [`Refused::Allocator`] when the pool is full; both hand the value back.
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<Handle<T>, Refused<PoolFull<T>, T>> {
        if self.has_budget()
            && let Err(exceeded) = self.check(self.current_bytes(), size_of::<T>())
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
    #[inline(always)]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> Handle<T> {
        // Not through `try_insert`: the value goes straight to the pool, never through a `Result`.
        if self.has_budget()
            && let Err(exceeded) = self.check(self.current_bytes(), size_of::<T>())
        {
            over_budget(exceeded)
        }
        self.inner.insert(value)
    }

    fn current_bytes(&self) -> usize {
        self.inner.len().saturating_mul(size_of::<T>())
    }

    /// [`Pool::remove`].
    #[inline(always)]
    pub fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        self.inner.remove(handle)
    }

    /// [`Pool::get_mut`].
    #[inline(always)]
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<&mut T> {
        self.inner.get_mut(handle)
    }

    /// [`Pool::clear`].
    pub fn clear(&mut self) {
        self.inner.clear();
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn over_budget(exceeded: BudgetExceeded) -> ! {
    panic!("{exceeded}")
}

/// Reading a tracked pool is reading the pool ([`Pool::get`], [`Pool::iter`], `pool[handle]`);
/// inserting needs `&mut` and goes through the budget check.
impl<T, G: Tag> Deref for Tracked<Pool<T>, G> {
    type Target = Pool<T>;
    fn deref(&self) -> &Pool<T> {
        &self.inner
    }
}
