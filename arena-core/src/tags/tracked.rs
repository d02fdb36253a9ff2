//! [`Tracked`]: an allocator with a name, a [`Tag`], an optional [`Budget`] and a leak check.

use core::fmt;

use super::budget::{self, Budget, BudgetExceeded, Policy};
use super::tag::{Tag, TagPath};
use super::usage::{MemoryUsage, Usage};

/// An allocator with a name and a tag, and optionally a budget checked on every allocation made
/// through it. Its counters are the allocator's own (nothing is counted twice and nothing on the
/// allocation path is shared between threads); [`Registry`](super::Registry) reads them when a
/// report is taken.
///
/// The allocation methods live with each allocator family (`Tracked<Arena, _>`,
/// `Tracked<FrameArena<N>, _>`, `Tracked<Pool<T>, _>`, ...). Reading through
/// [`allocator`](Tracked::allocator) is always fine; allocating through it (or through
/// [`allocator_mut`](Tracked::allocator_mut)) is still counted, by the allocator itself, but skips the
/// budget check.
///
/// In debug builds (or with the `debug-checks` feature), dropping a tracked pool or heap that
/// still holds values logs a [`Leak`] (target `arena_kit::leak`), unless
/// [`forgive_leaks`](Tracked::forgive_leaks) was called.
///
/// ```
/// use arena_core::arena::Arena;
/// use arena_core::tags::{Budget, Tracked};
///
/// let physics = Tracked::new(Arena::with_capacity(1024), "physics scratch", "Physics")
///     .with_budget(Budget::fail(256));
/// physics.alloc([0u8; 200]);
/// let refused = physics.try_alloc([0u8; 100]).unwrap_err();
/// assert!(refused.to_string().contains("budget of 256 bytes"));
/// assert_eq!(physics.usage().current, 200); // nothing was allocated
/// ```
///
/// # Variance
///
/// Covariant in `A` and `G`: it owns the allocator and the tag. So its variance in the allocator's
/// own parameters is the allocator's: `Tracked<Frame<'f>, G>` is invariant in `'f` like
/// [`Frame`](crate::arena::Frame), `Tracked<Pool<T>, G>` covariant in `T` like
/// [`Pool`](crate::pool::Pool).
pub struct Tracked<A: MemoryUsage, G: Tag> {
    pub(super) inner: A,
    pub(super) labels: Labels<G>,
}

/// Everything a [`Tracked`] allocator adds to the allocator it wraps.
#[derive(Clone, Copy)]
pub(super) struct Labels<G> {
    name: &'static str,
    tag: G,
    /// `usize::MAX` = no budget.
    budget: usize,
    policy: Policy,
    forgive: bool,
}

impl<A: MemoryUsage, G: Tag> Tracked<A, G> {
    /// Names and tags `inner`, with no budget.
    pub fn new(inner: A, name: &'static str, tag: G) -> Self {
        Tracked {
            inner,
            labels: Labels {
                name,
                tag,
                budget: usize::MAX,
                policy: Policy::Warn,
                forgive: false,
            },
        }
    }

    /// Checks every allocation made through this wrapper against `budget`.
    #[must_use]
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.set_budget(Some(budget));
        self
    }

    /// Sets or removes the budget.
    pub fn set_budget(&mut self, budget: Option<Budget>) {
        (self.labels.budget, self.labels.policy) = match budget {
            Some(b) => (b.bytes, b.policy),
            None => (usize::MAX, Policy::Warn),
        };
    }

    /// The budget, if any.
    pub fn budget(&self) -> Option<Budget> {
        (self.labels.budget != usize::MAX)
            .then_some(Budget::new(self.labels.budget, self.labels.policy))
    }

    /// Values still live when this allocator is dropped are intentional: no leak report.
    #[must_use]
    pub fn forgive_leaks(mut self) -> Self {
        self.labels.forgive = true;
        self
    }

    /// Turns the leak report on drop off (`true`) or back on (`false`).
    pub fn set_forgive_leaks(&mut self, forgive: bool) {
        self.labels.forgive = forgive;
    }

    /// The allocator's name.
    pub fn name(&self) -> &'static str {
        self.labels.name
    }

    /// The allocator's tag.
    pub fn tag(&self) -> G {
        self.labels.tag
    }

    /// The allocator's counters now.
    pub fn usage(&self) -> Usage {
        self.inner.usage()
    }

    /// The allocator, for reading (and for allocations that skip the budget check).
    pub fn allocator(&self) -> &A {
        &self.inner
    }

    /// The allocator, mutably: allocations through it are counted but skip the budget check.
    pub fn allocator_mut(&mut self) -> &mut A {
        &mut self.inner
    }

    /// The allocator, without its name, tag and budget. No leak report is made: the values live on
    /// in the allocator returned.
    pub fn into_inner(self) -> A {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so `inner` is moved out exactly once;
        // the labels are `Copy` and need no drop.
        unsafe { core::ptr::read(&this.inner) }
    }

    /// The values this allocator holds now, as a [`Leak`] if it is a pool or heap holding any.
    /// What the drop check reports; call it yourself at shutdown for a report in release builds.
    pub fn leak(&self) -> Option<Leak> {
        if !self.inner.reports_leaks() {
            return None;
        }
        let usage = self.inner.usage();
        (usage.allocations > 0).then(|| Leak {
            allocator: self.labels.name,
            tag: self.labels.tag.name(),
            count: usage.allocations,
            bytes: usage.current,
        })
    }

    /// Whether a budget is set (the allocation paths skip reading the counters otherwise).
    #[inline(always)]
    pub(super) fn has_budget(&self) -> bool {
        self.labels.budget != usize::MAX
    }

    /// Checks `requested` more bytes against the budget, given `current` bytes in use.
    #[inline(always)]
    pub(super) fn check(&self, current: usize, requested: usize) -> Result<(), BudgetExceeded> {
        budget::check(
            self.labels.budget,
            self.labels.policy,
            (self.labels.name, self.labels.tag.name()),
            current,
            requested,
        )
    }
}

#[cfg(feature = "alloc")]
impl<G: Tag> Labels<G> {
    /// These labels on another allocator.
    pub(super) fn wrap<B: MemoryUsage>(self, inner: B) -> Tracked<B, G> {
        Tracked {
            inner,
            labels: self,
        }
    }
}

impl<A: MemoryUsage, G: Tag> Drop for Tracked<A, G> {
    fn drop(&mut self) {
        if crate::poison::ENABLED
            && !self.labels.forgive
            && let Some(leak) = self.leak()
        {
            log::error!(target: "arena_kit::leak", "{leak}");
        }
    }
}

impl<A: MemoryUsage, G: Tag> fmt::Debug for Tracked<A, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracked")
            .field("name", &self.labels.name)
            .field("tag", &format_args!("{}", TagPath(self.labels.tag)))
            .field("usage", &self.usage())
            .field("budget", &self.budget())
            .finish_non_exhaustive()
    }
}

/// Values a pool or heap still held when it was dropped (or when [`Tracked::leak`] was called).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Leak {
    /// The allocator's name.
    pub allocator: &'static str,
    /// The allocator's tag name.
    pub tag: &'static str,
    /// Values or blocks still live.
    pub count: usize,
    /// Their bytes.
    pub bytes: usize,
}

impl fmt::Display for Leak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "leak: `{}` (tag {}) was dropped with {} live allocation(s), {} bytes; free them \
             before dropping the allocator, or call forgive_leaks() if this is intended",
            self.allocator, self.tag, self.count, self.bytes
        )
    }
}

/// An allocation refused by a [`Tracked`] allocator: over its budget, or refused by the allocator
/// itself. `V` is what is handed back (the value a pool could not take, or `()`).
///
/// # Variance
///
/// Covariant in `E` and `V`: it owns the error and the value handed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused<E, V = ()> {
    /// The budget's [`Policy::Fail`] refused it; nothing was allocated.
    OverBudget {
        /// Which budget and by how much.
        exceeded: BudgetExceeded,
        /// The value given back.
        value: V,
    },
    /// The allocator refused it (full, out of memory, ...).
    Allocator(E),
}

impl<E, V> Refused<E, V> {
    /// The budget error, if that was the reason.
    pub fn budget_exceeded(&self) -> Option<&BudgetExceeded> {
        match self {
            Refused::OverBudget { exceeded, .. } => Some(exceeded),
            Refused::Allocator(_) => None,
        }
    }
}

impl<E: fmt::Display, V> fmt::Display for Refused<E, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::OverBudget { exceeded, .. } => exceeded.fmt(f),
            Refused::Allocator(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display, V: fmt::Debug> core::error::Error for Refused<E, V> {}

/// An allocator a report can read: a [`Tracked`] allocator, or a `(name, tag, &allocator)` tuple
/// for one that is not wrapped.
pub trait Source<G: Tag> {
    /// The allocator's name.
    fn name(&self) -> &'static str;
    /// The allocator's tag.
    fn tag(&self) -> G;
    /// Its counters now.
    fn usage(&self) -> Usage;
    /// Its budget in bytes, if any.
    fn budget(&self) -> Option<usize>;
}

impl<A: MemoryUsage, G: Tag> Source<G> for Tracked<A, G> {
    fn name(&self) -> &'static str {
        self.labels.name
    }
    fn tag(&self) -> G {
        self.labels.tag
    }
    fn usage(&self) -> Usage {
        self.inner.usage()
    }
    fn budget(&self) -> Option<usize> {
        (self.labels.budget != usize::MAX).then_some(self.labels.budget)
    }
}

impl<A: MemoryUsage, G: Tag> Source<G> for (&'static str, G, A) {
    fn name(&self) -> &'static str {
        self.0
    }
    fn tag(&self) -> G {
        self.1
    }
    fn usage(&self) -> Usage {
        self.2.usage()
    }
    fn budget(&self) -> Option<usize> {
        None
    }
}
