//! Budgets: a byte limit with a [`Policy`] for what happens when an allocation would exceed it.

use core::fmt;

/// What happens when an allocation would take an allocator (or a tag) over its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Allow it and log a warning through the `log` facade (target `arena_kit::budget`), once
    /// per crossing: the allocation that goes over warns, the ones after it while still over do
    /// not.
    Warn,
    /// Refuse it: the `try_` form returns a [`BudgetExceeded`] error and nothing is allocated.
    Fail,
    /// Panic with the [`BudgetExceeded`] text.
    Panic,
}

/// A byte limit and what to do when it would be exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    /// The most bytes allowed.
    pub bytes: usize,
    /// What happens beyond it.
    pub policy: Policy,
}

impl Budget {
    /// A budget of `bytes` with `policy`.
    pub const fn new(bytes: usize, policy: Policy) -> Budget {
        Budget { bytes, policy }
    }

    /// A budget that warns beyond `bytes`.
    pub const fn warn(bytes: usize) -> Budget {
        Budget::new(bytes, Policy::Warn)
    }

    /// A budget that refuses allocations beyond `bytes`.
    pub const fn fail(bytes: usize) -> Budget {
        Budget::new(bytes, Policy::Fail)
    }

    /// A budget that panics beyond `bytes`.
    pub const fn panic(bytes: usize) -> Budget {
        Budget::new(bytes, Policy::Panic)
    }
}

/// An allocation (or, for a tag budget, the tag's total at the end of a frame) would go over a
/// budget. Names the allocator and tag so the message says who to look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BudgetExceeded {
    /// The allocator's name, or `"all allocators"` for a tag budget.
    pub allocator: &'static str,
    /// The tag's name (without its parents).
    pub tag: &'static str,
    /// The budget in bytes.
    pub budget: usize,
    /// Bytes in use before the request.
    pub current: usize,
    /// Bytes asked for (0 for a tag total checked at the end of a frame).
    pub requested: usize,
}

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "memory budget exceeded: `{}` (tag {}) would hold {} bytes ({} in use + {} requested), \
             over its budget of {} bytes; free memory in this subsystem first, or raise its \
             budget",
            self.allocator,
            self.tag,
            self.current.saturating_add(self.requested),
            self.current,
            self.requested,
            self.budget,
        )
    }
}

impl core::error::Error for BudgetExceeded {}

/// Checks `current + requested` against `budget` (`usize::MAX` = none). The fast path is one
/// add and one compare; the policy runs out of line.
#[inline(always)]
pub(crate) fn check(
    budget: usize,
    policy: Policy,
    who: (&'static str, &'static str),
    current: usize,
    requested: usize,
) -> Result<(), BudgetExceeded> {
    // Both are at most `isize::MAX` (a live size and a request size), so the sum cannot wrap.
    if current + requested <= budget {
        return Ok(());
    }
    over(
        BudgetExceeded {
            allocator: who.0,
            tag: who.1,
            budget,
            current,
            requested,
        },
        policy,
    )
}

/// Applies `policy` to an exceeded budget.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn over(e: BudgetExceeded, policy: Policy) -> Result<(), BudgetExceeded> {
    match policy {
        Policy::Warn => {
            // Warn only on the crossing, not on every allocation while over.
            if e.current <= e.budget {
                log::warn!(target: "arena_kit::budget", "{e}");
            }
            Ok(())
        }
        Policy::Fail => Err(e),
        Policy::Panic => panic!("{e}"),
    }
}
