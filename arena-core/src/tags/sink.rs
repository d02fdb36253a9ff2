//! Where budget warnings, leak reports and guard reports go: the `log` facade, a report sink, or
//! stderr (see [`set_report_sink`] for the rules).

use core::fmt;

use super::{BudgetExceeded, GuardReport, Leak};

/// A budget warning, leak report or guard report, as the `log` facade and a report sink receive
/// it. Its `Display` is the one-line message (what happened and what to do), the same text the
/// `log` record carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// An allocator's [`Warn`](super::Policy::Warn) budget was crossed: the allocation went
    /// ahead. Once per crossing (again after usage falls back under).
    Budget(BudgetExceeded),
    /// A tag's `Warn` budget was over at the end of a frame
    /// ([`Registry::end_frame`](super::Registry::end_frame)). Once per crossing.
    TagBudget {
        /// The tag, its total and its budget.
        exceeded: BudgetExceeded,
        /// The frame that ended over budget.
        frame: u64,
    },
    /// A tracked pool or heap was dropped with live allocations (debug builds and
    /// `debug-checks`).
    Leak(Leak),
    /// A guard byte around an allocation was found overwritten.
    Guard(GuardReport),
}

impl Event {
    /// The `log` target: `arena_kit::budget`, `arena_kit::leak` or `arena_kit::guard`.
    pub const fn target(&self) -> &'static str {
        match self {
            Event::Budget(_) | Event::TagBudget { .. } => "arena_kit::budget",
            Event::Leak(_) => "arena_kit::leak",
            Event::Guard(_) => "arena_kit::guard",
        }
    }

    /// Whether it is an error (a leak or a damaged guard: a bug to fix) rather than a warning (a
    /// budget crossed: the program went on as asked). The `log` level follows it.
    pub const fn is_error(&self) -> bool {
        matches!(self, Event::Leak(_) | Event::Guard(_))
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Budget(e) => write!(f, "{e}"),
            Event::TagBudget { exceeded, frame } => write!(f, "{exceeded} (frame {frame})"),
            Event::Leak(leak) => write!(f, "{leak}"),
            Event::Guard(report) => write!(f, "{report}"),
        }
    }
}

/// A report sink: a function every [`Event`] is handed to, on the thread that raised it.
#[cfg(feature = "std")]
pub type ReportSink = fn(&Event);

#[cfg(feature = "std")]
static SINK: std::sync::RwLock<Option<ReportSink>> = std::sync::RwLock::new(None);

/// Sends every [`Event`] to `sink` (`None`: to no sink), for engines with their own log or
/// profiler (a Tracy message, `UE_LOG`, an in-game console). Returns the sink set before.
/// Process-wide; needs `std`.
///
/// Where an event goes:
///
/// - with the `log` feature, to the `log` facade (targets in [`Event::target`], level `warn` or
///   `error`), as ever;
/// - to the report sink, if one is set;
/// - otherwise, in debug builds (`debug_assertions`) with `std`, when the `log` facade drops
///   every record (`log::max_level()` is `Off`: no logger is installed) or the `log` feature is
///   off, to stderr, one line per event, unless the environment variable `ARENA_KIT_QUIET` is
///   `1`. Release builds print nothing.
///
/// Without `std` events reach only the `log` facade; read [`Report`](super::Report),
/// [`Tracked::leak`](super::Tracked::leak) and the typed errors instead.
///
/// The sink runs on the thread that raised the event, from inside the allocator (a budget
/// warning from the allocation's slow path, a leak report from the wrapper's `drop`), with the
/// allocator in order: it may allocate, even from that allocator (an arena reached through a
/// thread-local). An event raised while the sink runs on the same thread goes to stderr (as if
/// no sink were set), not to the sink again. A sink that panics unwinds out of the call that
/// raised the event, as a [`Panic`](super::Policy::Panic) budget would there: the allocation is
/// not made, the allocator is as it was, and its next crossing warns again; in a `drop` run by
/// an unwinding panic that is a panic during a panic, which aborts.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// use arena_kit::tags::{Event, set_report_sink};
/// use arena_kit::{Arena, Budget, Tracked};
///
/// static WARNINGS: AtomicUsize = AtomicUsize::new(0);
///
/// fn to_engine_log(event: &Event) {
///     // `UE_LOG(LogMemory, Warning, ...)`, `TracyMessage(...)`, ...
///     if let Event::Budget(exceeded) = event {
///         assert_eq!(exceeded.allocator, "particles");
///         WARNINGS.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// set_report_sink(Some(to_engine_log));
/// let arena = Tracked::new(Arena::with_capacity(4096), "particles", "FX")
///     .with_budget(Budget::warn(1024));
/// arena.alloc([0u8; 2048]); // over the budget: warns, and the allocation goes ahead
/// assert_eq!(WARNINGS.load(Ordering::Relaxed), 1);
/// set_report_sink(None);
/// ```
#[cfg(feature = "std")]
pub fn set_report_sink(sink: Option<ReportSink>) -> Option<ReportSink> {
    let mut slot = SINK
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    core::mem::replace(&mut *slot, sink)
}

/// Raises `event`: to the `log` facade, then to the sink or stderr (see [`set_report_sink`]).
pub(crate) fn emit(event: Event) {
    // A profiler shows every warning and error as a message too (a tag's budget at the end of a
    // frame is sent by `Registry::end_frame` itself, with its frame).
    #[cfg(feature = "profiler")]
    if !matches!(event, Event::TagBudget { .. }) {
        let text = alloc::format!("{event}");
        super::profiler::emit(&super::ProfilerEvent::Message {
            text: &text,
            frame: super::profiler::frame_in_progress(),
        });
    }
    #[cfg(feature = "log")]
    let logged = {
        let level = if event.is_error() {
            log::Level::Error
        } else {
            log::Level::Warn
        };
        log::log!(target: event.target(), level, "{event}");
        log::max_level() != log::LevelFilter::Off
    };
    #[cfg(not(feature = "log"))]
    let logged = false;
    #[cfg(feature = "std")]
    deliver(&event, logged);
    #[cfg(not(feature = "std"))]
    let _ = (event, logged);
}

#[cfg(feature = "std")]
fn deliver(event: &Event, logged: bool) {
    use std::cell::Cell;

    std::thread_local! {
        /// Set while this thread runs the sink: an event the sink raises goes to stderr.
        static IN_SINK: Cell<bool> = const { Cell::new(false) };
    }
    /// Clears `IN_SINK` when the sink returns or unwinds.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            IN_SINK.with(|s| s.set(false));
        }
    }

    let sink = *SINK
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(sink) = sink
        && !IN_SINK.with(|s| s.replace(true))
    {
        let _leave = Leave;
        sink(event);
        return;
    }
    if cfg!(debug_assertions) && !logged && !quiet() {
        let kind = if event.is_error() { "error" } else { "warning" };
        // `eprintln!`, so the test harness captures it like any other output.
        std::eprintln!("[{}] {kind}: {event}", event.target());
    }
}

/// `ARENA_KIT_QUIET=1` in the environment.
#[cfg(feature = "std")]
fn quiet() -> bool {
    std::env::var_os("ARENA_KIT_QUIET").is_some_and(|v| v == "1")
}
