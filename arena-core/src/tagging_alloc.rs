//! The unsafe half of the tagging global allocator ([`TaggingAllocator`], re-exported from
//! [`tags`](crate::tags)): the `GlobalAlloc` impl with its per-allocation header, the fixed table
//! of tag slots, the per-thread counter blocks and the thread-local current slot. The safe half
//! (`tag_scope`, the report rows) is `tags/global.rs`.
//!
//! # Where the counters live
//!
//! * **Slots.** A tag is mapped to one of [`MAX_TAG_SLOTS`] counter slots the first time
//!   `tag_scope` sees it: the slot keeps the tag's `TypeId` and a copy of the tag value, and later
//!   scopes find it by comparing both (`==` of the tag type). Claiming a slot takes a spin lock
//!   held for a scan and a copy; finding one is a lock-free scan. Slot 0 is "Untracked". When the
//!   table is full, or a tag type is bigger than 16 bytes or aligned to more than 8, the scope
//!   charges slot 0 and [`overflowed_scopes`] counts it.
//! * **Blocks.** Each thread takes one of [`MAX_THREADS`] static counter blocks (a pair of
//!   counters, bytes and allocations, per slot) the first time it allocates, and gives it back
//!   when it exits; a later thread reuses it and keeps adding to the same counters, so the sums
//!   stay exact. Only the owning thread writes a block, with a relaxed load and a relaxed store
//!   (a plain add; no lock, no read-modify-write), and a report reads every block. A free adds
//!   `-size` to the *freeing* thread's block in the slot of the *allocating* tag, so a block's
//!   counter can be negative; the sum over blocks is the slot's live bytes. A thread that finds
//!   every block taken, or that allocates while its thread-locals are being destroyed, counts in
//!   one shared block with atomic adds instead.

use core::alloc::{GlobalAlloc, Layout};
use core::any::TypeId;
use core::cell::{Cell, UnsafeCell};
use core::mem::{MaybeUninit, align_of, size_of};
use core::sync::atomic::{AtomicBool, AtomicIsize, AtomicU8, AtomicUsize, Ordering};
use std::alloc::System;

/// Counter slots, "Untracked" (slot 0) included: at most `MAX_TAG_SLOTS - 1` distinct tags.
///
/// ```
/// use arena_kit::tags::MAX_TAG_SLOTS;
///
/// assert_eq!(MAX_TAG_SLOTS, 64); // 63 tags of any types, then "Untracked"
/// ```
pub const MAX_TAG_SLOTS: usize = 64;

/// Threads that count in a block of their own at once; further threads share one block with
/// atomic adds (still exact, a little slower). 8 under Miri, to keep its runs short.
///
/// ```
/// use arena_kit::tags::MAX_THREADS;
///
/// // The counters are static: MAX_THREADS blocks of MAX_TAG_SLOTS pairs of counters.
/// assert!(MAX_THREADS >= 8);
/// ```
pub const MAX_THREADS: usize = if cfg!(miri) { 8 } else { 256 };

/// The smallest header before each allocation, in bytes: it holds the allocating tag's slot. The
/// header is `max(align, HEADER)` bytes, so the user pointer keeps the requested alignment.
///
/// ```
/// use arena_kit::tags::HEADER;
///
/// let header = |align: usize| align.max(HEADER);
/// assert_eq!(header(1), 8); // a `String`'s bytes: 8 more bytes from the wrapped allocator
/// assert_eq!(header(4096), 4096); // a page-aligned block: one more page
/// ```
pub const HEADER: usize = 8;

/// The slot of memory allocated with no tag in scope (and of overflowed scopes).
pub(crate) const UNTRACKED: u8 = 0;

/// The tag values a slot can hold: 16 bytes, aligned to 8.
type TagBytes = [u64; 2];

/// A global allocator that charges every allocation to the innermost [`tag_scope`] of the
/// allocating thread, and its free to the same tag, whichever thread frees it ([`tag_scope`]
/// explains how tags find their counters, the `tags` module docs how the rows feed a report). Everything else
/// (the wrapped allocator `A` does the allocating) is unchanged.
///
/// Each allocation carries a header of `max(align, 8)` bytes before the pointer it returns, which
/// holds the tag's slot: 8 bytes for the usual alignments, `align` bytes for larger ones (the
/// pointer stays aligned as asked). `realloc` keeps the tag the memory was allocated with. Memory
/// allocated with no tag in scope is charged to "Untracked", so the rows of
/// [`global_rows`](crate::tags::global_rows) add up to every byte the program asked for (headers
/// not counted). All `TaggingAllocator`s of a process share one set of counters: install one.
///
/// Only with the `std` feature: without it there are no thread-locals to hold the tag stack and
/// no `System` allocator to wrap; a `no_std` program counts with [`Tracked`](crate::tags::Tracked)
/// allocators, or with [`LockedHeap`](crate::heap::LockedHeap)'s own statistics.
///
/// A program installs it once (this example is compiled, not run: arena-core's
/// `tests/tagging_global_alloc.rs` runs the same checks with it installed):
///
/// ```no_run
/// use std::alloc::System;
/// use arena_kit::tags::{TaggingAllocator, global_rows, tag_scope};
///
/// #[global_allocator]
/// static ALLOC: TaggingAllocator = TaggingAllocator::new(System);
///
/// fn main() {
///     let physics = {
///         let _scope = tag_scope("Physics");
///         vec![0u8; 4096]
///     };
///     let rows = global_rows("Untracked");
///     let physics_row = rows.iter().find(|r| r.tag == "Physics").unwrap();
///     assert_eq!(physics_row.usage.current, 4096);
///     drop(physics);
/// }
/// ```
///
/// [`tag_scope`]: crate::tags::tag_scope
///
/// # Variance
///
/// Covariant in `A`: it holds the allocator it wraps.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaggingAllocator<A = System> {
    inner: A,
}

impl<A> TaggingAllocator<A> {
    /// Wraps `inner`, a `const fn` for a `static`:
    /// `static ALLOC: TaggingAllocator = TaggingAllocator::new(System);`.
    ///
    /// ```
    /// use std::alloc::System;
    /// use arena_kit::tags::TaggingAllocator;
    ///
    /// static ALLOC: TaggingAllocator = TaggingAllocator::new(System);
    /// assert_eq!(std::mem::size_of_val(&ALLOC), 0);
    /// ```
    pub const fn new(inner: A) -> TaggingAllocator<A> {
        TaggingAllocator { inner }
    }

    /// The wrapped allocator.
    pub const fn inner(&self) -> &A {
        &self.inner
    }
}

/// The header's size for `layout`, and the wrapped allocation's layout; `None` when the size
/// with the header would not fit a `Layout`.
#[inline(always)]
fn outer(layout: Layout) -> Option<(usize, Layout)> {
    outer_of(layout.size(), layout.align())
}

/// [`outer`] for `size` bytes aligned to `align`, a power of two.
#[inline(always)]
fn outer_of(size: usize, align: usize) -> Option<(usize, Layout)> {
    // The header and the outer alignment: `max(align, 8)`, a power of two.
    let header = align.max(HEADER);
    // `Layout` needs `size + header`, rounded up to `header`, to be at most `isize::MAX`: it is
    // at most `size + 2 * header - 1`. (An alignment over 2^61 is refused outright.)
    const MAX: usize = isize::MAX as usize + 1;
    if header > MAX / 4 || size > MAX - 2 * header {
        return None;
    }
    // SAFETY: `header` is a power of two (the larger of two), and `size + header` rounded up to
    // it is at most `size + 2 * header - 1 < MAX` (checked above).
    Some((header, unsafe {
        Layout::from_size_align_unchecked(size + header, header)
    }))
}

// SAFETY: every method hands the wrapped allocator a layout at least as large and as aligned as
// the caller's (`outer`), and returns a pointer `header` bytes into that block, which is aligned
// to the caller's alignment (the header is a multiple of it) and has `layout.size()` bytes after
// it. `dealloc` and `realloc` recompute the same `header` and outer layout from the caller's
// layout, which `GlobalAlloc`'s contract says is the one the block was allocated with.
unsafe impl<A: GlobalAlloc> GlobalAlloc for TaggingAllocator<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some((header, outer)) = outer(layout) else {
            return core::ptr::null_mut();
        };
        // SAFETY: `outer` has a non-zero size (it includes the header); `stamp` gets the block
        // the wrapped allocator returned for it.
        unsafe { stamp(self.inner.alloc(outer), header, layout.size()) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let Some((header, outer)) = outer(layout) else {
            return core::ptr::null_mut();
        };
        // SAFETY: as in `alloc`.
        unsafe { stamp(self.inner.alloc_zeroed(outer), header, layout.size()) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller passes the layout of an allocation of ours, so `outer` succeeded
        // for it when it was allocated.
        let (header, outer) = unsafe { outer(layout).unwrap_unchecked() };
        // SAFETY: `ptr` is `header` bytes into the wrapped allocator's block, whose header's last
        // byte holds the allocating tag's slot.
        let (base, slot) = unsafe { (ptr.sub(header), ptr.sub(1).read()) };
        charge(slot, -(layout.size() as isize), -1);
        // SAFETY: `base` and `outer` are what the wrapped allocator returned and was given.
        unsafe { self.inner.dealloc(base, outer) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`.
        let (header, old_outer) = unsafe { outer(layout).unwrap_unchecked() };
        let Some((_, new_outer)) = outer_of(new_size, layout.align()) else {
            return core::ptr::null_mut();
        };
        let new_outer = new_outer.size();
        // SAFETY: as in `dealloc`; the slot is read before the block may move.
        let (base, slot) = unsafe { (ptr.sub(header), ptr.sub(1).read()) };
        // SAFETY: `base`/`old_outer` describe the wrapped block, `new_outer` is non-zero and
        // (checked above) a valid size for its alignment. The header moves with the contents, so
        // the new block keeps the slot.
        let new_base = unsafe { self.inner.realloc(base, old_outer, new_outer) };
        if new_base.is_null() {
            return new_base;
        }
        charge(slot, new_size as isize - layout.size() as isize, 0);
        // SAFETY: the new block has `header + new_size` bytes.
        unsafe { new_base.add(header) }
    }
}

/// Writes the current slot into the header of a new block (null: refused, nothing counted),
/// charges `size` bytes to it and returns the user pointer.
///
/// # Safety
///
/// `base` is null or a block of at least `header + size` bytes, `header` >= 1.
#[inline(always)]
unsafe fn stamp(base: *mut u8, header: usize, size: usize) -> *mut u8 {
    if base.is_null() {
        return base;
    }
    let slot = current_slot();
    // SAFETY: the block has `header + size` bytes (the caller's contract); the slot byte is the
    // last header byte, inside the block.
    let user = unsafe {
        let user = base.add(header);
        user.sub(1).write(slot);
        user
    };
    charge(slot, size as isize, 1);
    user
}

// ---------------------------------------------------------------------------------------------
// Per-thread state: the current slot and the thread's block. `const` thread-locals of `Cell`s
// have no destructor and no lazy initialisation, so reading them never allocates and works while
// the thread's other thread-locals are being destroyed.

std::thread_local! {
    static CURRENT: Cell<u8> = const { Cell::new(UNTRACKED) };
    /// The thread's block; `None` before it takes one, and once it gave it back (`EXITING`).
    static BLOCK: Cell<Option<&'static Block>> = const { Cell::new(None) };
    /// Set while the block is taken and once it was given back: count in the shared block.
    static EXITING: Cell<bool> = const { Cell::new(false) };
    /// Gives the block back when the thread exits. Touched once, after the block is taken.
    static RELEASE: Release = const { Release };
}

/// The current thread's innermost tag slot ([`UNTRACKED`] when thread-locals are gone).
#[inline(always)]
fn current_slot() -> u8 {
    CURRENT.try_with(Cell::get).unwrap_or(UNTRACKED)
}

/// Set by the first allocation of any thread through a [`TaggingAllocator`] (before `main` when
/// one is the global allocator): [`PageTag::of`](crate::tags::PageTag::of) claims a slot only
/// then.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Whether a [`TaggingAllocator`] has allocated.
pub(crate) fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Makes `slot` the current thread's innermost slot, returning the previous one.
pub(crate) fn swap_current(slot: u8) -> u8 {
    CURRENT.try_with(|c| c.replace(slot)).unwrap_or(UNTRACKED)
}

/// The slot memory taken outside the global allocator (the committed pages of a reserved range)
/// is charged to, as an allocation made now would be: the current thread's innermost slot (a
/// [`PageCharge`](crate::tags::PageCharge) makes that the allocator's own tag). `None` while no
/// [`TaggingAllocator`] is installed: charge nothing then.
pub(crate) fn external_slot() -> Option<u8> {
    installed().then(current_slot)
}

/// Adds `bytes` and `count` (allocations) to `slot` (from [`external_slot`]), from any thread;
/// negative to take them back.
pub(crate) fn charge_external(slot: u8, bytes: isize, count: isize) {
    charge(slot, bytes, count);
}

/// Adds `bytes` and `count` to `slot` in the current thread's block.
#[inline(always)]
fn charge(slot: u8, bytes: isize, count: isize) {
    let slot = usize::from(slot) % MAX_TAG_SLOTS;
    if let Ok(Some(block)) = BLOCK.try_with(Cell::get) {
        // Only this thread writes this block: a relaxed load and store is an exact add.
        let c = &block.counters[slot];
        c.bytes
            .store(c.bytes.load(Ordering::Relaxed) + bytes, Ordering::Relaxed);
        c.count
            .store(c.count.load(Ordering::Relaxed) + count, Ordering::Relaxed);
    } else {
        charge_slow(slot, bytes, count);
    }
}

#[cold]
#[inline(never)]
fn charge_slow(slot: usize, bytes: isize, count: isize) {
    INSTALLED.store(true, Ordering::Relaxed);
    // Mark first: an allocation made while the block is taken counts in the shared block.
    if let Ok(false) = EXITING.try_with(|e| e.replace(true))
        && let Some(taken) = take_block()
    {
        let _ = BLOCK.try_with(|b| b.set(Some(taken)));
        let _ = EXITING.try_with(|e| e.set(false));
        // Registers the thread-exit hook; the registration may allocate, which now counts in
        // the new block.
        let _ = RELEASE.try_with(|_| ());
        charge(slot as u8, bytes, count);
        return;
    }
    let c = &SHARED_BLOCK.counters[slot];
    c.bytes.fetch_add(bytes, Ordering::Relaxed);
    c.count.fetch_add(count, Ordering::Relaxed);
}

/// Claims a free block, if any.
fn take_block() -> Option<&'static Block> {
    BLOCKS.iter().find(|b| {
        !b.taken.load(Ordering::Relaxed)
            && b.taken
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    })
}

struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        let _ = EXITING.try_with(|e| e.set(true));
        if let Ok(Some(block)) = BLOCK.try_with(|b| b.replace(None)) {
            // Release: the next thread to take the block sees this thread's last counts.
            block.taken.store(false, Ordering::Release);
        }
    }
}

struct Counter {
    bytes: AtomicIsize,
    count: AtomicIsize,
}

struct Block {
    taken: AtomicBool,
    counters: [Counter; MAX_TAG_SLOTS],
}

impl Block {
    const fn new() -> Block {
        Block {
            taken: AtomicBool::new(false),
            counters: [const {
                Counter {
                    bytes: AtomicIsize::new(0),
                    count: AtomicIsize::new(0),
                }
            }; MAX_TAG_SLOTS],
        }
    }
}

static BLOCKS: [Block; MAX_THREADS] = [const { Block::new() }; MAX_THREADS];
static SHARED_BLOCK: Block = Block::new();

/// Live bytes and allocations of `slot`, summed over every block (never on the allocation path).
pub(crate) fn slot_totals(slot: usize) -> (usize, usize) {
    let (mut bytes, mut count) = (0isize, 0isize);
    for block in BLOCKS.iter().chain(core::iter::once(&SHARED_BLOCK)) {
        let c = &block.counters[slot];
        bytes = bytes.wrapping_add(c.bytes.load(Ordering::Relaxed));
        count = count.wrapping_add(c.count.load(Ordering::Relaxed));
    }
    // Reads race with other threads' adds; a frees' block read before the allocation's can make
    // a sum briefly negative.
    (bytes.max(0) as usize, count.max(0) as usize)
}

/// Raises `slot`'s sampled peak to `current` and returns it.
pub(crate) fn sample_peak(slot: usize, current: usize) -> usize {
    PEAKS[slot]
        .fetch_max(current, Ordering::Relaxed)
        .max(current)
}

static PEAKS: [AtomicUsize; MAX_TAG_SLOTS] = [const { AtomicUsize::new(0) }; MAX_TAG_SLOTS];

// ---------------------------------------------------------------------------------------------
// The slot table.

const FREE: u8 = 0;
const READY: u8 = 2;

struct Slot {
    state: AtomicU8,
    /// Written once, before `state` becomes `READY` (Release); read after seeing `READY`
    /// (Acquire).
    type_id: UnsafeCell<MaybeUninit<TypeId>>,
    value: UnsafeCell<MaybeUninit<TagBytes>>,
}

// SAFETY: the cells are written once by the thread holding `CLAIM`, before the slot is published
// with a Release store of `READY`, and only read after an Acquire load sees `READY`.
unsafe impl Sync for Slot {}

static SLOTS: [Slot; MAX_TAG_SLOTS] = [const {
    Slot {
        state: AtomicU8::new(FREE),
        type_id: UnsafeCell::new(MaybeUninit::uninit()),
        value: UnsafeCell::new(MaybeUninit::uninit()),
    }
}; MAX_TAG_SLOTS];

/// Held while a slot is being claimed.
static CLAIM: AtomicBool = AtomicBool::new(false);
static OVERFLOWED: AtomicUsize = AtomicUsize::new(0);

/// Whether a `G` fits a slot's copy.
const fn fits<G>() -> bool {
    size_of::<G>() <= size_of::<TagBytes>() && align_of::<G>() <= align_of::<TagBytes>()
}

/// The tag in `slot` if it is `READY` and holds a `G`. (A copy of a tag made on one thread is
/// read on any other: hence `Send + Sync`.)
pub(crate) fn slot_tag<G: Copy + Send + Sync + 'static>(slot: usize) -> Option<G> {
    if !fits::<G>() || slot == usize::from(UNTRACKED) {
        return None;
    }
    let s = SLOTS.get(slot)?;
    if s.state.load(Ordering::Acquire) != READY {
        return None;
    }
    // SAFETY: `s` was just seen `READY` (Acquire) and `G` fits.
    unsafe { ready_tag(s) }
}

/// The tag in `s` if it holds a `G`.
///
/// # Safety
///
/// `s.state` was loaded as `READY` with `Acquire` ordering on this thread, and `G` fits
/// [`TagBytes`] (`fits::<G>()`).
unsafe fn ready_tag<G: Copy + Send + Sync + 'static>(s: &Slot) -> Option<G> {
    // SAFETY: `READY` was stored (Release) after both cells were written, the caller's Acquire
    // load saw it, and they are never written again; when the type ids match, the copy is a `G`
    // (it fits, the caller's contract).
    unsafe {
        if (*s.type_id.get()).assume_init() != TypeId::of::<G>() {
            return None;
        }
        Some((*s.value.get()).as_ptr().cast::<G>().read())
    }
}

/// The slot of `tag`, claimed if it has none ([`UNTRACKED`], counted, if none is free).
///
/// Slots are claimed in index order and never freed, so the `READY` ones are a prefix of the
/// table. The tag's `==` is user code, which may open scopes itself: it runs outside the claim
/// lock, on the slots that were ready when it looked. Under the lock a slot is claimed only if
/// no other was claimed since; otherwise the new ones are compared, again outside the lock
/// (at most once per slot, so this ends).
pub(crate) fn slot_of<G: Copy + PartialEq + Send + Sync + 'static>(tag: G) -> u8 {
    if !fits::<G>() {
        OVERFLOWED.fetch_add(1, Ordering::Relaxed);
        return UNTRACKED;
    }
    // Slots below `compared` were looked at; they are `READY`.
    let mut compared = 1;
    loop {
        // One pass over the ready prefix, comparing as it goes (the tag's `==` runs outside
        // the lock).
        while let Some(s) = SLOTS.get(compared)
            && s.state.load(Ordering::Acquire) == READY
        {
            // SAFETY: `s` was just seen `READY` (Acquire) and `G` fits (checked above).
            if unsafe { ready_tag::<G>(s) } == Some(tag) {
                return compared as u8;
            }
            compared += 1;
        }
        if compared == MAX_TAG_SLOTS {
            OVERFLOWED.fetch_add(1, Ordering::Relaxed);
            return UNTRACKED;
        }
        let claim = Claim::lock();
        let s = &SLOTS[compared];
        if s.state.load(Ordering::Acquire) == READY {
            // Claimed by another thread (or by this one's `==`) meanwhile: compare it.
            drop(claim);
            continue;
        }
        let mut bytes = MaybeUninit::<TagBytes>::uninit();
        // SAFETY: only the `CLAIM` holder writes a `FREE` slot, and no reader looks at it before
        // it is `READY`. `G` fits `TagBytes` (checked above).
        unsafe {
            bytes.as_mut_ptr().cast::<G>().write(tag);
            s.value.get().write(bytes);
            s.type_id.get().write(MaybeUninit::new(TypeId::of::<G>()));
        }
        s.state.store(READY, Ordering::Release);
        drop(claim);
        return compared as u8;
    }
}

/// Holds [`CLAIM`] until dropped (also when a tag's `==` panics).
struct Claim;

impl Claim {
    fn lock() -> Claim {
        while CLAIM
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        Claim
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        CLAIM.store(false, Ordering::Release);
    }
}

/// How many [`tag_scope`] calls charged "Untracked" because their tag found no slot (the table of
/// [`MAX_TAG_SLOTS`] was full, or the tag type is bigger than 16 bytes or aligned to more than 8).
///
/// ```
/// use arena_kit::tags::{overflowed_scopes, tag_scope};
///
/// let before = overflowed_scopes();
/// let _scope = tag_scope("Audio"); // a `&'static str` tag fits a slot
/// assert_eq!(overflowed_scopes(), before);
/// ```
///
/// [`tag_scope`]: crate::tags::tag_scope
pub fn overflowed_scopes() -> usize {
    OVERFLOWED.load(Ordering::Relaxed)
}
