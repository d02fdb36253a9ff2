//! Errors of [`Pool`](super::Pool): a full (or over-budget) pool gives the value back; a pool that cannot be made
//! says how big it was asked to be.

use core::fmt;

use super::slot_map::Refusal;
use crate::tags::BudgetExceeded;

/// A pool refused a value, and hands it back: returned by
/// [`Pool::try_insert`](super::Pool::try_insert) and
/// [`SoaPool::try_insert`](crate::soa::SoaPool::try_insert). Nothing was changed.
///
/// Either every slot was in use (or retired) and the pool could not grow, or a
/// [`Budget`](crate::tags::Budget) with [`Policy::Fail`](crate::tags::Policy::Fail) refused
/// one more value: then [`budget_exceeded`](Self::budget_exceeded) says by how much.
///
/// ```
/// use arena_kit::Pool;
/// let mut pool = Pool::with_capacity(1);
/// pool.insert("first");
/// let full = pool.try_insert("second").unwrap_err();
/// assert_eq!(full.capacity(), 1);
/// assert!(full.budget_exceeded().is_none());
/// assert_eq!(full.into_inner(), "second");
/// ```
///
/// # Variance
///
/// Covariant in `T`: it owns the value handed back.
#[derive(Clone, PartialEq, Eq)]
pub struct PoolFull<T> {
    value: T,
    capacity: usize,
    over_budget: Option<BudgetExceeded>,
}

impl<T> PoolFull<T> {
    pub(crate) fn new(value: T, capacity: usize, refusal: Refusal) -> Self {
        let over_budget = match refusal {
            Refusal::Full => None,
            Refusal::OverBudget(e) => Some(e),
        };
        PoolFull {
            value,
            capacity,
            over_budget,
        }
    }

    /// The value that did not fit, given back.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The pool's capacity when it refused the value.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The budget that refused the value, or `None` if the pool was full.
    pub fn budget_exceeded(&self) -> Option<&BudgetExceeded> {
        self.over_budget.as_ref()
    }
}

/// Does not print the value (it need not be `Debug`).
impl<T> fmt::Debug for PoolFull<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolFull")
            .field("capacity", &self.capacity)
            .field("over_budget", &self.over_budget)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for PoolFull<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.over_budget {
            Some(e) => write!(f, "{e}; the value was handed back"),
            None => write!(
                f,
                "pool is full: all {} slots are in use (or retired) and it cannot grow; the \
                 value was handed back: remove a value first, or make the pool larger or growable",
                self.capacity
            ),
        }
    }
}

impl<T> core::error::Error for PoolFull<T> {}

/// A pool could not be created: returned by
/// [`Pool::try_with_capacity`](super::Pool::try_with_capacity) and
/// [`Pool::try_growable`](super::Pool::try_growable).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoolCapacityError {
    /// More slots than a `u32` index can address were asked for.
    TooManySlots {
        /// The slots asked for.
        requested: usize,
        /// The most a pool can have ([`MAX_CAPACITY`](super::MAX_CAPACITY)).
        max: usize,
    },
    /// The allocator could not provide the slot memory.
    OutOfMemory {
        /// The slots asked for.
        requested: usize,
    },
}

impl fmt::Display for PoolCapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolCapacityError::TooManySlots { requested, max } => write!(
                f,
                "a pool of {requested} slots was requested but slot indexes are u32 and at most \
                 {max} slots fit: ask for fewer, or split the objects over several pools"
            ),
            PoolCapacityError::OutOfMemory { requested } => write!(
                f,
                "out of memory allocating a pool of {requested} slots: ask for fewer, or use a \
                 growable pool that allocates chunk by chunk"
            ),
        }
    }
}

impl core::error::Error for PoolCapacityError {}

/// A pool could not make room for more values: returned by
/// [`Pool::try_reserve`](super::Pool::try_reserve). Nothing was changed.
///
/// ```
/// use arena_kit::Pool;
/// use arena_kit::pool::PoolReserveError;
/// let mut fixed: Pool<u8> = Pool::with_capacity(2);
/// let err = fixed.try_reserve(3).unwrap_err();
/// assert_eq!(err, PoolReserveError::NotGrowable { additional: 3, available: 2 });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoolReserveError {
    /// The pool has a fixed capacity and fewer free slots than asked for.
    NotGrowable {
        /// The values room was asked for.
        additional: usize,
        /// The slots still free (neither live nor retired).
        available: usize,
    },
    /// The slots in use (live or retired) plus those asked for pass the most a pool can have.
    TooManySlots {
        /// The values room was asked for.
        additional: usize,
        /// The slots live or retired now.
        in_use: usize,
        /// The most a pool can have ([`MAX_CAPACITY`](super::MAX_CAPACITY)).
        max: usize,
    },
    /// The allocator could not provide the new chunks.
    OutOfMemory {
        /// The values room was asked for.
        additional: usize,
        /// The slots the new chunks would have held.
        slots: usize,
    },
}

impl fmt::Display for PoolReserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolReserveError::NotGrowable {
                additional,
                available,
            } => write!(
                f,
                "room for {additional} more values was asked of a fixed-capacity pool with \
                 {available} free slots: remove values first, or use a growable pool"
            ),
            PoolReserveError::TooManySlots {
                additional,
                in_use,
                max,
            } => write!(
                f,
                "room for {additional} more values was asked of a pool with {in_use} slots in \
                 use, but at most {max} slots fit (u32 indexes): ask for fewer, or split the \
                 objects over several pools"
            ),
            PoolReserveError::OutOfMemory { additional, slots } => write!(
                f,
                "out of memory adding {slots} slots to make room for {additional} more values: \
                 ask for fewer"
            ),
        }
    }
}

impl core::error::Error for PoolReserveError {}
