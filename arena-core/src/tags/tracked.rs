//! [`Tracked`]: an allocator with a name, a [`Tag`] and a leak check, whose [`Budget`] the
//! allocator itself enforces.

use core::fmt;
use core::ops::{Deref, DerefMut};

use super::budget::{Budget, BudgetGate, Budgeted, Owner};
use super::tag::{Tag, TagPath};
use super::usage::{MemoryUsage, Usage};

/// An allocator with a name and a tag, and optionally a budget. It dereferences to the allocator
/// ([`Deref`] and [`DerefMut`]), so every method of the wrapped allocator is called on it
/// directly, and the budget holds for every one of them because the allocator enforces it itself
/// (see [`Budgeted`]), on its slow path. (A tracked arena's `alloc`/`try_alloc` and a tracked
/// pool's `insert`/`try_insert` are also methods of the wrapper, so that the value is built
/// before any check of the wrapper's, which keeps a hot loop's code as good as without the
/// wrapper; a tracked arena's skip the check altogether while nothing has changed, see "Hot
/// loops" below.) Its counters are the
/// allocator's own (nothing is counted twice and nothing on the allocation path is shared between
/// threads); [`Registry`](super::Registry) reads them when a report is taken.
///
/// The budget is kept here too, naming this allocator and its tag in every
/// [`BudgetExceeded`](super::BudgetExceeded), and is put back on the allocator whenever it is
/// reached through this wrapper (one compare of the budget's stamp per access): replacing the
/// allocator through `DerefMut` (`*tracked = Arena::new()`) cannot drop the budget. The name and
/// tag the wrapper put on the allocator itself (the page tag its later pages are charged to,
/// the profiler label) are not carried over to a replacement: the check that would see one costs
/// every access a second compare. Reports through [`Registry`](super::Registry) still name the
/// wrapper's allocator and tag; to have the new allocator's own pages and profiler events
/// labelled too, wrap it with [`Tracked::new`] instead of assigning through the wrapper.
///
/// In debug builds (or with the `debug-checks` feature), dropping a tracked pool or heap that
/// still holds values logs a [`Leak`] (target `arena_kit::leak`, through the `log` facade when the
/// `log` feature is on; nowhere otherwise: call [`leak`](Tracked::leak) yourself then), unless
/// [`forgive_leaks`](Tracked::forgive_leaks) was called.
///
/// ```
/// use arena_kit::{Arena, Budget, Tracked};
///
/// let physics = Tracked::new(Arena::with_capacity(1024), "physics scratch", "Physics")
///     .with_budget(Budget::fail(256));
/// physics.alloc([0u8; 200]);
/// let refused = physics.try_alloc([0u8; 100]).unwrap_err();
/// assert!(refused.to_string().contains("budget of 256 bytes"));
/// assert_eq!(physics.usage().current, 200); // nothing was allocated
/// ```
///
/// # Hot loops
///
/// An access through the wrapper compares the allocator's budget stamp with its own (a load,
/// a compare and a branch), which the compiler cannot move out of a loop: the values written in
/// the loop could, for all it knows, land on the wrapper. A tracked arena's own
/// [`alloc`](Tracked::alloc) and [`try_alloc`](Tracked::try_alloc) skip it: the arena keeps a
/// second copy of its fast path's end for the wrapper, set once the wrapper has checked its
/// budget and cleared whenever the arena's budget changes or the wrapper lends it out mutably
/// (`DerefMut`: a replacement, a swap, a `scope` or `rewind` through the wrapper; the wrapper's
/// own [`reset`](Tracked::reset) keeps it). So a loop writing 64-byte values runs 27
/// instructions per value through the wrapper, as on the bare arena, and the first allocation
/// after such a change makes the check. Other methods reached through the wrapper compare the
/// stamps on each call; to call them in a hot loop, borrow the allocator once before it: the
/// allocations in the loop are the allocator's own, under the budget the allocator itself
/// enforces.
///
/// ```
/// use arena_kit::{Arena, Budget, Tracked};
///
/// let mut particles = Tracked::new(Arena::with_capacity(4096), "particles", "Effects")
///     .with_budget(Budget::fail(1024));
/// let arena: &Arena = &particles; // the one compare
/// let mut kept = 0;
/// for i in 0..200u64 {
///     if arena.try_alloc_slice_copy(&[i; 2]).is_ok() {
///         kept += 1;
///     }
/// }
/// assert_eq!(kept, 1024 / 16); // the budget held inside the loop
/// particles.reset();
/// for i in 0..200u64 {
///     let _ = particles.try_alloc([i; 2]); // the wrapper's own: no compare either
/// }
/// assert_eq!(particles.usage().current, 1024);
/// ```
///
/// # Variance
///
/// Covariant in `A` and `G`: it owns the allocator and the tag. So its variance in the allocator's
/// own parameters is the allocator's: `Tracked<Frame<'f>, G>` is invariant in `'f` like
/// [`Frame`](crate::arena::Frame), `Tracked<Pool<T>, G>` covariant in `T` like
/// [`Pool`](crate::pool::Pool).
pub struct Tracked<A: MemoryUsage, G: Tag> {
    pub(super) inner: Inner<A>,
    pub(super) labels: Labels<G>,
}

/// The wrapped allocator. Where the leak check is compiled in (debug builds, `debug-checks`),
/// [`Tracked`] has a `Drop`, and safe code cannot move a field out of a type with `Drop`: the
/// allocator sits in an `Option`, empty only inside [`Tracked::into_inner`] between taking it out
/// and dropping the emptied wrapper (every other access finds it full: one predictable branch).
/// In other builds there is no leak check, no `Drop` and no `Option`: the allocator is stored as
/// it is, `into_inner` is a plain move, and an access through the wrapper checks nothing but
/// the budget's stamp.
#[cfg(any(debug_assertions, feature = "debug-checks"))]
pub(super) struct Inner<A>(Option<A>);

/// See the other build's definition: without the leak check, the allocator itself.
#[cfg(not(any(debug_assertions, feature = "debug-checks")))]
pub(super) struct Inner<A>(A);

#[cfg(any(debug_assertions, feature = "debug-checks"))]
impl<A> Inner<A> {
    #[inline(always)]
    fn new(inner: A) -> Self {
        Inner(Some(inner))
    }

    /// The allocator, or `None` inside `into_inner`.
    fn present(&self) -> Option<&A> {
        self.0.as_ref()
    }

    #[inline(always)]
    fn get(&self) -> &A {
        match &self.0 {
            Some(a) => a,
            None => moved_out(),
        }
    }

    #[inline(always)]
    fn get_mut(&mut self) -> &mut A {
        match &mut self.0 {
            Some(a) => a,
            None => moved_out(),
        }
    }
}

#[cfg(not(any(debug_assertions, feature = "debug-checks")))]
impl<A> Inner<A> {
    #[inline(always)]
    fn new(inner: A) -> Self {
        Inner(inner)
    }

    /// The allocator (always there in this build).
    fn present(&self) -> Option<&A> {
        Some(&self.0)
    }

    #[inline(always)]
    fn get(&self) -> &A {
        &self.0
    }

    #[inline(always)]
    fn get_mut(&mut self) -> &mut A {
        &mut self.0
    }
}

/// Only `into_inner` empties the wrapper, and it consumes it: nothing can reach it afterwards.
#[cfg(any(debug_assertions, feature = "debug-checks"))]
#[cold]
#[inline(never)]
fn moved_out() -> ! {
    unreachable!("Tracked: the allocator was already moved out by into_inner")
}

// The per-family methods (tags/arena.rs, pool.rs, soa.rs, heap.rs) reach the allocator as
// `self.inner.method()`; these keep that spelling working.
impl<A> Deref for Inner<A> {
    type Target = A;
    #[inline(always)]
    fn deref(&self) -> &A {
        self.get()
    }
}

impl<A> DerefMut for Inner<A> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut A {
        self.get_mut()
    }
}

/// Everything a [`Tracked`] allocator adds to the allocator it wraps.
#[derive(Clone, Copy)]
pub(super) struct Labels<G> {
    name: &'static str,
    tag: G,
    /// The budget set through the wrapper, naming it; `None` with `manages_budget` = removed.
    budget: Option<BudgetGate>,
    /// Whether [`Tracked::set_budget`] was called: only then does the wrapper put its budget on
    /// the allocator (a budget the allocator was given before it was wrapped is left alone).
    manages_budget: bool,
    /// The stamp of the budget the allocator holds when it is as the wrapper wants it (the
    /// wrapper's own gate's, or the allocator's own while the wrapper does not manage it): what
    /// every access compares, one word.
    stamp: usize,
    forgive: bool,
}

impl<A: MemoryUsage, G: Tag> Tracked<A, G> {
    /// The budget set through this wrapper, if any.
    pub fn budget(&self) -> Option<Budget> {
        self.labels.budget.map(|g| g.budget())
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

    /// The values this allocator holds now, as a [`Leak`] if it is a pool or heap holding any.
    /// What the drop check reports; call it yourself at shutdown for a report in release builds
    /// (or without the `log` feature).
    pub fn leak(&self) -> Option<Leak> {
        // Empty only while `into_inner` hands the allocator on: no leak then.
        let inner = self.inner.present()?;
        if !inner.reports_leaks() {
            return None;
        }
        let usage = inner.usage();
        (usage.allocations > 0).then(|| Leak {
            allocator: self.labels.name,
            tag: self.labels.tag.name(),
            count: usage.allocations,
            bytes: usage.current,
        })
    }
}

impl<A: Budgeted, G: Tag> Tracked<A, G> {
    /// Names and tags `inner`. Its budget, if it has one, is left as it is until
    /// [`set_budget`](Tracked::set_budget) or [`with_budget`](Tracked::with_budget) is called.
    /// With the [`TaggingAllocator`](super::TaggingAllocator) installed, the memory `inner` takes
    /// from the global allocator from now on is charged to `tag`
    /// ([`Budgeted::charge_pages_to`]), whichever `tag_scope` is current when it grows.
    /// With the `profiler` feature the name and tag go on the allocator too
    /// (`Budgeted::set_profiler_label`), so its own paths report to the profiler sink.
    pub fn new(mut inner: A, name: &'static str, tag: G) -> Self {
        inner.charge_pages_to(super::PageTag::of(tag));
        #[cfg(feature = "profiler")]
        inner.set_profiler_label(Some(super::ProfilerLabel::new(name, tag.name())));
        let stamp = inner.budget_stamp();
        Tracked {
            inner: Inner::new(inner),
            labels: Labels {
                name,
                tag,
                budget: None,
                manages_budget: false,
                stamp,
                forgive: false,
            },
        }
    }

    /// Sets `budget` on the allocator, naming this allocator and its tag in its errors.
    #[must_use]
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.set_budget(Some(budget));
        self
    }

    /// Sets (`Some`) or removes (`None`) the allocator's budget, now, naming this allocator and
    /// its tag in its errors. The wrapper keeps it and puts it back before the allocator is next
    /// reached if the allocator was replaced or its budget changed directly ([`Deref`],
    /// [`DerefMut`]). A budget below the current usage frees nothing: the next allocation that
    /// would grow usage meets the policy.
    pub fn set_budget(&mut self, budget: Option<Budget>) {
        let owner = Owner::new(self.labels.name, self.labels.tag.name());
        self.labels.budget = budget.map(|b| BudgetGate::new(b, owner).stamped());
        self.labels.manages_budget = true;
        let inner = self.inner.get_mut();
        inner.set_budget(self.labels.budget);
        self.labels.stamp = inner.budget_stamp();
    }

    /// The allocator, for reading, with this wrapper's budget on it: `&*tracked`, spelled out for
    /// the methods whose names [`Tracked`] shadows (`budget`, `set_budget`, `usage`, ...).
    #[inline(always)]
    pub fn allocator(&self) -> &A {
        self
    }

    /// The allocator, mutably, with this wrapper's budget on it: `&mut *tracked`, spelled out as
    /// for [`allocator`](Tracked::allocator). Allocations through it meet the budget.
    #[inline(always)]
    pub fn allocator_mut(&mut self) -> &mut A {
        self
    }

    /// The allocator, without its name and tag (what it takes from the global allocator from now
    /// on goes to the scope current when it grows), and without the budget set through this
    /// wrapper (a budget it had before it was wrapped, never replaced through the wrapper, stays).
    /// No leak report is made: the values live on in the allocator returned.
    pub fn into_inner(self) -> A {
        let manages = self.labels.manages_budget;
        let mut inner = self.take_inner();
        inner.recheck_budget();
        #[cfg(feature = "profiler")]
        inner.set_profiler_label(None);
        // Untracked again: its pages go to the scope current when it grows.
        inner.charge_pages_to(super::PageTag::NONE);
        if manages {
            inner.set_budget(None);
        }
        inner
    }

    /// The allocator, out of the wrapper, which is dropped empty (so it reports no leak).
    #[cfg(any(debug_assertions, feature = "debug-checks"))]
    fn take_inner(mut self) -> A {
        match self.inner.0.take() {
            Some(inner) => inner,
            None => moved_out(),
        }
    }

    /// The allocator, out of the wrapper (which has no `Drop` in this build).
    #[cfg(not(any(debug_assertions, feature = "debug-checks")))]
    fn take_inner(self) -> A {
        self.inner.0
    }
}

/// The typed allocations of a tracked arena are also methods of the wrapper, so that the value
/// is built in place whichever path gives its slot (through `Deref`, the check comes first, and
/// in a hot loop that can cost the compiler its best code for building the value in place), and
/// so that they skip the wrapper's check while the arena is armed (see "Hot loops" on
/// [`Tracked`]). They are the arena's own methods otherwise: same budget, same errors, same
/// panics.
impl<G: Tag> Tracked<crate::arena::Arena, G> {
    /// [`Arena::try_alloc`](crate::arena::Arena::try_alloc).
    ///
    /// # Errors
    ///
    /// As [`Arena::try_alloc`](crate::arena::Arena::try_alloc), a budget's refusal included.
    #[inline(always)]
    pub fn try_alloc<T: crate::arena::ArenaDrop + 'static>(
        &self,
        value: T,
    ) -> Result<&mut T, crate::arena::ArenaError> {
        self.inner.get().try_alloc_for(value, Recheck(self))
    }

    /// [`Arena::alloc`](crate::arena::Arena::alloc).
    ///
    /// # Panics
    ///
    /// As [`Arena::alloc`](crate::arena::Arena::alloc): the arena is full, or over a `Fail` or
    /// `Panic` budget.
    #[inline(always)]
    #[track_caller]
    #[allow(clippy::mut_from_ref)] // handing out `&mut T` from `&self` is what an arena does
    pub fn alloc<T: crate::arena::ArenaDrop + 'static>(&self, value: T) -> &mut T {
        self.inner
            .get()
            .try_alloc_for(value, Recheck(self))
            .unwrap_or_else(|e| crate::arena::fail(e))
    }
}

/// A tracked arena's own allocation ([`Tracked::alloc`], [`Tracked::try_alloc`]): it bumps
/// below the arena's armed end, which is its end only while this wrapper's budget is known to
/// be on it, so the loop pays no compare of its own. When that misses with the arena not armed
/// (the first allocation, after a budget change or a mutable borrow), the wrapper does what
/// its [`Deref`] does, putting its budget back if it is not the arena's, and arms the arena
/// again; a miss while armed (a page's end, a value that starts a drop record) takes the
/// arena's own paths under the budget already on it.
struct Recheck<'t, G: Tag>(&'t Tracked<crate::arena::Arena, G>);

impl<G: Tag> Clone for Recheck<'_, G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G: Tag> Copy for Recheck<'_, G> {}

impl<G: Tag> crate::arena::Caller for Recheck<'_, G> {
    const ARMED: bool = true;

    #[inline(never)]
    fn missed(self) {
        self.0.allocator().arm();
    }
}

/// As for a tracked arena: inserting through the wrapper builds the value before the wrapper's
/// check. The pool's own methods otherwise.
#[cfg(feature = "alloc")]
impl<T, H: crate::pool::PoolHandle<T>, G: Tag> Tracked<crate::pool::Pool<T, H>, G> {
    /// [`Pool::try_insert`](crate::pool::Pool::try_insert).
    ///
    /// # Errors
    ///
    /// As [`Pool::try_insert`](crate::pool::Pool::try_insert), a budget's refusal included; the
    /// value is handed back.
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<H, crate::pool::PoolFull<T>> {
        self.allocator_mut().try_insert(value)
    }

    /// [`Pool::insert`](crate::pool::Pool::insert).
    ///
    /// # Panics
    ///
    /// As [`Pool::insert`](crate::pool::Pool::insert): the pool is full, or over a `Fail` or
    /// `Panic` budget.
    #[inline(always)]
    #[track_caller]
    pub fn insert(&mut self, value: T) -> H {
        self.allocator_mut().insert(value)
    }
}

/// A tracked allocator is an allocator: it reports the wrapped allocator's counters, so generic
/// code (and another wrapper) can take it where it takes the allocator.
impl<A: Budgeted, G: Tag> MemoryUsage for Tracked<A, G> {
    fn usage(&self) -> Usage {
        self.inner.usage()
    }
    fn reports_leaks(&self) -> bool {
        self.inner.reports_leaks()
    }
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {
        self.inner.profile_frame();
    }
}

/// Through the trait, a tracked allocator's budget is the allocator's ([`Budgeted::budget`] reads
/// the gate in force, warned state included), and a gate set through it is named after the
/// wrapper, as [`Tracked::set_budget`] names it.
impl<A: Budgeted, G: Tag> Budgeted for Tracked<A, G> {
    fn budget(&self) -> Option<BudgetGate> {
        self.allocator().budget()
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        Tracked::set_budget(self, gate.map(|g| g.budget()));
    }

    // `restore_budget` keeps its default: every access through the wrapper restores the
    // wrapper's own gate already.

    /// The wrapped allocator's: a wrapper of a wrapper lends out the innermost allocator.
    fn recheck_budget(&self) {
        self.inner.get().recheck_budget();
    }

    /// The wrapped allocator's: a wrapper of a wrapper labels the innermost allocator.
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<super::ProfilerLabel>) {
        self.inner.get_mut().set_profiler_label(label);
    }
}

/// The allocator's budget is not the wrapper's (another stamp): it was replaced, or its budget
/// changed directly, or it holds a copy of the wrapper's gate. Through `&self`, the wrapper's
/// budget is put back where the allocator can take it that way (arenas, see
/// [`Budgeted::restore_budget`]); out of line, as it runs once per such change.
#[cold]
#[inline(never)]
fn restore<A: Budgeted>(inner: &A, labels_budget: &Option<BudgetGate>, manages: bool) {
    if let (true, Some(gate)) = (manages, labels_budget) {
        inner.restore_budget(gate);
    }
}

/// As [`restore`], through `&mut`: a managed budget (or its removal) is put on the allocator; an
/// unmanaged wrapper takes note of the allocator's own budget, so the next check is one compare.
#[cold]
#[inline(never)]
fn restore_mut<A: Budgeted, G>(inner: &mut A, labels: &mut Labels<G>) {
    if labels.manages_budget {
        inner.set_budget(labels.budget);
    }
    labels.stamp = inner.budget_stamp();
}

/// Reading through the wrapper reads the allocator, with the wrapper's budget restored on it
/// first if the allocator's is not the wrapper's: one compare of the gates' stamps.
impl<A: Budgeted, G: Tag> Deref for Tracked<A, G> {
    type Target = A;

    #[inline(always)]
    fn deref(&self) -> &A {
        let inner = self.inner.get();
        if inner.budget_stamp() != self.labels.stamp {
            restore(inner, &self.labels.budget, self.labels.manages_budget);
        }
        inner
    }
}

/// The allocator, mutably, with the wrapper's budget put back on it first if it is not there
/// (a replaced allocator, or a budget changed on it or on one of its buffers directly).
impl<A: Budgeted, G: Tag> DerefMut for Tracked<A, G> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut A {
        let inner = self.inner.get_mut();
        if inner.budget_stamp() != self.labels.stamp {
            restore_mut(inner, &mut self.labels);
        }
        // What is done with it may replace it or change its budget: the wrapper's next `alloc`
        // checks again.
        inner.recheck_budget();
        inner
    }
}

#[cfg(feature = "alloc")]
impl<const N: usize, G: Tag> Tracked<crate::arena::FrameArena<N>, G> {
    /// [`FrameArena::begin_frame`](crate::arena::FrameArena::begin_frame): the next frame,
    /// tracked under the same name, tag and budget, so a report names it and its guard checks say
    /// whose frame it was. The budget is the frame arena's per-buffer budget, held by the frame's
    /// own buffer.
    pub fn begin_frame(&mut self) -> Tracked<crate::arena::Frame<'_>, G> {
        let labels = self.labels;
        labels.wrap((**self).begin_frame())
    }
}

#[cfg(feature = "alloc")]
impl<G: Tag> Labels<G> {
    /// These labels on another allocator.
    pub(super) fn wrap<B: MemoryUsage>(self, inner: B) -> Tracked<B, G> {
        Tracked {
            inner: Inner::new(inner),
            labels: self,
        }
    }
}

/// The leak check, compiled in where [`crate::poison::ENABLED`] is (debug builds, `debug-checks`).
#[cfg(any(debug_assertions, feature = "debug-checks"))]
impl<A: MemoryUsage, G: Tag> Drop for Tracked<A, G> {
    fn drop(&mut self) {
        if !self.labels.forgive
            && let Some(leak) = self.leak()
        {
            super::sink::emit(super::Event::Leak(leak));
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
    /// At [`Registry::end_frame`](super::Registry::end_frame) (the `profiler` feature): see
    /// [`MemoryUsage::profile_frame`]. The default does nothing.
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {}
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
        self.labels.budget.map(|g| g.budget().bytes)
    }
    #[cfg(feature = "profiler")]
    fn profile_frame(&self) {
        self.inner.profile_frame();
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
