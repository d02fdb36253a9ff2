//! Markers against the page-free count: a page made after a marker is not the marker's page
//! (`Arena::rewind` refuses it), so a marker into a page the arena still holds, at or before the
//! current one, must stay valid however many pages were given back since (a tail merged after a
//! rewind, kept pages given back to a limit, a reset's coalescing), and a marker into a page
//! given back must stay stale.

use arena_kit_core::arena::{Arena, MarkerError};

use crate::support::miri_or;

/// Rewinds to `marker` and checks the arena is back at its `used`.
#[track_caller]
fn rewinds_to(arena: &mut Arena, marker: arena_kit_core::arena::Marker) {
    assert_eq!(arena.rewind(marker), Ok(()));
    assert_eq!(arena.used(), marker.used());
}

/// Markers in the first pages stay valid after later rewinds merge the pages past the cursor
/// (each merge gives pages back and makes a new one).
#[test]
fn markers_before_a_merged_tail_stay_valid() {
    for round in 0..miri_or(8, 2) {
        let mut arena = Arena::chained(128);
        arena.alloc_slice_fill_copy(40, 1u8);
        let first = arena.mark();
        arena.alloc_slice_fill_copy(100, 2u8); // a second page
        let second = arena.mark();
        for spill in 0..3 + round {
            let inner = arena.mark();
            for i in 0..4 + spill {
                arena.alloc_slice_fill_copy(90 + 8 * i, 3u8); // a page each
            }
            // Two or more pages follow the cursor now: this rewind merges them.
            rewinds_to(&mut arena, inner);
        }
        let pages = arena.page_count();
        assert!(pages >= 2, "{pages}");
        rewinds_to(&mut arena, second);
        rewinds_to(&mut arena, first);
    }
}

/// A marker taken in a page made after pages were given back (so the page's count is above 0)
/// stays valid after more pages are given back.
#[test]
fn a_marker_in_a_page_made_after_frees_stays_valid_after_more_frees() {
    let mut arena = Arena::chained(128);
    arena.alloc_slice_fill_copy(40, 1u8);
    let base = arena.mark();
    for round in 0..miri_or(6, 2) {
        for i in 0..3 {
            arena.alloc_slice_fill_copy(100 + 8 * i, 2u8);
        }
        rewinds_to(&mut arena, base); // merges the pages after the first
        // Into the merged page (made after the frees), then mark there.
        arena.alloc_slice_fill_copy(120, 4u8);
        let in_merged = arena.mark();
        let used = arena.used();
        for i in 0..3 + round {
            arena.alloc_slice_fill_copy(200 + 8 * i, 5u8); // pages of their own
        }
        let inner = arena.mark();
        arena.alloc_slice_fill_copy(300, 6u8);
        rewinds_to(&mut arena, inner);
        // Pages after the cursor were merged again (more frees); the earlier marker's page is
        // still held.
        rewinds_to(&mut arena, in_merged);
        assert_eq!(arena.used(), used);
        rewinds_to(&mut arena, base);
    }
}

/// After a reset coalesces the pages into one, markers in that page stay valid through later
/// merges and limit-driven give-backs, and a marker into a merged-away page is stale.
#[test]
fn markers_after_a_coalescing_reset_stay_valid_through_later_frees() {
    let mut arena = Arena::chained(128).with_limit(4096);
    for i in 0..6 {
        arena.alloc_slice_fill_copy(100 + 4 * i, 1u8);
    }
    arena.reset(); // coalesces the pages into one
    arena.alloc_slice_fill_copy(64, 2u8);
    let early = arena.mark();
    arena.alloc_slice_fill_copy(64, 3u8);
    let later = arena.mark();
    // Past the coalesced page: pages of their own, then a marker in the last one.
    for i in 0..4 {
        arena.alloc_slice_fill_copy(600 + 8 * i, 4u8);
    }
    let doomed = arena.mark();
    arena.alloc_slice_fill_copy(16, 5u8);
    rewinds_to(&mut arena, later); // the pages after it are merged into one (freed)
    assert_eq!(arena.rewind(doomed), Err(MarkerError::Stale));
    // Requests the kept page may not hold, under the limit: kept pages may go back first (or
    // the request is refused); either way the earlier markers' page is still held.
    for size in [1500, 2500, 3500] {
        let _ = arena.try_alloc_slice_fill_copy(size, 6u8);
    }
    rewinds_to(&mut arena, later);
    rewinds_to(&mut arena, early);
    assert_eq!(arena.rewind(doomed), Err(MarkerError::Stale));
}
