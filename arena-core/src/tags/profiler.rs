//! Profiler hooks (the `profiler` feature): what a [`Tracked`](super::Tracked) allocator and
//! [`Registry::end_frame`](super::Registry::end_frame) report to a [`ProfilerSink`]. See
//! "Live in a profiler" in the [module docs](super).

use core::panic::Location;

/// Where the hooks of [`Tracked`](super::Tracked) allocators go: one global sink, set with
/// [`set_profiler_sink`]. It is called on the thread that allocates, inside the allocating call,
/// after the allocator has finished the operation, so it must be cheap and must not block.
///
/// A sink that panics: with `std` the panic is caught where the event is raised, the event is
/// lost and counted ([`sink_panics`]), and the allocating call goes on as if no sink were set,
/// so the allocator is never left between two states and a drop never aborts. Without `std`
/// (where a panic usually aborts anyway) it cannot be caught, and the program aborts: the panic
/// never unwinds through the allocator's operation. A sink that
/// allocates from a tracked allocator (one it can reach through `&self`, a thread-local arena
/// say) receives that allocation's events from inside its own call: nothing is locked while it
/// runs, so it does not deadlock, but it must stop the recursion itself.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// use arena_kit::tags::{ProfilerEvent, ProfilerSink, set_profiler_sink};
///
/// struct CountAllocs(AtomicUsize);
///
/// impl ProfilerSink for CountAllocs {
///     fn event(&self, event: &ProfilerEvent<'_>) {
///         if let ProfilerEvent::Alloc { .. } = event {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// static COUNT: CountAllocs = CountAllocs(AtomicUsize::new(0));
/// set_profiler_sink(Some(&COUNT));
/// let mut bodies = arena_kit::Tracked::new(arena_kit::Pool::with_capacity(4), "bodies", "Physics");
/// bodies.insert(1u32);
/// set_profiler_sink(None);
/// assert!(COUNT.0.load(Ordering::Relaxed) >= 1);
/// bodies.clear();
/// ```
pub trait ProfilerSink: Sync {
    /// Receives one event. Borrowed text lives only for the call: copy it to keep it.
    fn event(&self, event: &ProfilerEvent<'_>);
}

/// One thing a tracked allocator or the [`Registry`](super::Registry) tells a [`ProfilerSink`].
/// `pool` is the [`Tracked`](super::Tracked) allocator's name, `tag` its tag's name, `id` its
/// label's identity ([`ProfilerLabel::id`]): names need not be unique (two threads' scratch
/// arenas are both `"scratch"`), so a sink that keeps allocators apart keys them by
/// `(pool, buffer, id)`. Every allocator's events under one label end with one
/// [`PoolEnd`](ProfilerEvent::PoolEnd), after everything it reported was freed or discarded.
///
/// ```
/// use arena_kit::tags::ProfilerEvent;
///
/// let e = ProfilerEvent::Discard { pool: "particles", tag: "Rendering", buffer: None, id: 7 };
/// assert_eq!(e.pool(), Some("particles"));
/// assert_eq!(e.id(), Some(7));
/// assert_eq!(ProfilerEvent::FrameEnd { frame: 3 }.pool(), None);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfilerEvent<'a> {
    /// A tracked allocator (its name is the pool) took `size` bytes at `addr`. For an arena, one
    /// page's used range (see "Live in a profiler" in the [module docs](super)).
    Alloc {
        /// The allocator's name.
        pool: &'static str,
        /// Its tag's name.
        tag: &'static str,
        /// The address of the allocation.
        addr: usize,
        /// Its size in bytes.
        size: usize,
        /// `Some(i)` for buffer `i` of a frame arena: each buffer is a pool of its own.
        buffer: Option<usize>,
        /// The allocator's identity ([`ProfilerLabel::id`]).
        id: u64,
        /// The allocating call site (through `#[track_caller]`) of a pool's insert or a heap's
        /// allocation, in debug builds; `None` in release builds and for a block holding many
        /// allocations (an arena's block, a SoA vector's columns).
        site: Option<&'static Location<'static>>,
    },
    /// The allocation at `addr` (reported by an [`Alloc`](ProfilerEvent::Alloc) before) is gone.
    Free {
        /// The allocator's name.
        pool: &'static str,
        /// Its tag's name.
        tag: &'static str,
        /// The address [`Alloc`](ProfilerEvent::Alloc) reported.
        addr: usize,
        /// Its size in bytes.
        size: usize,
        /// `Some(i)` for buffer `i` of a frame arena: each buffer is a pool of its own.
        buffer: Option<usize>,
        /// The allocator's identity ([`ProfilerLabel::id`]).
        id: u64,
    },
    /// Everything `pool` reported is gone at once (an arena's reset, rewind or scope exit, or
    /// its drop); for a frame arena's buffer, everything that buffer reported. The pool lives
    /// on: it may report again.
    Discard {
        /// The allocator's name.
        pool: &'static str,
        /// Its tag's name.
        tag: &'static str,
        /// `Some(i)` for buffer `i` of a frame arena: each buffer is a pool of its own.
        buffer: Option<usize>,
        /// The allocator's identity ([`ProfilerLabel::id`]).
        id: u64,
    },
    /// The allocator's label is gone: it was taken off ([`Tracked::into_inner`], or another label
    /// put on through [`Budgeted::set_profiler_label`](super::Budgeted::set_profiler_label)) or
    /// the allocator was dropped. Raised once per label an allocator held (for a frame arena,
    /// once per buffer), after the frees or the discard that took back everything it reported
    /// under that label: nothing more comes under this `(pool, buffer, id)`, so a sink may
    /// forget it, and give the profiler pool it showed it under to the next allocator of that
    /// name. An allocator that is leaked ([`core::mem::forget`]) never raises it.
    ///
    /// [`Tracked::into_inner`]: super::Tracked::into_inner
    PoolEnd {
        /// The allocator's name.
        pool: &'static str,
        /// Its tag's name.
        tag: &'static str,
        /// `Some(i)` for buffer `i` of a frame arena: each buffer is a pool of its own.
        buffer: Option<usize>,
        /// The allocator's identity ([`ProfilerLabel::id`]).
        id: u64,
    },
    /// At [`Registry::end_frame`](super::Registry::end_frame), one per tag of the frame's report:
    /// the tag's total bytes now (its allocators and its child tags').
    Plot {
        /// The tag's name.
        tag: &'a str,
        /// Its current bytes.
        bytes: usize,
        /// The frame the report is for.
        frame: u64,
    },
    /// A warning or error, as one line: a tag over its budget at the end of frame `frame` (once
    /// per crossing, as the [`Event::TagBudget`](super::Event::TagBudget) warning), or any
    /// other [`Event`](super::Event) as it is raised (an allocator's `Warn` budget crossed, a
    /// leak, a damaged guard byte), with the frame in progress.
    Message {
        /// The line (the event's text; a tag budget's names its frame).
        text: &'a str,
        /// The frame the report is for, or the frame in progress (the one after the last
        /// `FrameEnd`, 0 before it) for an event raised inside an allocator.
        frame: u64,
    },
    /// [`Registry::end_frame`](super::Registry::end_frame) finished frame `frame`.
    FrameEnd {
        /// The frame just ended.
        frame: u64,
    },
}

impl ProfilerEvent<'_> {
    /// The allocator the event is about, for the allocator events (`Alloc`, `Free`, `Discard`,
    /// `PoolEnd`).
    pub fn pool(&self) -> Option<&'static str> {
        match *self {
            ProfilerEvent::Alloc { pool, .. }
            | ProfilerEvent::Free { pool, .. }
            | ProfilerEvent::Discard { pool, .. }
            | ProfilerEvent::PoolEnd { pool, .. } => Some(pool),
            _ => None,
        }
    }

    /// The identity of the allocator the event is about ([`ProfilerLabel::id`]), for the
    /// allocator events (`Alloc`, `Free`, `Discard`, `PoolEnd`).
    pub fn id(&self) -> Option<u64> {
        match *self {
            ProfilerEvent::Alloc { id, .. }
            | ProfilerEvent::Free { id, .. }
            | ProfilerEvent::Discard { id, .. }
            | ProfilerEvent::PoolEnd { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// Sets (`Some`) or removes (`None`) the global profiler sink. Every thread's hooks read it (one
/// atomic load per event, only with the `profiler` feature). Events raised while it is being
/// replaced go to the old or the new sink. Each change to a sink other than the current one
/// keeps 16 bytes for the rest of the program (the sink's reference, where the hooks can load
/// it atomically).
///
/// ```
/// use arena_kit::tags::{ProfilerEvent, ProfilerSink, set_profiler_sink};
///
/// struct Quiet;
/// impl ProfilerSink for Quiet {
///     fn event(&self, _: &ProfilerEvent<'_>) {}
/// }
/// static QUIET: Quiet = Quiet;
/// set_profiler_sink(Some(&QUIET));
/// set_profiler_sink(None);
/// ```
pub fn set_profiler_sink(sink: Option<&'static dyn ProfilerSink>) {
    crate::profiler_slot::set(sink);
}

/// A tracked allocator's name, tag name and identity, as its allocator keeps them to raise
/// events: what [`Tracked::new`](super::Tracked::new) puts on it (see
/// [`Budgeted::set_profiler_label`](super::Budgeted::set_profiler_label)).
///
/// Names need not be unique, so each label made by [`new`](ProfilerLabel::new) has an identity
/// of its own, [`id`](ProfilerLabel::id), which the allocator's events carry: a sink tells two
/// allocators of the same name apart by it. Put one label on one allocator; a copy put on a
/// second makes the two one allocator to the sinks (one's discard ends the other's blocks).
///
/// ```
/// use arena_kit::tags::ProfilerLabel;
///
/// let label = ProfilerLabel::new("particles", "Rendering");
/// assert_eq!((label.pool, label.tag), ("particles", "Rendering"));
/// assert_eq!(label.on_buffer(1).buffer, Some(1));
/// assert_ne!(ProfilerLabel::new("particles", "Rendering").id, label.id);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProfilerLabel {
    /// The allocator's name (the profiler's memory pool).
    pub pool: &'static str,
    /// Its tag's name.
    pub tag: &'static str,
    /// `Some(i)` on buffer `i` of a frame arena (each buffer is a pool of its own).
    pub buffer: Option<usize>,
    /// The allocator's identity: a number [`new`](ProfilerLabel::new) draws once per label from
    /// a program-wide counter (from 1 up), or the one given to
    /// [`with_id`](ProfilerLabel::with_id). Two allocators live at the same time with the same
    /// `pool`, `buffer` and `id` are one allocator to a sink.
    pub id: u64,
}

/// The last identity [`ProfilerLabel::new`] drew.
static LAST_ID: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

impl ProfilerLabel {
    /// The label of the allocator `pool` tagged `tag`, with a new identity (one atomic
    /// increment): no other label made by `new` has its [`id`](ProfilerLabel::id).
    pub fn new(pool: &'static str, tag: &'static str) -> ProfilerLabel {
        let id = LAST_ID.fetch_add(1, core::sync::atomic::Ordering::Relaxed) + 1;
        ProfilerLabel::with_id(pool, tag, id)
    }

    /// The label of the allocator `pool` tagged `tag` with the identity `id`, in a `const`
    /// context say. It is yours to keep apart: [`new`](ProfilerLabel::new) draws its identities
    /// from 1 up, so a label that must never meet one of those takes an `id` from `u64::MAX`
    /// down.
    ///
    /// ```
    /// use arena_kit::tags::ProfilerLabel;
    ///
    /// const ASSETS: ProfilerLabel = ProfilerLabel::with_id("assets", "Loading", u64::MAX);
    /// assert_eq!(ASSETS.id, u64::MAX);
    /// ```
    pub const fn with_id(pool: &'static str, tag: &'static str, id: u64) -> ProfilerLabel {
        ProfilerLabel {
            pool,
            tag,
            buffer: None,
            id,
        }
    }

    /// This label on buffer `i` of a frame arena (the same identity: the buffers are told
    /// apart by `buffer`).
    pub const fn on_buffer(self, i: usize) -> ProfilerLabel {
        ProfilerLabel {
            buffer: Some(i),
            ..self
        }
    }
}

/// Hands `event` to the sink, if one is set.
#[inline]
pub(crate) fn emit(event: &ProfilerEvent<'_>) {
    if let ProfilerEvent::FrameEnd { frame } = *event {
        FRAME.store(frame.wrapping_add(1), core::sync::atomic::Ordering::Relaxed);
    }
    if let Some(sink) = crate::profiler_slot::get() {
        // With `std` a sink's panic stops here: the event is lost (the panic hook has printed
        // the message) and the allocator's call goes on as if no sink were set. Events are
        // raised from inside allocator operations, some of them before every field of the
        // allocator is final (a pool's slot is freed before its row moves), so a panic must not
        // unwind through them.
        #[cfg(feature = "std")]
        {
            let delivered =
                std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| sink.event(event)));
            if let Err(mut payload) = delivered {
                SINK_PANICS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                // The payload is the sink's value too: its `drop` may panic, and that panic
                // must not unwind from here either. What that throws is dropped the same way,
                // a few times over; a payload that still panics then is leaked.
                for _ in 0..4 {
                    let dropped =
                        std::panic::catch_unwind(core::panic::AssertUnwindSafe(move || {
                            drop(payload)
                        }));
                    match dropped {
                        Ok(()) => return,
                        Err(again) => payload = again,
                    }
                }
                core::mem::forget(payload);
            }
        }
        // Without `std` it cannot be caught, and unwinding through the operation could leave
        // the allocator between two states for safe code to find: the program stops instead
        // (a panic while unwinding aborts).
        #[cfg(not(feature = "std"))]
        {
            let stop = StopOnUnwind;
            sink.event(event);
            core::mem::forget(stop);
        }
    }
}

/// Dropped only while a profiler sink's panic unwinds (without `std`): panics again, which
/// aborts the program.
#[cfg(not(feature = "std"))]
struct StopOnUnwind;

#[cfg(not(feature = "std"))]
impl Drop for StopOnUnwind {
    fn drop(&mut self) {
        panic!(
            "a profiler sink panicked inside an allocator operation; without the `std` feature \
             that panic cannot be caught there, so the program stops"
        );
    }
}

/// Events a sink panicked on (with `std`): see [`sink_panics`].
#[cfg(feature = "std")]
static SINK_PANICS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// How many events the profiler sink panicked on so far (with `std`, where such a panic is
/// caught and the event lost; see [`ProfilerSink`]).
///
/// ```
/// use arena_kit::tags::sink_panics;
///
/// assert_eq!(sink_panics(), 0); // no sink has panicked in this program
/// ```
#[cfg(feature = "std")]
pub fn sink_panics() -> usize {
    SINK_PANICS.load(core::sync::atomic::Ordering::Relaxed)
}

/// The frame after the last `FrameEnd` any registry sent (0 before the first).
static FRAME: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// The frame in progress, for a `Message` raised inside an allocator: the one after the last
/// [`Registry::end_frame`](super::Registry::end_frame) of any registry.
pub(crate) fn frame_in_progress() -> u64 {
    FRAME.load(core::sync::atomic::Ordering::Relaxed)
}

/// The call site of the allocating call, in debug builds.
#[inline(always)]
#[track_caller]
pub(crate) fn site() -> Option<&'static Location<'static>> {
    if cfg!(debug_assertions) {
        Some(Location::caller())
    } else {
        None
    }
}

/// `Alloc` for a labelled allocator, from the allocating call.
#[inline]
#[track_caller]
pub(crate) fn alloc(label: Option<ProfilerLabel>, addr: usize, size: usize) {
    alloc_at(label, addr, size, site());
}

/// `Alloc` of a block holding many allocations (an arena's block, a SoA vector's columns): no
/// one call site.
#[inline]
pub(crate) fn alloc_block(label: Option<ProfilerLabel>, addr: usize, size: usize) {
    alloc_at(label, addr, size, None);
}

#[inline]
fn alloc_at(
    label: Option<ProfilerLabel>,
    addr: usize,
    size: usize,
    site: Option<&'static Location<'static>>,
) {
    if let Some(l) = label {
        emit(&ProfilerEvent::Alloc {
            pool: l.pool,
            tag: l.tag,
            addr,
            size,
            buffer: l.buffer,
            id: l.id,
            site,
        });
    }
}

/// `Free` for a labelled allocator.
#[inline]
pub(crate) fn free(label: Option<ProfilerLabel>, addr: usize, size: usize) {
    if let Some(l) = label {
        emit(&ProfilerEvent::Free {
            pool: l.pool,
            tag: l.tag,
            addr,
            size,
            buffer: l.buffer,
            id: l.id,
        });
    }
}

/// `Discard` for a labelled allocator.
#[inline]
pub(crate) fn discard(label: Option<ProfilerLabel>) {
    if let Some(l) = label {
        emit(&ProfilerEvent::Discard {
            pool: l.pool,
            tag: l.tag,
            buffer: l.buffer,
            id: l.id,
        });
    }
}

/// `PoolEnd` for a label an allocator has taken off: the one place that raises it. Each
/// allocator's one label-changing path (`Budgeted::set_profiler_label`, which its drop goes
/// through too) calls it after it has freed or discarded what it reported under `old`, and
/// before it reports anything under the new label, so a sink that reuses `old`'s profiler pool
/// for another allocator finds it empty.
#[inline]
pub(crate) fn pool_end(old: Option<ProfilerLabel>) {
    if let Some(l) = old {
        emit(&ProfilerEvent::PoolEnd {
            pool: l.pool,
            tag: l.tag,
            buffer: l.buffer,
            id: l.id,
        });
    }
}
