//! The arena's profiler hooks (the `profiler` feature, on a [`Tracked`](crate::tags::Tracked)
//! arena): each block's used range is one allocation to the profiler. A block the arena has left
//! is reported when it leaves it (its used range no longer grows); the current block at
//! [`Registry::end_frame`](crate::tags::Registry::end_frame) (as a free and an allocation of its
//! new used range when that changed); a reset, rewind or scope exit discards everything reported
//! and reports again the blocks before the new current one.
//!
//! A sink may use the arena it hears about (allocate from it while one of its blocks is being
//! reported, even enough to make it leave that block). The events of one report are sent
//! together: a hook reached while a report is being sent sends nothing and marks the report
//! stale, and the report, once sent, discards and reports the blocks again as they are then, so
//! the profiler's story stays one a profiler can replay (every free ends a block it was told
//! about, no block is reported twice).

use core::cell::Cell;
use core::ptr::NonNull;

use super::Arena;
use super::page::PageHeader;
use crate::tags::ProfilerLabel;
use crate::tags::profiler;

/// Passes over the blocks after a report a sink made stale, before the arena stops trying (a
/// sink that makes the arena leave a block on every event); the next hook finishes the job.
const RESYNC_PASSES: usize = 4;

/// Clears the busy flag when the report is done, also when a sink panics through it.
struct Busy<'a>(&'a Cell<bool>);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

impl Arena {
    /// Bytes used in block `page` (the root block or a heap page).
    fn used_in(&self, page: Option<NonNull<PageHeader>>) -> (usize, usize) {
        let (start, _) = self.page_bounds(page);
        let used = self.page_used_end(page).addr().get() - start.addr().get();
        (start.addr().get(), used)
    }

    /// Sends one report: `report(label)` when the arena has a label and no report of it is being
    /// sent (else it marks that report stale and returns). A report left stale, by a sink that
    /// re-entered the arena now or by an earlier report that gave up, is replaced by a discard
    /// and the blocks before the current one, reported as they are now. After an earlier give-up
    /// the resync comes first, then `report` runs too when `after_resync` (a frame end's report of
    /// the current block is still owed; a left block is one of those the resync reported).
    fn reporting(&self, after_resync: bool, report: impl FnOnce(Option<ProfilerLabel>)) {
        let label = self.profiler.get();
        if label.is_none() {
            return;
        }
        if self.profiler_busy.replace(true) {
            self.profiler_stale.set(true);
            return;
        }
        let _busy = Busy(&self.profiler_busy);
        if self.profiler_stale.get() {
            // The state an earlier report left is not the arena's: start from the blocks.
            self.resync(label);
            if after_resync && !self.profiler_stale.get() {
                report(label);
            }
        } else {
            report(label);
        }
        self.resync(label);
    }

    /// While a sink made the report stale, discards and reports the blocks before the current
    /// one again, at most [`RESYNC_PASSES`] times.
    fn resync(&self, label: Option<ProfilerLabel>) {
        for _ in 0..RESYNC_PASSES {
            if !self.profiler_stale.replace(false) {
                break;
            }
            self.tell_discard(label);
            self.report_blocks_before_current(label);
        }
    }

    fn tell_free(&self, label: Option<ProfilerLabel>, start: usize, size: usize) {
        profiler::free(label, start, size);
    }

    fn tell_alloc(&self, label: Option<ProfilerLabel>, start: usize, size: usize) {
        profiler::alloc_block(label, start, size);
    }

    fn tell_discard(&self, label: Option<ProfilerLabel>) {
        profiler::discard(label);
    }

    /// The arena left block `left` (now full up to its used end) for a new current block.
    pub(super) fn profile_left(&self, left: Option<NonNull<PageHeader>>) {
        self.reporting(false, |label| {
            let (start, used) = self.used_in(left);
            let open = self.profiler_open.replace(0);
            if open > 0 {
                self.tell_free(label, start, open);
            }
            if used > 0 {
                self.tell_alloc(label, start, used);
            }
        });
    }

    /// A reset, rewind or scope exit: everything reported is gone; the blocks before the
    /// current one are reported again (the current one at the next frame end or when left).
    pub(super) fn profile_rewound(&self) {
        self.reporting(false, |label| {
            self.tell_discard(label);
            self.report_blocks_before_current(label);
        });
    }

    /// The blocks before the current one, reported under `label` (after a discard).
    fn report_blocks_before_current(&self, label: Option<ProfilerLabel>) {
        self.profiler_open.set(0);
        if label.is_none() {
            return;
        }
        // The current block as it is now: a sink that hears of a block may make the arena move
        // on again (then the report is stale and the next pass, if any, reports the rest).
        let current = self.cursor.page();
        let mut p = None;
        while p != current {
            let (start, used) = self.used_in(p);
            if used > 0 {
                self.tell_alloc(label, start, used);
            }
            p = self.next_page(p);
            if p.is_none() {
                break;
            }
        }
    }

    /// The arena is dropped: everything reported is gone, and so is its label.
    pub(super) fn profile_dropped(&self) {
        self.put_profiler_label(None);
    }

    /// At a frame's end: the current block's used range as it is now.
    pub(crate) fn profile_frame(&self) {
        self.reporting(true, |label| {
            let (start, used) = self.used_in(self.cursor.page());
            let open = self.profiler_open.get();
            if used == open {
                return;
            }
            self.profiler_open.set(used);
            if open > 0 {
                self.tell_free(label, start, open);
            }
            if used > 0 {
                self.tell_alloc(label, start, used);
            }
        });
    }

    /// Puts the label on (through `&self`: a frame arena labels its buffers so), the one path
    /// of every label change, the drop's included. What the old label reported is discarded and
    /// the old label ends (`PoolEnd`); the blocks before the current one are reported under the
    /// new one (the current one at the next frame end). The new label is in place before the
    /// discard is sent, so a sink that allocates from the arena meanwhile hears of it under the
    /// new label: nothing comes under the old one after its `PoolEnd`.
    pub(crate) fn put_profiler_label(&self, label: Option<ProfilerLabel>) {
        let old = self.profiler.replace(label);
        if old != label {
            self.tell_discard(old);
            profiler::pool_end(old);
            self.profiler_stale.set(false);
            self.reporting(false, |label| self.report_blocks_before_current(label));
        }
    }
}
