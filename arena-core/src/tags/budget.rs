//! Budgets: a byte limit with a [`Policy`] for what happens when an allocation would exceed it.

use core::fmt;

/// What happens when an allocation would take an allocator (or a tag) over its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Allow it and log a warning through the `log` facade (target `arena_kit::budget`), once
    /// per crossing: the allocation that goes over warns, the ones after it while still over do
    /// not. Without the crate's `log` feature the warning goes nowhere and `Warn` only lifts the
    /// limit.
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

/// Who a budget error names: the allocator and its tag. [`Tracked`](super::Tracked) fills it in
/// from its name and tag; an allocator given a budget directly is `unnamed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owner {
    /// The allocator's name.
    pub allocator: &'static str,
    /// The tag's name (without its parents).
    pub tag: &'static str,
}

impl Owner {
    /// The owner of a budget set on an allocator that has no name or tag.
    pub const UNNAMED: Owner = Owner {
        allocator: "unnamed allocator",
        tag: "untagged",
    };

    /// An allocator named `allocator` under the tag named `tag`.
    pub const fn new(allocator: &'static str, tag: &'static str) -> Owner {
        Owner { allocator, tag }
    }
}

/// A budget as an allocator enforces it: the byte limit and policy, who an error names, and
/// whether a [`Policy::Warn`] budget has already warned for the current crossing.
///
/// Every allocator of this crate holds one (see [`Budgeted`]) and consults it only where it
/// already checks its own limit: a chained arena's page end, a pool's capacity, a heap's region.
/// The bump and insert fast paths therefore pay nothing for a budget; the policy runs on the slow
/// path, through [`exceeded`](BudgetGate::exceeded).
///
/// ```
/// use arena_kit::Budget;
/// use arena_kit::tags::{BudgetGate, Owner};
///
/// let mut gate = BudgetGate::new(Budget::warn(100), Owner::new("particles", "Rendering"));
/// assert_eq!(gate.limit(), 100);
/// assert!(gate.exceeded(90, 20).is_ok()); // warns once and lifts the clamp
/// assert_eq!(gate.limit(), usize::MAX);
/// gate.settle(40); // a reset brought usage back under: armed again
/// assert_eq!(gate.limit(), 100);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BudgetGate {
    budget: Budget,
    owner: Owner,
    /// A `Warn` budget that has warned: its clamp is lifted until usage is back under.
    lifted: bool,
    /// 0, or a number no other gate was given (see [`stamped`](BudgetGate::stamped)): equal
    /// non-zero stamps mean the same budget and owner, so [`same_budget`](BudgetGate::same_budget)
    /// answers with one compare on the path a wrapper runs on every access.
    stamp: usize,
}

/// Gates are equal when their budget, owner and warned state are: the stamp is only a shortcut.
impl PartialEq for BudgetGate {
    fn eq(&self, other: &BudgetGate) -> bool {
        self.budget == other.budget && self.owner == other.owner && self.lifted == other.lifted
    }
}

impl Eq for BudgetGate {}

impl core::hash::Hash for BudgetGate {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (self.budget, self.owner, self.lifted).hash(state);
    }
}

impl From<Budget> for BudgetGate {
    fn from(budget: Budget) -> BudgetGate {
        BudgetGate::new(budget, Owner::UNNAMED)
    }
}

impl BudgetGate {
    /// `budget`, naming `owner` in its errors, armed.
    pub const fn new(budget: Budget, owner: Owner) -> BudgetGate {
        BudgetGate {
            budget,
            owner,
            lifted: false,
            stamp: 0,
        }
    }

    /// This gate with a stamp no other gate has, so comparing it with its copies takes one
    /// compare (what [`Tracked`](super::Tracked) does on every access). Where the target has no
    /// pointer-sized atomics the gate is returned as it is, and comparisons read its fields.
    #[must_use]
    pub fn stamped(mut self) -> BudgetGate {
        self.stamp = next_stamp();
        self
    }

    /// The budget.
    pub const fn budget(&self) -> Budget {
        self.budget
    }

    /// Who its errors name.
    pub const fn owner(&self) -> Owner {
        self.owner
    }

    /// The same budget and policy naming `owner`, keeping the warned state.
    #[must_use]
    pub const fn with_owner(mut self, owner: Owner) -> BudgetGate {
        self.owner = owner;
        self.stamp = 0;
        self
    }

    /// The stamp: 0, or the number [`stamped`](BudgetGate::stamped) gave this gate and its copies.
    #[inline(always)]
    pub const fn stamp(&self) -> usize {
        self.stamp
    }

    /// This gate under `other`'s stamp: what an allocator stores when it is handed the same
    /// budget again under another stamp, keeping its own warned state.
    pub(crate) fn with_stamp_of(mut self, other: &BudgetGate) -> BudgetGate {
        self.stamp = other.stamp;
        self
    }

    /// This gate, [`stamped`](BudgetGate::stamped) if it is not yet: what an allocator stores, so
    /// that its [`budget_stamp`](Budgeted::budget_stamp) is 0 only without a budget.
    #[must_use]
    pub fn ensure_stamped(self) -> BudgetGate {
        if self.stamp == 0 {
            self.stamped()
        } else {
            self
        }
    }

    /// Whether `other` is the same budget for the same owner (the warned state aside): what a
    /// wrapper compares before re-applying its budget.
    ///
    /// Four compares, cheap enough for every access through a wrapper: the bytes, the policy, and
    /// the owner's names by address (a wrapper hands out the same `&'static str`s every time).
    /// Equal names at different addresses count as different owners, which costs only a
    /// re-apply; a name sliced from the start of another (`&"physics scratch"[..7]`) at the same
    /// address counts as the same, which could only change an error's text.
    ///
    /// ```
    /// use arena_kit::Budget;
    /// use arena_kit::tags::{BudgetGate, Owner};
    ///
    /// let gate = BudgetGate::new(Budget::warn(64), Owner::new("scratch", "AI"));
    /// let mut warned = gate;
    /// assert!(warned.exceeded(60, 10).is_ok()); // warns and lifts the clamp
    /// assert!(warned.same_budget(&gate)); // the warned state aside
    /// assert!(!gate.same_budget(&BudgetGate::new(Budget::fail(64), gate.owner())));
    /// assert!(!gate.same_budget(&Budget::warn(64).into())); // another owner
    /// ```
    #[inline(always)]
    pub fn same_budget(&self, other: &BudgetGate) -> bool {
        (self.stamp == other.stamp && self.stamp != 0) || self.same_fields(other)
    }

    /// [`same_budget`](BudgetGate::same_budget) without the stamp: out of line, as copies of one
    /// stamped gate never get here.
    #[cold]
    #[inline(never)]
    fn same_fields(&self, other: &BudgetGate) -> bool {
        let (a, b) = (&self.owner, &other.owner);
        self.budget == other.budget
            && a.allocator.as_ptr() == b.allocator.as_ptr()
            && a.tag.as_ptr() == b.tag.as_ptr()
    }

    /// The most bytes in use the allocator may reach before it must call
    /// [`exceeded`](BudgetGate::exceeded): the budget's bytes, or `usize::MAX` while a `Warn`
    /// budget's clamp is lifted.
    #[inline(always)]
    pub const fn limit(&self) -> usize {
        if self.lifted {
            usize::MAX
        } else {
            self.budget.bytes
        }
    }

    /// Whether `requested` more bytes on top of `current` stay within [`limit`](Self::limit).
    /// Both are sizes of live memory or of a request (at most `isize::MAX`), so the sum cannot wrap;
    /// it saturates anyway.
    #[inline(always)]
    pub const fn allows(&self, current: usize, requested: usize) -> bool {
        current.saturating_add(requested) <= self.limit()
    }

    /// The slow path: `current + requested` would go over the budget. Applies the policy:
    /// [`Policy::Warn`] logs once, lifts the clamp and returns `Ok`; [`Policy::Fail`] returns the
    /// error (the allocator then allocates nothing); [`Policy::Panic`] panics with its text.
    ///
    /// # Errors
    ///
    /// [`BudgetExceeded`] under [`Policy::Fail`].
    ///
    /// # Panics
    ///
    /// Under [`Policy::Panic`], with the [`BudgetExceeded`] text.
    #[cold]
    #[inline(never)]
    #[track_caller]
    pub fn exceeded(&mut self, current: usize, requested: usize) -> Result<(), BudgetExceeded> {
        if let Some(warning) = self.exceeded_quietly(current, requested)? {
            warn(&warning);
        }
        Ok(())
    }

    /// [`exceeded`](Self::exceeded), except that a [`Policy::Warn`] budget's warning is
    /// returned (`Ok(Some(..))`), not raised: for an allocator that must not run user code (the
    /// report sink, a logger) where it is crossed, and raises it with [`raise_warning`] later.
    ///
    /// # Errors
    ///
    /// [`BudgetExceeded`] under [`Policy::Fail`].
    ///
    /// # Panics
    ///
    /// Under [`Policy::Panic`], with the [`BudgetExceeded`] text.
    #[track_caller]
    pub(crate) fn exceeded_quietly(
        &mut self,
        current: usize,
        requested: usize,
    ) -> Result<Option<BudgetExceeded>, BudgetExceeded> {
        if self.allows(current, requested) {
            return Ok(None);
        }
        let e = self.error(current, requested);
        match self.budget.policy {
            Policy::Warn => {
                self.lifted = true;
                Ok(Some(e))
            }
            Policy::Fail => Err(e),
            Policy::Panic => panic!("{e}"),
        }
    }

    /// What crossing the budget with `requested` bytes on top of `current` says.
    pub(crate) fn error(&self, current: usize, requested: usize) -> BudgetExceeded {
        BudgetExceeded {
            allocator: self.owner.allocator,
            tag: self.owner.tag,
            budget: self.budget.bytes,
            current,
            requested,
        }
    }

    /// Usage fell to `current` (a reset, rewind, remove or free): a lifted `Warn` budget is armed
    /// again once usage is back within the budget.
    #[inline]
    pub fn settle(&mut self, current: usize) {
        if self.lifted && current <= self.budget.bytes {
            self.lifted = false;
        }
    }
}

/// A stamp no gate has had: a process-wide counter (wrapping after `usize::MAX` stamps, which no
/// program sets that many budgets to reach), never 0.
fn next_stamp() -> usize {
    #[cfg(target_has_atomic = "ptr")]
    {
        use core::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed).max(1)
    }
    #[cfg(not(target_has_atomic = "ptr"))]
    {
        0
    }
}

/// Raises a budget warning (see [`set_report_sink`](super::set_report_sink) for where it goes).
fn warn(e: &BudgetExceeded) {
    super::sink::emit(super::Event::Budget(*e));
}

/// Raises a warning [`BudgetGate::exceeded_quietly`] returned.
pub(crate) fn raise_warning(e: &BudgetExceeded) {
    warn(e);
}

/// An allocator that enforces a [`Budget`] itself, where it already checks its own limit, so a
/// budget holds for every allocating method, called directly or through a
/// [`Tracked`](super::Tracked) wrapper.
///
/// The budget counts [`Usage::current`](super::Usage::current). Under [`Policy::Fail`] the
/// allocator's `try_` methods return their usual error type carrying the [`BudgetExceeded`], with
/// nothing allocated and usage unchanged; the panicking forms panic with its text.
pub trait Budgeted: super::MemoryUsage {
    /// The budget in force, if any.
    fn budget(&self) -> Option<BudgetGate>;

    /// Sets (`Some`) or removes (`None`) the budget. A budget below the current usage frees
    /// nothing: the next allocation that would grow usage meets the policy.
    fn set_budget(&mut self, gate: Option<BudgetGate>);

    /// Re-applies `gate` through a shared reference, for allocators that allocate through `&self`
    /// (arenas keep their budget in a `Cell`): when the allocator's budget is not
    /// [`same_budget`](BudgetGate::same_budget) as `gate`, it becomes `gate`. What
    /// [`Tracked`](super::Tracked)'s `Deref` calls, so an allocator swapped in through `DerefMut`
    /// is budgeted before its first allocation. The default does nothing (allocators that
    /// allocate through `&mut self` are re-applied by `DerefMut`).
    ///
    /// It runs on every shared access through the wrapper, so keep it to the check
    /// ([`same_budget`](BudgetGate::same_budget) is four compares) with setting the gate out of
    /// line.
    fn restore_budget(&self, gate: &BudgetGate) {
        let _ = gate;
    }

    /// The [stamp](BudgetGate::stamped) of the budget in force: 0 for none (the allocators of
    /// this crate stamp every gate they are given), a value no other budget has otherwise. What
    /// [`Tracked`](super::Tracked) compares on every access, one word, before handing the
    /// allocator out. The default reads [`budget`](Budgeted::budget).
    #[inline]
    fn budget_stamp(&self) -> usize {
        self.budget().map_or(0, |g| g.stamp())
    }

    /// Makes the allocator check its budget against the wrapper's again on the next
    /// allocation through a [`Tracked`](super::Tracked) wrapper: what the wrapper calls before
    /// it lends the allocator out mutably ([`DerefMut`](core::ops::DerefMut),
    /// [`into_inner`](super::Tracked::into_inner)), after which the allocator may have been
    /// replaced, swapped with another or given another budget. An [`Arena`](crate::arena::Arena)
    /// lets its wrapper's own `alloc` skip the stamp compare while nothing of that happened;
    /// the default does nothing (the wrapper compares stamps on every access).
    fn recheck_budget(&self) {}

    /// From now on, charges the memory the allocator takes from the global allocator (its pages,
    /// chunks, column blocks) to `tag` ([`PageTag::charge`](super::PageTag::charge) around each
    /// request), whichever [`tag_scope`](super::tag_scope) is current when it grows. What
    /// [`Tracked::new`](super::Tracked::new) calls with its own tag. Memory taken before keeps
    /// the tag it was charged to (a `realloc` keeps its block's tag). The default does nothing:
    /// right for allocators that never take memory after they are made (a heap over one region,
    /// an arena over a buffer).
    fn charge_pages_to(&mut self, tag: super::PageTag) {
        let _ = tag;
    }

    /// Puts (`Some`) or takes off (`None`) the name and tag the allocator's own paths raise
    /// [`ProfilerEvent`](super::ProfilerEvent)s under (the `profiler` feature): what
    /// [`Tracked::new`](super::Tracked::new) calls. The crate's allocators take back what they
    /// reported under the old label (frees, or an arena's discard), end it with one
    /// [`PoolEnd`](super::ProfilerEvent::PoolEnd), and report what they hold under the new one;
    /// their drop takes the label off the same way. Give each allocator a label of its own
    /// ([`ProfilerLabel::new`](super::ProfilerLabel::new) makes a new identity each time). The
    /// default raises nothing: an allocator of your own reports nothing to the profiler.
    ///
    /// ```
    /// use arena_kit::tags::{Budgeted, ProfilerLabel};
    ///
    /// let mut pool = arena_kit::Pool::<u32>::with_capacity(4);
    /// pool.set_profiler_label(Some(ProfilerLabel::new("bodies", "Physics")));
    /// ```
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<super::ProfilerLabel>) {
        let _ = label;
    }
}
