//! The arena's profiler hooks (the `profiler` feature, on a [`Tracked`](crate::tags::Tracked)
//! arena): each block's used range is one allocation to the profiler. A block the arena has left
//! is reported when it leaves it (its used range no longer grows); the current block at
//! [`Registry::end_frame`](crate::tags::Registry::end_frame) (as a free and an allocation of its
//! new used range when that changed); a reset, rewind or scope exit discards everything reported
//! and reports again the blocks before the new current one.

use core::ptr::NonNull;

use super::Arena;
use super::page::PageHeader;
use crate::tags::ProfilerLabel;
use crate::tags::profiler;

impl Arena {
    /// Bytes used in block `page` (the root block or a heap page).
    fn used_in(&self, page: Option<NonNull<PageHeader>>) -> (usize, usize) {
        let (start, _) = self.page_bounds(page);
        let used = self.page_used_end(page).addr().get() - start.addr().get();
        (start.addr().get(), used)
    }

    /// The arena left block `left` (now full up to its used end) for a new current block.
    pub(super) fn profile_left(&self, left: Option<NonNull<PageHeader>>) {
        let label = self.profiler.get();
        if label.is_none() {
            return;
        }
        let (start, used) = self.used_in(left);
        let open = self.profiler_open.replace(0);
        if open > 0 {
            profiler::free(label, start, open);
        }
        if used > 0 {
            profiler::alloc_block(label, start, used);
        }
    }

    /// A reset, rewind or scope exit: everything reported is gone; the blocks before the
    /// current one are reported again (the current one at the next frame end or when left).
    pub(super) fn profile_rewound(&self) {
        let label = self.profiler.get();
        if label.is_none() {
            return;
        }
        profiler::discard(label);
        self.report_blocks_before_current();
    }

    /// The blocks before the current one, reported (after a discard).
    fn report_blocks_before_current(&self) {
        let label = self.profiler.get();
        self.profiler_open.set(0);
        if label.is_none() {
            return;
        }
        let mut p = None;
        while p != self.cursor.page() {
            let (start, used) = self.used_in(p);
            if used > 0 {
                profiler::alloc_block(label, start, used);
            }
            p = self.next_page(p);
            if p.is_none() {
                break;
            }
        }
    }

    /// The arena is dropped: everything reported is gone.
    pub(super) fn profile_dropped(&self) {
        profiler::discard(self.profiler.get());
    }

    /// At a frame's end: the current block's used range as it is now.
    pub(crate) fn profile_frame(&self) {
        let label = self.profiler.get();
        if label.is_none() {
            return;
        }
        let (start, used) = self.used_in(self.cursor.page());
        let open = self.profiler_open.get();
        if used == open {
            return;
        }
        self.profiler_open.set(used);
        if open > 0 {
            profiler::free(label, start, open);
        }
        if used > 0 {
            profiler::alloc_block(label, start, used);
        }
    }

    /// Puts the label on (through `&self`: a frame arena labels its buffers so). What the old
    /// label reported is discarded; the blocks before the current one are reported under the
    /// new one (the current one at the next frame end).
    pub(crate) fn put_profiler_label(&self, label: Option<ProfilerLabel>) {
        let old = self.profiler.replace(label);
        if old != label {
            profiler::discard(old);
            self.report_blocks_before_current();
        }
    }
}
