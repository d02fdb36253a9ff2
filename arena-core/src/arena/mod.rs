//! Bump arenas: [`Arena`], scopes (the stack allocator), N-buffered [`FrameArena`]s and
//! per-thread [`scratch`] arenas.
//!
//! An arena hands out memory by bumping a pointer through a block and frees everything at once
//! with [`Arena::reset`]. The borrow checker does the bookkeeping engines leave to discipline:
//! a value from [`Arena::alloc`] borrows the arena, so `reset` (which takes `&mut self`) cannot
//! run while anything allocated is still in use.
//!
//! | type | pick it when | not when |
//! | --- | --- | --- |
//! | [`Arena::with_capacity`] | a fixed per-frame or per-level budget; running out is a bug | the need is unbounded |
//! | [`Arena::new`] | you don't know the sizes yet (bumpalo's `Bump::new`): [`Arena::chained`] with 4 KiB pages | as for `chained` |
//! | [`Arena::chained`] | the need varies; pages are kept across resets | you must never touch the system allocator after startup (size a fixed arena instead) |
//! | [`Arena::from_buffer`] | `no_std` without a heap, or memory you already own | you want growth |
//! | [`Arena::scope`] / [`Arena::mark`] | LIFO sub-lifetimes inside a frame (a stack allocator) | values must outlive the scope |
//! | [`FrameArena`] | data a reader (render thread, GPU upload) consumes one or more frames later | data lives longer than N frames |
//! | [`scratch`] | short-lived temporaries inside one function call, per thread | the result must outlive the call |
//!
//! Not the right tool for objects that die one at a time in any order: use a pool or the heap.
//!
//! # Destructors
//!
//! Values whose type needs dropping are dropped on reset, on rewind (and at the end of a scope)
//! and when the arena is dropped, in reverse allocation order (slice elements last to first);
//! values of one type allocated back to back share one drop record (64 bytes), and where types
//! alternate value by value, each value after the first adds a 16-byte entry to that record
//! instead of a record of its own. Their type must be
//! `Send + 'static` because an arena can move to another thread and outlive borrowed data. Types
//! without drop glue pay nothing. [`Arena::alloc_no_drop`] takes any type and never drops it.
//! Leaking the arena itself (`mem::forget`) leaks its pages and skips every pending destructor,
//! which is safe, like forgetting a `Vec`. Forgetting a [`Scope`] skips its rewind: its values
//! stay (and are dropped) until the next reset or an earlier rewind.
//!
//! # Budgets
//!
//! [`Arena`], [`BufferArena`], [`Frame`] and [`FrameArena`] implement
//! [`Budgeted`](crate::tags::Budgeted): a budget caps [`Arena::used`] for every allocating
//! method. It is folded into the end of the current page, so the bump costs nothing extra; an
//! allocation that would cross it meets the budget's policy on the slow path
//! ([`ArenaError::OverBudget`] under `Fail`). A `FrameArena`'s budget applies per buffer.
//!
//! # Example
//!
//! ```
//! use arena_kit::Arena;
//!
//! let mut arena = Arena::with_capacity(256);
//! let a = arena.alloc_slice_copy(&[1u64; 5]); // 40 bytes at offset 0
//! let b = arena.alloc([0u8; 30]); // 30 bytes at offset 40
//! let c = arena.alloc([0u64; 7]); // 56 bytes at offset 72 (aligned up from 70)
//! assert_eq!(arena.offset_of(c.as_ptr()), Some(72));
//! assert_eq!((a.len(), b.len()), (5, 30));
//! arena.reset(); // a, b, c can no longer be used: the borrow checker sees to it
//! let d = arena.alloc([0u8; 10]);
//! assert_eq!(arena.offset_of(d.as_ptr()), Some(0));
//! ```

#[cfg(feature = "allocator-api2")]
mod api2;
mod budget;
pub use budget::BumpAllocator;
mod bump;
mod cursor;
mod drop_list;
mod error;
#[cfg(feature = "alloc")]
mod frame;
mod guard;
mod marker;
mod page;
#[cfg(feature = "profiler")]
mod profile;
mod resize;
mod scope;
#[cfg(feature = "std")]
mod scratch;
mod slices;
mod typed;
pub use typed::ArenaDrop;
pub(crate) use typed::{Caller, fail};
#[cfg(feature = "rayon")]
mod workers;

use core::cell::Cell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use cursor::Cursor;
use drop_list::DropRecord;
use guard::GuardRecord;
use page::PageHeader;

use crate::tags::BudgetGate;

pub use error::{AllocOrInitError, ArenaError, MarkerError};
#[cfg(feature = "alloc")]
pub use frame::{Frame, FrameArena, FrameInUse, FrameReader};
#[cfg(feature = "alloc")]
pub(crate) use guard::damaged_guard;
pub use guard::{GuardSide, GuardViolation};
pub use marker::Marker;
pub use scope::Scope;
#[cfg(feature = "std")]
pub use scratch::{ThreadScratch, scratch, scratch_depth, scratch_release};
#[cfg(feature = "rayon")]
pub use workers::{NotAWorker, WorkerArenas};

/// Source of arena identities, so a [`Marker`] from one arena is refused by another.
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

/// A bump arena: allocation is a pointer bump, [`reset`](Arena::reset) frees everything in O(1)
/// (plus destructors), [`scope`](Arena::scope) and [`mark`](Arena::mark) /
/// [`rewind`](Arena::rewind) free in LIFO order. See the [module docs](self).
///
/// ```
/// use arena_kit::Arena;
///
/// struct Spark { x: f32, life: f32 }
///
/// let mut frame = Arena::with_capacity(64 * 1024);
/// for _ in 0..3 {
///     let sparks = frame.alloc_slice_fill_with(100, |i| Spark { x: i as f32, life: 1.0 });
///     let visible = frame.alloc_slice_copy(&[3u32, 7, 42]); // indices that survived culling
///     assert_eq!(sparks[visible[2] as usize].x, 42.0);
///     assert!(sparks.iter().all(|s| s.life == 1.0));
///     frame.reset(); // end of frame: everything goes at once
///     assert_eq!(frame.used(), 0);
/// }
/// ```
///
/// # Variance
///
/// No parameters. Values borrow the arena (`&'a Arena` gives `&'a mut T`), so their lifetimes are
/// checked through those borrows; it is `Send` but not `Sync`.
pub struct Arena {
    // --- hot: read and written by every allocation ---
    /// The bump position and the counters that move with it; its module alone writes them.
    cursor: Cursor,
    /// Newest pending destructor, or `None`.
    drops: Cell<Option<NonNull<DropRecord>>>,
    /// The newest drop record while its run or its tail may still grow (no marker taken since
    /// it began), else a static closed record ([`drop_list`]'s `CLOSED`, or `BUILDING` while
    /// the newest record's values are built), never `None`.
    run: Cell<NonNull<DropRecord>>,
    /// Newest guarded allocation, or `None`.
    guards: Cell<Option<NonNull<GuardRecord>>>,
    // --- cold: pages, budget and statistics ---
    /// The budget, if any, with its warned state (a `Cell`: arenas allocate through `&self`).
    /// Its limit is folded into the cursor's end; it is consulted only on the slow path.
    budget: Cell<Option<BudgetGate>>,
    /// The stamp of `budget`'s gate (0: none, or unstamped): what a wrapper compares on every
    /// allocation, one word instead of the gate.
    budget_stamp: Cell<usize>,
    /// The root block: fixed capacity, user buffer, or empty for chained arenas.
    root_start: NonNull<u8>,
    root_end: NonNull<u8>,
    root_used_end: Cell<NonNull<u8>>,
    /// Whether the root block was allocated by the arena (and must be freed with `root_start`).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    root_owned: bool,
    /// First heap page, `None` until a chained arena grows.
    first_page: Cell<Option<NonNull<PageHeader>>>,
    /// Number of heap pages.
    pages: Cell<usize>,
    /// Bytes taken from the system allocator (root block and pages, headers included).
    system_bytes: Cell<usize>,
    /// Size of a new page in bytes, or 0 for an arena that never grows.
    page_bytes: usize,
    /// Limit on `system_bytes` for a chained arena (`usize::MAX` = none); a `Cell` so
    /// [`Arena::set_limit`] works through `&self`. Read only on the slow path.
    limit: Cell<usize>,
    /// The tag the pages are charged to (set by a `Tracked` wrapper). Read only on the slow path.
    page_tag: Cell<crate::tags::PageTag>,
    /// Number of resets, so markers taken before a reset are refused.
    epoch: Cell<u64>,
    /// Times kept pages were given back between resets (a limited arena making room), so a
    /// marker taken before is checked against the pages still held before it is used.
    page_frees: Cell<u64>,
    /// Pages held at the last reset (0 before the first).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    kept: Cell<usize>,
    /// Whether the pages were reordered, inserted before kept pages, or added while pages were
    /// kept since the last reset: the next reset then coalesces them into one page.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    reshaped: Cell<bool>,
    /// Unique identity, so markers from another arena are refused.
    id: usize,
    /// Whether allocations carry guard bytes (only when [`crate::poison::ENABLED`]).
    guarded: bool,
    /// The name and tag a `Tracked` wrapper put on the arena, for the profiler hooks (see
    /// `profile.rs`).
    #[cfg(feature = "profiler")]
    profiler: Cell<Option<crate::tags::ProfilerLabel>>,
    /// Bytes of the current block reported to the profiler (0: none).
    #[cfg(feature = "profiler")]
    profiler_open: Cell<usize>,
    /// This arena's events are being sent (a sink that uses this arena is running).
    #[cfg(feature = "profiler")]
    profiler_busy: Cell<bool>,
    /// A hook ran while the events were being sent, so what the profiler holds may no longer
    /// be the arena's blocks: the report being sent reports them again when it is done.
    #[cfg(feature = "profiler")]
    profiler_stale: Cell<bool>,
    /// Cells make the arena `!Sync`; see the `Send` impl.
    _not_sync: PhantomData<Cell<u8>>,
}

// SAFETY: moving an arena moves everything it points to with it: it owns its root block and
// pages (or borrows its buffer `&mut` through `BufferArena`, which is `Send`), and no other
// handle to them exists (markers are only compared and checked, see `Marker`). Every value
// with a pending destructor was required to be `Send` (`typed.rs`), so dropping it on the new
// thread is sound. Values of other types (`alloc_no_drop`) are never dropped and are only
// reachable through borrows of the arena, which end before it can move. The arena is not
// `Sync` (its cells), so two threads never touch it at once.
unsafe impl Send for Arena {}

/// The page size of [`Arena::new`]: 4 KiB, page header included (one page of most operating
/// systems, small enough that a short-lived arena wastes little; bumpalo's first chunk is
/// about 512 bytes and doubles, ours stays and merges on reset).
pub const DEFAULT_PAGE_BYTES: usize = 4096;

/// [`Arena::new`]: a chained arena with pages of [`DEFAULT_PAGE_BYTES`].
#[cfg(feature = "alloc")]
impl Default for Arena {
    fn default() -> Arena {
        Arena::new()
    }
}

/// One block of an arena, from [`Arena::pages`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageUsage {
    /// Position in the walk, from 0.
    pub index: usize,
    /// Whether this is the root block (a fixed arena's block or the user's buffer), not a heap
    /// page.
    pub root: bool,
    /// Whether the bump pointer is in this block now.
    pub current: bool,
    /// Bytes used in it, alignment padding and drop records included.
    pub used: usize,
    /// Bytes it can hold (a heap page's header excluded).
    pub capacity: usize,
}

/// The iterator of [`Arena::pages`].
///
/// The arena stays usable through `&Arena` while it walks: an allocation between two steps may
/// take a page, move a kept page up, or (in a [limited](Arena::set_limit) arena) give kept pages
/// back to the system allocator. So the walk keeps a position, not a page: each step reports
/// the block at the next position as the arena holds it then, and a page pointer kept from the
/// step before is only read while no page was given back since (it may be gone otherwise).
#[derive(Debug, Clone)]
pub struct Pages<'a> {
    arena: &'a Arena,
    /// Position of the next block in the walk (`PageUsage::index`).
    index: usize,
    /// The block after the one reported last, as the chain held it then: `Some(None)` for the
    /// root, `Some(Some(page))` for a heap page, `None` when none followed. Trusted only while
    /// the arena's `page_frees` is still `frees` and the page still has the walk's position.
    next: Option<Option<NonNull<PageHeader>>>,
    /// The arena's `page_frees` when `next` was read.
    frees: u64,
}

impl Pages<'_> {
    /// The block at walk position `self.index`, if the arena holds one now.
    fn block(&self) -> Option<Option<NonNull<PageHeader>>> {
        let arena = self.arena;
        let root = arena.root_start != arena.root_end;
        // The root is the block of index 0; heap pages are numbered from 1 along the chain (see
        // `link_after`). An empty root is not listed, so the walk starts at page 1.
        let want = if root { self.index } else { self.index + 1 };
        if arena.page_frees.get() == self.frees
            && let Some(next) = self.next
            && Arena::page_index(next) == want
        {
            // No page was given back since `next` was read, so it is live; and it still holds
            // the walk's position (no page was moved up or inserted before it).
            return Some(next);
        }
        if want == 0 {
            return Some(None);
        }
        let mut page = arena.first_page.get();
        while let Some(p) = page {
            if page::header(p).index.get() == want {
                return Some(Some(p));
            }
            page = page::header(p).next.get();
        }
        None
    }
}

impl Iterator for Pages<'_> {
    type Item = PageUsage;

    fn next(&mut self) -> Option<PageUsage> {
        let page = self.block()?;
        let arena = self.arena;
        let (start, end) = arena.page_bounds(page);
        let current = page == arena.cursor.page();
        // Blocks after the current one are empty (kept pages); an empty root is never listed,
        // and while the cursor still stands in it, every page follows.
        let used = if Arena::page_index(page) > arena.cursor.page_index() {
            0
        } else {
            arena.page_used_end(page).as_ptr() as usize - start.as_ptr() as usize
        };
        self.next = arena.next_page(page).map(Some);
        self.frees = arena.page_frees.get();
        let usage = PageUsage {
            index: self.index,
            root: page.is_none(),
            current,
            used,
            capacity: end.as_ptr() as usize - start.as_ptr() as usize,
        };
        self.index += 1;
        Some(usage)
    }
}

/// A snapshot of an arena's statistics, for reports and the memory-budget tooling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArenaStats {
    /// Bytes in use, alignment padding included.
    pub used: usize,
    /// Bytes that can still be handed out without taking a new page.
    pub remaining: usize,
    /// Bytes the arena's memory can hold in total (root block and pages, headers excluded).
    pub capacity: usize,
    /// The largest `used` ever reached.
    pub high_water: usize,
    /// Heap pages held (the root block of a fixed arena is not counted).
    pub pages: usize,
    /// Live allocations.
    pub allocations: usize,
    /// Bytes taken from the system allocator, headers included.
    pub system_bytes: usize,
}

impl Arena {
    fn from_root(start: NonNull<u8>, len: usize, owned: bool, page_bytes: usize) -> Arena {
        // SAFETY: `start` is valid for `len` bytes (or dangling with `len == 0`).
        let end = unsafe { start.add(len) };
        Arena {
            cursor: Cursor::new(start, end),
            drops: Cell::new(None),
            run: Cell::new(drop_list::closed_run()),
            guards: Cell::new(None),
            budget: Cell::new(None),
            budget_stamp: Cell::new(0),
            root_start: start,
            root_end: end,
            root_used_end: Cell::new(start),
            root_owned: owned,
            first_page: Cell::new(None),
            pages: Cell::new(0),
            system_bytes: Cell::new(if owned { len } else { 0 }),
            page_bytes,
            limit: Cell::new(usize::MAX),
            page_tag: Cell::new(crate::tags::PageTag::NONE),
            epoch: Cell::new(0),
            page_frees: Cell::new(0),
            kept: Cell::new(0),
            reshaped: Cell::new(false),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            guarded: false,
            #[cfg(feature = "profiler")]
            profiler: Cell::new(None),
            #[cfg(feature = "profiler")]
            profiler_open: Cell::new(0),
            #[cfg(feature = "profiler")]
            profiler_busy: Cell::new(false),
            #[cfg(feature = "profiler")]
            profiler_stale: Cell::new(false),
            _not_sync: PhantomData,
        }
    }

    /// An arena of one block of `bytes` bytes (16-byte aligned), taken from the system allocator
    /// now. It never grows: when it is full, `try_*` returns [`ArenaError::Full`] and the other
    /// forms panic.
    ///
    /// # Panics
    ///
    /// If `bytes > isize::MAX - 15`; the system allocator's out-of-memory handler runs if it
    /// cannot provide the block ([`try_with_capacity`](Arena::try_with_capacity) returns an
    /// error instead).
    #[cfg(feature = "alloc")]
    #[track_caller]
    pub fn with_capacity(bytes: usize) -> Arena {
        match Arena::try_with_capacity(bytes) {
            Ok(arena) => arena,
            Err(ArenaError::SystemOutOfMemory { .. }) => alloc::alloc::handle_alloc_error(
                core::alloc::Layout::from_size_align(bytes, page::PAGE_ALIGN)
                    .expect("the layout was valid when the block was asked for"),
            ),
            Err(e) => panic!("{e}"),
        }
    }

    /// [`with_capacity`](Arena::with_capacity), returning an error instead of panicking or
    /// aborting when the block cannot be had.
    ///
    /// ```
    /// use arena_kit::{Arena, ArenaError};
    ///
    /// let arena = Arena::try_with_capacity(4096).unwrap();
    /// assert_eq!(arena.capacity(), 4096);
    /// assert!(matches!(
    ///     Arena::try_with_capacity(usize::MAX),
    ///     Err(ArenaError::SizeOverflow { .. })
    /// ));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`] if `bytes > isize::MAX - 15`,
    /// [`ArenaError::SystemOutOfMemory`] if the system allocator refuses the block.
    #[cfg(feature = "alloc")]
    pub fn try_with_capacity(bytes: usize) -> Result<Arena, ArenaError> {
        if bytes == 0 {
            return Ok(Arena::from_root(NonNull::dangling(), 0, false, 0));
        }
        let layout =
            core::alloc::Layout::from_size_align(bytes, page::PAGE_ALIGN).map_err(|_| {
                ArenaError::SizeOverflow {
                    elem_size: 1,
                    count: bytes,
                }
            })?;
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc::alloc::alloc(layout) };
        let start = NonNull::new(raw).ok_or(ArenaError::SystemOutOfMemory {
            requested: bytes,
            page_bytes: bytes,
        })?;
        Ok(Arena::from_root(start, bytes, true, 0))
    }

    /// A chained arena with pages of [`DEFAULT_PAGE_BYTES`] (4 KiB, page header included): the
    /// arena for "I don't know how much yet", like `bumpalo::Bump::new()`. No memory is taken
    /// until the first allocation; a larger request gets a page of its own, and a reset after a
    /// frame that needed several pages merges them into one (see [`chained`](Arena::chained)).
    /// Also what [`Default`] gives.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::new();
    /// assert_eq!(arena.system_bytes(), 0); // nothing taken yet
    /// let names = arena.alloc_slice_copy(&[1u32, 2, 3]);
    /// assert_eq!(arena.page_count(), 1);
    /// assert_eq!(arena.system_bytes(), arena_kit::arena::DEFAULT_PAGE_BYTES);
    /// assert_eq!(names, [1, 2, 3]);
    /// ```
    #[cfg(feature = "alloc")]
    pub fn new() -> Arena {
        Arena::chained(DEFAULT_PAGE_BYTES)
    }

    /// An arena that grows by pages of `page_bytes` bytes (page header included), taken from the
    /// system allocator on first need. A request larger than a page gets a page of its own. No
    /// memory is taken until the first allocation.
    ///
    /// [`reset`](Arena::reset) keeps the pages, so a steady frame loop stops calling the system
    /// allocator. When the page moves on, it takes the first kept empty page that holds the
    /// request, wherever it is in the chain. A frame that still needed a new page (or used the
    /// pages out of order) has its pages coalesced at the next reset into one page as large as
    /// all of them together, so the arena can serve any frame it already served (with
    /// allocations aligned to at most 16 bytes) without a new page, and stops growing once its
    /// pages cover the busiest frame. A loop of identical frames keeps its first frame's pages
    /// and never calls the system allocator after that frame.
    #[cfg(feature = "alloc")]
    pub fn chained(page_bytes: usize) -> Arena {
        let page_bytes = page_bytes.clamp(page::HEADER + page::PAGE_ALIGN, isize::MAX as usize / 2);
        Arena::from_root(NonNull::dangling(), 0, false, page_bytes)
    }

    /// Limits the bytes a chained arena takes from the system allocator (pages and their
    /// headers) to exactly `limit`: the last page is shrunk to fit. Before it refuses a request,
    /// the arena gives back its kept empty pages (none of which holds the request) to make room;
    /// only a request that would still need more returns [`ArenaError::LimitReached`]. Has no
    /// effect on fixed arenas.
    ///
    /// A `Fail` or `Panic` budget decides before the kept pages go, since a refused request
    /// leaves them: for a request aligned above 16 bytes it counts the most padding the new
    /// page's data start can need (`align - 1`), as the exact padding is known only once the
    /// page exists.
    #[must_use]
    pub fn with_limit(self, limit: usize) -> Arena {
        self.set_limit(Some(limit));
        self
    }

    /// Sets (or with `None` removes) the byte limit of [`with_limit`](Arena::with_limit) on a
    /// live arena, through `&self`: values allocated so far stay valid.
    ///
    /// A limit below what the arena already holds ([`system_bytes`](Arena::system_bytes)) frees
    /// nothing: the pages it holds keep serving allocations, and every request that needs a new
    /// page returns [`ArenaError::LimitReached`] (its kept empty pages are given back first if
    /// that alone makes room, as always). When a later [`reset`](Arena::reset) merges the
    /// pages (see [`chained`](Arena::chained)), the merged page is sized under the limit; pages
    /// a reset keeps as they are stay over it.
    ///
    /// ```
    /// use arena_kit::{Arena, ArenaError};
    ///
    /// let arena = Arena::chained(1024);
    /// let header = arena.alloc([1u8; 64]);
    /// arena.set_limit(Some(512)); // below the 1024 bytes already held
    /// assert!(arena.try_alloc([0u8; 256]).is_ok()); // the held page still has room
    /// assert!(matches!(
    ///     arena.try_alloc([0u8; 2048]), // would need a new page
    ///     Err(ArenaError::LimitReached { limit: 512, .. })
    /// ));
    /// assert_eq!(header[0], 1);
    /// arena.set_limit(None);
    /// assert!(arena.try_alloc([0u8; 2048]).is_ok());
    /// ```
    pub fn set_limit(&self, limit: Option<usize>) {
        self.limit.set(limit.unwrap_or(usize::MAX));
    }

    /// Puts guard bytes ([`crate::poison::GUARD`]) before and after every allocation, checked on
    /// reset, on rewind and by [`check_guards`](Arena::check_guards). Only effective when
    /// [`crate::poison::ENABLED`] (debug builds or the `debug-checks` feature); otherwise the
    /// arena is unchanged.
    #[must_use]
    pub fn with_guards(mut self) -> Arena {
        self.guarded = crate::poison::ENABLED;
        // Runs never open in a guarded arena (each value has its own guard bytes): one opened
        // before must not take guarded values.
        self.close_run();
        self
    }

    /// An arena over memory you own. It never grows and never calls the system allocator; the
    /// arena borrows `buffer` for its whole life. Offsets count from the buffer's first byte, so
    /// align the buffer if you want offset 0 to satisfy large alignments. A buffer that starts
    /// in the top 4 KiB of the address space (only memory mapped there can) has no byte the
    /// arena may hand out, and is taken as an empty one.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use arena_kit::Arena;
    ///
    /// let mut buffer = [MaybeUninit::<u8>::uninit(); 128];
    /// let arena = Arena::from_buffer(&mut buffer);
    /// let x = arena.alloc(7u8);
    /// assert_eq!(arena.offset_of(x), Some(0));
    /// assert_eq!(arena.capacity(), 128);
    /// ```
    pub fn from_buffer(buffer: &mut [MaybeUninit<u8>]) -> BufferArena<'_> {
        let len = buffer.len();
        let (start, len) = cursor::usable_block(NonNull::from(buffer).cast(), len);
        BufferArena {
            arena: Arena::from_root(start, len, false, 0),
            _buffer: PhantomData,
        }
    }

    /// Bytes in use, alignment padding included (a linear allocator's `offset`, for a single block).
    pub fn used(&self) -> usize {
        self.cursor.used()
    }

    /// Bytes that can still be handed out without taking a new page: the rest of the current
    /// page plus every page kept after it.
    pub fn remaining(&self) -> usize {
        let mut left = self.cursor.left_in_page();
        let mut next = self.next_page(self.cursor.page());
        while let Some(p) = next {
            left += page_capacity(p);
            next = page::header(p).next.get();
        }
        left
    }

    /// Bytes the arena's memory can hold in total (root block and all pages, headers excluded).
    pub fn capacity(&self) -> usize {
        let mut cap = self.root_end.as_ptr() as usize - self.root_start.as_ptr() as usize;
        let mut next = self.first_page.get();
        while let Some(p) = next {
            cap += page_capacity(p);
            next = page::header(p).next.get();
        }
        cap
    }

    /// The largest [`used`](Arena::used) ever reached, across resets.
    pub fn high_water(&self) -> usize {
        self.cursor.high_water()
    }

    /// Heap pages held (0 for fixed and buffer arenas).
    pub fn page_count(&self) -> usize {
        self.pages.get()
    }

    /// Live allocations: made since the last reset and not rewound.
    pub fn allocation_count(&self) -> usize {
        self.cursor.allocs()
    }

    /// Bytes taken from the system allocator, page headers included.
    pub fn system_bytes(&self) -> usize {
        self.system_bytes.get()
    }

    /// The byte limit set by [`with_limit`](Arena::with_limit), if any.
    pub fn limit(&self) -> Option<usize> {
        let limit = self.limit.get();
        (limit != usize::MAX).then_some(limit)
    }

    /// The arena's blocks in the order the bump pointer passes through them: the root block
    /// (if it has any capacity: [`with_capacity`](Arena::with_capacity) and
    /// [`from_buffer`](Arena::from_buffer) arenas), then every heap page, each with the bytes
    /// used in it and its capacity. Pages after the current one are kept empty pages (`used`
    /// 0). The `used` figures sum to [`used`](Arena::used), the capacities to
    /// [`capacity`](Arena::capacity).
    ///
    /// This is the safe counterpart of bumpalo's `iter_allocated_chunks`: it reports sizes, not
    /// the bytes themselves (those include alignment padding and values' uninitialised padding,
    /// which safe code must not read).
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::arena::PageUsage;
    ///
    /// let arena = Arena::chained(1024);
    /// arena.alloc([0u8; 600]);
    /// arena.alloc([0u8; 600]); // does not fit the first page's rest: a second page
    /// let pages: Vec<PageUsage> = arena.pages().collect();
    /// assert_eq!(pages.len(), 2);
    /// assert_eq!((pages[0].used, pages[1].used), (600, 600));
    /// assert_eq!(pages.iter().map(|p| p.used).sum::<usize>(), arena.used());
    /// assert_eq!(pages.iter().map(|p| p.capacity).sum::<usize>(), arena.capacity());
    /// ```
    pub fn pages(&self) -> Pages<'_> {
        Pages {
            arena: self,
            index: 0,
            next: None,
            frees: self.page_frees.get(),
        }
    }

    /// All statistics at once.
    pub fn stats(&self) -> ArenaStats {
        ArenaStats {
            used: self.used(),
            remaining: self.remaining(),
            capacity: self.capacity(),
            high_water: self.high_water(),
            pages: self.page_count(),
            allocations: self.allocation_count(),
            system_bytes: self.system_bytes(),
        }
    }

    /// Where `ptr` lies in the arena, counted in bytes from the start of its first block (for a
    /// chained arena, pages count one after another by their capacity). `None` if `ptr` is not
    /// inside the arena's memory.
    pub fn offset_of<T: ?Sized>(&self, ptr: *const T) -> Option<usize> {
        let addr = ptr.cast::<u8>() as usize;
        let (rs, re) = (
            self.root_start.as_ptr() as usize,
            self.root_end.as_ptr() as usize,
        );
        if (rs..re).contains(&addr) {
            return Some(addr - rs);
        }
        let mut base = re - rs;
        let mut next = self.first_page.get();
        while let Some(p) = next {
            let start = page::data_start(p).as_ptr() as usize;
            let end = page::header(p).end.as_ptr() as usize;
            if (start..end).contains(&addr) {
                return Some(base + addr - start);
            }
            base += end - start;
            next = page::header(p).next.get();
        }
        None
    }

    /// Whether the `len` bytes at `ptr` lie inside one block of this arena's memory.
    #[cfg(feature = "alloc")]
    pub(crate) fn contains(&self, ptr: *const u8, len: usize) -> bool {
        let addr = ptr as usize;
        let inside = |start: usize, end: usize| addr >= start && addr <= end && len <= end - addr;
        if inside(
            self.root_start.as_ptr() as usize,
            self.root_end.as_ptr() as usize,
        ) && len > 0
        {
            return true;
        }
        let mut next = self.first_page.get();
        while let Some(p) = next {
            if inside(
                page::data_start(p).as_ptr() as usize,
                page::header(p).end.as_ptr() as usize,
            ) {
                return true;
            }
            next = page::header(p).next.get();
        }
        false
    }

    // --- page cursor helpers ---

    /// The page after `page` (`None` = the root).
    fn next_page(&self, page: Option<NonNull<PageHeader>>) -> Option<NonNull<PageHeader>> {
        match page {
            None => self.first_page.get(),
            Some(p) => page::header(p).next.get(),
        }
    }

    /// The index of `page` (0 for the root block). Inline: every new drop record stores it.
    #[inline]
    fn page_index(page: Option<NonNull<PageHeader>>) -> usize {
        page.map_or(0, |p| page::header(p).index.get())
    }

    fn page_bounds(&self, page: Option<NonNull<PageHeader>>) -> (NonNull<u8>, NonNull<u8>) {
        match page {
            None => (self.root_start, self.root_end),
            Some(p) => (page::data_start(p), page::header(p).end),
        }
    }

    fn page_used_end(&self, page: Option<NonNull<PageHeader>>) -> NonNull<u8> {
        if page == self.cursor.page() {
            return self.cursor.ptr();
        }
        match page {
            None => self.root_used_end.get(),
            Some(p) => page::header(p).used_end.get(),
        }
    }

    /// Makes `page` current with the bump pointer at `ptr`; `used_before` is the bytes used in
    /// the pages before it.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    fn enter_page(&self, page: Option<NonNull<PageHeader>>, ptr: NonNull<u8>, used_before: usize) {
        self.cursor
            .enter_page(page, self.page_bounds(page), ptr, used_before);
    }
}

fn page_capacity(p: NonNull<PageHeader>) -> usize {
    page::header(p).end.as_ptr() as usize - page::data_start(p).as_ptr() as usize
}

impl Drop for Arena {
    fn drop(&mut self) {
        // Run destructors and check guards; a panicking destructor still frees the pages (the
        // guard in `clear_for_drop` finishes the job during unwinding).
        struct FreePages<'a>(&'a Arena);
        impl Drop for FreePages<'_> {
            fn drop(&mut self) {
                self.0.free_memory();
            }
        }
        let free = FreePages(self);
        free.0.drop_all_and_check();
        drop(free);
        #[cfg(feature = "profiler")]
        self.profile_dropped();
    }
}

impl Arena {
    fn free_memory(&self) {
        #[cfg(feature = "alloc")]
        {
            let mut next = self.first_page.take();
            while let Some(p) = next {
                next = page::header(p).next.get();
                // SAFETY: every heap page came from `alloc_page` and the arena is being dropped.
                unsafe { page::free_page(p) };
            }
            if self.root_owned {
                let len = self.root_end.as_ptr() as usize - self.root_start.as_ptr() as usize;
                // SAFETY: `with_capacity` allocated the root with exactly this layout.
                unsafe {
                    let layout =
                        core::alloc::Layout::from_size_align_unchecked(len, page::PAGE_ALIGN);
                    alloc::alloc::dealloc(self.root_start.as_ptr(), layout);
                }
            }
        }
    }
}

impl core::fmt::Debug for Arena {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Arena")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// An [`Arena`] over a borrowed buffer, from [`Arena::from_buffer`]. It dereferences to the
/// arena for allocation; the `&mut self` operations are forwarded here because handing out
/// `&mut Arena` would let the arena be swapped out of the buffer's lifetime.
///
/// # Variance
///
/// Covariant in `'buf`, like the `&'buf mut [MaybeUninit<u8>]` it stands for: an arena over a
/// buffer borrowed for `'long` may be used where one over a shorter borrow is expected. No `&mut
/// Arena` is handed out, so the arena cannot be swapped out of the buffer's lifetime.
pub struct BufferArena<'buf> {
    arena: Arena,
    _buffer: PhantomData<&'buf mut [MaybeUninit<u8>]>,
}

/// Dropping the arena reads the buffer: its drop records, guard records and the values whose
/// destructors it runs all lie there. This impl is what tells the drop check so. Without it,
/// dropping a `BufferArena<'buf>` used nothing of `'buf` as far as the compiler could see
/// (`Arena`, whose drop does the work, has no lifetime, and a `PhantomData` of a reference has
/// no drop glue), so the buffer could be freed before an arena that was not used again, whose
/// drop then walked freed memory. The work itself stays in `Arena`'s drop, which runs next.
impl Drop for BufferArena<'_> {
    #[inline]
    fn drop(&mut self) {}
}

impl core::ops::Deref for BufferArena<'_> {
    type Target = Arena;
    fn deref(&self) -> &Arena {
        &self.arena
    }
}

impl BufferArena<'_> {
    /// See [`Arena::reset`].
    #[track_caller]
    pub fn reset(&mut self) {
        self.arena.reset();
    }

    /// See [`Arena::scope`].
    pub fn scope(&mut self) -> Scope<'_> {
        self.arena.scope()
    }

    /// See [`Arena::rewind`].
    ///
    /// # Errors
    ///
    /// As [`Arena::rewind`].
    #[track_caller]
    pub fn rewind(&mut self, marker: Marker) -> Result<(), MarkerError> {
        self.arena.rewind(marker)
    }
}

impl core::fmt::Debug for BufferArena<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.arena.fmt(f)
    }
}
