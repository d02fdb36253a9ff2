//! Boundary tags and the one place that touches raw heap memory.
//!
//! A block is `[header | payload | footer]`, each tag one 8-byte word:
//!
//! - header: the block's total size (a multiple of [`GRANULE`], tags included) with bit 0 set when
//!   the block is in use;
//! - footer of a free block: its size again (bit 0 clear), so the block after it can find its start
//!   in O(1) and coalesce backwards;
//! - footer of a live block: the length the caller asked for, shifted left one bit, with bit 0 set.
//!   Bit 0 of any footer therefore tells the block after it whether its neighbour is free, and the
//!   requested length lets [`check`](super::FreeListHeap::check) spot a tail that was overwritten and
//!   lets the layout line print the sizes the caller asked for.
//!
//! A free block keeps its free-list links in the first two payload words. Every read and write
//! goes through [`Region`]. Its checked methods check bounds; its `_unchecked` forms are for the
//! offsets the heap has validated once (a freed pointer against the live-start bitmap, a size
//! read from a tag against the end of block space), each call with a `SAFETY` argument.

use core::ptr::NonNull;

/// Bytes in one tag word.
pub(crate) const TAG: usize = 8;
/// Block sizes and payload addresses are multiples of this.
pub(crate) const GRANULE: usize = 16;
/// The smallest block: header, two links, footer.
pub(crate) const MIN_BLOCK: usize = 32;
/// Header plus footer.
pub(crate) const OVERHEAD: usize = 2 * TAG;
/// "No block" in a free-list link or list head.
pub(crate) const NIL: usize = usize::MAX;

const USED: u64 = 1;

/// The block size that holds `requested` payload bytes: tags added, rounded up to the granule,
/// at least [`MIN_BLOCK`]. `None` if that overflows. (`#[inline]`: on every `alloc`, and not
/// generic, so callers in other crates could not inline it otherwise.)
#[inline]
pub(crate) fn block_size_for(requested: usize) -> Option<usize> {
    let raw = requested.checked_add(OVERHEAD + GRANULE - 1)? & !(GRANULE - 1);
    Some(raw.max(MIN_BLOCK))
}

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// Total block size, tags included.
    pub size: usize,
    /// Whether the block is handed out.
    pub used: bool,
}

/// The heap's memory: a base pointer and a length, with bounds-checked word, fill and copy access.
pub(crate) struct Region {
    base: NonNull<u8>,
    len: usize,
    /// `len - (TAG - 1)`, saturating: a whole word fits at `off` exactly when `off < word_lim`,
    /// so the word accessors' bounds check is one compare.
    word_lim: usize,
    /// `word_lim - TAG`, saturating: two adjacent words fit at `off` exactly when
    /// `off < pair_lim`. Also the successor link's bound: the word at `b + 8` fits exactly
    /// when `b < pair_lim`.
    pair_lim: usize,
    /// `word_lim - 2 * TAG`, saturating: the predecessor link, the word at `b + 16`, fits
    /// exactly when `b < prev_lim`. Testing the block's offset, not the link's, spares the
    /// link accessors an add before the compare (and cannot overflow).
    prev_lim: usize,
}

impl Region {
    /// Wraps `len` bytes at `base`.
    ///
    /// # Safety
    ///
    /// - `base` is valid for reads and writes of `len` bytes for as long as the `Region` lives;
    /// - nothing else reads or writes those bytes meanwhile, except through pointers this region
    ///   hands out with [`Region::ptr`] (the caller's payloads, which the heap never touches while
    ///   they are live).
    pub(crate) unsafe fn new(base: NonNull<u8>, len: usize) -> Self {
        Region {
            base,
            len,
            word_lim: len.saturating_sub(TAG - 1),
            pair_lim: len.saturating_sub(2 * TAG - 1),
            prev_lim: len.saturating_sub(3 * TAG - 1),
        }
    }

    /// Moves the region to `base` (same length).
    ///
    /// # Safety
    ///
    /// As for [`Region::new`], for `base` and this region's length.
    #[inline]
    pub(crate) unsafe fn rebase(&mut self, base: NonNull<u8>) {
        self.base = base;
    }

    /// The base pointer (for deallocating an owned buffer).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    /// The address of byte `off`, for alignment arithmetic.
    #[inline]
    pub(crate) fn addr_of(&self, off: usize) -> usize {
        self.base.as_ptr().addr().wrapping_add(off)
    }

    /// The offset of `ptr` in this region, if it points inside it.
    #[inline]
    pub(crate) fn offset_of(&self, ptr: NonNull<u8>) -> Option<usize> {
        let off = ptr.as_ptr().addr().checked_sub(self.base.as_ptr().addr())?;
        (off < self.len).then_some(off)
    }

    #[inline(always)]
    fn check(&self, off: usize, bytes: usize) {
        if bytes > self.len || off > self.len - bytes {
            self.out_of_bounds(off, bytes);
        }
    }

    /// The bounds check of a word access: one compare.
    #[inline(always)]
    fn check_word(&self, off: usize) {
        if off >= self.word_lim {
            self.out_of_bounds(off, TAG);
        }
    }

    /// The word at `off`.
    #[inline]
    pub(crate) fn word(&self, off: usize) -> u64 {
        self.check_word(off);
        // SAFETY: `check_word` proved `off + 8 <= len`.
        unsafe { self.word_unchecked(off) }
    }

    /// Writes the word at `off`.
    #[inline]
    pub(crate) fn set_word(&mut self, off: usize, value: u64) {
        self.check_word(off);
        // SAFETY: `check_word` proved `off + 8 <= len`.
        unsafe { self.set_word_unchecked(off, value) }
    }

    /// A pointer to byte `off`, carrying the region's provenance.
    #[inline]
    pub(crate) fn ptr(&self, off: usize) -> NonNull<u8> {
        self.check(off, 0);
        // SAFETY: `off <= len`, so the result stays inside (or one past) the region's allocation.
        unsafe { self.base.add(off) }
    }

    /// [`ptr`](Self::ptr) without the bounds check.
    ///
    /// # Safety
    ///
    /// `off <= len`.
    #[inline(always)]
    pub(crate) unsafe fn ptr_unchecked(&self, off: usize) -> NonNull<u8> {
        debug_assert!(
            off <= self.len,
            "unchecked pointer at {off} past {}",
            self.len
        );
        // SAFETY: `off <= len` by the caller's contract, so the result stays inside (or one
        // past) the region's allocation.
        unsafe { self.base.add(off) }
    }

    /// Fills `len` bytes at `off` with `byte`.
    pub(crate) fn fill(&mut self, off: usize, len: usize, byte: u8) {
        self.check(off, len);
        // SAFETY: bounds checked above; the region is valid for writes.
        unsafe { self.base.as_ptr().add(off).write_bytes(byte, len) }
    }

    /// Copies `len` bytes from `src` to `dst` (the ranges may overlap).
    pub(crate) fn copy_within(&mut self, src: usize, dst: usize, len: usize) {
        self.check(src, len);
        self.check(dst, len);
        // SAFETY: both ranges are inside the region (checked above); `copy` allows overlap.
        unsafe {
            core::ptr::copy(
                self.base.as_ptr().add(src),
                self.base.as_ptr().add(dst),
                len,
            )
        }
    }

    // ----- boundary tags -------------------------------------------------------------------

    /// The header of the block at `b`.
    #[inline]
    pub(crate) fn header(&self, b: usize) -> Header {
        let w = self.word(b);
        Header {
            size: (w & !(GRANULE as u64 - 1)) as usize,
            used: w & USED != 0,
        }
    }

    /// Tags the block at `b` as free with `size` bytes: header and footer both hold the size.
    #[inline]
    pub(crate) fn write_free(&mut self, b: usize, size: usize) {
        self.set_word(b, size as u64);
        self.set_word(b + size - TAG, size as u64);
    }

    /// Tags the block at `b` as live with `size` bytes, `requested` of them asked for.
    #[inline]
    pub(crate) fn write_used(&mut self, b: usize, size: usize, requested: usize) {
        self.set_word(b, size as u64 | USED);
        self.set_word(b + size - TAG, ((requested as u64) << 1) | USED);
    }

    /// The footer of the block at `b` of `size` bytes: `Ok(size)` if free, `Err(requested)` if live.
    #[inline(always)]
    pub(crate) fn footer(&self, b: usize, size: usize) -> Result<usize, usize> {
        let w = self.word(b + size - TAG);
        if w & USED == 0 {
            Ok(w as usize)
        } else {
            Err((w >> 1) as usize)
        }
    }

    /// Panics unless both free-list links of the block at `b` lie inside the region
    /// (`b + 24 <= len`): the check the free lists' link accessors need, for callers that go on with the
    /// unchecked forms.
    #[inline(always)]
    pub(crate) fn check_links(&self, b: usize) {
        self.check_two_words(b.wrapping_add(TAG));
    }

    /// The bounds check of a two-word access at `off`: `off + 16 <= len`, so both `off` and
    /// `off + 8` are whole words inside the region. One compare.
    #[inline(always)]
    fn check_two_words(&self, off: usize) {
        if off >= self.pair_lim {
            self.out_of_bounds(off, 2 * TAG);
        }
    }

    /// The bounds check of the link word at `b + at` of the block at `b`, given as the block's
    /// bound `lim` (`pair_lim` for the successor, `prev_lim` for the predecessor): one
    /// compare of `b` itself.
    #[inline(always)]
    fn check_link(&self, b: usize, lim: usize, at: usize) {
        if b >= lim {
            self.out_of_bounds(b.wrapping_add(at), TAG);
        }
    }

    /// The free-list successor of the free block at `b`.
    #[inline]
    pub(crate) fn next_free(&self, b: usize) -> usize {
        self.check_link(b, self.pair_lim, TAG);
        // SAFETY: `b < pair_lim` proved `b + 16 <= len`.
        unsafe { self.word_unchecked(b + TAG) as usize }
    }

    /// The free-list predecessor of the free block at `b`.
    #[inline]
    pub(crate) fn prev_free(&self, b: usize) -> usize {
        self.check_link(b, self.prev_lim, 2 * TAG);
        // SAFETY: `b < prev_lim` proved `b + 24 <= len`.
        unsafe { self.word_unchecked(b + 2 * TAG) as usize }
    }

    /// Sets the successor link of the free block at `b`.
    #[inline]
    pub(crate) fn set_next_free(&mut self, b: usize, next: usize) {
        self.check_link(b, self.pair_lim, TAG);
        // SAFETY: `b < pair_lim` proved `b + 16 <= len`.
        unsafe { self.set_word_unchecked(b + TAG, next as u64) }
    }

    /// Sets the predecessor link of the free block at `b`.
    #[inline]
    pub(crate) fn set_prev_free(&mut self, b: usize, prev: usize) {
        self.check_link(b, self.prev_lim, 2 * TAG);
        // SAFETY: `b < prev_lim` proved `b + 24 <= len`.
        unsafe { self.set_word_unchecked(b + 2 * TAG, prev as u64) }
    }

    // ----- unchecked forms, for offsets the heap has already validated ----------------------
    //
    // The heap calls these only for offsets it has proved to lie inside its block space
    // `[first, end)` (and `end <= len`) from a pointer it validated (range, granule, live-start
    // bit) or a size it range-checked against `end` once. Offsets read from the free-list links
    // (which a caller's overrun could overwrite) keep going through the checked accessors above.

    /// The word at `off`, without the bounds check.
    ///
    /// # Safety
    ///
    /// `off + 8 <= len`.
    #[inline(always)]
    pub(crate) unsafe fn word_unchecked(&self, off: usize) -> u64 {
        debug_assert!(
            off < self.word_lim,
            "unchecked word at {off} past {}",
            self.len
        );
        // SAFETY: the caller guarantees `off..off + 8` lies inside the region, valid for reads
        // (`new`'s contract); `read_unaligned` has no alignment requirement.
        unsafe { self.base.as_ptr().add(off).cast::<u64>().read_unaligned() }
    }

    /// Writes the word at `off`, without the bounds check.
    ///
    /// # Safety
    ///
    /// `off + 8 <= len`.
    #[inline(always)]
    pub(crate) unsafe fn set_word_unchecked(&mut self, off: usize, value: u64) {
        debug_assert!(
            off < self.word_lim,
            "unchecked word at {off} past {}",
            self.len
        );
        // SAFETY: as in `word_unchecked`; valid for writes, and `&mut self` rules out another
        // access through this region.
        unsafe {
            self.base
                .as_ptr()
                .add(off)
                .cast::<u64>()
                .write_unaligned(value)
        }
    }

    /// [`header`](Self::header) without the bounds check.
    ///
    /// # Safety
    ///
    /// `b + 8 <= len`.
    #[inline(always)]
    pub(crate) unsafe fn header_unchecked(&self, b: usize) -> Header {
        // SAFETY: forwarded to the caller.
        let w = unsafe { self.word_unchecked(b) };
        Header {
            size: (w & !(GRANULE as u64 - 1)) as usize,
            used: w & USED != 0,
        }
    }

    /// [`footer`](Self::footer) without the bounds check.
    ///
    /// # Safety
    ///
    /// `TAG <= size` and `b + size <= len`.
    #[inline(always)]
    pub(crate) unsafe fn footer_unchecked(&self, b: usize, size: usize) -> Result<usize, usize> {
        // SAFETY: `b + size - 8 + 8 <= len` by the caller's contract.
        let w = unsafe { self.word_unchecked(b + size - TAG) };
        if w & USED == 0 {
            Ok(w as usize)
        } else {
            Err((w >> 1) as usize)
        }
    }

    /// [`free_size_before`](Self::free_size_before) without the bounds check.
    ///
    /// # Safety
    ///
    /// `TAG <= b <= len`.
    #[inline(always)]
    pub(crate) unsafe fn free_size_before_unchecked(&self, b: usize) -> Option<usize> {
        // SAFETY: `b - 8 + 8 <= len` by the caller's contract.
        let w = unsafe { self.word_unchecked(b - TAG) };
        (w & USED == 0).then_some(w as usize)
    }

    /// [`write_free`](Self::write_free) without the bounds checks.
    ///
    /// # Safety
    ///
    /// `TAG <= size` and `b + size <= len`.
    #[inline(always)]
    pub(crate) unsafe fn write_free_unchecked(&mut self, b: usize, size: usize) {
        // SAFETY: both words lie in `b..b + size`, inside the region by the caller's contract.
        unsafe {
            self.set_word_unchecked(b, size as u64);
            self.set_word_unchecked(b + size - TAG, size as u64);
        }
    }

    /// [`write_used`](Self::write_used) without the bounds checks.
    ///
    /// # Safety
    ///
    /// `TAG <= size` and `b + size <= len`.
    #[inline(always)]
    pub(crate) unsafe fn write_used_unchecked(&mut self, b: usize, size: usize, requested: usize) {
        // SAFETY: both words lie in `b..b + size`, inside the region by the caller's contract.
        unsafe {
            self.set_word_unchecked(b, size as u64 | USED);
            self.set_word_unchecked(b + size - TAG, ((requested as u64) << 1) | USED);
        }
    }

    /// The successor link of the free block at `b`, without the bounds check.
    ///
    /// # Safety
    ///
    /// `b + 16 <= len`.
    #[inline(always)]
    pub(crate) unsafe fn next_free_unchecked(&self, b: usize) -> usize {
        // SAFETY: forwarded to the caller.
        unsafe { self.word_unchecked(b + TAG) as usize }
    }

    /// Both free-list links of the free block at `b`, `(next, prev)`, without the bounds check.
    ///
    /// # Safety
    ///
    /// `b + 24 <= len`.
    #[inline(always)]
    pub(crate) unsafe fn links_unchecked(&self, b: usize) -> (usize, usize) {
        // SAFETY: forwarded to the caller.
        unsafe {
            (
                self.word_unchecked(b + TAG) as usize,
                self.word_unchecked(b + 2 * TAG) as usize,
            )
        }
    }

    /// Sets both free-list links of the free block at `b`, without the bounds check.
    ///
    /// # Safety
    ///
    /// `b + 24 <= len`.
    #[inline(always)]
    pub(crate) unsafe fn set_links_unchecked(&mut self, b: usize, next: usize, prev: usize) {
        // SAFETY: forwarded to the caller.
        unsafe {
            self.set_word_unchecked(b + TAG, next as u64);
            self.set_word_unchecked(b + 2 * TAG, prev as u64);
        }
    }

    /// Sets or clears bit `i` of the bitmap at `bitmap`, without the bounds check; returns
    /// whether it was set before.
    ///
    /// # Safety
    ///
    /// `bitmap + (i / 64) * 8 + 8 <= len`.
    #[inline(always)]
    pub(crate) unsafe fn swap_bit_unchecked(&mut self, bitmap: usize, i: usize, on: bool) -> bool {
        let off = bitmap + (i / 64) * TAG;
        // SAFETY: forwarded to the caller.
        let w = unsafe { self.word_unchecked(off) };
        let n = (i % 64) as u32;
        // Each of the three written as the bit instruction's pattern (shift and test, or with
        // a shifted one, and with a rotated all-but-one), so that no mask is built and kept.
        let new = if on {
            w | 1 << n
        } else {
            w & (!1u64).rotate_left(n)
        };
        // SAFETY: the same word.
        unsafe { self.set_word_unchecked(off, new) };
        (w >> n) & 1 != 0
    }

    /// The failure path of the bounds checks, kept out of the hot path (it reads the length
    /// itself, so the callers keep nothing live for it).
    #[cold]
    #[inline(never)]
    fn out_of_bounds(&self, off: usize, bytes: usize) -> ! {
        panic!(
            "heap bookkeeping out of bounds: {bytes} bytes at {off} in a {}-byte region",
            self.len
        )
    }

    // ----- the side bitmap of live block starts --------------------------------------------

    /// Whether bit `i` of the bitmap at `bitmap` is set.
    #[inline]
    pub(crate) fn bit(&self, bitmap: usize, i: usize) -> bool {
        self.word(bitmap + (i / 64) * TAG) & (1 << (i % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_round_to_granule_with_tags() {
        assert_eq!(block_size_for(1), Some(MIN_BLOCK));
        assert_eq!(block_size_for(16), Some(32));
        assert_eq!(block_size_for(17), Some(48));
        assert_eq!(block_size_for(100), Some(128));
        assert_eq!(block_size_for(200), Some(224));
        assert_eq!(block_size_for(usize::MAX - 3), None);
    }

    /// The link accessors bound the block's offset: each link word must lie wholly inside
    /// the region, right up to its last byte, and an offset read from overwritten links (even
    /// one near `usize::MAX`, whose link offset would wrap) must panic, never reach memory.
    #[test]
    fn link_accessors_stop_exactly_at_the_region_end() {
        use std::panic::{AssertUnwindSafe, catch_unwind};
        let mut words = [0u64; 8];
        // Every unwinding is slow under Miri: the lengths around both links' ends only.
        let lens: &[usize] = if cfg!(miri) {
            &[23, 24]
        } else {
            &[0, 7, 8, 15, 16, 23, 24, 25, 40, 64]
        };
        for &len in lens {
            // SAFETY: `words` is 64 bytes, valid for reads and writes while `region` lives,
            // and used by nothing else meanwhile.
            let mut region = unsafe { Region::new(NonNull::from(&mut words).cast::<u8>(), len) };
            let mut fits = |b: usize, link: usize| {
                let read = catch_unwind(AssertUnwindSafe(|| match link {
                    TAG => region.next_free(b),
                    _ => region.prev_free(b),
                }));
                let write = catch_unwind(AssertUnwindSafe(|| match link {
                    TAG => region.set_next_free(b, 1),
                    _ => region.set_prev_free(b, 1),
                }));
                assert_eq!(read.is_ok(), write.is_ok(), "len {len}, b {b}, link {link}");
                read.is_ok()
            };
            for link in [TAG, 2 * TAG] {
                for b in 0..len + 8 {
                    assert_eq!(fits(b, link), b + link + TAG <= len, "len {len}, b {b}");
                }
                for b in [usize::MAX, usize::MAX - 3, usize::MAX - 15, usize::MAX - 23] {
                    assert!(!fits(b, link), "len {len}, b {b:#x}");
                }
            }
        }
    }
}
