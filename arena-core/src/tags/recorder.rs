//! A bounded allocation recorder: a ring buffer of allocation events with the queries of a memory
//! profiler's timeline (what is live at a frame, growth between frames, allocations that outlived
//! their frame, leak candidates) and a Chrome/Perfetto trace-event JSON export.
//!
//! Its memory is fixed when it is made ([`Recorder::new`]): the ring and the tables that match
//! frees to allocations are reserved then; recording an allocation, free or discard never
//! allocates, and a frame end only while the few small tables beside them grow to the program's
//! working set (see [`Recorder::end_frame`]); when the ring is full the oldest event is
//! overwritten and counted in [`Recorder::dropped`]. A trace that grows without limit is what makes a long
//! capture run out of memory (Tracy #921, #287).

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::hash::{BuildHasherDefault, Hasher};
use core::panic::Location;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::export::json_str;

/// One event as it is recorded: the same four kinds a profiler sink sees (an allocation, a free,
/// a pool discarding everything it had, the end of a frame). Names are `&'static str`, so a record
/// is a small `Copy` value and recording it allocates nothing.
///
/// ```
/// use arena_kit::tags::{Record, Recorder};
///
/// let recorder = Recorder::new(16);
/// recorder.record(Record::Alloc { pool: "bodies", tag: "Physics", addr: 0x10, size: 64, site: None });
/// recorder.record(Record::FrameEnd { frame: 0 });
/// assert_eq!(recorder.len(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// `pool` handed out `size` bytes at `addr` for `tag`; `site` is the caller, when known.
    Alloc {
        /// The allocator's name.
        pool: &'static str,
        /// The memory tag charged.
        tag: &'static str,
        /// The address handed out.
        addr: usize,
        /// Bytes handed out.
        size: usize,
        /// The call site (`Location::caller()` under `#[track_caller]`), when known.
        site: Option<&'static Location<'static>>,
    },
    /// `pool` took back the allocation at `addr`: it ends the newest live allocation of `pool` at
    /// `addr` (a free that matches none is counted in [`Answer::unmatched_frees`]).
    Free {
        /// The allocator's name.
        pool: &'static str,
        /// The memory tag charged.
        tag: &'static str,
        /// The address given back.
        addr: usize,
        /// Bytes given back.
        size: usize,
    },
    /// Everything `pool` had is gone (an arena reset, a pool cleared): it ends every live
    /// allocation of `pool`.
    Discard {
        /// The allocator's name.
        pool: &'static str,
        /// The allocator's memory tag.
        tag: &'static str,
    },
    /// Frame `frame` ended: later events belong to frame `frame + 1`.
    FrameEnd {
        /// The frame that ended.
        frame: u64,
    },
}

/// A held event: the [`Record`] with its sequence number, its time and its frame.
///
/// ```
/// use arena_kit::tags::{Record, Recorder};
///
/// let recorder = Recorder::new(4);
/// recorder.end_frame(7);
/// recorder.discard("scratch", "Frame");
/// let events = recorder.events();
/// assert_eq!(events[1].frame, 8); // after frame 7 ended
/// assert_eq!(events[1].record, Record::Discard { pool: "scratch", tag: "Frame" });
/// assert_eq!(events[1].seq, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamped {
    /// What happened.
    pub record: Record,
    /// The event's number since the recorder was made, dropped events included (the first is 0).
    pub seq: u64,
    /// Microseconds since the recorder was made.
    pub time_us: u64,
    /// The frame the event happened in; a [`Record::FrameEnd`] carries the frame it ended.
    pub frame: u64,
}

/// Why a [`Recorder`] could not be made.
///
/// ```
/// use arena_kit::tags::{Recorder, RecorderError};
///
/// assert_eq!(Recorder::try_new(0).unwrap_err(), RecorderError::ZeroCapacity);
/// assert!(matches!(Recorder::try_new(usize::MAX), Err(RecorderError::TooLarge { .. })));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecorderError {
    /// A capacity of 0 events would hold nothing: ask for at least one.
    ZeroCapacity,
    /// `capacity` events do not fit in the address space (their bytes overflow `isize::MAX`).
    TooLarge {
        /// The capacity asked for.
        capacity: usize,
    },
    /// The allocator refused the ring's `bytes`.
    OutOfMemory {
        /// The capacity asked for.
        capacity: usize,
        /// The bytes it needs.
        bytes: usize,
    },
}

impl fmt::Display for RecorderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RecorderError::ZeroCapacity => {
                f.write_str("a recorder of 0 events holds nothing: ask for at least 1 event")
            }
            RecorderError::TooLarge { capacity } => write!(
                f,
                "a recorder of {capacity} events needs more bytes than the address space has: \
                 ask for fewer events"
            ),
            RecorderError::OutOfMemory { capacity, bytes } => write!(
                f,
                "the allocator refused {bytes} bytes for a recorder of {capacity} events: ask for \
                 fewer events"
            ),
        }
    }
}

impl std::error::Error for RecorderError {}

/// The answer to a query, with what it could not see.
///
/// ```
/// use arena_kit::tags::Recorder;
///
/// let recorder = Recorder::new(2);
/// recorder.alloc("bodies", "Physics", 0x10, 64, None);
/// recorder.alloc("bodies", "Physics", 0x50, 64, None);
/// recorder.free("bodies", "Physics", 0x10, 64); // overwrites the first alloc
/// let live = recorder.live_at(0);
/// assert!(!live.complete); // an event was dropped: older allocations may be missing
/// assert_eq!(live.unmatched_frees, 1); // the free of 0x10 lost its alloc
/// assert_eq!(live.value.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer<T> {
    /// The answer over the events held.
    pub value: T,
    /// No event had been dropped: the answer covers everything recorded. When `false`,
    /// allocations made before the oldest held event (and their frees) are missing.
    pub complete: bool,
    /// Frees (held) that matched no live allocation: their allocation was dropped from the ring,
    /// never recorded, or already freed (a double free).
    pub unmatched_frees: u64,
    /// The oldest frame all of whose events are held (`None` when no frame is whole).
    pub first_full_frame: Option<u64>,
}

/// One allocation seen in the held events.
///
/// ```
/// use arena_kit::tags::Recorder;
///
/// let recorder = Recorder::new(8);
/// recorder.alloc("meshes", "Rendering", 0x100, 256, None);
/// recorder.end_frame(0);
/// let a = recorder.live_at(0).value[0];
/// assert_eq!((a.pool, a.tag, a.addr, a.size, a.frame, a.freed_in), ("meshes", "Rendering", 0x100, 256, 0, None));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    /// The allocator's name.
    pub pool: &'static str,
    /// The memory tag charged.
    pub tag: &'static str,
    /// The address handed out.
    pub addr: usize,
    /// Bytes handed out.
    pub size: usize,
    /// The frame it was made in.
    pub frame: u64,
    /// The call site, when it was recorded.
    pub site: Option<&'static Location<'static>>,
    /// The alloc event's [`Stamped::seq`].
    pub seq: u64,
    /// The frame of the free or discard that ended it, if one is held (`None`: still live).
    pub freed_in: Option<u64>,
}

/// Bytes and allocations of one tag or one allocator at the ends of two frames ([`Recorder::growth`]).
///
/// ```
/// use arena_kit::tags::GrowthRow;
///
/// let row = GrowthRow { name: "AI", bytes_from: 100, bytes_to: 40, count_from: 2, count_to: 1 };
/// assert_eq!((row.bytes_change(), row.count_change()), (-60, -1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrowthRow {
    /// The tag's or allocator's name.
    pub name: &'static str,
    /// Live bytes at the end of the first frame.
    pub bytes_from: u64,
    /// Live bytes at the end of the second frame.
    pub bytes_to: u64,
    /// Live allocations at the end of the first frame.
    pub count_from: u64,
    /// Live allocations at the end of the second frame.
    pub count_to: u64,
}

impl GrowthRow {
    /// `bytes_to - bytes_from` (negative: it shrank).
    pub fn bytes_change(&self) -> i128 {
        i128::from(self.bytes_to) - i128::from(self.bytes_from)
    }

    /// `count_to - count_from`.
    pub fn count_change(&self) -> i128 {
        i128::from(self.count_to) - i128::from(self.count_from)
    }
}

/// What changed between the ends of two frames, per tag and per allocator, biggest growth first
/// ([`Recorder::growth`]).
///
/// ```
/// use arena_kit::tags::Recorder;
///
/// let recorder = Recorder::new(16);
/// recorder.end_frame(0);
/// recorder.alloc("paths", "AI", 0x10, 512, None);
/// recorder.end_frame(1);
/// let growth = recorder.growth(0, 1).value;
/// assert_eq!((growth.tags[0].name, growth.tags[0].bytes_change()), ("AI", 512));
/// assert_eq!(growth.pools[0].name, "paths");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Growth {
    /// One row per tag with a live allocation at either end.
    pub tags: Vec<GrowthRow>,
    /// One row per allocator with a live allocation at either end.
    pub pools: Vec<GrowthRow>,
}

/// Live allocations of one call site (or, without a site, of one allocator and tag)
/// ([`Recorder::leak_candidates`]).
///
/// ```
/// use arena_kit::tags::Recorder;
///
/// let recorder = Recorder::new(16);
/// recorder.alloc("sounds", "Audio", 0x10, 1000, None);
/// for frame in 0..10 {
///     recorder.end_frame(frame);
/// }
/// let group = recorder.leak_candidates(5).value[0];
/// assert_eq!((group.pool, group.tag, group.count, group.bytes, group.oldest_frame), ("sounds", "Audio", 1, 1000, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteGroup {
    /// The call site, when recorded.
    pub site: Option<&'static Location<'static>>,
    /// The allocator's name.
    pub pool: &'static str,
    /// The memory tag.
    pub tag: &'static str,
    /// Allocations in the group.
    pub count: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The frame the oldest was made in.
    pub oldest_frame: u64,
}

struct Ring {
    events: VecDeque<Stamped>,
    /// The queries' matching of frees to allocations, kept from one query to the next and
    /// brought up to date by each (see `Matching`).
    scratch: Matching,
    capacity: usize,
    dropped: u64,
    seq: u64,
    frame: u64,
}

/// A bounded, thread-safe recorder of allocation events, with timeline queries and a
/// Chrome/Perfetto trace export.
///
/// Its ring of events and its matching tables are allocated once ([`Recorder::new`], about
/// 170 bytes per event: [`memory_bytes`](Recorder::memory_bytes)): recording takes `&self` from
/// any thread (a `Mutex`; a lock poisoned by a panicking thread is recovered, never
/// re-panicked), stamps the event with the microseconds since the recorder was made and the
/// current frame; recording an allocation, free or discard never allocates (a frame end may:
/// see [`end_frame`](Recorder::end_frame)); a full ring overwrites its oldest event and counts it in
/// [`dropped`](Recorder::dropped). Frames are numbered by [`end_frame`](Recorder::end_frame):
/// events after `end_frame(n)` belong to frame `n + 1` (the first frame is 0).
///
/// Frees are matched to allocations in recording order (a free ends the newest live allocation
/// of the same allocator, by name, at its address; a discard ends every live allocation of its
/// allocator), a frame's events at its [`end_frame`](Recorder::end_frame), off the allocation
/// path (about 250 instructions per event: a tenth of a millisecond for a frame of 1,700
/// events), and the events since then by the next query; the allocations that leave the ring
/// are forgotten on the way. A query then answers from the matching alone, holding the lock:
/// over a million events `live_at`, `growth` and `leak_candidates` take about a millisecond
/// and `outlived_frame`, whose answer there is 439,000 allocations, about 25 ms (see
/// BENCHMARKS.md); it allocates only its answer.
/// Matching terminates on any sequence (double frees, frees of unknown addresses, discards of
/// unknown allocators, frames going backwards). Allocators and tags are told apart by name,
/// so two allocators recorded under one name are one allocator here; as a profiler sink (with
/// the `profiler` feature, see its `ProfilerSink` impl) the recorder gives each live allocator
/// a name of its own, so tracked allocators of one name stay apart. An
/// allocation is live at the end of frame `n` when it was made in a frame up to `n` and not ended
/// by an event of a frame up to `n`. With frames numbered upwards this is the state just after
/// `end_frame(n)`.
///
/// ```
/// use arena_kit::tags::Recorder;
///
/// let recorder = Recorder::new(1024);
/// recorder.alloc("bodies", "Physics", 0x1000, 64, None);
/// recorder.alloc("scratch", "Frame", 0x2000, 128, None);
/// recorder.discard("scratch", "Frame"); // the frame arena resets
/// recorder.end_frame(0);
/// recorder.alloc("bodies", "Physics", 0x1040, 64, None);
/// recorder.free("bodies", "Physics", 0x1000, 64);
/// recorder.end_frame(1);
///
/// assert_eq!(recorder.live_at(0).value.len(), 1);
/// assert_eq!(recorder.live_at(1).value[0].addr, 0x1040);
/// assert_eq!(recorder.outlived_frame().value.len(), 2); // both bodies lived past their frame
/// assert!(recorder.to_trace_json().starts_with("{\"traceEvents\":["));
/// ```
pub struct Recorder {
    ring: Mutex<Ring>,
    start: Instant,
    /// As a profiler sink: the name each live allocator is recorded under (see the
    /// `ProfilerSink` impl).
    #[cfg(feature = "profiler")]
    pool_names: Mutex<super::pool_names::PoolNames>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Copied out first: the formatter's writer is user code, which may allocate from a
        // tracked allocator whose events this recorder takes (the lock is not reentrant).
        let (capacity, len, dropped, frame) = {
            let ring = self.lock();
            (ring.capacity, ring.events.len(), ring.dropped, ring.frame)
        };
        f.debug_struct("Recorder")
            .field("capacity", &capacity)
            .field("len", &len)
            .field("dropped", &dropped)
            .field("frame", &frame)
            .finish()
    }
}

const NONE: u32 = u32::MAX;

impl Recorder {
    /// A recorder holding up to `capacity_events` events, allocated now (about
    /// `capacity_events * size_of::<Stamped>()` bytes, see [`memory_bytes`](Recorder::memory_bytes)).
    ///
    /// # Panics
    ///
    /// If `capacity_events` is 0, too large, or the allocator refuses it: see
    /// [`try_new`](Recorder::try_new).
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(100_000);
    /// assert_eq!(recorder.capacity(), 100_000);
    /// ```
    #[track_caller]
    pub fn new(capacity_events: usize) -> Self {
        match Self::try_new(capacity_events) {
            Ok(recorder) => recorder,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`new`](Recorder::new), or why not.
    ///
    /// # Errors
    ///
    /// [`RecorderError::ZeroCapacity`] for 0 events, [`RecorderError::TooLarge`] when the bytes
    /// overflow `isize::MAX`, [`RecorderError::OutOfMemory`] when the allocator refuses them.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::try_new(64).expect("64 events fit");
    /// assert_eq!(recorder.dropped(), 0);
    /// ```
    pub fn try_new(capacity_events: usize) -> Result<Self, RecorderError> {
        if capacity_events == 0 {
            return Err(RecorderError::ZeroCapacity);
        }
        let too_large = RecorderError::TooLarge {
            capacity: capacity_events,
        };
        let bytes = capacity_events
            .checked_mul(core::mem::size_of::<Stamped>() + Matching::BYTES_PER_EVENT)
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or(too_large)?;
        // Sequence numbers index the ring in u32 during queries.
        if capacity_events >= NONE as usize {
            return Err(too_large);
        }
        let out_of_memory = RecorderError::OutOfMemory {
            capacity: capacity_events,
            bytes,
        };
        let mut events = VecDeque::new();
        events
            .try_reserve_exact(capacity_events)
            .map_err(|_| out_of_memory)?;
        let mut scratch = Matching::default();
        scratch
            .try_reserve(capacity_events)
            .map_err(|_| out_of_memory)?;
        Ok(Recorder {
            ring: Mutex::new(Ring {
                events,
                scratch,
                capacity: capacity_events,
                dropped: 0,
                seq: 0,
                frame: 0,
            }),
            start: Instant::now(),
            #[cfg(feature = "profiler")]
            pool_names: Mutex::new(super::pool_names::PoolNames::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Ring> {
        // A thread that panicked while holding the lock left the ring whole (each step below is
        // a push or a counter bump), so recording carries on.
        self.ring.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `record`; a full ring overwrites its oldest event. An alloc, free or discard never
    /// allocates. A [`Record::FrameEnd`] also matches the frame's frees to its allocations (see
    /// [`end_frame`](Recorder::end_frame)).
    ///
    /// ```
    /// use arena_kit::tags::{Record, Recorder};
    ///
    /// let recorder = Recorder::new(1);
    /// recorder.record(Record::FrameEnd { frame: 0 });
    /// recorder.record(Record::FrameEnd { frame: 1 });
    /// assert_eq!((recorder.len(), recorder.dropped()), (1, 1));
    /// ```
    pub fn record(&self, record: Record) {
        let mut ring = self.lock();
        // Read under the lock, so times never go backwards along the ring (a free recorded by
        // one thread never precedes, in time, the alloc another thread recorded before it).
        let time_us = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let frame = match record {
            Record::FrameEnd { frame } => frame,
            _ => ring.frame,
        };
        let stamped = Stamped {
            record,
            seq: ring.seq,
            time_us,
            frame,
        };
        if ring.events.len() == ring.capacity {
            ring.events.pop_front();
            ring.dropped += 1;
        }
        ring.events.push_back(stamped);
        ring.seq += 1;
        if let Record::FrameEnd { frame } = record {
            ring.frame = frame.saturating_add(1);
            // The frame's events are matched now, at its end (not on the allocation path),
            // so a query finds the matching up to date.
            let Ring {
                events,
                scratch,
                seq,
                ..
            } = &mut *ring;
            scratch.update(events, *seq);
        }
    }

    /// Records [`Record::Alloc`].
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    /// use std::panic::Location;
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.alloc("meshes", "Rendering", 0x100, 256, Some(Location::caller()));
    /// assert!(recorder.live_at(0).value[0].site.is_some());
    /// ```
    pub fn alloc(
        &self,
        pool: &'static str,
        tag: &'static str,
        addr: usize,
        size: usize,
        site: Option<&'static Location<'static>>,
    ) {
        self.record(Record::Alloc {
            pool,
            tag,
            addr,
            size,
            site,
        });
    }

    /// Records [`Record::Free`].
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.alloc("meshes", "Rendering", 0x100, 256, None);
    /// recorder.free("meshes", "Rendering", 0x100, 256);
    /// assert!(recorder.live_at(0).value.is_empty());
    /// ```
    pub fn free(&self, pool: &'static str, tag: &'static str, addr: usize, size: usize) {
        self.record(Record::Free {
            pool,
            tag,
            addr,
            size,
        });
    }

    /// Records [`Record::Discard`]: every live allocation of `pool` is gone.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.alloc("frame", "Scratch", 0x100, 32, None);
    /// recorder.alloc("frame", "Scratch", 0x120, 32, None);
    /// recorder.discard("frame", "Scratch");
    /// assert!(recorder.live_at(0).value.is_empty());
    /// ```
    pub fn discard(&self, pool: &'static str, tag: &'static str) {
        self.record(Record::Discard { pool, tag });
    }

    /// Records [`Record::FrameEnd`]: frame `frame` ended, later events belong to `frame + 1`.
    /// The frame's frees are matched to its allocations now (see [`Recorder`]), so the next
    /// query only reads. The per-event tables were reserved with the ring; three small ones
    /// grow here, and keep their size: the names, call sites and (call site, allocator, tag)
    /// combinations not seen before, and the table of live addresses when more allocations are
    /// live than at any earlier frame end. In a steady game loop that is the first frames only.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.end_frame(41);
    /// assert_eq!(recorder.frame(), 42);
    /// ```
    pub fn end_frame(&self, frame: u64) {
        self.record(Record::FrameEnd { frame });
    }

    /// The frame in progress: 0, or one after the last [`end_frame`](Recorder::end_frame).
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// assert_eq!(Recorder::new(8).frame(), 0);
    /// ```
    pub fn frame(&self) -> u64 {
        self.lock().frame
    }

    /// Events overwritten because the ring was full.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(2);
    /// for frame in 0..5 {
    ///     recorder.end_frame(frame);
    /// }
    /// assert_eq!(recorder.dropped(), 3);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Events the [profiler sink](#impl-ProfilerSink-for-Recorder) recorded under their
    /// allocator's plain name, because the allocator found no name of its own left (the sink
    /// makes at most 4,096): in those events, allocators of one name are one, so one's discard
    /// ends the other's allocations in the queries. 0 unless more than 4,096 names were needed.
    /// (Only with the `profiler` feature.)
    ///
    /// ```
    /// use arena_kit::tags::{ProfilerEvent, ProfilerSink, Recorder};
    ///
    /// let recorder = Recorder::new(8);
    /// let sink: &dyn ProfilerSink = &recorder;
    /// sink.event(&ProfilerEvent::Discard { pool: "scratch", tag: "Frame", buffer: None, id: 1 });
    /// assert_eq!(recorder.merged_events(), 0); // "scratch" is its own
    /// ```
    #[cfg(feature = "profiler")]
    pub fn merged_events(&self) -> u64 {
        self.pool_names().dropped()
    }

    /// Events held now (at most [`capacity`](Recorder::capacity)).
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// assert!(recorder.is_empty());
    /// recorder.end_frame(0);
    /// assert_eq!(recorder.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.lock().events.len()
    }

    /// No event is held.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// assert!(Recorder::new(8).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.lock().events.is_empty()
    }

    /// The most events held at once.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// assert_eq!(Recorder::new(8).capacity(), 8);
    /// ```
    pub fn capacity(&self) -> usize {
        self.lock().capacity
    }

    /// The bytes the ring and its matching tables have reserved: fixed from
    /// [`new`](Recorder::new) on, whatever is recorded (the few names, call sites and live
    /// addresses the matching remembers come on top).
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// let bytes = recorder.memory_bytes();
    /// for frame in 0..100 {
    ///     recorder.end_frame(frame);
    /// }
    /// assert_eq!(recorder.memory_bytes(), bytes);
    /// ```
    pub fn memory_bytes(&self) -> usize {
        let ring = self.lock();
        ring.events.capacity() * core::mem::size_of::<Stamped>() + ring.scratch.reserved_bytes()
    }

    /// A copy of the held events, oldest first.
    ///
    /// ```
    /// use arena_kit::tags::{Record, Recorder};
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.end_frame(0);
    /// assert_eq!(recorder.events()[0].record, Record::FrameEnd { frame: 0 });
    /// ```
    pub fn events(&self) -> Vec<Stamped> {
        self.lock().events.iter().copied().collect()
    }

    /// Forgets every held event and the dropped count; the sequence numbers, the clock and the
    /// frame carry on. Keeps the ring's memory.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.end_frame(0);
    /// recorder.clear();
    /// assert!(recorder.is_empty());
    /// assert_eq!(recorder.frame(), 1);
    /// ```
    pub fn clear(&self) {
        let mut ring = self.lock();
        ring.events.clear();
        ring.dropped = 0;
    }

    fn answer<T>(&self, query: impl FnOnce(&Ring, &Matching) -> T) -> Answer<T> {
        let mut ring = self.lock();
        // Taken out of the ring (a query that panics leaves an empty one, which the next
        // query fills from scratch).
        let mut matching = core::mem::take(&mut ring.scratch);
        matching.update(&ring.events, ring.seq);
        let answer = Answer {
            value: query(&ring, &matching),
            complete: ring.dropped == 0,
            unmatched_frees: matching.unmatched_frees(),
            first_full_frame: first_full_frame(&ring),
        };
        ring.scratch = matching;
        answer
    }

    /// The allocations made up to the end of frame `frame` and not freed or discarded by then,
    /// in recording order.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(16);
    /// recorder.alloc("bodies", "Physics", 0x10, 64, None);
    /// recorder.end_frame(0);
    /// recorder.free("bodies", "Physics", 0x10, 64);
    /// recorder.end_frame(1);
    /// assert_eq!(recorder.live_at(0).value.len(), 1);
    /// assert_eq!(recorder.live_at(1).value.len(), 0);
    /// ```
    pub fn live_at(&self, frame: u64) -> Answer<Vec<Allocation>> {
        self.answer(|_, m| {
            m.held()
                .iter()
                .filter(|span| span.live_at(frame))
                .map(|span| m.allocation(span))
                .collect()
        })
    }

    /// Per tag and per allocator, the live bytes and allocations at the end of frame `from` and
    /// at the end of frame `to`; rows sorted by growth in bytes, biggest first (then by name).
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(16);
    /// recorder.alloc("bodies", "Physics", 0x10, 64, None);
    /// recorder.end_frame(0);
    /// recorder.free("bodies", "Physics", 0x10, 64);
    /// recorder.end_frame(1);
    /// let row = recorder.growth(0, 1).value.tags[0];
    /// assert_eq!((row.bytes_from, row.bytes_to, row.count_change()), (64, 0, -1));
    /// ```
    pub fn growth(&self, from: u64, to: u64) -> Answer<Growth> {
        self.answer(|_, m| {
            let mut tags = Table::default();
            let mut pools = Table::default();
            for span in m.held() {
                let at_from = span.live_at(from);
                let at_to = span.live_at(to);
                if at_from || at_to {
                    let g = &m.keys.info[span.group as usize];
                    tags.add(g.tag_id, g.tag, span.size, at_from, at_to);
                    pools.add(g.pool_id, g.pool, span.size, at_from, at_to);
                }
            }
            Growth {
                tags: tags.rows(),
                pools: pools.rows(),
            }
        })
    }

    /// The allocations still live after the end of the frame they were made in (freed in a
    /// later frame, or never), grouped by call site (or, without one, by allocator and tag),
    /// the groups with the most bytes first and each group in recording order.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(16);
    /// recorder.alloc("scratch", "Frame", 0x10, 32, None);
    /// recorder.free("scratch", "Frame", 0x10, 32); // same frame: fine
    /// recorder.alloc("scratch", "Frame", 0x30, 32, None);
    /// recorder.end_frame(0);
    /// recorder.free("scratch", "Frame", 0x30, 32); // one frame late
    /// let late = recorder.outlived_frame().value;
    /// assert_eq!((late.len(), late[0].addr, late[0].freed_in), (1, 0x30, Some(1)));
    /// ```
    pub fn outlived_frame(&self) -> Answer<Vec<Allocation>> {
        self.answer(|_, m| grouped(m, |span| span.ended_in().is_none_or(|end| end > span.made)))
    }

    /// The live allocations made at least `min_age_frames` frames before the frame in progress
    /// ([`frame`](Recorder::frame)), grouped by call site (or, without one, by allocator and
    /// tag), the groups with the most bytes first.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    /// use std::panic::Location;
    ///
    /// let recorder = Recorder::new(256);
    /// let site = Location::caller();
    /// for i in 0..3 {
    ///     recorder.alloc("textures", "Streaming", 0x1000 * (i + 1), 4096, Some(site));
    /// }
    /// recorder.alloc("textures", "Streaming", 0x9000, 4096, None);
    /// for frame in 0..100 {
    ///     recorder.end_frame(frame);
    /// }
    /// let leaks = recorder.leak_candidates(60).value;
    /// assert_eq!((leaks[0].site, leaks[0].count, leaks[0].bytes), (Some(site), 3, 3 * 4096));
    /// assert_eq!((leaks[1].site, leaks[1].count), (None, 1));
    /// ```
    pub fn leak_candidates(&self, min_age_frames: u64) -> Answer<Vec<SiteGroup>> {
        self.answer(|ring, m| {
            let now = ring.frame;
            let mut groups: Vec<SiteGroup> = Vec::new();
            // Per group id: its row in `groups` (rows in order of first sight here).
            let mut row = vec![NONE; m.keys.info.len()];
            for span in m.held() {
                if span.ended_by != GONE || now.saturating_sub(span.made) < min_age_frames {
                    continue;
                }
                let made = span.made;
                let r = &mut row[span.group as usize];
                if *r == NONE {
                    let g = &m.keys.info[span.group as usize];
                    *r = groups.len() as u32;
                    groups.push(SiteGroup {
                        site: g.site,
                        pool: g.pool,
                        tag: g.tag,
                        count: 0,
                        bytes: 0,
                        oldest_frame: made,
                    });
                }
                let group = &mut groups[*r as usize];
                group.count += 1;
                group.bytes = group.bytes.saturating_add(span.size as u64);
                group.oldest_frame = group.oldest_frame.min(made);
            }
            groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(b.count.cmp(&a.count)));
            groups
        })
    }

    /// The held events as a Chrome/Perfetto trace-event JSON object (load it in
    /// `ui.perfetto.dev` or `chrome://tracing`); see [`write_trace_json`](Recorder::write_trace_json).
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.alloc("bodies", "Physics", 0x10, 64, None);
    /// recorder.end_frame(0);
    /// let json = recorder.to_trace_json();
    /// assert!(json.contains("\"ph\":\"C\"") && json.contains("\"displayTimeUnit\":\"ms\""));
    /// ```
    pub fn to_trace_json(&self) -> String {
        let mut out = Vec::new();
        // Writing to a `Vec` cannot fail, and only valid UTF-8 is written.
        let _ = self.write_trace_json(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes the held events as a Chrome/Perfetto trace-event JSON object,
    /// `{"traceEvents":[..],"displayTimeUnit":"ms","otherData":{..}}`, in the
    /// [Trace Event Format](https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU)
    /// that Perfetto imports ([its JSON notes](https://perfetto.dev/docs/getting-started/other-formats)).
    /// Every event has `name`, `ph`, `ts` (microseconds since the recorder was made), `pid` (1)
    /// and `tid` (0):
    ///
    /// - an allocation is a nestable async slice, `"ph":"b"` at the alloc and `"ph":"e"` at the
    ///   free or discard that ended it (none while it is live), named by its tag, with
    ///   `"cat":"alloc"` and `"id"` the alloc's sequence number in hex; the begin's `args` are
    ///   `pool`, `tag`, `size`, `addr` (hex), `frame` and `site` (`file:line:column`, when known);
    /// - a counter track per tag, `"ph":"C"` named by the tag with `args` `{"bytes": n}`, updated
    ///   at each alloc, free and discard that changes the tag's live bytes (counted from the
    ///   oldest held event: after drops, `otherData.dropped` says how many events came before);
    /// - a frame end is a global instant event, `"ph":"i"`, `"s":"g"`, named `frame N`;
    /// - a discard is a process instant event (`"s":"p"`) with `pool`, `tag` and the count and
    ///   bytes it ended; a free that matched no live allocation is a thread instant event
    ///   (`"s":"t"`) named `unmatched free`;
    /// - one metadata event (`"ph":"M"`, `process_name`) names the process.
    ///
    /// The JSON is built from a copy of the held events, so recording threads wait only for the
    /// copy, not for `out`.
    ///
    /// # Errors
    ///
    /// Whatever `out` returns.
    ///
    /// ```
    /// use arena_kit::tags::Recorder;
    ///
    /// let recorder = Recorder::new(8);
    /// recorder.alloc("bodies", "Physics", 0x10, 64, None);
    /// let mut file = Vec::new(); // or a `std::fs::File`
    /// recorder.write_trace_json(&mut file).unwrap();
    /// assert!(file.starts_with(b"{\"traceEvents\":["));
    /// ```
    pub fn write_trace_json(&self, out: &mut impl io::Write) -> io::Result<()> {
        let (events, dropped, capacity) = {
            let ring = self.lock();
            (ring.events.clone(), ring.dropped, ring.capacity)
        };
        write_trace(&events, dropped, capacity, out)
    }
}

fn first_full_frame(ring: &Ring) -> Option<u64> {
    let oldest = ring.events.front()?;
    if ring.dropped == 0 {
        return Some(0);
    }
    // Frame `oldest.frame` may have lost events; a FrameEnd is the last event of its frame, so a
    // ring that starts with one holds the next frame whole.
    match oldest.record {
        Record::FrameEnd { frame } => frame.checked_add(1),
        _ => oldest.frame.checked_add(1),
    }
    .filter(|&f| f <= ring.frame)
}

// --- Matching: frees and discards to the allocations they end, one pass, O(events) ---

/// The FxHash multiply-rotate, fast for the small integer keys of one query's tables, with a
/// final mix: addresses are aligned (their low bits are 0) and a product keeps those zeros in
/// its low bits, which pick the table's bucket.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        let h = self.0;
        h ^ (h >> 29) ^ (h >> 47)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// Small ids for names: by address first (the same literal is one address), then by text (two
/// copies of a name are the same name).
/// Programs have a few allocator and tag names: the first `FEW` addresses seen are looked up by a
/// scan, the rest through a table.
#[derive(Default)]
struct Names {
    few: Vec<((usize, usize), u32)>,
    by_addr: FxMap<(usize, usize), u32>,
    by_text: HashMap<&'static str, u32>,
    names: Vec<&'static str>,
}

const FEW: usize = 8;

impl Names {
    fn clear(&mut self) {
        self.few.clear();
        self.by_addr.clear();
        self.by_text.clear();
        self.names.clear();
    }

    #[inline]
    fn known(&self, addr: (usize, usize)) -> Option<u32> {
        for &(a, id) in &self.few {
            if a == addr {
                return Some(id);
            }
        }
        if self.few.len() < FEW {
            return None;
        }
        self.by_addr.get(&addr).copied()
    }

    fn remember(&mut self, addr: (usize, usize), id: u32) {
        if self.few.len() < FEW {
            self.few.push((addr, id));
        } else {
            self.by_addr.insert(addr, id);
        }
    }

    #[inline]
    fn id(&mut self, name: &'static str) -> u32 {
        let addr = (name.as_ptr() as usize, name.len());
        if let Some(id) = self.known(addr) {
            return id;
        }
        self.id_slow(name, addr)
    }

    #[cold]
    fn id_slow(&mut self, name: &'static str, addr: (usize, usize)) -> u32 {
        let next = self.names.len() as u32;
        let id = *self.by_text.entry(name).or_insert(next);
        if id == next {
            self.names.push(name);
        }
        self.remember(addr, id);
        id
    }

    #[inline]
    fn get(&mut self, name: &'static str) -> Option<u32> {
        let addr = (name.as_ptr() as usize, name.len());
        if let Some(id) = self.known(addr) {
            return Some(id);
        }
        let id = *self.by_text.get(name)?;
        self.remember(addr, id);
        Some(id)
    }
}

/// The newest allocation per (allocator id, address), as a span id (see [`Matching`]).
/// Addresses below 2^48 (every user-space address on today's 64-bit targets) share one 8-byte
/// key with the allocator id, which keeps the table small enough for the cache; any other
/// address has a table of its own.
#[derive(Default)]
struct AddrTable {
    narrow: FxMap<u64, u64>,
    wide: FxMap<(u32, usize), u64>,
}

impl AddrTable {
    fn clear(&mut self) {
        self.narrow.clear();
        self.wide.clear();
    }

    fn len(&self) -> usize {
        self.narrow.len() + self.wide.len()
    }

    #[inline]
    fn narrow_key(pool: u32, addr: usize) -> Option<u64> {
        let addr = addr as u64;
        (addr >> 48 == 0 && pool < 1 << 16).then(|| u64::from(pool) << 48 | addr)
    }

    /// Makes `id` the newest at the key; returns the one before (or `GONE`).
    #[inline]
    fn insert(&mut self, pool: u32, addr: usize, id: u64) -> u64 {
        match Self::narrow_key(pool, addr) {
            Some(key) => self.narrow.insert(key, id),
            None => self.wide.insert((pool, addr), id),
        }
        .unwrap_or(GONE)
    }

    /// Takes the newest live allocation at the key off its stack (`GONE` if there is none),
    /// with the dead ones above and below it, and drops the key once its stack is empty: the
    /// table holds about the live allocations, not every address ever used.
    #[inline]
    fn take_live(&mut self, pool: u32, addr: usize, links: Links<'_>) -> u64 {
        match Self::narrow_key(pool, addr) {
            Some(key) => take_live(&mut self.narrow, key, links),
            None => take_live(&mut self.wide, (pool, addr), links),
        }
    }

    /// Drops the dead allocations on top of the key's stack (and the key, once empty).
    #[inline]
    fn clean(&mut self, pool: u32, addr: usize, links: Links<'_>) {
        match Self::narrow_key(pool, addr) {
            Some(key) => clean(&mut self.narrow, key, links),
            None => clean(&mut self.wide, (pool, addr), links),
        }
    }

    /// Drops every key with nothing live left at it (keys of allocations that left the ring
    /// are not visited otherwise).
    fn prune(&mut self, links: Links<'_>) {
        self.narrow.retain(|_, top| {
            links.pop_dead(top);
            *top != GONE
        });
        self.wide.retain(|_, top| {
            links.pop_dead(top);
            *top != GONE
        });
    }
}

/// The spans and their links at one address, for walking an address's stack.
#[derive(Clone, Copy)]
struct Links<'a> {
    spans: &'a VecDeque<Span>,
    prev: &'a VecDeque<u64>,
    /// The id of `spans[0]`, the oldest held span: those before it left the ring.
    first: u64,
}

impl Links<'_> {
    /// Moves `top` down its stack past the allocations that were ended or left the ring.
    #[inline]
    fn pop_dead(&self, top: &mut u64) {
        while *top != GONE {
            // Older ones are gone too: ids grow with recording order.
            if *top < self.first {
                *top = GONE;
                return;
            }
            let i = *top - self.first;
            if self.spans[i as usize].ended_by == GONE {
                return;
            }
            *top = self.prev[i as usize];
        }
    }
}

fn take_live<K: Eq + core::hash::Hash>(map: &mut FxMap<K, u64>, key: K, links: Links<'_>) -> u64 {
    let Entry::Occupied(mut top) = map.entry(key) else {
        return GONE;
    };
    links.pop_dead(top.get_mut());
    let live = *top.get();
    if live != GONE {
        *top.get_mut() = links.prev[(live - links.first) as usize];
        links.pop_dead(top.get_mut());
    }
    if *top.get() == GONE {
        top.remove();
    }
    live
}

fn clean<K: Eq + core::hash::Hash>(map: &mut FxMap<K, u64>, key: K, links: Links<'_>) {
    if let Entry::Occupied(mut top) = map.entry(key) {
        links.pop_dead(top.get_mut());
        if *top.get() == GONE {
            top.remove();
        }
    }
}

/// No span, no event: the end of a link, or "not ended".
const GONE: u64 = u64::MAX;

/// One held allocation as the queries see it: what it is and which frames it spans, so that a
/// query reads only these, never the ring.
#[derive(Clone, Copy)]
struct Span {
    /// Its alloc event's sequence number.
    seq: u64,
    /// The sequence number of the event that ended it, or `GONE`.
    ended_by: u64,
    /// The frame it was made in.
    made: u64,
    /// The frame of the event that ended it (meaningless while `ended_by` is `GONE`).
    ended: u64,
    /// Its bytes.
    size: usize,
    /// Its address.
    addr: usize,
    /// Its (site, allocator, tag) group: a [`Keys`] id.
    group: u32,
    /// Whether a free ended it (not a discard).
    by_free: bool,
}

impl Span {
    #[inline]
    fn ended_in(&self) -> Option<u64> {
        (self.ended_by != GONE).then_some(self.ended)
    }

    #[inline]
    fn live_at(&self, frame: u64) -> bool {
        self.made <= frame && self.ended_in().is_none_or(|end| end > frame)
    }
}

/// Every held allocation in recording order, with the event that ended it, and the held frees
/// that matched nothing, brought up to date before each query by matching only the events
/// recorded since the last one ([`update`](Matching::update)) and forgetting the allocations
/// that left the ring: a query after a few new events costs about the few events plus its
/// answer, never a new pass over the ring. Spans have ids that count every span made, so they
/// stay valid while the oldest leave.
///
/// A free or discard is matched against what is held when the query runs (the same answer a
/// match of the held events from scratch gives): a free whose allocation has left the ring
/// counts as unmatched from then on.
#[derive(Default)]
struct Matching {
    /// The held allocations, oldest first: a ring like the events' (reserved with it), so the
    /// ones that leave are dropped from the front one by one.
    spans: VecDeque<Span>,
    // Per (allocator, address): the newest allocation, each linked to the one before it (dead
    // ones are skipped when reached); per allocator: its allocations since its last discard,
    // linked the same way. Each allocation is unlinked at most once from each.
    prev_at_addr: VecDeque<u64>,
    prev_in_pool: VecDeque<u64>,
    /// The id of `spans[0]`.
    first_span: u64,
    top_at_addr: AddrTable,
    /// Per allocator id (`keys.pools`, dense in order of first allocation): its newest
    /// allocation since its last discard.
    pool_head: Vec<u64>,
    /// The allocations' (site, allocator, tag) groups, found while the ring is read anyway, and
    /// the allocator ids `pool_head` is indexed by.
    keys: Keys,
    /// The held frees' sequence numbers, oldest first.
    frees: VecDeque<u64>,
    /// Held spans ended by a free (each such free is held too: it came later).
    matched: u64,
    /// The sequence number of the next event to match.
    next_seq: u64,
}

impl Matching {
    /// A matching of `events` (consecutive sequence numbers) from scratch.
    fn new(events: &VecDeque<Stamped>) -> Self {
        let mut m = Matching::default();
        let end = events.back().map_or(0, |e| e.seq + 1);
        m.update(events, end);
        m
    }

    /// Bytes of the tables reserved per held event (each may be an allocation or a free).
    const BYTES_PER_EVENT: usize = core::mem::size_of::<Span>()
        + 2 * core::mem::size_of::<u64>()
        + core::mem::size_of::<u64>();

    /// Reserves the tables for `events` held events, so they never grow (nor move) after.
    fn try_reserve(&mut self, events: usize) -> Result<(), alloc::collections::TryReserveError> {
        self.spans.try_reserve_exact(events)?;
        self.prev_at_addr.try_reserve_exact(events)?;
        self.prev_in_pool.try_reserve_exact(events)?;
        self.frees.try_reserve_exact(events)
    }

    /// The bytes the tables have reserved.
    fn reserved_bytes(&self) -> usize {
        self.spans.capacity() * core::mem::size_of::<Span>()
            + (self.prev_at_addr.capacity() + self.prev_in_pool.capacity() + self.frees.capacity())
                * core::mem::size_of::<u64>()
    }

    /// The held allocations, in recording order.
    fn held(&self) -> &VecDeque<Span> {
        &self.spans
    }

    /// The held frees that matched no held allocation.
    fn unmatched_frees(&self) -> u64 {
        self.frees.len() as u64 - self.matched
    }

    fn clear(&mut self) {
        self.spans.clear();
        self.prev_at_addr.clear();
        self.prev_in_pool.clear();
        self.first_span = 0;
        self.top_at_addr.clear();
        self.pool_head.clear();
        self.keys.clear();
        self.frees.clear();
        self.matched = 0;
        self.next_seq = 0;
    }

    /// Brings the matching up to `events`, the held events, whose sequence numbers run up to
    /// `end` (exclusive): forgets what left the ring, then matches the events from the first
    /// not matched yet.
    fn update(&mut self, events: &VecDeque<Stamped>, end: u64) {
        let front = end - events.len() as u64;
        if end < self.next_seq {
            // Only a new recorder numbers from below; start again.
            self.clear();
        }
        // What left the ring.
        while let Some(span) = self.spans.pop_front_if(|span| span.seq < front) {
            self.matched -= u64::from(span.by_free && span.ended_by != GONE);
            self.prev_at_addr.pop_front();
            self.prev_in_pool.pop_front();
            self.first_span += 1;
        }
        let start = self.next_seq.max(front);
        let new = (end - start) as usize;
        while self.frees.front().is_some_and(|&seq| seq < front) {
            self.frees.pop_front();
        }
        // Room for every new event to be an allocation (or a free): nothing to do when the
        // tables were reserved for the ring; else reserved once, so they never move while
        // they fill. Only the pages written are touched.
        self.spans.reserve(new);
        self.prev_at_addr.reserve(new);
        self.prev_in_pool.reserve(new);
        self.frees.reserve(new);
        self.next_seq = end;
        let Matching {
            spans,
            prev_at_addr,
            prev_in_pool,
            first_span,
            top_at_addr,
            pool_head,
            keys,
            frees,
            matched,
            next_seq: _,
        } = self;
        let first = *first_span;
        for e in events.range((start - front) as usize..) {
            let seq = e.seq;
            match e.record {
                Record::Alloc {
                    pool,
                    tag,
                    addr,
                    size,
                    site,
                } => {
                    let id = first + spans.len() as u64;
                    let p = keys.pools.id(pool);
                    if p as usize == pool_head.len() {
                        pool_head.push(GONE);
                    }
                    spans.push_back(Span {
                        seq,
                        ended_by: GONE,
                        made: e.frame,
                        ended: 0,
                        size,
                        addr,
                        group: keys.group(pool, tag, site),
                        by_free: false,
                    });
                    prev_at_addr.push_back(top_at_addr.insert(p, addr, id));
                    prev_in_pool.push_back(pool_head[p as usize]);
                    pool_head[p as usize] = id;
                }
                Record::Free { pool, addr, .. } => {
                    frees.push_back(seq);
                    let links = Links {
                        spans,
                        prev: prev_at_addr,
                        first,
                    };
                    let k = match keys.pools.get(pool) {
                        Some(p) => top_at_addr.take_live(p, addr, links),
                        None => GONE,
                    };
                    if k != GONE {
                        let span = &mut spans[(k - first) as usize];
                        span.ended_by = seq;
                        span.ended = e.frame;
                        span.by_free = true;
                        *matched += 1;
                    }
                }
                Record::Discard { pool, .. } => {
                    if let Some(p) = keys.pools.get(pool) {
                        let mut k = core::mem::replace(&mut pool_head[p as usize], GONE);
                        // Ids below `first` left the ring, and so did everything before them.
                        while k != GONE && k >= first {
                            let i = (k - first) as usize;
                            let span = &mut spans[i];
                            if span.ended_by == GONE {
                                span.ended_by = seq;
                                span.ended = e.frame;
                                let addr = span.addr;
                                let links = Links {
                                    spans,
                                    prev: prev_at_addr,
                                    first,
                                };
                                top_at_addr.clean(p, addr, links);
                            }
                            k = prev_in_pool[i];
                        }
                    }
                }
                Record::FrameEnd { .. } => {}
            }
        }
        // Keys whose allocations all left the ring are never visited again: drop them once
        // they are as many as the live ones.
        if top_at_addr.len() > 2 * spans.len() + 16 {
            top_at_addr.prune(Links {
                spans,
                prev: prev_at_addr,
                first,
            });
        }
    }
}

impl Matching {
    /// The allocation `span` stands for, from the span alone (the ring is not read).
    #[inline]
    fn allocation(&self, span: &Span) -> Allocation {
        let g = &self.keys.info[span.group as usize];
        Allocation {
            pool: g.pool,
            tag: g.tag,
            addr: span.addr,
            size: span.size,
            frame: span.made,
            site: g.site,
            seq: span.seq,
            freed_in: span.ended_in(),
        }
    }
}

/// Growth rows by name id.
#[derive(Default)]
struct Table {
    /// Per name id: its row in `rows` (rows in order of first sight).
    row_of: Vec<u32>,
    rows: Vec<GrowthRow>,
}

impl Table {
    fn add(&mut self, id: u32, name: &'static str, size: usize, at_from: bool, at_to: bool) {
        let id = id as usize;
        if id >= self.row_of.len() {
            self.row_of.resize(id + 1, NONE);
        }
        if self.row_of[id] == NONE {
            self.row_of[id] = self.rows.len() as u32;
            self.rows.push(GrowthRow {
                name,
                bytes_from: 0,
                bytes_to: 0,
                count_from: 0,
                count_to: 0,
            });
        }
        let row = &mut self.rows[self.row_of[id] as usize];
        if at_from {
            row.bytes_from = row.bytes_from.saturating_add(size as u64);
            row.count_from += 1;
        }
        if at_to {
            row.bytes_to = row.bytes_to.saturating_add(size as u64);
            row.count_to += 1;
        }
    }

    fn rows(mut self) -> Vec<GrowthRow> {
        self.rows.sort_by(|a, b| {
            b.bytes_change()
                .cmp(&a.bytes_change())
                .then(a.name.cmp(b.name))
        });
        self.rows
    }
}

/// (site, allocator, tag) ids: allocations group by site, and without one by allocator and tag.
type GroupKey = (u32, u32, u32);

/// Dense group ids (0, 1, 2, .. in order of first sight) for (site, allocator, tag), by text, with
/// a direct-mapped cache in front keyed by the three names' addresses (the same literal is one
/// address, and a program has few): a repeated (site, allocator, tag) costs one hash of three
/// words and a compare instead of four table lookups.
struct Keys {
    sites: FxMap<usize, u32>,
    site_text: HashMap<(&'static str, u32, u32), u32>,
    pools: Names,
    tags: Names,
    groups: FxMap<GroupKey, u32>,
    /// Per group: its site, allocator and tag as first seen, and the allocator's and tag's ids
    /// (in `pools` and `tags`: two copies of a name are one id).
    info: Vec<GroupInfo>,
    /// Per cache slot: the names' addresses (site, pool, tag) and lengths (pool, tag), and the
    /// group they are.
    cache: Vec<(RawKey, u32)>,
}

/// The addresses of a site and of the allocator's and tag's names, and the names' lengths.
type RawKey = (usize, usize, usize, usize, usize);

/// What a group is: see [`Keys::info`].
#[derive(Clone, Copy)]
struct GroupInfo {
    site: Option<&'static Location<'static>>,
    pool: &'static str,
    tag: &'static str,
    pool_id: u32,
    tag_id: u32,
}

/// Cache slots in [`Keys`]: a power of two.
const KEY_CACHE: usize = 64;

impl Default for Keys {
    fn default() -> Self {
        Keys {
            sites: FxMap::default(),
            site_text: HashMap::new(),
            pools: Names::default(),
            tags: Names::default(),
            groups: FxMap::default(),
            info: Vec::new(),
            // No name is at address 0, so the empty slots match nothing.
            cache: vec![((0, 0, 0, 0, 0), NONE); KEY_CACHE],
        }
    }
}

impl Keys {
    fn clear(&mut self) {
        self.sites.clear();
        self.site_text.clear();
        self.pools.clear();
        self.tags.clear();
        self.groups.clear();
        self.info.clear();
        self.cache.fill(((0, 0, 0, 0, 0), NONE));
    }

    /// The group of (`site`, `pool`, `tag`).
    #[inline]
    fn group(
        &mut self,
        pool: &'static str,
        tag: &'static str,
        site: Option<&'static Location<'static>>,
    ) -> u32 {
        let raw = (
            site.map_or(0, |loc| loc as *const Location<'static> as usize),
            pool.as_ptr() as usize,
            tag.as_ptr() as usize,
            pool.len(),
            tag.len(),
        );
        let mut h = Fx::default();
        h.write_usize(raw.0);
        h.write_usize(raw.1 ^ raw.3);
        h.write_usize(raw.2 ^ raw.4);
        let slot = h.finish() as usize & (KEY_CACHE - 1);
        let (seen, g) = self.cache[slot];
        if seen == raw && g != NONE {
            return g;
        }
        let key = self.key_slow(pool, tag, site);
        let next = self.groups.len() as u32;
        let g = *self.groups.entry(key).or_insert(next);
        if g == next {
            self.info.push(GroupInfo {
                site,
                pool,
                tag,
                pool_id: key.1,
                tag_id: key.2,
            });
        }
        self.cache[slot] = (raw, g);
        g
    }

    #[cold]
    fn key_slow(
        &mut self,
        pool: &'static str,
        tag: &'static str,
        site: Option<&'static Location<'static>>,
    ) -> GroupKey {
        let site = match site {
            None => NONE,
            Some(loc) => {
                let addr = loc as *const Location<'static> as usize;
                match self.sites.get(&addr) {
                    Some(&id) => id,
                    None => {
                        let next = self.site_text.len() as u32;
                        let text = (loc.file(), loc.line(), loc.column());
                        let id = *self.site_text.entry(text).or_insert(next);
                        self.sites.insert(addr, id);
                        id
                    }
                }
            }
        };
        (site, self.pools.id(pool), self.tags.id(tag))
    }
}

/// The allocations of the spans `keep` accepts (in recording order) by group, the groups with
/// the most bytes first (then in order of first sight), keeping recording order inside a group:
/// a counting sort, O(allocations). One pass over the spans finds the groups' totals; a second
/// reads the ring forwards and writes each allocation to its place (one stream per group).
fn grouped(m: &Matching, keep: impl Fn(&Span) -> bool) -> Vec<Allocation> {
    // Per group id: its row in `totals` (rows in order of first sight here).
    let mut row = vec![NONE; m.keys.info.len()];
    let mut totals: Vec<(u64, usize)> = Vec::new(); // per row: (bytes, count)
    let mut first = None;
    let held = m.held();
    for (k, span) in held.iter().enumerate() {
        if !keep(span) {
            continue;
        }
        first.get_or_insert(k);
        let r = &mut row[span.group as usize];
        if *r == NONE {
            *r = totals.len() as u32;
            totals.push((0, 0));
        }
        let total = &mut totals[*r as usize];
        total.0 = total.0.saturating_add(span.size as u64);
        total.1 += 1;
    }
    let Some(first) = first else {
        return Vec::new();
    };
    // Where each row starts in the output.
    let mut order: Vec<usize> = (0..totals.len()).collect();
    order.sort_by(|&a, &b| totals[b].0.cmp(&totals[a].0).then(a.cmp(&b)));
    let mut start = vec![0usize; totals.len()];
    let mut at = 0;
    for r in order {
        start[r] = at;
        at += totals[r].1;
    }
    let mut out = vec![m.allocation(&held[first]); at];
    for span in held.range(first..) {
        if keep(span) {
            let slot = &mut start[row[span.group as usize] as usize];
            out[*slot] = m.allocation(span);
            *slot += 1;
        }
    }
    out
}

// --- The trace-event JSON ---

struct Json<'w, W: io::Write> {
    out: &'w mut W,
    first: bool,
    text: String,
}

impl<W: io::Write> Json<'_, W> {
    /// Adds one event object, whose fields `build` writes (between the braces); the text goes
    /// to `out` in pieces of about 64 KiB, so an unbuffered `File` sees few writes.
    fn event(&mut self, build: impl FnOnce(&mut String)) -> io::Result<()> {
        if !self.first {
            self.text.push(',');
        }
        self.first = false;
        self.text.push('{');
        build(&mut self.text);
        self.text.push('}');
        if self.text.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(self.text.as_bytes())?;
        self.text.clear();
        Ok(())
    }
}

/// `"name":..,"ph":..,"ts":..,"pid":1,"tid":0`
fn head(s: &mut String, name: &str, ph: &str, ts: u64) {
    use core::fmt::Write;
    s.push_str("\"name\":");
    json_str(s, name);
    let _ = write!(s, ",\"ph\":\"{ph}\",\"ts\":{ts},\"pid\":1,\"tid\":0");
}

/// `,"args":{"pool":..,"tag":..` (the caller adds the other arguments and the closing brace).
fn pool_and_tag(s: &mut String, pool: &str, tag: &str) {
    s.push_str(",\"args\":{\"pool\":");
    json_str(s, pool);
    s.push_str(",\"tag\":");
    json_str(s, tag);
}

fn write_trace(
    events: &VecDeque<Stamped>,
    dropped: u64,
    capacity: usize,
    out: &mut impl io::Write,
) -> io::Result<()> {
    use core::fmt::Write;
    let m = Matching::new(events);
    // For each ending event, the allocations it ended: a linked list through `next_ended`.
    let n = events.len();
    let front = events.front().map_or(0, |e| e.seq);
    let mut first_ended = vec![NONE; n];
    let mut next_ended = vec![NONE; n];
    for span in m.held().iter().rev() {
        if span.ended_by != GONE {
            // Indices in the ring: fewer than `NONE` events are held.
            let (at, by) = (
                (span.seq - front) as usize,
                (span.ended_by - front) as usize,
            );
            next_ended[at] = first_ended[by];
            first_ended[by] = at as u32;
        }
    }
    let mut tags = Names::default();
    let mut live_bytes: Vec<u64> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();

    out.write_all(b"{\"traceEvents\":[")?;
    let mut json = Json {
        out,
        first: true,
        text: String::new(),
    };
    json.event(|s| {
        head(s, "process_name", "M", 0);
        s.push_str(",\"args\":{\"name\":\"arena-kit recorder\"}");
    })?;
    let counter = |json: &mut Json<'_, _>, tag: &str, ts: u64, bytes: u64| {
        json.event(|s| {
            head(s, tag, "C", ts);
            let _ = write!(s, ",\"args\":{{\"bytes\":{bytes}}}");
        })
    };
    for (i, e) in events.iter().enumerate() {
        let ts = e.time_us;
        match e.record {
            Record::Alloc {
                pool,
                tag,
                addr,
                size,
                site,
            } => {
                let t = tags.id(tag) as usize;
                if t == live_bytes.len() {
                    live_bytes.push(0);
                }
                live_bytes[t] = live_bytes[t].saturating_add(size as u64);
                json.event(|s| {
                    head(s, tag, "b", ts);
                    let _ = write!(s, ",\"cat\":\"alloc\",\"id\":\"{:#x}\"", e.seq);
                    pool_and_tag(s, pool, tag);
                    let _ = write!(
                        s,
                        ",\"size\":{size},\"addr\":\"{addr:#x}\",\"frame\":{}",
                        e.frame
                    );
                    if let Some(loc) = site {
                        s.push_str(",\"site\":");
                        json_str(
                            s,
                            &std::format!("{}:{}:{}", loc.file(), loc.line(), loc.column()),
                        );
                    }
                    s.push('}');
                })?;
                counter(&mut json, tag, ts, live_bytes[t])?;
            }
            Record::Free { .. } | Record::Discard { .. } => {
                touched.clear();
                let (mut count, mut bytes) = (0u64, 0u64);
                let mut j = first_ended[i];
                while j != NONE {
                    let ended = &events[j as usize];
                    if let Record::Alloc { tag, size, .. } = ended.record {
                        let t = tags.id(tag);
                        live_bytes[t as usize] = live_bytes[t as usize].saturating_sub(size as u64);
                        if !touched.contains(&t) {
                            touched.push(t);
                        }
                        count += 1;
                        bytes = bytes.saturating_add(size as u64);
                        json.event(|s| {
                            head(s, tag, "e", ts);
                            let _ = write!(
                                s,
                                ",\"cat\":\"alloc\",\"id\":\"{:#x}\",\"args\":{{\"frame\":{}}}",
                                ended.seq, e.frame
                            );
                        })?;
                    }
                    j = next_ended[j as usize];
                }
                match e.record {
                    Record::Discard { pool, tag } => json.event(|s| {
                        head(s, "discard", "i", ts);
                        s.push_str(",\"s\":\"p\"");
                        pool_and_tag(s, pool, tag);
                        let _ = write!(
                            s,
                            ",\"allocations\":{count},\"bytes\":{bytes},\"frame\":{}}}",
                            e.frame
                        );
                    })?,
                    Record::Free {
                        pool,
                        tag,
                        addr,
                        size,
                    } if count == 0 => json.event(|s| {
                        head(s, "unmatched free", "i", ts);
                        s.push_str(",\"s\":\"t\"");
                        pool_and_tag(s, pool, tag);
                        let _ = write!(
                            s,
                            ",\"size\":{size},\"addr\":\"{addr:#x}\",\"frame\":{}}}",
                            e.frame
                        );
                    })?,
                    _ => {}
                }
                for &t in &touched {
                    counter(
                        &mut json,
                        tags.names[t as usize],
                        ts,
                        live_bytes[t as usize],
                    )?;
                }
            }
            Record::FrameEnd { frame } => json.event(|s| {
                head(s, &std::format!("frame {frame}"), "i", ts);
                let _ = write!(s, ",\"s\":\"g\",\"args\":{{\"frame\":{frame}}}");
            })?,
        }
    }
    json.flush()?;
    let mut tail = String::new();
    let _ = write!(
        tail,
        "],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"recorder\":\"arena-kit\",\"capacity\":\"{capacity}\",\"dropped\":\"{dropped}\"}}}}"
    );
    json.out.write_all(tail.as_bytes())
}

/// With the `profiler` feature a recorder is a [`ProfilerSink`](super::ProfilerSink): install it
/// with [`set_profiler_sink`](super::set_profiler_sink) and every [`Tracked`](super::Tracked)
/// allocator's allocations, frees and discards land in it, each frame ending at
/// [`Registry::end_frame`](super::Registry::end_frame).
///
/// The recorder tells allocators apart by name, and names need not be unique (two threads'
/// `"scratch"` arenas), so the sink records each live allocator (its `(pool, buffer, id)`, see
/// [`ProfilerEvent`](super::ProfilerEvent)) under a name of its own, as `TracySink` shows it:
/// the first one live of a name under the name itself, a second one live with it under
/// `"{name} (2)"`, and so on, and a frame arena's buffer `i` under `"{name} [buffer i]"`. So
/// one arena's reset ends its own allocations only, and resetting one buffer ends only that
/// buffer's blocks. When an allocator ends
/// ([`PoolEnd`](super::ProfilerEvent::PoolEnd), after its last free or discard) its name goes to
/// the next allocator of that name: a `"scratch"` arena made and dropped every level is
/// recorded as `"scratch"` every time. Nothing is recorded for `PoolEnd` itself.
///
/// The names are kept for the rest of the program (queries hand them out as `&'static str`);
/// each text is made once for the whole program, whichever sink needs it. One sink makes at
/// most 4,096 names, a new one only when more allocators of a name are live at once than
/// before; an allocator that finds none left is recorded under its plain name for its whole
/// life, as if it were the allocator of that name, and [`merged_events`](Recorder::merged_events)
/// counts its events. The sink allocates only to make a name, or
/// when more allocators are live at once than it has seen before (its table of live allocators
/// grows); recording through [`record`](Recorder::record) and its forms takes no name and
/// allocates nothing, as before.
/// `Plot` and `Message` events are not kept: the trace's counter tracks are rebuilt from the
/// allocations, and budget messages go to the report sink.
///
/// ```
/// use arena_kit::tags::{ProfilerSink, Recorder, set_profiler_sink};
/// use arena_kit::{Pool, Registry, Tracked};
///
/// let recorder: &'static Recorder = Box::leak(Box::new(Recorder::new(1024)));
/// set_profiler_sink(Some(recorder));
/// let mut bodies = Tracked::new(Pool::with_capacity(16), "bodies", "Physics");
/// let mut more = Tracked::new(Pool::with_capacity(16), "bodies", "Physics"); // "bodies (2)"
/// let body = bodies.insert([0u8; 64]);
/// more.insert([1u8; 32]);
/// let mut registry = Registry::new();
/// registry.end_frame(&[&bodies, &more]).unwrap();
/// bodies.remove(body);
/// more.clear();
/// set_profiler_sink(None);
/// let made = recorder.live_at(recorder.frame() - 1).value;
/// let made: Vec<_> = made.iter().map(|a| (a.pool, a.size)).collect();
/// assert_eq!(made, [("bodies", 64), ("bodies (2)", 32)]);
/// assert_eq!(recorder.live_at(recorder.frame()).unmatched_frees, 0);
/// ```
#[cfg(feature = "profiler")]
impl super::ProfilerSink for Recorder {
    fn event(&self, event: &super::ProfilerEvent<'_>) {
        use super::ProfilerEvent as E;
        match *event {
            E::Alloc {
                pool,
                tag,
                addr,
                size,
                buffer,
                id,
                site,
            } => self.alloc(self.pool_name(pool, buffer, id), tag, addr, size, site),
            E::Free {
                pool,
                tag,
                addr,
                size,
                buffer,
                id,
            } => self.free(self.pool_name(pool, buffer, id), tag, addr, size),
            E::Discard {
                pool,
                tag,
                buffer,
                id,
            } => self.discard(self.pool_name(pool, buffer, id), tag),
            E::PoolEnd {
                pool, buffer, id, ..
            } => {
                self.pool_names().end(pool, buffer, id);
            }
            E::FrameEnd { frame } => self.end_frame(frame),
            _ => {}
        }
    }
}

#[cfg(feature = "profiler")]
impl Recorder {
    /// The name the sink records allocator `(pool, buffer, id)` under (see the `ProfilerSink`
    /// impl): its own, or `pool` when the name table is full. The table's lock is let go before
    /// the event is recorded: the next allocator of an ended one's name takes it only after
    /// the ended one's last event was recorded, so its events come after those in the ring.
    fn pool_name(&self, pool: &'static str, buffer: Option<usize>, id: u64) -> &'static str {
        self.pool_names()
            .pool(pool, buffer, id)
            .map_or(pool, |name| name.as_str())
    }

    /// The sink's name table. Nothing called while its lock is held panics halfway through a
    /// change to it, so a poisoned lock still guards a whole table, and is taken over.
    fn pool_names(&self) -> MutexGuard<'_, super::pool_names::PoolNames> {
        self.pool_names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}
