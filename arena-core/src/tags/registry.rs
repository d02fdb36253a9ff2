//! [`Registry`]: per-tag budgets and the per-frame history, fed a report every frame.

use alloc::vec::Vec;
use core::fmt;

use super::budget::{Budget, BudgetExceeded, Policy};
use super::history::History;
use super::report::Report;
use super::tag::Tag;
use super::tracked::Source;

/// Frames a [`Registry`] keeps in its history by default (a minute at 60 frames per second).
pub const DEFAULT_HISTORY: usize = 3600;

/// Budgets per tag and a history of frames. Once a frame, hand it every live allocator
/// ([`end_frame`](Registry::end_frame)): it reads their counters into a [`Report`], checks each
/// tag's total against its budget and records the frame.
///
/// Tag budgets are checked here, at the end of a frame, because a tag's bytes are spread over
/// several allocators, each counting its own without locks or shared atomics. For a check on
/// every allocation, give an allocator its own budget ([`Tracked::with_budget`]); with one
/// allocator per tag the two are the same.
///
/// [`Tracked::with_budget`]: super::Tracked::with_budget
///
/// ```
/// use arena_kit::{Arena, Budget, Pool, Registry, Tracked};
///
/// let mut registry = Registry::new();
/// registry.set_budget("Physics", Budget::fail(1024));
/// let mut bodies = Tracked::new(Pool::with_capacity(64), "rigid bodies", "Physics");
/// let scratch = Tracked::new(Arena::with_capacity(4096), "pathfinding", "AI");
/// for _ in 0..16 {
///     bodies.insert([0u8; 64]);
/// }
/// scratch.alloc([0u8; 2048]);
/// let report = registry.end_frame(&[&bodies, &scratch]).unwrap();
/// assert_eq!(report.totals().to_string(), "Physics: 1024 bytes\nAI: 2048 bytes\n");
/// bodies.insert([0u8; 64]);
/// let over = registry.end_frame(&[&bodies, &scratch]).unwrap_err();
/// assert_eq!(over.exceeded.current, 1088);
/// bodies.clear(); // a tracked pool dropped with live values is reported as a leak
/// ```
///
/// # Variance
///
/// Covariant in `G` (tags are `'static`, so no lifetime can shrink through it).
#[derive(Debug, Clone)]
pub struct Registry<G: Tag> {
    budgets: Vec<(G, Budget)>,
    /// Tags over budget at the last frame, so `Warn` logs once per crossing.
    over: Vec<G>,
    history: History<G>,
    frame: u64,
}

impl<G: Tag> Default for Registry<G> {
    fn default() -> Self {
        Registry::new()
    }
}

impl<G: Tag> Registry<G> {
    /// No budgets, a history of [`DEFAULT_HISTORY`] frames.
    pub fn new() -> Registry<G> {
        Registry::with_history(DEFAULT_HISTORY)
    }

    /// No budgets, a history of the last `frames` frames.
    pub fn with_history(frames: usize) -> Registry<G> {
        Registry {
            budgets: Vec::new(),
            over: Vec::new(),
            history: History::with_capacity(frames),
            frame: 0,
        }
    }

    /// Sets the budget of `tag` (children included), replacing any earlier one.
    pub fn set_budget(&mut self, tag: G, budget: Budget) {
        match self.budgets.iter_mut().find(|b| b.0 == tag) {
            Some(b) => b.1 = budget,
            None => self.budgets.push((tag, budget)),
        }
    }

    /// The budget of `tag`, if any.
    pub fn budget(&self, tag: G) -> Option<Budget> {
        self.budgets.iter().find(|b| b.0 == tag).map(|b| b.1)
    }

    /// A report of `sources` now, without recording it or checking budgets.
    pub fn report(&self, sources: &[&dyn Source<G>]) -> Report<G> {
        Report::build(self.frame, sources, &self.budgets)
    }

    /// Ends a frame: takes a report of `sources`, records it in the history, checks each tag
    /// against its budget, and starts the next frame number. With the `profiler` feature it first
    /// brings each source's profiler report up to date (`Source::profile_frame`), then raises
    /// one `ProfilerEvent::Plot` per tag, a `Message` per tag that went over its budget and a
    /// `FrameEnd` (see "Live in a profiler" in [`tags`](super)).
    ///
    /// # Errors
    ///
    /// [`OverBudget`] (carrying the report) when a tag with a [`Policy::Fail`] budget is over.
    /// `Warn` budgets log once when a tag goes over.
    ///
    /// # Panics
    ///
    /// When a tag with a [`Policy::Panic`] budget is over.
    #[track_caller]
    pub fn end_frame(&mut self, sources: &[&dyn Source<G>]) -> Result<Report<G>, OverBudget<G>> {
        #[cfg(feature = "profiler")]
        for source in sources {
            source.profile_frame();
        }
        let report = self.report(sources);
        #[cfg(feature = "profiler")]
        for row in report.tags() {
            super::profiler::emit(&super::ProfilerEvent::Plot {
                tag: row.tag.name(),
                bytes: row.usage.current,
                frame: report.frame(),
            });
        }
        self.history.record(&report);
        self.frame += 1;
        let mut failed = None;
        let mut over = Vec::new();
        for (tag, exceeded) in report.over_budget_tags() {
            let policy = self.budget(tag).map_or(Policy::Warn, |b| b.policy);
            #[cfg(feature = "profiler")]
            if !self.over.contains(&tag) {
                let text = alloc::format!("{exceeded} (frame {})", report.frame());
                super::profiler::emit(&super::ProfilerEvent::Message {
                    text: &text,
                    frame: report.frame(),
                });
            }
            match policy {
                Policy::Warn if !self.over.contains(&tag) => {
                    super::sink::emit(super::Event::TagBudget {
                        exceeded,
                        frame: report.frame(),
                    });
                }
                Policy::Warn => {}
                Policy::Fail => {
                    failed.get_or_insert(exceeded);
                }
                Policy::Panic => panic!("{exceeded} (frame {})", report.frame()),
            }
            over.push(tag);
        }
        self.over = over;
        #[cfg(feature = "profiler")]
        super::profiler::emit(&super::ProfilerEvent::FrameEnd {
            frame: report.frame(),
        });
        match failed {
            None => Ok(report),
            Some(exceeded) => Err(OverBudget { exceeded, report }),
        }
    }

    /// The frames recorded so far.
    pub fn history(&self) -> &History<G> {
        &self.history
    }

    /// The number the next report gets (frames ended so far).
    pub fn frame(&self) -> u64 {
        self.frame
    }
}

/// A tag with a [`Policy::Fail`] budget was over it at the end of a frame. The frame's report is
/// here too (and in the history), so nothing is lost.
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverBudget<G> {
    /// The first failing tag's budget and bytes.
    pub exceeded: BudgetExceeded,
    /// The frame's report.
    pub report: Report<G>,
}

impl<G> fmt::Display for OverBudget<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (frame {})", self.exceeded, self.report.frame)
    }
}

impl<G: fmt::Debug> core::error::Error for OverBudget<G> {}
