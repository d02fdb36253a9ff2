//! Ranges of indices: a `RangeBounds<usize>` turned into a checked `start..end`, one check and
//! one panic message for every container with range methods (the SoA containers, `ArenaVec`).

use core::ops::{Bound, RangeBounds};

/// `range` as `start..end` within `0..len`, or `None` if it is reversed or reaches past `len`.
#[inline]
pub(crate) fn checked_range(range: impl RangeBounds<usize>, len: usize) -> Option<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1)?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    (start <= end && end <= len).then_some((start, end))
}

/// `range` as `start..end` within `0..len`; panics at the caller's line if it is not, saying
/// what the container holds `len` of (`unit`: "rows", "elements").
#[inline]
#[track_caller]
pub(crate) fn range_or_panic(
    range: impl RangeBounds<usize>,
    len: usize,
    unit: &'static str,
) -> (usize, usize) {
    let shown = (range.start_bound().cloned(), range.end_bound().cloned());
    match checked_range(range, len) {
        Some(r) => r,
        None => range_panic(shown, len, unit),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn range_panic(range: (Bound<usize>, Bound<usize>), len: usize, unit: &str) -> ! {
    panic!("range {range:?} out of bounds for {len} {unit}: a range needs start <= end <= len")
}
