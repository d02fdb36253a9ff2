//! Review findings for the arena family: refused allocations that still changed the arena's
//! usage, a lifted `Warn` budget that a give-back did not re-arm, a frame arena whose tracked
//! budget was checked on one buffer only, and the scratch usage read under a reset.

use core::alloc::Layout;

use arena_kit_core::arena::{Arena, ArenaError, FrameArena, ThreadScratch, scratch};
use arena_kit_core::tags::{Budget, Budgeted, MemoryUsage, Tag, Tracked};

use crate::support::Rng;

/// A value with drop glue, so the arena places a drop record before it.
struct Dropped(#[allow(dead_code)] [u8; 256]);

impl Drop for Dropped {
    fn drop(&mut self) {}
}

/// A guarded arena puts a drop record in its own block before the guarded value: when the
/// value is refused, the record's bytes must not stay in the high-water mark.
#[test]
fn a_refused_guarded_value_with_a_drop_record_leaves_the_peak_unchanged() {
    let arena = Arena::with_capacity(4096).with_guards();
    let mut arena = arena;
    arena.set_budget(Some(Budget::fail(128).into()));
    let before = arena.usage();
    let refused = arena.try_alloc(Dropped([0; 256]));
    assert!(matches!(refused, Err(ArenaError::OverBudget(_))));
    assert_eq!(
        arena.usage(),
        before,
        "a refused allocation changes nothing"
    );
}

/// The same for a fixed arena that is full (no budget involved).
#[test]
fn a_guarded_value_that_does_not_fit_leaves_the_peak_unchanged() {
    let arena = Arena::with_capacity(160).with_guards();
    let before = arena.usage();
    assert!(matches!(
        arena.try_alloc(Dropped([0; 256])),
        Err(ArenaError::Full { .. })
    ));
    assert_eq!(arena.usage(), before);
    assert_eq!(arena.high_water(), 0);
}

/// A request with a large alignment on a chained arena: the budget admits its size, takes a
/// page, and only then sees the padding the page needs. The refusal must not keep the page.
#[test]
fn a_refused_aligned_request_takes_no_page() {
    for align in [64usize, 256, 4096] {
        let mut arena = Arena::chained(16 * 1024);
        arena.set_budget(Some(Budget::fail(1024).into()));
        let before = (arena.usage(), arena.stats());
        let layout = Layout::from_size_align(1024, align).unwrap();
        match arena.try_alloc_layout(layout) {
            // The page happened to need no padding: the request fits the budget exactly.
            Ok(_) => continue,
            Err(e) => {
                assert!(matches!(e, ArenaError::OverBudget(_)), "{e:?}");
                assert_eq!((arena.usage(), arena.stats()), before, "align {align}");
            }
        }
    }
}

/// Giving the newest block back through the `Allocator` impl is a free: usage falls back under
/// a lifted `Warn` budget, which must be armed again (as a reset or rewind does).
#[test]
fn an_allocator_free_rearms_a_lifted_warn_budget() {
    let mut arena = Arena::chained(4096);
    arena.set_budget(Some(Budget::warn(64).into()));
    {
        let mut v: allocator_api2::vec::Vec<u8, &Arena> = allocator_api2::vec::Vec::new_in(&arena);
        v.reserve_exact(100); // crosses the budget: warns and lifts the clamp
        assert_eq!(arena.budget().unwrap().limit(), usize::MAX);
    } // the vector's block is given back: usage is 0 again
    assert_eq!(arena.used(), 0);
    assert_eq!(
        arena.budget().unwrap().limit(),
        64,
        "usage fell back under the budget: the next crossing must warn again"
    );
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Frames;

impl Tag for Frames {
    fn name(&self) -> &'static str {
        "Frames"
    }
}

/// `Tracked` puts its budget back when the allocator's budget was changed directly, on every
/// `DerefMut`: for a frame arena, on every buffer, not only buffer 0.
#[test]
fn a_tracked_frame_arena_restores_the_budget_of_every_buffer_through_deref_mut() {
    let mut t = Tracked::new(FrameArena::<2>::chained(4096), "frames", Frames)
        .with_budget(Budget::fail(64));
    let _ = t.try_begin_frame().unwrap(); // buffer 0
    {
        let mut f = t.try_begin_frame().unwrap(); // buffer 1
        f.set_budget(None); // changed directly, on this buffer only
    }
    let _ = t.try_begin_frame().unwrap(); // buffer 0
    let f = t.try_begin_frame().unwrap(); // buffer 1, reached through `DerefMut`
    assert_eq!(f.buffer_index(), 1);
    assert!(
        matches!(f.try_alloc([0u8; 100]), Err(ArenaError::OverBudget(_))),
        "the wrapper's budget holds on buffer 1 again"
    );
}

/// A value in a depth-1 scratch arena whose destructor reads this thread's scratch usage.
struct ReadsScratchUsage;

impl Drop for ReadsScratchUsage {
    fn drop(&mut self) {
        let _ = ThreadScratch.usage();
    }
}

/// A value in the depth-0 scratch arena whose destructor uses a nested scratch arena.
struct NestedScratch;

impl Drop for NestedScratch {
    fn drop(&mut self) {
        scratch(|inner| {
            inner.alloc(ReadsScratchUsage);
        });
    }
}

/// While depth 0 is being reset (holding its arena mutably), depth 1's reset runs a destructor
/// that reads the scratch usage: depth 0 must be skipped then too, not only depth 1. Run it
/// under Miri to see the aliasing.
#[test]
fn scratch_usage_from_a_nested_reset_skips_every_arena_being_reset() {
    scratch(|outer| {
        outer.alloc(NestedScratch);
    });
    assert_eq!(ThreadScratch.usage().current, 0);
}

/// Random requests of every allocating method against chained, fixed and guarded arenas with
/// random budgets (each policy but `Panic`) and limits: every refusal leaves the usage and the
/// statistics exactly as they were.
#[test]
fn every_refused_arena_allocation_changes_nothing() {
    use allocator_api2::alloc::Allocator;
    for seed in 1..crate::support::miri_or(60, 3) as u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut arena = match rng.below(4) {
            0 => Arena::with_capacity(2048),
            1 => Arena::chained(1024).with_limit(8192).with_guards(),
            2 => Arena::chained(512).with_guards(),
            _ => Arena::chained(1024).with_limit(6000),
        };
        for step in 0..crate::support::miri_or(300, 40) {
            if rng.below(25) == 0 {
                let bytes = rng.below(6000);
                let b = [Budget::fail(bytes), Budget::warn(bytes)][rng.below(2)];
                arena.set_budget((rng.below(4) > 0).then(|| b.into()));
            }
            if rng.below(40) == 0 {
                arena.reset();
            }
            let before = (arena.usage(), arena.stats());
            let size = [0, 1, 8, 24, 100, 700, 3000, isize::MAX as usize / 2][rng.below(8)];
            // (Alignments above a page's 16 are left out where a limit may give kept pages back:
            // see `a_refused_aligned_request_under_a_limit_keeps_the_kept_pages`.)
            let align = 1usize << rng.below(if arena.limit().is_some() { 5 } else { 13 });
            let op = rng.below(8);
            let refused = match op {
                0 => Layout::from_size_align(size, align)
                    .is_ok_and(|l| arena.try_alloc_layout(l).is_err()),
                1 => arena.try_alloc(Dropped([0; 256])).is_err(),
                2 => arena.try_alloc_with(|| [7u64; 20]).is_err(),
                3 => arena
                    .try_alloc_slice_copy(&[1u32; 300][..size.min(300)])
                    .is_err(),
                4 => arena
                    .try_alloc_slice_fill_with(size.min(1 << 20), |i| vec![i as u8])
                    .is_err(),
                5 => arena.try_alloc_str(&"x".repeat(size.min(4000))).is_err(),
                6 => Layout::from_size_align(size, align)
                    .is_ok_and(|l| (&arena).allocate(l).is_err()),
                _ => {
                    // Grow the newest block (in place when it can) past what is left.
                    let small = Layout::from_size_align(16, 16).unwrap();
                    match (&arena).allocate(small) {
                        Err(_) => true,
                        Ok(p) => {
                            let before = (arena.usage(), arena.stats());
                            let big = Layout::from_size_align(16 + size.min(1 << 20), 16).unwrap();
                            // SAFETY: `p` is a live block of `small` from this allocator.
                            let grown = unsafe { (&arena).grow(p.cast(), small, big) };
                            if grown.is_err() {
                                assert_eq!(
                                    (arena.usage(), arena.stats()),
                                    before,
                                    "{seed}/{step} grow"
                                );
                            }
                            false
                        }
                    }
                }
            };
            if refused {
                assert_eq!(
                    (arena.usage(), arena.stats()),
                    before,
                    "{seed}/{step} op {op} size {size} align {align}"
                );
            }
        }
    }
}

/// SoA rows that need dropping: the columns and a drop record (taken in one bump).
#[derive(Debug, Default, arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core)]
pub struct Labelled {
    pub id: u32,
    pub label: String,
}

/// The columns and their drop record would take a chained arena's first page and pass its
/// budget by one byte. When they were two allocations, the columns took the page and the
/// record was refused; undoing the columns kept the page, so the refusal changed
/// `Usage::reserved`.
#[test]
fn a_refused_soa_with_a_drop_record_takes_no_page() {
    let probe = Arena::chained(4096);
    probe.alloc_soa(8, |i| Labelled {
        id: i as u32,
        label: String::new(),
    });
    let mut arena = Arena::chained(4096);
    // One byte short of the columns and the record together.
    arena.set_budget(Some(Budget::fail(probe.used() - 1).into()));
    let before = (arena.usage(), arena.stats());
    let refused = arena.try_alloc_soa(8, |i| Labelled {
        id: i as u32,
        label: String::new(),
    });
    assert!(matches!(refused.err(), Some(ArenaError::OverBudget(_))));
    assert_eq!((arena.usage(), arena.stats()), before);
}

/// The same refusal in a guarded arena (whose block carries a guard record too) and after the
/// arena already holds a nearly full page: nothing is taken, and the arena still allocates,
/// checks its guards and drops its rows afterwards.
#[test]
fn a_refused_soa_with_a_drop_record_takes_no_page_in_any_arena_kind() {
    let rows = |i: usize| Labelled {
        id: i as u32,
        label: i.to_string(),
    };
    for guarded in [false, true] {
        // Nothing yet, or a page nearly full: either way the columns take a new page.
        for earlier in [0, 4000] {
            let make = || {
                let arena = Arena::chained(4096);
                let arena = if guarded { arena.with_guards() } else { arena };
                if earlier > 0 {
                    arena.alloc_slice_copy(&vec![1u8; earlier]);
                }
                arena
            };
            let probe = make();
            let (before_probe, pages) = (probe.used(), probe.stats().pages);
            probe.alloc_soa(8, rows);
            let needed = probe.used() - before_probe;
            assert_eq!(
                probe.stats().pages,
                pages + 1,
                "the columns took a new page"
            );
            let mut arena = make();
            arena.set_budget(Some(Budget::fail(arena.used() + needed - 1).into()));
            let before = (arena.usage(), arena.stats());
            let refused = arena.try_alloc_soa(8, rows);
            assert!(
                matches!(refused.err(), Some(ArenaError::OverBudget(_))),
                "guarded {guarded}, earlier {earlier}"
            );
            assert_eq!(
                (arena.usage(), arena.stats()),
                before,
                "guarded {guarded}, earlier {earlier}"
            );
            arena.set_budget(None);
            let kept = arena.alloc_soa(8, rows);
            assert_eq!(kept.slices().label[7], "7");
            arena.reset();
        }
    }
}

/// A `Panic` budget that the columns and drop record would pass panics before either is
/// taken: the arena keeps only what it held.
#[test]
fn a_soa_with_a_drop_record_over_a_panic_budget_takes_nothing() {
    let rows = |i: usize| Labelled {
        id: i as u32,
        label: String::new(),
    };
    let probe = Arena::with_capacity(4096);
    probe.alloc_soa(4, rows);
    let mut arena = Arena::with_capacity(4096);
    arena.set_budget(Some(Budget::panic(32 + probe.used() - 1).into()));
    arena.alloc([1u8; 32]);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        arena.alloc_soa(4, rows);
    }));
    assert!(caught.is_err());
    assert_eq!((arena.used(), arena.stats().allocations), (32, 1));
}

/// A limited chained arena gives its kept pages back to make room for a new page; the budget
/// then refuses the request once the page's padding is known. The kept pages are gone by then,
/// so the refusal changed `Usage::reserved`.
#[test]
fn a_refused_aligned_request_under_a_limit_keeps_the_kept_pages() {
    let mut arena = Arena::chained(512).with_limit(5000);
    arena.alloc([0u8; 400]);
    let m = arena.mark();
    arena.alloc([0u8; 300]); // a second page
    arena.rewind(m).unwrap(); // kept, empty
    arena.set_budget(Some(Budget::fail(500).into()));
    let before = (arena.usage(), arena.stats());
    let layout = Layout::from_size_align(100, 4096).unwrap();
    if let Err(e) = arena.try_alloc_layout(layout) {
        assert!(matches!(e, ArenaError::OverBudget(_)), "{e:?}");
        assert_eq!((arena.usage(), arena.stats()), before);
    }
}
