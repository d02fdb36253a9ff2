//! Budgets inside the arena: [`Budgeted`] for [`Arena`], [`BufferArena`], [`Frame`] and
//! [`FrameArena`].
//!
//! The budget counts [`Arena::used`] (alignment padding included), the arena's
//! [`Usage::current`](crate::tags::Usage::current). Its limit is folded into the cursor's end
//! (`min(page end, budget)`, see `cursor.rs`; `with_limit` already bounds the pages), so the
//! bump fast path costs nothing extra; an allocation that would cross it takes the slow path,
//! which calls [`BudgetGate::exceeded`]: under `Warn` it warns once and lifts the clamp, under
//! `Fail` the `try_` form returns [`ArenaError::OverBudget`] with nothing allocated, under
//! `Panic` it panics. A reset, a rewind, or a give-back of the newest block through the
//! `Allocator` impl that brings usage back under re-arms a lifted `Warn` budget.
//!
//! A refusal leaves the arena as it was, pages included. So when a chained arena at its
//! [`limit`](Arena::with_limit) must give back its kept pages to take a new one, a `Fail` or
//! `Panic` budget decides before they go, on the request plus the most alignment padding the new
//! page can need (`align - 1` above the page alignment; the exact padding is known only once the
//! page exists). Such a request can be refused where the exact padding would have fitted.

use super::{Arena, ArenaError, BufferArena};
#[cfg(feature = "alloc")]
use super::{Frame, FrameArena};
use crate::tags::{BudgetGate, Budgeted, MemoryUsage, PageTag};

impl Arena {
    /// The slow path's budget check: `used()` would grow by `growth` bytes. `Ok` when there is
    /// no budget, when it allows the growth, or when a `Warn` budget lifts its clamp.
    ///
    /// A `Warn` budget's warning is raised last, with the lifted gate and its limit already
    /// stored: the report sink is user code that may reach this arena through a shared
    /// reference. What it does stays done: a budget it sets is the one in force afterwards. The
    /// request that warned goes through, warning once: if the sink freed back under the budget
    /// (which re-arms it) or set another `Warn` budget that the request crosses, that one is
    /// lifted without a second warning, so the caller's retry cannot call the sink again (a
    /// sink that re-armed the budget on every call would otherwise never let it finish). A
    /// `Fail` or `Panic` budget the sink set decides the retry.
    pub(super) fn admit(&self, growth: usize) -> Result<(), ArenaError> {
        let Some(mut gate) = self.budget.get() else {
            return Ok(());
        };
        let used = self.used();
        if gate.allows(used, growth) {
            return Ok(());
        }
        let armed = gate;
        let verdict = gate.exceeded_quietly(used, growth);
        self.set_gate(gate);
        let Some(warning) = verdict.map_err(ArenaError::OverBudget)? else {
            return Ok(());
        };
        // A sink that panics leaves the arena as it was: armed, so the next crossing warns.
        let rearm = RearmOnUnwind {
            arena: self,
            lifted: gate,
            armed,
        };
        crate::tags::raise_warning(&warning);
        core::mem::forget(rearm);
        if let Some(mut now) = self.budget.get()
            && now.budget().policy == crate::tags::Policy::Warn
            && let Ok(Some(_)) = now.exceeded_quietly(self.used(), growth)
        {
            self.set_gate(now);
        }
        Ok(())
    }

    /// The one writer of the budget and its stamp, which [`Budgeted::budget_stamp`] reads
    /// alone: the stamp is always the stored gate's.
    #[inline]
    fn store_budget(&self, gate: Option<BudgetGate>) {
        self.budget.set(gate);
        self.budget_stamp.set(gate.map_or(0, |g| g.stamp()));
    }

    /// Stores `gate` (its warned state changed) and the cursor's clamp that goes with it.
    #[inline]
    fn set_gate(&self, gate: BudgetGate) {
        debug_assert_eq!(
            gate.stamp(),
            self.budget_stamp.get(),
            "the same gate, warned"
        );
        self.store_budget(Some(gate));
        self.cursor.set_budget_limit(gate.limit());
    }

    /// Whether a `Fail` or `Panic` budget would refuse growing `used()` by `growth` bytes. Its
    /// [`admit`](Arena::admit) then returns the error or panics: no report sink runs (only a
    /// `Warn` budget's warning does), and a panic hook that allocates from the arena finds it
    /// unchanged.
    #[cfg(feature = "alloc")]
    pub(super) fn refuses(&self, growth: usize) -> bool {
        self.budget.get().is_some_and(|gate| {
            gate.budget().policy != crate::tags::Policy::Warn && !gate.allows(self.used(), growth)
        })
    }

    /// Whether `used()` may grow by `growth` bytes without the budget's policy running: for a
    /// caller that must put the arena back in order before [`admit`](Arena::admit) runs it (a
    /// warning runs user code, which may allocate from this arena).
    pub(crate) fn within_budget(&self, growth: usize) -> bool {
        self.budget
            .get()
            .is_none_or(|gate| gate.allows(self.used(), growth))
    }

    /// Usage fell (a reset, a rewind, or the `Allocator` impl giving the newest block back):
    /// re-arms a lifted `Warn` budget once usage is back under. Without a budget that is one
    /// test, inline (a scope's end pays it on every exit).
    #[inline]
    pub(super) fn settle_budget(&self) {
        if self.budget.get().is_some() {
            self.settle_budget_gate();
        }
    }

    /// [`settle_budget`](Self::settle_budget) with a budget set.
    #[inline(never)]
    fn settle_budget_gate(&self) {
        if let Some(mut gate) = self.budget.get() {
            gate.settle(self.used());
            self.set_gate(gate);
        }
    }

    /// Sets or removes the budget through `&self` (the gate lives in a `Cell`). A
    /// [`Tracked`](crate::tags::Tracked) wrapper's next allocation checks the budget again
    /// (the cursor is disarmed).
    pub(super) fn apply_budget(&self, gate: Option<BudgetGate>) {
        self.cursor.disarm();
        self.store_budget(gate);
        self.settle_budget();
        if gate.is_none() {
            self.cursor.set_budget_limit(usize::MAX);
        }
    }
}

/// The budget counts [`Arena::used`], alignment padding included. It is enforced on every
/// allocating method (the typed ones, [`Arena::alloc_soa`], and the `allocator_api2`
/// `Allocator` impl, growth in place included).
///
/// ```
/// use arena_kit::{Arena, ArenaError, Budget};
/// use arena_kit::tags::Budgeted;
///
/// let mut arena = Arena::chained(4096);
/// arena.set_budget(Some(Budget::fail(64).into()));
/// arena.alloc([0u8; 60]);
/// assert!(matches!(arena.try_alloc([0u8; 8]), Err(ArenaError::OverBudget(_))));
/// assert_eq!(arena.used(), 60);
/// arena.reset();
/// arena.alloc([0u8; 64]); // back under: the whole budget is available again
/// ```
impl Budgeted for Arena {
    #[inline]
    fn budget(&self) -> Option<BudgetGate> {
        self.budget.get()
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.apply_budget(gate.map(BudgetGate::ensure_stamped));
    }

    /// Each block's used range is one `Alloc`; reset, rewind and scope exit `Discard` (see
    /// "Live in a profiler" in [`tags`](crate::tags)).
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        self.put_profiler_label(label);
    }

    /// Inlined: a wrapper calls it before every allocation, and with a stamped gate the check is
    /// one compare; putting the gate back is out of line.
    #[inline(always)]
    fn restore_budget(&self, gate: &BudgetGate) {
        let stamp = gate.stamp();
        if stamp == 0 || self.budget_stamp.get() != stamp {
            self.restore_budget_cold(gate);
        }
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.budget_stamp.get()
    }

    /// Disarms the wrapper's fast path (see [`Tracked`](crate::tags::Tracked)'s `alloc`).
    fn recheck_budget(&self) {
        self.disarm();
    }

    /// The pages a chained arena takes from now on (its root block is taken when it is made).
    fn charge_pages_to(&mut self, tag: PageTag) {
        self.page_tag.set(tag);
    }
}

impl Arena {
    /// [`Budgeted::restore_budget`] found another budget (or none): puts `gate` on.
    #[cold]
    #[inline(never)]
    fn restore_budget_cold(&self, gate: &BudgetGate) {
        if let Some(have) = self.budget.get()
            && have.same_budget(gate)
        {
            // The same budget under another stamp (a copy of the gate): take the stamp, keep
            // the warned state, so the next check is one compare again. An unstamped copy
            // leaves the stamp in force: a budget in force always has one.
            if gate.stamp() != 0 {
                self.store_budget(Some(have.with_stamp_of(gate)));
            }
        } else {
            self.apply_budget(Some(gate.ensure_stamped()));
        }
    }
}

/// As for [`Arena`].
impl Budgeted for BufferArena<'_> {
    #[inline]
    fn budget(&self) -> Option<BudgetGate> {
        self.arena.budget()
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.arena.set_budget(gate);
    }

    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        self.arena.set_profiler_label(label);
    }

    #[inline(always)]
    fn restore_budget(&self, gate: &BudgetGate) {
        self.arena.restore_budget(gate);
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.arena.budget_stamp()
    }

    fn charge_pages_to(&mut self, tag: PageTag) {
        self.arena.charge_pages_to(tag);
    }
}

/// The budget of the frame's buffer: setting it here sets it for this buffer (and so for the
/// later frames that reuse it), as [`FrameArena`]'s budget does for every buffer.
#[cfg(feature = "alloc")]
impl Budgeted for Frame<'_> {
    #[inline]
    fn budget(&self) -> Option<BudgetGate> {
        self.arena().budget()
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.arena()
            .apply_budget(gate.map(BudgetGate::ensure_stamped));
    }

    #[inline(always)]
    fn restore_budget(&self, gate: &BudgetGate) {
        self.arena().restore_budget(gate);
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.arena().budget_stamp()
    }

    /// For this frame's buffer (and so for the later frames that reuse it).
    fn charge_pages_to(&mut self, tag: PageTag) {
        self.arena().page_tag.set(tag);
    }
}

/// The budget applies per buffer: each frame may use up to the budget in its own buffer (the
/// [`MemoryUsage`](crate::tags::MemoryUsage) of a `FrameArena` sums its `N` buffers, so it may
/// reach `N` times the budget). [`budget`](Budgeted::budget) reports buffer 0's gate.
#[cfg(feature = "alloc")]
impl<const N: usize> Budgeted for FrameArena<N> {
    fn budget(&self) -> Option<BudgetGate> {
        self.buffer(0).budget()
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        let gate = gate.map(BudgetGate::ensure_stamped);
        for i in 0..N {
            self.buffer(i).apply_budget(gate);
        }
    }

    /// Each buffer is its own profiler pool (its events carry `buffer: Some(i)`), so a frame's
    /// reset discards its own buffer only, not the older frames readers may still hold.
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        for i in 0..N {
            self.buffer(i)
                .put_profiler_label(label.map(|l| l.on_buffer(i)));
        }
    }

    fn restore_budget(&self, gate: &BudgetGate) {
        for i in 0..N {
            self.buffer(i).restore_budget(gate);
        }
    }

    /// Buffer 0's stamp when every buffer holds the same budget; `usize::MAX` (no gate's stamp)
    /// when a frame changed its buffer's, so a wrapper puts its budget back on all of them.
    #[inline]
    fn budget_stamp(&self) -> usize {
        let first = self.buffer(0).budget_stamp();
        if (1..N).all(|i| self.buffer(i).budget_stamp() == first) {
            first
        } else {
            usize::MAX
        }
    }

    /// For every buffer.
    fn charge_pages_to(&mut self, tag: PageTag) {
        for i in 0..N {
            self.buffer(i).page_tag.set(tag);
        }
    }
}

/// An allocator that bumps through one [`Arena`]: the arena itself, a [`BufferArena`] or a
/// [`Frame`]. What a [`Tracked`](crate::tags::Tracked) bump allocator's guard check reads.
pub trait BumpAllocator: MemoryUsage {
    /// The arena allocations go to.
    fn arena(&self) -> &Arena;
}

impl BumpAllocator for Arena {
    #[inline(always)]
    fn arena(&self) -> &Arena {
        self
    }
}

impl BumpAllocator for BufferArena<'_> {
    #[inline(always)]
    fn arena(&self) -> &Arena {
        self
    }
}

#[cfg(feature = "alloc")]
impl BumpAllocator for Frame<'_> {
    #[inline(always)]
    fn arena(&self) -> &Arena {
        Frame::arena(self)
    }
}

/// Puts an arena's armed budget gate back if dropped, that is if the warning's sink panicked
/// ([`Arena::admit`]; on success it is forgotten), unless the sink set another budget.
struct RearmOnUnwind<'a> {
    arena: &'a Arena,
    lifted: BudgetGate,
    armed: BudgetGate,
}

impl Drop for RearmOnUnwind<'_> {
    fn drop(&mut self) {
        if self.arena.budget.get() == Some(self.lifted) {
            self.arena.set_gate(self.armed);
        }
    }
}
