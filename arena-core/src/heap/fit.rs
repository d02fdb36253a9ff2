//! Where a request goes: the segregated free lists with their two-level bitmaps, and the [`Fit`]
//! policies that search them.
//!
//! Free blocks sit in one of `FL_COUNT x 16` doubly linked lists, by size class (TLSF's two-level
//! mapping): sizes below 256 bytes get one class per 16-byte step; above that, each power of two is
//! cut into 16 equal classes. A bit per list (second level) and a bit per power of two (first level)
//! say which lists are non-empty, so finding a non-empty list at or above a class is two
//! `trailing_zeros`.

use super::block::{GRANULE, MIN_BLOCK, NIL, Region, TAG};

const SL_BITS: u32 = 4;
const SL_COUNT: usize = 1 << SL_BITS;
/// Sizes below this get one class per granule.
const LINEAR: usize = GRANULE << SL_BITS;
const LINEAR_BITS: u32 = LINEAR.trailing_zeros();
/// First-level classes: one for the linear range, one per power of two above it.
pub(crate) const FL_COUNT: usize = (usize::BITS - LINEAR_BITS + 1) as usize;

/// How [`FreeListHeap::alloc`](super::FreeListHeap::alloc) picks a free block.
///
/// All three share the same free lists, splitting and coalescing; only the search differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Fit {
    /// The lowest-addressed free block that fits, as a textbook first fit finds it by walking
    /// memory. Searches every free block that is large enough: O(free blocks).
    First,
    /// The smallest free block that fits. Searches the lists of the smallest size class that has
    /// a fit: usually short, O(free blocks) at worst.
    Best,
    /// Segregated good fit (TLSF): the request is rounded up to its size class and the head of
    /// the first non-empty list at or above that class is taken. O(1) through the bitmaps; a
    /// block is at most 1/16 larger than needed. When no list qualifies, the request's own class
    /// is searched before giving up, so a fit is never missed.
    #[default]
    Segregated,
}

/// The list a free block of `size` bytes belongs in.
#[inline]
pub(crate) fn class_of(size: usize) -> (usize, usize) {
    if size < LINEAR {
        (0, size / GRANULE)
    } else {
        let msb = usize::BITS - 1 - size.leading_zeros();
        let fl = (msb - LINEAR_BITS + 1) as usize;
        let sl = (size >> (msb - SL_BITS)) & (SL_COUNT - 1);
        (fl, sl)
    }
}

/// The first class whose every block holds `size` bytes (a multiple of [`GRANULE`]); a first
/// level of [`FL_COUNT`] past the largest class, which no list has.
#[inline]
fn class_at_least(size: usize) -> (usize, usize) {
    if size < LINEAR {
        return (0, size / GRANULE);
    }
    // `size` rounded up to its class's step, in steps: 16..=32. One bit scan serves both
    // levels (32 steps is the first class of the next power of two), and it cannot overflow.
    let msb = usize::BITS - 1 - size.leading_zeros();
    let shift = msb - SL_BITS;
    let steps = ((size - 1) >> shift) + 1;
    let fl = (msb - LINEAR_BITS + 1) as usize + (steps >> (SL_BITS + 1));
    (fl, steps & (SL_COUNT - 1))
}

/// Where a block can serve a request: the block, its size, and the payload offset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placement {
    pub block: usize,
    pub size: usize,
    pub payload: usize,
}

/// Places a `need`-byte block aligned to `align` inside the free block `b` of `size` bytes, if it
/// fits. A gap before the payload is either zero or a whole free block (at least [`MIN_BLOCK`]).
#[inline]
pub(crate) fn place(
    region: &Region,
    b: usize,
    size: usize,
    need: usize,
    align: usize,
) -> Option<Placement> {
    let first = b + TAG;
    let mut payload = first;
    if align > GRANULE {
        let addr = region.addr_of(first);
        payload += addr.wrapping_neg() & (align - 1);
        if payload != first && payload - first < MIN_BLOCK {
            payload += align;
        }
    }
    let used = (payload - first).checked_add(need)?;
    (used <= size).then_some(Placement {
        block: b,
        size,
        payload,
    })
}

/// The segregated free lists and their bitmaps.
pub(crate) struct FreeLists {
    fl_bitmap: usize,
    sl_bitmap: [u16; FL_COUNT],
    heads: [[usize; SL_COUNT]; FL_COUNT],
    /// Number of free blocks.
    pub count: usize,
}

impl FreeLists {
    pub(crate) const fn new() -> Self {
        FreeLists {
            fl_bitmap: 0,
            sl_bitmap: [0; FL_COUNT],
            heads: [[NIL; SL_COUNT]; FL_COUNT],
            count: 0,
        }
    }

    /// Pushes the free block `b` of `size` bytes (already tagged free) onto its list.
    #[inline]
    pub(crate) fn insert(&mut self, region: &mut Region, b: usize, size: usize) {
        region.check_links(b);
        // SAFETY: `check_links` proved `b + 24 <= len`.
        unsafe { self.insert_unchecked(region, b, size) }
    }

    /// [`insert`](Self::insert) without the bounds check of `b`'s links (the old head's back
    /// link, read from the heads, stays checked).
    ///
    /// # Safety
    ///
    /// `b + 24 <= region`'s length.
    #[inline(always)]
    pub(crate) unsafe fn insert_unchecked(&mut self, region: &mut Region, b: usize, size: usize) {
        // SAFETY: forwarded to the caller.
        unsafe { self.put_unchecked(region, b, size) };
        self.count += 1;
    }

    /// [`insert_unchecked`](Self::insert_unchecked) without counting the block: for a block
    /// that takes the place of one taken off uncounted (an allocation's split tail).
    ///
    /// # Safety
    ///
    /// `b + 24 <= region`'s length.
    #[inline(always)]
    pub(crate) unsafe fn put_unchecked(&mut self, region: &mut Region, b: usize, size: usize) {
        let (fl, sl) = class_of(size);
        let head = self.heads[fl][sl];
        // SAFETY: forwarded to the caller.
        unsafe { region.set_links_unchecked(b, head, NIL) };
        if head != NIL {
            region.set_prev_free(head, b);
        } else {
            // A non-empty list is marked in both levels already: the bits are cleared only
            // where a list's head becomes `NIL` (`unlink_head`).
            self.sl_bitmap[fl] |= 1 << sl;
            self.fl_bitmap |= 1 << fl;
        }
        debug_assert!(self.marked(fl, sl));
        self.heads[fl][sl] = b;
    }

    /// Unlinks the free block `b` of `size` bytes from its list.
    #[inline(always)]
    pub(crate) fn remove(&mut self, region: &mut Region, b: usize, size: usize) {
        region.check_links(b);
        // SAFETY: `check_links` proved `b + 24 <= len`.
        unsafe { self.remove_unchecked(region, b, size) }
    }

    /// [`remove`](Self::remove) without the bounds check of `b`'s own links. The neighbours the
    /// links name were read from memory, so the writes to them stay checked.
    ///
    /// # Safety
    ///
    /// `b + 24 <= region`'s length.
    #[inline(always)]
    pub(crate) unsafe fn remove_unchecked(&mut self, region: &mut Region, b: usize, size: usize) {
        // SAFETY: forwarded to the caller.
        unsafe { self.take_unchecked(region, b, size) };
        self.count -= 1;
    }

    /// [`remove_unchecked`](Self::remove_unchecked) without counting the block out: for an
    /// allocation, which counts once for the block and its split tail (see `carve`).
    ///
    /// # Safety
    ///
    /// `b + 24 <= region`'s length.
    #[inline(always)]
    pub(crate) unsafe fn take_unchecked(&mut self, region: &mut Region, b: usize, size: usize) {
        // SAFETY: forwarded to the caller.
        let (next, prev) = unsafe { region.links_unchecked(b) };
        if next != NIL {
            region.set_prev_free(next, prev);
        }
        if prev != NIL {
            region.set_next_free(prev, next);
        } else {
            // Only a list head needs its class: the list head and bitmaps are updated.
            let (fl, sl) = class_of(size);
            self.unlink_head(fl, sl, next);
        }
    }

    /// Takes the head `b` of list `(fl, sl)` off it: the class is known, and a head has no
    /// predecessor, so only its successor link is read. Uncounted, like
    /// [`take_unchecked`](Self::take_unchecked): the allocation counts (see `carve`).
    ///
    /// # Safety
    ///
    /// `b + 16 <= region`'s length.
    #[inline(always)]
    pub(crate) unsafe fn take_head_unchecked(
        &mut self,
        region: &mut Region,
        fl: usize,
        sl: usize,
        b: usize,
    ) {
        debug_assert_eq!(self.heads[fl][sl], b);
        // SAFETY: forwarded to the caller.
        let next = unsafe { region.next_free_unchecked(b) };
        if next != NIL {
            region.set_prev_free(next, NIL);
        }
        self.unlink_head(fl, sl, next);
    }

    /// List `(fl, sl)`'s head is now `next`; the bitmaps lose the list when that is `NIL`.
    #[inline(always)]
    fn unlink_head(&mut self, fl: usize, sl: usize, next: usize) {
        self.heads[fl][sl] = next;
        if next == NIL {
            self.sl_bitmap[fl] &= !(1 << sl);
            if self.sl_bitmap[fl] == 0 {
                self.fl_bitmap &= !(1 << fl);
            }
        }
    }

    /// The segregated fit's list for a `need`-byte block with alignment up to 16: the first
    /// non-empty list whose every block holds `need` bytes.
    #[inline(always)]
    pub(crate) fn good_fit_class(&self, need: usize) -> Option<(usize, usize)> {
        let (fl, sl) = class_at_least(need);
        self.non_empty_from(fl, sl)
    }

    /// The first non-empty list at or after class `(fl, sl)`.
    #[inline]
    fn non_empty_from(&self, fl: usize, sl: usize) -> Option<(usize, usize)> {
        if fl >= FL_COUNT {
            return None;
        }
        let here = u32::from(self.sl_bitmap[fl]) & (u32::MAX << sl);
        if here != 0 {
            return Some((fl, here.trailing_zeros() as usize));
        }
        let above = self.fl_bitmap & usize::MAX.checked_shl(fl as u32 + 1).unwrap_or(0);
        if above == 0 {
            return None;
        }
        let fl = above.trailing_zeros() as usize;
        Some((fl, self.sl_bitmap[fl].trailing_zeros() as usize))
    }

    /// The class after `(fl, sl)`.
    fn after(fl: usize, sl: usize) -> (usize, usize) {
        if sl + 1 < SL_COUNT {
            (fl, sl + 1)
        } else {
            (fl + 1, 0)
        }
    }

    /// The head of list `(fl, sl)`.
    pub(crate) fn head(&self, fl: usize, sl: usize) -> usize {
        self.heads[fl][sl]
    }

    /// Whether list `(fl, sl)` is marked non-empty in both bitmap levels.
    pub(crate) fn marked(&self, fl: usize, sl: usize) -> bool {
        self.sl_bitmap[fl] & (1 << sl) != 0 && self.fl_bitmap & (1 << fl) != 0
    }

    /// Whether the first-level bitmap agrees with the second level for class `fl`.
    pub(crate) fn fl_consistent(&self, fl: usize) -> bool {
        (self.fl_bitmap & (1 << fl) != 0) == (self.sl_bitmap[fl] != 0)
    }

    /// The largest free block, found from the highest non-empty list.
    pub(crate) fn largest(&self, region: &Region) -> usize {
        if self.fl_bitmap == 0 {
            return 0;
        }
        let fl = (usize::BITS - 1 - self.fl_bitmap.leading_zeros()) as usize;
        let sl = (15 - self.sl_bitmap[fl].leading_zeros()) as usize;
        let mut best = 0;
        let mut b = self.heads[fl][sl];
        while b != NIL {
            best = best.max(region.header(b).size);
            b = region.next_free(b);
        }
        best
    }

    /// Finds a free block for a `need`-byte block aligned to `align`, by `fit`.
    #[inline]
    pub(crate) fn find(
        &self,
        region: &Region,
        fit: Fit,
        need: usize,
        align: usize,
    ) -> Option<Placement> {
        match fit {
            Fit::Segregated => self.good_fit(region, need, align),
            Fit::Best => self.scan(region, need, align, true),
            Fit::First => self.scan(region, need, align, false),
        }
    }

    #[inline]
    fn good_fit(&self, region: &Region, need: usize, align: usize) -> Option<Placement> {
        let search = if align > GRANULE {
            need.checked_add(align + MIN_BLOCK)?
        } else {
            need
        };
        let (fl, sl) = class_at_least(search);
        if let Some((fl, sl)) = self.non_empty_from(fl, sl) {
            let b = self.heads[fl][sl];
            let placed = place(region, b, region.header(b).size, need, align);
            debug_assert!(
                placed.is_some(),
                "a block of a rounded-up class always fits"
            );
            if placed.is_some() {
                return placed;
            }
        }
        // Near exhaustion: the blocks in the request's own class (and, for large alignments, the
        // classes up to the rounded one) may still hold it.
        self.scan(region, need, align, false)
    }

    /// Walks every list that may hold a fit. `best`: stop after the first list with a fit and take
    /// its smallest block; otherwise take the lowest address among all fits.
    fn scan(&self, region: &Region, need: usize, align: usize, best: bool) -> Option<Placement> {
        let (mut fl, mut sl) = class_of(need);
        let mut found: Option<Placement> = None;
        while let Some((f, s)) = self.non_empty_from(fl, sl) {
            let mut b = self.heads[f][s];
            while b != NIL {
                let size = region.header(b).size;
                if let Some(p) = place(region, b, size, need, align) {
                    let better = match found {
                        None => true,
                        Some(q) if best => p.size < q.size,
                        Some(q) => p.block < q.block,
                    };
                    if better {
                        found = Some(p);
                    }
                }
                b = region.next_free(b);
            }
            if best && found.is_some() {
                break;
            }
            (fl, sl) = Self::after(f, s);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_monotonic_and_cover_their_sizes() {
        let mut last = (0, 0);
        // Every granule up to 1 MiB; Miri strides by 37 granules (1,771 sizes).
        let step = if cfg!(miri) { GRANULE * 37 } else { GRANULE };
        for size in (MIN_BLOCK..1 << 20).step_by(step) {
            let c = class_of(size);
            assert!(c >= last, "class of {size} went backwards");
            last = c;
            let up = class_at_least(size);
            assert!(up >= c);
        }
        assert_eq!(class_of(256), (1, 0));
        assert_eq!(class_of(511), (1, 15));
        assert_eq!(class_of(usize::MAX & !15).0, FL_COUNT - 1);
    }

    /// `class_at_least` as it was written first: round up, then classify the rounded size
    /// (`FL_COUNT` when rounding overflows).
    fn class_at_least_by_rounding(size: usize) -> (usize, usize) {
        if size < LINEAR {
            return (0, size / GRANULE);
        }
        let msb = usize::BITS - 1 - size.leading_zeros();
        match size.checked_add((1 << (msb - SL_BITS)) - 1) {
            Some(rounded) => class_of(rounded),
            None => (FL_COUNT, 0),
        }
    }

    #[test]
    fn rounded_class_from_one_bit_scan_matches_rounding_the_size() {
        let small = (0..1 << 14).step_by(GRANULE);
        // Around every class boundary of every power of two: the boundary and a granule either
        // side, up to the largest granule-multiple size.
        let bounds = (LINEAR_BITS..usize::BITS).flat_map(|p| {
            (0..SL_COUNT).flat_map(move |k| {
                let at = (1usize << p) + k * ((1usize << p) >> SL_BITS);
                [at - GRANULE, at, at.saturating_add(GRANULE)]
            })
        });
        for size in small.chain(bounds).chain([usize::MAX & !(GRANULE - 1)]) {
            let (fl, sl) = class_at_least(size);
            assert_eq!((fl, sl), class_at_least_by_rounding(size), "size {size}");
            assert!(fl <= FL_COUNT && sl < SL_COUNT);
        }
    }
}
