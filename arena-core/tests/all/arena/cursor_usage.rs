//! The counters the arena's cursor keeps, as reports read them: `used`, the peak and the live
//! allocations stay exact across give-back, growth in place, scopes and rewinds, with and
//! without a budget clamp; this thread's scratch arenas report their usage and go to
//! `Registry::end_frame` like any allocator.

use core::alloc::Layout;

use allocator_api2::alloc::Allocator;
use arena_kit_core::arena::{Arena, ThreadScratch, scratch};
use arena_kit_core::tags::{Budget, Budgeted, MemoryUsage, Registry, Tag};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryTag {
    Temp,
}

impl Tag for MemoryTag {
    fn name(&self) -> &'static str {
        "Temp"
    }

    fn parent(&self) -> Option<Self> {
        None
    }
}

#[test]
fn give_back_and_growth_in_place_keep_used_peak_and_count_exact() {
    for budget in [None, Some(Budget::fail(4096))] {
        let mut arena = Arena::chained(8192);
        arena.set_budget(budget.map(Into::into));
        let a: &Arena = &arena;
        let small = Layout::from_size_align(64, 8).unwrap();
        let big = Layout::from_size_align(256, 8).unwrap();
        let block = a.allocate(small).unwrap().cast::<u8>();
        assert_eq!((a.used(), a.allocation_count()), (64, 1));
        // SAFETY: `block` came from this allocator with `small`.
        let grown = unsafe { a.grow(block, small, big) }.unwrap().cast::<u8>();
        assert_eq!(grown, block, "the newest block grows in place");
        assert_eq!((a.used(), a.allocation_count()), (256, 1));
        // SAFETY: `grown` holds `big`.
        let shrunk = unsafe { a.shrink(grown, big, small) }.unwrap().cast::<u8>();
        assert_eq!((a.used(), a.high_water()), (64, 256));
        // SAFETY: `shrunk` holds `small`.
        unsafe { a.deallocate(shrunk, small) };
        assert_eq!(
            (a.used(), a.allocation_count(), a.high_water()),
            (0, 0, 256)
        );
        arena.reset();
        assert_eq!((arena.used(), arena.high_water()), (0, 256));
    }
}

#[test]
fn a_give_back_under_a_budget_set_below_usage_does_not_reopen_the_bytes() {
    let arena = Arena::chained(4096);
    let a: &Arena = &arena;
    let layout = Layout::from_size_align(300, 8).unwrap();
    let block = a.allocate(layout).unwrap().cast::<u8>();
    a.restore_budget(&Budget::fail(100).into());
    // SAFETY: `block` came from this allocator with `layout`.
    unsafe { a.deallocate(block, layout) };
    assert_eq!(a.used(), 0);
    // The 300 bytes given back are over the budget again: refused, not handed out unchecked.
    assert!(a.allocate(layout).is_err());
    assert!(a.allocate(Layout::from_size_align(100, 8).unwrap()).is_ok());
}

#[test]
fn rewinds_across_pages_keep_the_counters_exact_under_a_clamp() {
    let mut arena = Arena::chained(256);
    arena.set_budget(Some(Budget::warn(600).into()));
    arena.alloc([0u8; 100]);
    let m = arena.mark();
    for _ in 0..10 {
        arena.alloc([0u8; 100]);
    }
    assert_eq!(arena.used(), 1100);
    assert_eq!(arena.allocation_count(), 11);
    arena.rewind(m).unwrap();
    assert_eq!((arena.used(), arena.allocation_count()), (100, 1));
    assert_eq!(arena.high_water(), 1100);
    // re-armed: the clamp holds again from the rewound position
    assert_eq!(arena.budget().unwrap().limit(), 600);
    {
        let scope = arena.scope();
        scope.alloc([0u8; 200]);
        assert_eq!(scope.used(), 300);
    }
    assert_eq!((arena.used(), arena.allocation_count()), (100, 1));
}

#[test]
fn this_threads_scratch_arenas_report_their_usage() {
    scratch(|outer| {
        outer.alloc([0u8; 100]);
        assert_eq!(ThreadScratch.usage().current, 100);
        scratch(|inner| {
            inner.alloc([0u8; 50]);
            let u = ThreadScratch.usage();
            assert_eq!((u.current, u.allocations), (150, 2));
        });
        assert_eq!(ThreadScratch.usage().current, 100);
    });
    let after = ThreadScratch.usage();
    assert_eq!((after.current, after.allocations), (0, 0));
    assert!(after.peak >= 150);
    assert!(after.reserved >= 150);
    // another thread has scratch arenas of its own
    let other = std::thread::spawn(|| ThreadScratch.usage()).join().unwrap();
    assert_eq!(other.reserved, 0);
}

#[test]
fn a_destructor_run_by_a_scratch_reset_may_read_the_scratch_usage() {
    struct ReadsUsage;
    impl Drop for ReadsUsage {
        fn drop(&mut self) {
            // the arena being reset is skipped, the others are read
            let _ = ThreadScratch.usage();
        }
    }
    scratch(|a| {
        a.alloc(ReadsUsage);
    });
    assert_eq!(ThreadScratch.usage().current, 0);
}

#[test]
fn the_scratch_usage_goes_to_end_frame() {
    let mut registry = Registry::new();
    let report = scratch(|a| {
        a.alloc([0u8; 64]);
        registry
            .end_frame(&[&("scratch", MemoryTag::Temp, ThreadScratch)])
            .unwrap()
    });
    assert_eq!(report.tag(MemoryTag::Temp).unwrap().usage.current, 64);
}
