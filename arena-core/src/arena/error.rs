//! The typed errors of the arena family.

use core::fmt;

use crate::tags::BudgetExceeded;

/// Why an allocation from an [`Arena`](super::Arena) failed. The arena is unchanged when this is
/// returned: nothing was allocated, nothing was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArenaError {
    /// A fixed arena ([`Arena::with_capacity`](super::Arena::with_capacity),
    /// [`Arena::from_buffer`](super::Arena::from_buffer)) has no room for the request.
    Full {
        /// Bytes asked for (the layout's size, without alignment padding).
        requested: usize,
        /// Bytes left in the arena before the request.
        remaining: usize,
        /// Total bytes the arena can hand out.
        capacity: usize,
    },
    /// A chained arena would need a new page, but the page would take it past its byte limit.
    LimitReached {
        /// Bytes asked for.
        requested: usize,
        /// Bytes left in the current page and the pages kept after it.
        remaining: usize,
        /// Total bytes the arena's pages can hand out.
        capacity: usize,
        /// The limit on bytes taken from the system allocator, pages and page headers included.
        limit: usize,
    },
    /// `count` elements of `elem_size` bytes do not fit in `isize::MAX` bytes: the size
    /// arithmetic would overflow.
    SizeOverflow {
        /// Size of one element in bytes.
        elem_size: usize,
        /// Number of elements asked for.
        count: usize,
    },
    /// The system allocator refused a new page of `page_bytes` bytes.
    SystemOutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Size of the page the arena tried to take from the system allocator.
        page_bytes: usize,
    },
    /// The allocation would take the arena's [`Arena::used`](super::Arena::used) over the budget
    /// set with [`Budgeted::set_budget`](crate::tags::Budgeted::set_budget) under
    /// [`Policy::Fail`](crate::tags::Policy::Fail).
    OverBudget(BudgetExceeded),
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ArenaError::Full {
                requested,
                remaining,
                capacity,
            } => write!(
                f,
                "arena full: requested {requested} bytes but only {remaining} of {capacity} remain; \
                 reset or rewind the arena, give it a larger capacity, or use Arena::chained"
            ),
            ArenaError::LimitReached {
                requested,
                remaining,
                capacity,
                limit,
            } => write!(
                f,
                "arena byte limit reached: requested {requested} bytes, {remaining} of {capacity} \
                 remain and a new page would exceed the limit of {limit} bytes; reset the arena \
                 or raise the limit"
            ),
            ArenaError::SizeOverflow { elem_size, count } => write!(
                f,
                "allocation size overflows: {count} elements of {elem_size} bytes exceed \
                 isize::MAX bytes; ask for fewer elements"
            ),
            ArenaError::SystemOutOfMemory {
                requested,
                page_bytes,
            } => write!(
                f,
                "the system allocator refused a {page_bytes}-byte page for a {requested}-byte \
                 request; free memory elsewhere or use smaller requests"
            ),
            ArenaError::OverBudget(exceeded) => write!(
                f,
                "{exceeded} (reset or rewind the arena to bring it back under)"
            ),
        }
    }
}

impl ArenaError {
    /// The budget that refused the allocation, if a budget (not the arena's capacity or limit)
    /// was the reason.
    pub fn budget_exceeded(&self) -> Option<&BudgetExceeded> {
        match self {
            ArenaError::OverBudget(exceeded) => Some(exceeded),
            _ => None,
        }
    }
}

impl core::error::Error for ArenaError {}

/// Why a fallible constructor's allocation ([`Arena::try_alloc_try_with`](super::Arena::try_alloc_try_with),
/// [`Arena::try_alloc_slice_try_fill_with`](super::Arena::try_alloc_slice_try_fill_with)) failed:
/// the arena had no room, or the constructor itself returned an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocOrInitError<E> {
    /// The arena could not allocate; the constructor was not called. The arena is unchanged.
    Alloc(ArenaError),
    /// The constructor returned `E`. The values built before it were dropped; their space was
    /// given back if nothing was allocated after it meanwhile, else it stays used until the next
    /// reset or rewind.
    Init(E),
}

impl<E> AllocOrInitError<E> {
    /// The constructor's error, if it was the reason.
    pub fn init_error(self) -> Option<E> {
        match self {
            AllocOrInitError::Init(e) => Some(e),
            AllocOrInitError::Alloc(_) => None,
        }
    }
}

impl<E> From<ArenaError> for AllocOrInitError<E> {
    fn from(e: ArenaError) -> Self {
        AllocOrInitError::Alloc(e)
    }
}

impl<E: fmt::Display> fmt::Display for AllocOrInitError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocOrInitError::Alloc(e) => e.fmt(f),
            AllocOrInitError::Init(e) => write!(f, "the value's constructor failed: {e}"),
        }
    }
}

impl<E: core::error::Error + 'static> core::error::Error for AllocOrInitError<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            AllocOrInitError::Alloc(e) => Some(e),
            AllocOrInitError::Init(e) => Some(e),
        }
    }
}

/// Why [`Arena::rewind`](super::Arena::rewind) refused a [`Marker`](super::Marker). The arena is
/// unchanged when this is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MarkerError {
    /// The marker was taken from a different arena.
    Foreign,
    /// The marker no longer points into live memory of this arena: the arena was reset since it
    /// was taken, or it was rewound to a point before the marker.
    Stale,
}

impl fmt::Display for MarkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MarkerError::Foreign => f.write_str(
                "marker belongs to a different arena; rewind the arena the marker was taken from",
            ),
            MarkerError::Stale => f.write_str(
                "marker is stale: the arena was reset or rewound past it since it was taken; \
                 take a new marker after the reset",
            ),
        }
    }
}

impl core::error::Error for MarkerError {}
