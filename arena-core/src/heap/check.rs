//! `check()`: walks every block and verifies tags, links, bitmaps and counters.

use super::block::{GRANULE, MIN_BLOCK, NIL, OVERHEAD, TAG, block_size_for};
use super::fit::{FL_COUNT, class_of};
use super::{Corruption, FreeListHeap, bitmap_bytes};

impl FreeListHeap<'_> {
    /// Verifies every block's tags, the free lists' links and classes, both bitmap levels, the
    /// live-start bitmap, and the counters. O(blocks); meant for tests and debugging.
    ///
    /// # Errors
    ///
    /// The first inconsistency found.
    pub fn check(&self) -> Result<(), Corruption> {
        let corrupt = |offset: usize, problem| {
            Err(Corruption {
                offset: offset - self.first,
                problem,
            })
        };
        let (mut b, mut prev_free, mut used, mut live, mut requested, mut free_blocks) =
            (self.first, false, 0, 0, 0, 0);
        while b < self.end {
            let h = self.region.header(b);
            if h.size < MIN_BLOCK || !h.size.is_multiple_of(GRANULE) || h.size > self.end - b {
                return corrupt(b, "block header holds an impossible size");
            }
            let bit = self.region.bit(self.bitmap, (b - self.first) / GRANULE);
            match (h.used, self.region.footer(b, h.size)) {
                (true, Err(req)) => {
                    if req == 0
                        || req > h.size - OVERHEAD
                        || h.size >= block_size_for(req).unwrap_or(0) + MIN_BLOCK
                    {
                        return corrupt(b, "live block's footer does not match its size");
                    }
                    if !bit {
                        return corrupt(b, "live block missing from the live-start bitmap");
                    }
                    used += h.size;
                    requested += req;
                    live += 1;
                    prev_free = false;
                }
                (false, Ok(size)) if size == h.size => {
                    if prev_free {
                        return corrupt(b, "two adjacent free blocks were not coalesced");
                    }
                    if bit {
                        return corrupt(b, "free block marked live in the live-start bitmap");
                    }
                    free_blocks += 1;
                    prev_free = true;
                }
                _ => return corrupt(b, "header and footer disagree"),
            }
            b += h.size;
        }
        if used != self.used || live != self.live || requested != self.requested {
            return corrupt(self.first, "usage counters disagree with the blocks");
        }
        if free_blocks != self.lists.count {
            return corrupt(self.first, "free-block count disagrees with the blocks");
        }
        let marked: u32 = (0..bitmap_bytes(self.capacity()) / TAG)
            .map(|w| self.region.word(self.bitmap + w * TAG).count_ones())
            .sum();
        if marked as usize != live {
            return corrupt(
                self.first,
                "live-start bitmap marks a block that is not live",
            );
        }
        self.check_lists()
    }

    fn check_lists(&self) -> Result<(), Corruption> {
        let corrupt = |offset: usize, problem| {
            Err(Corruption {
                offset: offset.saturating_sub(self.first),
                problem,
            })
        };
        let mut seen = 0;
        for fl in 0..FL_COUNT {
            if !self.lists.fl_consistent(fl) {
                return corrupt(
                    self.first,
                    "first-level bitmap disagrees with the second level",
                );
            }
            for sl in 0..16 {
                let head = self.lists.head(fl, sl);
                if (head != NIL) != self.lists.marked(fl, sl) {
                    return corrupt(self.first, "list bitmap disagrees with the list");
                }
                let (mut b, mut prev) = (head, NIL);
                while b != NIL {
                    seen += 1;
                    if seen > self.lists.count || b < self.first || b >= self.end {
                        return corrupt(b, "free list link leads outside the free blocks");
                    }
                    let h = self.region.header(b);
                    if h.used || class_of(h.size) != (fl, sl) {
                        return corrupt(b, "block on the wrong free list");
                    }
                    if self.region.prev_free(b) != prev {
                        return corrupt(b, "free list back link is broken");
                    }
                    prev = b;
                    b = self.region.next_free(b);
                }
            }
        }
        if seen != self.lists.count {
            return corrupt(self.first, "a free block is on no list");
        }
        Ok(())
    }
}
