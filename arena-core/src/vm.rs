//! [`Reservation`]: one range of address space reserved up front and committed from its start as
//! a container grows, so the container never moves and one base pointer reaches all of it. A
//! growable [`Pool`](crate::pool::Pool) keeps its slots in one (`pool/chunks.rs`): its lookups
//! are then a fixed pool's, one compare and one offset, however far it grew.
//!
//! - **Reserving** takes no memory: the range is mapped `PROT_NONE` with `MAP_NORESERVE`, so it
//!   has no pages and no commit charge, only address space.
//! - **Committing** makes a prefix readable and writable (`mprotect`); its pages read as zero.
//!   It commits ahead by an eighth of what is committed, so a container growing by small steps
//!   makes few system calls (70 to reach 72 MB by chunks of 2,304 bytes) and commits at most an
//!   eighth more than it uses, plus a page. A caller that is about to write the pages (a pool
//!   growing for an insert, not one reserving capacity) asks for them to be made resident at
//!   once: on Linux 5.14 and later one `madvise(MADV_POPULATE_WRITE)` faults them all in,
//!   cheaper than a fault per page (100 x making a growable pool, filling it with 10,000
//!   values of 64 bytes and dropping it: 20.1 -> 15.4 ms); older kernels refuse the advice and
//!   the pages fault in when first written. The pages committed ahead are then resident before
//!   they are written (at most an eighth of the container, plus a page).
//! - **Charging**: with a [`TaggingAllocator`](crate::tags::TaggingAllocator) installed,
//!   committed pages count as an allocation of the tag current when they were committed (a
//!   [`PageCharge`](crate::tags::PageCharge) makes that the container's own tag), and are taken
//!   back from it when decommitted or unmapped, as blocks from the global allocator would be.
//! - **Decommitting** gives a tail's pages back to the system (`madvise(MADV_DONTNEED)`, then
//!   `mprotect` back to `PROT_NONE`). Neither call unmaps anything, so a failure leaves no hole
//!   another mapping could take; the pages then just stay committed. Pages committed again may
//!   read as zero (Linux) or as they were (callers only decommit bytes they can take either way).
//!
//! Only on 64-bit Unix with `std`, and never under Miri (which has no `mmap`): elsewhere
//! [`Reservation::new`] returns `None` and the caller takes blocks from the global allocator as
//! before. The same happens when reserving fails, under a finite address-space limit
//! (`RLIMIT_AS`, `ulimit -v`: reserved ranges count against it as if they were memory), and
//! past [`MAX_RESERVATIONS`] live ranges or [`MAX_RESERVED_BYTES`] reserved in all: each range
//! is up to two memory maps (Linux allows 65,530 per process by default, and `malloc` shares
//! them), and some 64-bit systems have only 512 GiB of address space (39-bit, as on many ARM
//! kernels), so the bounds keep a program with thousands of pools from exhausting either.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The most reservations live at once in a process; further requests get `None`.
pub(crate) const MAX_RESERVATIONS: usize = 1024;

/// The most bytes reserved at once in a process, over all live ranges: 64 GiB, an eighth of the
/// smallest 64-bit address space in common use (39 bits).
pub(crate) const MAX_RESERVED_BYTES: usize = 64 << 30;

/// Reservations live now.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Bytes reserved by the live reservations.
static RESERVED: AtomicUsize = AtomicUsize::new(0);

/// A reserved range of `len` bytes (whole pages) whose first `committed` bytes (whole pages) are
/// readable and writable. Unmapped when dropped.
pub(crate) struct Reservation {
    base: NonNull<u8>,
    len: usize,
    committed: usize,
    /// The tags the committed bytes are charged to.
    charges: Charges,
}

/// A tag slot of the tagging allocator, or [`NOT_CHARGED`].
type TagSlot = u8;

/// Bytes committed while no tagging allocator was installed: charged to no tag.
const NOT_CHARGED: TagSlot = u8::MAX;

/// The tags a range's committed bytes are charged to, from its start: runs of (tag, bytes), the
/// first inline, so a range whose pages all go to one tag allocates nothing for this (and
/// nothing whose later reallocation the tagging allocator would charge to the tag current when
/// the range was made). Each run counts as one allocation of its tag.
struct Charges {
    first: (TagSlot, usize),
    more: alloc::vec::Vec<(TagSlot, usize)>,
}

impl Charges {
    const fn new() -> Self {
        Charges {
            first: (NOT_CHARGED, 0),
            more: alloc::vec::Vec::new(),
        }
    }

    fn last(&mut self) -> &mut (TagSlot, usize) {
        self.more.last_mut().unwrap_or(&mut self.first)
    }

    /// Makes room to [`charge`](Self::charge) `tag`; `false` if out of memory.
    fn make_room(&mut self, tag: TagSlot) -> bool {
        let last = *self.last();
        last.1 == 0 || last.0 == tag || self.more.try_reserve(1).is_ok()
    }

    /// Charges `bytes` more, committed after every byte charged so far, to `tag` (after
    /// [`make_room`](Self::make_room)).
    fn charge(&mut self, tag: TagSlot, bytes: usize) {
        let last = self.last();
        let new_run = last.1 == 0 || last.0 != tag;
        if last.1 == 0 || last.0 == tag {
            *last = (tag, last.1 + bytes);
        } else {
            self.more.push((tag, bytes));
        }
        charge_tag(tag, bytes as isize, isize::from(new_run));
    }

    /// Takes back the charges of the last `bytes` charged.
    fn uncharge(&mut self, mut bytes: usize) {
        while bytes != 0 {
            let last = self.last();
            let take = bytes.min(last.1);
            if take == 0 {
                return;
            }
            last.1 -= take;
            bytes -= take;
            let (tag, emptied) = (last.0, last.1 == 0);
            if emptied {
                self.more.pop();
            }
            charge_tag(tag, -(take as isize), -isize::from(emptied));
        }
    }
}

/// The tag slot memory committed now is charged to: the current thread's innermost one, or
/// [`NOT_CHARGED`] without a tagging allocator.
fn current_tag() -> TagSlot {
    #[cfg(feature = "std")]
    if let Some(slot) = crate::tagging_alloc::external_slot() {
        return slot;
    }
    NOT_CHARGED
}

/// Adds `bytes` and `count` to `tag`'s counters (nothing for [`NOT_CHARGED`]).
fn charge_tag(tag: TagSlot, bytes: isize, count: isize) {
    #[cfg(feature = "std")]
    if tag != NOT_CHARGED {
        crate::tagging_alloc::charge_external(tag, bytes, count);
    }
    let _ = (tag, bytes, count);
}

// SAFETY: a `Reservation` is the sole owner of its range (nothing else maps or unmaps it), like a
// `Box<[u8]>`; the OS calls it makes are thread-safe.
unsafe impl Send for Reservation {}
// SAFETY: `&Reservation` only reads the base, length and committed size.
unsafe impl Sync for Reservation {}

impl Reservation {
    /// Reserves at least `len` bytes (rounded up to whole pages), none committed; `None` if
    /// this platform has no reservations, `len` is 0 or too large, the process has a finite
    /// address-space limit, [`MAX_RESERVATIONS`] are live or [`MAX_RESERVED_BYTES`] would be
    /// passed, or the system refused.
    pub(crate) fn new(len: usize) -> Option<Reservation> {
        let len = round_to_pages(len).filter(|&l| l != 0 && l <= MAX_RESERVED_BYTES)?;
        if !os::address_space_unlimited() {
            return None;
        }
        let live = LIVE.fetch_add(1, Ordering::Relaxed);
        let reserved = RESERVED.fetch_add(len, Ordering::Relaxed);
        let base = if live < MAX_RESERVATIONS && reserved + len <= MAX_RESERVED_BYTES {
            os::reserve(len)
        } else {
            None
        };
        let Some(base) = base else {
            LIVE.fetch_sub(1, Ordering::Relaxed);
            RESERVED.fetch_sub(len, Ordering::Relaxed);
            return None;
        };
        Some(Reservation {
            base,
            len,
            committed: 0,
            charges: Charges::new(),
        })
    }

    /// The start of the range (page-aligned).
    #[inline]
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    /// The bytes committed from the start (whole pages).
    #[cfg(test)]
    pub(crate) fn committed(&self) -> usize {
        self.committed
    }

    /// The bytes [`commit`](Self::commit)`(bytes)` leaves committed: `bytes` rounded up to whole
    /// pages (`None` past the range).
    pub(crate) fn pages_for(&self, bytes: usize) -> Option<usize> {
        round_to_pages(bytes).filter(|&b| b <= self.len)
    }

    /// Makes at least the first `bytes` readable and writable (pages not committed before read
    /// as zero), committing ahead (see the module docs) and charging what it adds to the current
    /// tag. With `populate`, the pages it commits are also made resident now, where the system
    /// can (for a caller about to write them, see the module docs). `false`, with nothing
    /// changed, if `bytes` is past the range, out of memory, or the system refused.
    pub(crate) fn commit(&mut self, bytes: usize, populate: bool) -> bool {
        let Some(needed) = self.pages_for(bytes) else {
            return false;
        };
        if needed <= self.committed {
            return true;
        }
        let tag = current_tag();
        if !self.charges.make_room(tag) {
            return false;
        }
        let ahead = self
            .pages_for(self.committed + self.committed / 8)
            .unwrap_or(self.len);
        for end in [ahead.max(needed), needed] {
            // SAFETY: `committed < end <= len`: the offset is within the reserved range.
            let at = unsafe { self.base.as_ptr().add(self.committed) };
            // SAFETY: `committed..end` lies within the reserved range (`end <= len`), both ends
            // page aligned; the range is ours and nothing else maps it.
            if unsafe { os::commit(at, end - self.committed, populate) } {
                self.charges.charge(tag, end - self.committed);
                self.committed = end;
                return true;
            }
        }
        false
    }

    /// Gives back every committed page past the first `bytes` (rounded up to whole pages). When
    /// committed again they read as zero or as they were, depending on the system; if the system
    /// refuses, they stay committed (and charged) as they are.
    ///
    /// # Safety
    /// No reference into the bytes past `bytes` (rounded up) is used afterwards.
    pub(crate) unsafe fn decommit(&mut self, bytes: usize) {
        let keep = self.pages_for(bytes).unwrap_or(self.len);
        if keep >= self.committed {
            return;
        }
        // SAFETY: `keep..committed` lies within the range, both ends page aligned; the caller
        // guarantees nothing uses those bytes again.
        if unsafe { os::decommit(self.base.as_ptr().add(keep), self.committed - keep) } {
            self.charges.uncharge(self.committed - keep);
            self.committed = keep;
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: `base..base + len` is the range `os::reserve` returned, unmapped once, here;
        // its owner dropped every reference into it before dropping the reservation.
        unsafe { os::release(self.base.as_ptr(), self.len) };
        self.charges.uncharge(self.committed);
        RESERVED.fetch_sub(self.len, Ordering::Relaxed);
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `bytes` rounded up to whole pages, or `None` on overflow (and on platforms without
/// reservations, where no page size applies).
fn round_to_pages(bytes: usize) -> Option<usize> {
    let page = os::page_size()?;
    Some(bytes.checked_add(page - 1)? & !(page - 1))
}

#[cfg(all(unix, target_pointer_width = "64", feature = "std", not(miri)))]
mod os {
    use core::ptr::{self, NonNull};
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// The page size, read from the system once.
    pub(super) fn page_size() -> Option<usize> {
        static PAGE: AtomicUsize = AtomicUsize::new(0);
        let mut page = PAGE.load(Ordering::Relaxed);
        if page == 0 {
            // SAFETY: `sysconf` has no preconditions.
            let read = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            page = usize::try_from(read).ok().filter(|p| p.is_power_of_two())?;
            PAGE.store(page, Ordering::Relaxed);
        }
        Some(page)
    }

    /// A fresh `PROT_NONE` mapping of `len` bytes (a multiple of the page size), or `None`.
    pub(super) fn reserve(len: usize) -> Option<NonNull<u8>> {
        // SAFETY: a new private anonymous mapping at an address of the system's choosing touches
        // no existing memory.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANON | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        NonNull::new(p.cast())
    }

    /// Makes `len` bytes at `at` readable and writable.
    ///
    /// # Safety
    /// `at..at + len` is page aligned and within a range from [`reserve`].
    pub(super) unsafe fn commit(at: *mut u8, len: usize, populate: bool) -> bool {
        // SAFETY: the caller guarantees the range is part of one of our mappings.
        if unsafe { libc::mprotect(at.cast(), len, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
            return false;
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if populate {
            /// `<linux/mman.h>`: fault the pages in, writable, now (Linux 5.14). Spelled out
            /// rather than taken from `libc`, whose older 0.2 releases lack it.
            const MADV_POPULATE_WRITE: libc::c_int = 23;
            // SAFETY: the range was just made readable and writable and is ours (see above);
            // the advice only faults its pages in, their contents stay as they were. A refusal
            // (an older kernel, or no memory now) leaves them to fault in when first written.
            let _ = unsafe { libc::madvise(at.cast(), len, MADV_POPULATE_WRITE) };
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = populate;
        true
    }

    /// Gives the pages of `len` bytes at `at` back to the system and makes them inaccessible
    /// again; `false` if they stay committed. Nothing is unmapped, so a failure leaves the range
    /// whole.
    ///
    /// # Safety
    /// `at..at + len` is page aligned, within a range from [`reserve`], and unreferenced.
    pub(super) unsafe fn decommit(at: *mut u8, len: usize) -> bool {
        // SAFETY: the caller guarantees the pages are ours and unreferenced; `MADV_DONTNEED`
        // drops their contents (private anonymous memory reads as zero afterwards on Linux),
        // and `PROT_NONE` makes them inaccessible, within the same mapping.
        unsafe {
            let _ = libc::madvise(at.cast(), len, libc::MADV_DONTNEED);
            libc::mprotect(at.cast(), len, libc::PROT_NONE) == 0
        }
    }

    /// Whether the process may map address space without limit (`RLIMIT_AS` is infinite), read
    /// once: under a limit, a reserved range counts against it as if it were memory.
    pub(super) fn address_space_unlimited() -> bool {
        static UNLIMITED: AtomicUsize = AtomicUsize::new(0); // 0 unknown, 1 yes, 2 no
        match UNLIMITED.load(Ordering::Relaxed) {
            1 => return true,
            2 => return false,
            _ => {}
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes the limit into the struct it is given.
        let read = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
        let unlimited = read && limit.rlim_cur == libc::RLIM_INFINITY;
        UNLIMITED.store(if unlimited { 1 } else { 2 }, Ordering::Relaxed);
        unlimited
    }

    /// Unmaps a range from [`reserve`].
    ///
    /// # Safety
    /// `at..at + len` is a whole range from [`reserve`], unreferenced and not used again.
    pub(super) unsafe fn release(at: *mut u8, len: usize) {
        // SAFETY: the caller guarantees the range is ours and unreferenced. A failure would leak
        // the address space only; there is nothing to undo.
        let _ = unsafe { libc::munmap(at.cast(), len) };
    }
}

/// No reservations here: [`Reservation::new`] always returns `None` (`page_size` has no page),
/// so no range exists for the other functions to act on.
#[cfg(not(all(unix, target_pointer_width = "64", feature = "std", not(miri))))]
mod os {
    use core::ptr::NonNull;

    pub(super) fn page_size() -> Option<usize> {
        None
    }

    pub(super) fn reserve(_len: usize) -> Option<NonNull<u8>> {
        None
    }

    /// # Safety
    /// Never called: no reservation exists on this platform.
    pub(super) unsafe fn commit(_at: *mut u8, _len: usize, _populate: bool) -> bool {
        false
    }

    /// # Safety
    /// Never called: no reservation exists on this platform.
    pub(super) unsafe fn decommit(_at: *mut u8, _len: usize) -> bool {
        false
    }

    pub(super) fn address_space_unlimited() -> bool {
        false
    }

    /// # Safety
    /// Never called: no reservation exists on this platform.
    pub(super) unsafe fn release(_at: *mut u8, _len: usize) {}
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use alloc::vec::Vec;
    use std::sync::{PoisonError, RwLock, RwLockReadGuard};

    /// Taken by [`live_ranges_are_bounded`], which holds every range the process may have, so
    /// that no test counting on getting a range runs meanwhile (they hold [`ranges_to_spare`]).
    static RANGES: RwLock<()> = RwLock::new(());

    /// Keeps [`live_ranges_are_bounded`] from taking every range while it is held: for the
    /// tests that check a range was taken.
    pub(crate) fn ranges_to_spare() -> RwLockReadGuard<'static, ()> {
        RANGES.read().unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn commits_from_the_start_and_gives_pages_back() {
        let _ranges = ranges_to_spare();
        let Some(page) = os::page_size() else {
            assert!(
                Reservation::new(1 << 20).is_none(),
                "no reservations on this platform"
            );
            return;
        };
        let len = 256 * page;
        let mut r = Reservation::new(len).expect("a reservation of 256 pages");
        assert_eq!(r.committed(), 0);
        assert_eq!(r.pages_for(len), Some(len));
        assert_eq!(r.pages_for(len + 1), None);
        assert!(r.commit(1, false));
        assert_eq!(r.committed(), page);
        let p = r.base().as_ptr();
        // SAFETY: the first page is committed.
        unsafe {
            assert_eq!(*p.add(page - 1), 0);
            *p.add(page - 1) = 7;
        }
        assert!(r.commit(3 * page, true));
        assert!(!r.commit(len + 1, false), "past the range");
        assert_eq!(r.committed(), 3 * page);
        // Ahead by an eighth: 64 pages committed, a request for one more byte commits 72.
        assert!(r.commit(64 * page, false));
        assert!(r.commit(64 * page + 1, true));
        assert_eq!(r.committed(), 72 * page);
        // SAFETY: nothing references the pages past the first.
        unsafe { r.decommit(page) };
        assert_eq!(r.committed(), page);
        assert!(r.commit(2 * page, false));
        // SAFETY: both pages are committed; the second was given back, and on Linux it reads as
        // zero (elsewhere it may read as it was).
        unsafe {
            assert_eq!(*p.add(page - 1), 7);
            if cfg!(target_os = "linux") {
                assert_eq!(*p.add(page), 0);
            }
        }
        assert!(Reservation::new(0).is_none());
        assert!(Reservation::new(usize::MAX).is_none());
    }

    /// Under a finite address-space limit (`ulimit -v`), where every reserved byte would count
    /// as memory, nothing is reserved. Checked in a child process (the limit is read once per
    /// process): this test runs itself again under `ulimit -v`.
    #[test]
    #[cfg(all(unix, not(miri)))]
    fn a_finite_address_space_limit_takes_no_ranges() {
        const CHILD: &str = "ARENA_KIT_VM_LIMITED_CHILD";
        if std::env::var_os(CHILD).is_some() {
            assert!(!os::address_space_unlimited());
            assert!(Reservation::new(1 << 20).is_none());
            return;
        }
        let exe = std::env::current_exe().expect("the test binary");
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 8000000 && exec \"$0\" --exact vm::tests::a_finite_address_space_limit_takes_no_ranges --test-threads=1 --quiet")
            .arg(exe)
            .env(CHILD, "1")
            .status()
            .expect("sh runs");
        assert!(status.success(), "the child under `ulimit -v`: {status}");
    }

    /// Past `MAX_RESERVATIONS` live ranges, reserving refuses (callers fall back to the global
    /// allocator); a dropped range makes room again.
    #[test]
    fn live_ranges_are_bounded() {
        let _all = RANGES.write().unwrap_or_else(PoisonError::into_inner);
        let Some(page) = os::page_size() else {
            assert!(Reservation::new(1).is_none());
            return;
        };
        let mut held = Vec::new();
        while let Some(r) = Reservation::new(page) {
            held.push(r);
            assert!(held.len() <= MAX_RESERVATIONS);
        }
        // Other tests may hold some at the same time.
        assert!(!held.is_empty());
        held.pop();
        // Another test's attempt counts itself live for a moment before it gives up (the table
        // is full): a refusal then is that race, so the room is looked for a few times.
        assert!((0..100).any(|_| {
            let again = Reservation::new(page).is_some()
                || LIVE.load(Ordering::Relaxed) >= MAX_RESERVATIONS;
            if !again {
                std::thread::yield_now();
            }
            again
        }));
    }
}
