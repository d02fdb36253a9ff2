//! Memory tags, budgets and reports: who owns every byte, across every allocator.
//!
//! Per-subsystem tracking ("when total memory creeps up over a two-hour session, who
//! is using it?") without a global tracker: each allocator keeps its own counters, as it already
//! does, and a [`Tracked`] wrapper gives it a name, a [`Tag`] (your own `enum MemoryTag`, with
//! parents for hierarchies like `Rendering/Particles`) and optionally a [`Budget`]. Once a frame,
//! a [`Registry`] reads every live allocator into a [`Report`] (current, peak, live allocations,
//! reserved bytes and budget per tag and per allocator), checks tag budgets and keeps a
//! [`History`], which exports to CSV, JSON and an SVG chart.
//!
//! **Pick it** to see where memory goes, to keep subsystems inside budgets, and to catch pools
//! and heaps dropped with live values (leak reports in debug builds).
//! **Costs:** an untracked allocator pays nothing. A tracked one pays one predictable branch per
//! access through the wrapper, and with a budget a few compares per `&mut` access (the wrapper
//! checks the allocator still holds its budget, see [`Tracked`]); the budget itself is enforced by
//! the allocator where it already checks its own limit (a page end, a pool's capacity, a heap's
//! region), so its fast path is unchanged. No lock, no shared atomic, no global state (without the
//! `profiler`/`tracy` features; see "Live in a profiler"). Reading counters happens only when a
//! report is taken.
//! **Not for** per-allocation call stacks or per-allocation tags inside one allocator: the tag
//! belongs to the allocator (as in most engine trackers, Unreal's LLM scopes aside), so give each subsystem
//! its own allocators.
//!
//! | policy | what happens when an allocation would go over budget |
//! | --- | --- |
//! | [`Policy::Warn`] | it succeeds, and a warning is raised once per crossing (an [`Event`]: to the `log` facade, a report sink, or stderr in debug builds) |
//! | [`Policy::Fail`] | the `try_` form returns the allocator's own error, carrying a [`BudgetExceeded`]; nothing is allocated |
//! | [`Policy::Panic`] | it panics with the [`BudgetExceeded`] text |
//!
//! An allocator's own budget ([`Budgeted`], set directly or through its [`Tracked`] wrapper) holds
//! for every allocating method. A tag's budget ([`Registry::set_budget`]) covers all its
//! allocators and its child tags, and is checked when the frame ends ([`Registry::end_frame`]): a
//! per-allocation check of a shared total would need a shared counter on every allocation path.
//!
//! Budget warnings, leak reports and guard reports are [`Event`]s. With the `log` feature (on by
//! default) they go to the `log` facade (targets `arena_kit::budget`, `arena_kit::leak`,
//! `arena_kit::guard`); with `std`, to the sink set by [`set_report_sink`] (an engine's own log or
//! profiler); and in debug builds with `std` and neither a logger nor a sink, to stderr, one line
//! each (`ARENA_KIT_QUIET=1` silences it). Without `std` and `log` they go nowhere: read
//! [`Tracked::leak`], [`Report::over_budget`] and the typed errors instead. With the `serde` feature, [`Report`], [`History`] and [`Usage`] implement
//! `Serialize`, in the shape of the built-in JSON ([`Report::to_json`]), which stays for `no_std`
//! users and needs no dependency.
//!
//! **Every other byte of the process** (each `Vec`, `Box` and `String`): install the
//! [`TaggingAllocator`] as the `#[global_allocator]` and open a [`tag_scope`] (or [`mem_tag!`])
//! around a subsystem's work. Each allocation is charged to the innermost scope of the
//! allocating thread and its free to the same tag from any thread; [`global_rows`] turns the
//! counters into one [`Source`] row per tag plus "Untracked", for the same [`Registry`],
//! [`Report`], [`History`] and exports. Its costs: an 8-byte header per allocation (`align` bytes
//! for alignments over 8), two thread-local reads and two plain adds per allocation and per free
//! (per-thread counters, no lock and no shared atomic), and a lock-free scan of at most
//! [`MAX_TAG_SLOTS`] slots per `tag_scope`. A [`Tracked`] allocator charges the pages it takes
//! to its own tag, whichever scope is current when it grows ([`PageTag`]); see [`global_rows`]
//! for how its rows and `Tracked` rows count each byte once. It needs `std`: without it there is no `TaggingAllocator` and no
//! `tag_scope`, and only the allocators' own rows (`Tracked`, `LockedHeap`'s statistics) count.
//!
//! **Which allocation, when** (with `std`): a [`Recorder`] keeps the last N allocation events
//! (alloc, free, discard, frame end) in a ring allocated once, counting what it overwrites, and
//! answers what was live at a frame, what grew between two frames, what outlived its frame and
//! which call sites hold old allocations; it exports a Chrome/Perfetto trace (a counter track
//! per tag, one async slice per allocation).
//!
//! ```
//! use arena_kit::{Arena, Pool, Registry, Tag, Tracked};
//!
//! #[derive(Debug, Clone, Copy, PartialEq, Eq)]
//! enum MemoryTag { Physics, AI }
//!
//! impl Tag for MemoryTag {
//!     fn name(&self) -> &'static str {
//!         match self { MemoryTag::Physics => "Physics", MemoryTag::AI => "AI" }
//!     }
//! }
//!
//! let mut bodies = Tracked::new(Pool::with_capacity(64), "rigid bodies", MemoryTag::Physics);
//! let mut paths = Tracked::new(Arena::with_capacity(4096), "pathfinding", MemoryTag::AI);
//! let mut registry = Registry::new();
//! for _ in 0..64 {
//!     bodies.insert([0u8; 64]);
//! }
//! paths.alloc([0u8; 2048]);
//! let report = registry.end_frame(&[&bodies, &paths]).unwrap();
//! assert_eq!(report.totals().to_string(), "Physics: 4096 bytes\nAI: 2048 bytes\n");
//! bodies.clear(); // or `forgive_leaks()`: a pool dropped with live values is reported
//! ```

#![cfg_attr(feature = "profiler", doc = include_str!("profiler.md"))]
#![cfg_attr(
    not(feature = "profiler"),
    doc = "# Live in a profiler\n\nWith the `profiler` feature, every `Tracked` allocator \
           reports its allocations, frees and discards to a `ProfilerSink`, and the `tracy` \
           feature shows them in the Tracy profiler (see docs/features.md). This build has \
           neither: no hook is compiled."
)]
// The compiler keeps `unsafe` out of this module: tags are a safe layer over the allocators, and
// code that needs `unsafe` (the guarded heap, the guard scanner) lives with its allocator.
#![forbid(unsafe_code)]

mod budget;
pub(crate) use budget::raise_warning;
#[cfg(feature = "alloc")]
mod export;
#[cfg(feature = "std")]
mod global;
mod guard;
#[cfg(feature = "alloc")]
mod heap;
#[cfg(feature = "alloc")]
mod history;
mod page_tag;
mod palette;
// The names the sinks that keep allocators of one name apart show them under (`TracySink`,
// `Recorder`).
#[cfg(all(feature = "profiler", feature = "std"))]
pub(crate) mod pool_names;
#[cfg(feature = "profiler")]
pub(crate) mod profiler;
#[cfg(feature = "std")]
mod recorder;
#[cfg(feature = "alloc")]
mod registry;
#[cfg(feature = "alloc")]
mod report;
#[cfg(feature = "serde")]
mod serde;
mod sink;
#[cfg(feature = "alloc")]
mod svg;
mod tag;
mod tracked;
mod usage;

pub use crate::arena::BumpAllocator;
/// The guarded heap lives in [`crate::heap`]; re-exported here beside the other debug layers.
#[cfg(feature = "alloc")]
pub use crate::heap::GuardedHeap;
#[cfg(feature = "std")]
pub use crate::mem_tag;
/// The tagging global allocator lives in core's `tagging_alloc` module (its `unsafe` half).
#[cfg(feature = "std")]
pub use crate::tagging_alloc::{
    HEADER, MAX_TAG_SLOTS, MAX_THREADS, TaggingAllocator, overflowed_scopes,
};
/// The Tracy sink lives in core's `tracy_sink` module (its FFI half).
#[cfg(feature = "tracy")]
pub use crate::tracy_sink::TracySink;
pub use budget::{Budget, BudgetExceeded, BudgetGate, Budgeted, Owner, Policy};
#[cfg(feature = "std")]
pub use global::{GlobalRow, TagScope, global_rows, tag_scope};
pub use guard::GuardReport;
#[cfg(feature = "alloc")]
pub use history::{FrameSample, History};
pub use page_tag::{PageCharge, PageTag};
pub use palette::{OKABE_ITO, tag_colour};
#[cfg(all(feature = "profiler", feature = "std"))]
pub use profiler::sink_panics;
#[cfg(feature = "profiler")]
pub use profiler::{ProfilerEvent, ProfilerLabel, ProfilerSink, set_profiler_sink};
#[cfg(feature = "std")]
pub use recorder::{
    Allocation, Answer, Growth, GrowthRow, Record, Recorder, RecorderError, SiteGroup, Stamped,
};
#[cfg(feature = "alloc")]
pub use registry::{DEFAULT_HISTORY, OverBudget, Registry};
#[cfg(feature = "alloc")]
pub use report::{AllocatorRow, Report, TagRow, Totals};
pub use sink::Event;
#[cfg(feature = "std")]
pub use sink::{ReportSink, set_report_sink};
#[cfg(feature = "alloc")]
pub use svg::{ChartScale, PER_TAG_RATIO};
pub use tag::{MAX_DEPTH, Tag, TagPath};
pub use tracked::{Leak, Source, Tracked};
pub use usage::{MemoryUsage, Usage};
