//! A budget set on a heap holds for every allocating method: under `Policy::Fail` each `try_`
//! form returns the heap's own error carrying the `BudgetExceeded`, nothing is allocated and
//! the usage is unchanged; each panicking form panics with the budget's text. Also: `Warn` lets
//! the allocation through once per crossing, and the shared heaps (`&HeapCell`, `&LockedHeap`)
//! go into a registry report.
#![cfg(all(feature = "std", feature = "allocator-api2"))]

use core::alloc::Layout;

use arena_kit_core::heap::{FreeListHeap, GuardedHeap, HeapError, RequestError};
use arena_kit_core::tags::{Budget, Budgeted, MemoryUsage, Registry, Source};

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size, 8).unwrap()
}

/// The budget of every test: 200 bytes of live blocks (tags included).
const BUDGET: usize = 200;

/// Whether `e` is the budget's refusal.
fn over_budget(e: &RequestError) -> bool {
    matches!(e.budget_exceeded(), Some(b) if b.budget == BUDGET)
}

/// One test per allocating method of a heap allocated through `&mut self`, for any `$make:
/// Fn(Budget) -> H` where `H` has the heap's methods (a `FreeListHeap`, or a wrapper that
/// dereferences to one). The list (every allocating method of `FreeListHeap`):
/// - `try_alloc`, `alloc`
/// - `try_realloc` growing in place (into the free right neighbour), `realloc` in place
/// - `try_realloc` growing by a move (a live right neighbour), `realloc` by a move
macro_rules! heap_fail_policy_tests {
    ($make:expr) => {
        /// A heap with a 200-byte `Fail` budget, holding one 64-byte block (80 with tags).
        fn filled() -> (H, core::ptr::NonNull<u8>) {
            let make = $make;
            let mut heap: H = make(Budget::fail(BUDGET));
            let p = heap.try_alloc(layout(64)).unwrap();
            assert_eq!(heap.usage().current, 80);
            (heap, p)
        }

        #[test]
        fn try_alloc() {
            let (mut heap, p) = filled();
            let before = heap.usage();
            let e = heap.try_alloc(layout(200)).unwrap_err();
            assert!(over_budget(&e), "{e:?}");
            assert!(e.to_string().contains("raise its budget"), "{e}");
            assert_eq!(heap.usage(), before);
            // Within the budget it still allocates (80 + 112 <= 200).
            let q = heap.try_alloc(layout(96)).unwrap();
            heap.free(q).unwrap();
            heap.free(p).unwrap();
        }

        #[test]
        #[should_panic(expected = "memory budget exceeded")]
        fn alloc() {
            let (mut heap, _p) = filled();
            heap.alloc(layout(200));
        }

        #[test]
        fn try_realloc_in_place() {
            let (mut heap, p) = filled();
            let before = heap.usage();
            // The free right neighbour could take it in place; the budget cannot.
            let e = heap.try_realloc(p, layout(300)).unwrap_err();
            assert!(
                matches!(&e, HeapError::Request(r) if over_budget(r)),
                "{e:?}"
            );
            assert_eq!(heap.usage(), before);
            assert_eq!(heap.try_realloc(p, layout(100)).unwrap(), p); // 128 <= 200: fits
            heap.free(p).unwrap();
        }

        #[test]
        #[should_panic(expected = "memory budget exceeded")]
        fn realloc_in_place() {
            let (mut heap, p) = filled();
            heap.realloc(p, layout(300));
        }

        #[test]
        fn try_realloc_by_move() {
            let (mut heap, p) = filled();
            let wall = heap.try_alloc(layout(16)).unwrap(); // 112 in use, the neighbour live
            let before = heap.usage();
            // A move holds both blocks until the copy: 112 + 128 > 200.
            let e = heap.try_realloc(p, layout(100)).unwrap_err();
            assert!(
                matches!(&e, HeapError::Request(r) if over_budget(r)),
                "{e:?}"
            );
            assert_eq!(heap.usage(), before);
            heap.free(wall).unwrap();
            heap.free(p).unwrap();
        }

        #[test]
        #[should_panic(expected = "memory budget exceeded")]
        fn realloc_by_move() {
            let (mut heap, p) = filled();
            let _wall = heap.try_alloc(layout(16)).unwrap();
            heap.realloc(p, layout(100));
        }
    };
}

/// The same for a [`GuardedHeap`], whose allocating methods are `try_alloc` and `alloc` (the
/// budget counts its guard bytes too).
macro_rules! guarded_fail_policy_tests {
    ($make:expr) => {
        #[test]
        fn try_alloc() {
            let make = $make;
            let mut heap: G = make(Budget::fail(BUDGET));
            let p = heap.try_alloc(layout(64)).unwrap();
            let before = heap.usage();
            let e = heap.try_alloc(layout(200)).unwrap_err();
            assert!(over_budget(&e), "{e:?}");
            assert_eq!(heap.usage(), before);
            heap.free(p).unwrap();
        }

        #[test]
        #[should_panic(expected = "memory budget exceeded")]
        fn alloc() {
            let make = $make;
            let mut heap: G = make(Budget::fail(BUDGET));
            let _p = heap.alloc(layout(64));
            heap.alloc(layout(200));
        }
    };
}

/// The `allocator_api2::Allocator` methods of `&HeapCell` over a budgeted heap:
/// `allocate`, `allocate_zeroed`, `grow`, `grow_zeroed` (shrinking never adds usage). Each
/// returns `AllocError` with the usage unchanged.
macro_rules! heap_cell_fail_policy_tests {
    ($make:expr) => {
        use allocator_api2::alloc::Allocator;
        use arena_kit_core::heap::HeapCell;

        fn filled() -> (HeapCell<'static>, core::ptr::NonNull<u8>) {
            let make = $make;
            let cell = HeapCell::new(make(Budget::fail(BUDGET)));
            let p = (&cell).allocate(layout(64)).unwrap().cast::<u8>();
            assert_eq!(cell.usage().current, 80);
            (cell, p)
        }

        #[test]
        fn allocate() {
            let (cell, p) = filled();
            let before = cell.usage();
            assert!((&cell).allocate(layout(200)).is_err());
            assert_eq!(cell.usage(), before);
            // SAFETY: `p` was allocated by this cell with this layout.
            unsafe { (&cell).deallocate(p, layout(64)) };
        }

        #[test]
        fn allocate_zeroed() {
            let (cell, p) = filled();
            let before = cell.usage();
            assert!((&cell).allocate_zeroed(layout(200)).is_err());
            assert_eq!(cell.usage(), before);
            // SAFETY: as above.
            unsafe { (&cell).deallocate(p, layout(64)) };
        }

        #[test]
        fn grow() {
            let (cell, p) = filled();
            let before = cell.usage();
            // SAFETY: `p` is live with the old layout; the new one is larger.
            assert!(unsafe { (&cell).grow(p, layout(64), layout(300)) }.is_err());
            assert_eq!(cell.usage(), before);
            // SAFETY: a failed grow leaves `p` live with its old layout.
            unsafe { (&cell).deallocate(p, layout(64)) };
        }

        #[test]
        fn grow_zeroed() {
            let (cell, p) = filled();
            let before = cell.usage();
            // SAFETY: as for `grow`.
            assert!(unsafe { (&cell).grow_zeroed(p, layout(64), layout(300)) }.is_err());
            assert_eq!(cell.usage(), before);
            // SAFETY: as for `grow`.
            unsafe { (&cell).deallocate(p, layout(64)) };
        }
    };
}

/// A plain heap with the budget set on it directly.
fn budgeted_heap(budget: Budget) -> FreeListHeap<'static> {
    let mut heap = FreeListHeap::with_capacity(4096);
    heap.set_budget(Some(budget.into()));
    heap
}

mod direct {
    use super::*;
    type H = FreeListHeap<'static>;
    heap_fail_policy_tests!(budgeted_heap);
}

mod guarded {
    use super::*;
    type G = GuardedHeap<'static>;
    guarded_fail_policy_tests!(|budget: Budget| {
        let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(4096));
        heap.set_budget(Some(budget.into()));
        heap
    });
}

mod heap_cell {
    use super::*;
    heap_cell_fail_policy_tests!(budgeted_heap);
}

#[test]
fn a_budget_below_usage_frees_nothing_and_refuses_the_next_block() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let p = heap.alloc(layout(200));
    heap.set_budget(Some(Budget::fail(100).into()));
    let e = heap.try_alloc(layout(8)).unwrap_err();
    assert!(e.budget_exceeded().is_some(), "{e:?}");
    heap.free(p).unwrap();
    heap.alloc(layout(8)); // back under: allowed again
    heap.set_budget(None);
    assert_eq!(heap.budget(), None);
}

#[test]
fn warn_lets_the_crossing_through_and_rearms_once_usage_is_back_under() {
    let mut heap = budgeted_heap(Budget::warn(BUDGET));
    let a = heap.alloc(layout(64));
    let b = heap.alloc(layout(200)); // over: warns, allowed
    assert!(heap.usage().current > BUDGET);
    assert_eq!(
        heap.budget().unwrap().limit(),
        usize::MAX,
        "lifted while over"
    );
    heap.free(b).unwrap();
    assert_eq!(heap.budget().unwrap().limit(), BUDGET, "armed again");
    heap.free(a).unwrap();
}

#[test]
#[should_panic(expected = "memory budget exceeded")]
fn a_panic_budget_panics_from_try_alloc_too() {
    let mut heap = budgeted_heap(Budget::panic(BUDGET));
    let _ = heap.try_alloc(layout(300));
}

#[test]
fn the_heap_has_no_other_limit_under_a_budget_above_its_capacity() {
    let mut heap = budgeted_heap(Budget::fail(1 << 20));
    let e = heap.try_alloc(layout(4096)).unwrap_err();
    assert!(matches!(e, RequestError::TooLarge { .. }), "{e:?}");
    let big = heap.alloc(layout(2000));
    let e = heap.try_alloc(layout(2100)).unwrap_err();
    assert!(matches!(e, RequestError::OutOfMemory { .. }), "{e:?}");
    heap.free(big).unwrap();
}

/// What a registry reads from a source: the references are the `MemoryUsage` here.
fn current(source: impl MemoryUsage) -> usize {
    source.usage().current
}

#[test]
fn shared_heaps_go_into_a_registry_report() {
    use arena_kit_core::heap::{HeapCell, LockedHeap};
    use core::alloc::GlobalAlloc;

    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let locked = Box::new(LockedHeap::<4096>::new());
    // SAFETY: a non-zero layout; freed below, before the heap is dropped.
    let p = unsafe { locked.alloc(layout(100)) };
    assert!(!p.is_null());
    assert_eq!(current(&*locked), 128);
    let mut names: allocator_api2::vec::Vec<&str, _> = allocator_api2::vec::Vec::new_in(&cell);
    names.push("castle"); // room for 4 &strs: one 80-byte block with its tags
    assert_eq!(current(&cell), 80);
    let from_cell = ("level data", "Assets", &cell);
    let from_locked = ("global", "Assets", &*locked);
    let sources: [&dyn Source<&'static str>; 2] = [&from_cell, &from_locked];
    let report = Registry::new().end_frame(&sources).unwrap();
    assert_eq!(report.totals().to_string(), "Assets: 208 bytes\n");
    drop(names);
    // SAFETY: allocated above with this layout.
    unsafe { locked.dealloc(p, layout(100)) };
}

#[test]
fn a_block_that_keeps_a_tail_too_small_to_split_counts_it_against_the_budget() {
    use arena_kit_core::heap::Fit;
    let mut heap = FreeListHeap::with_capacity(4096).with_fit(Fit::First);
    let a = heap.alloc(layout(32)); // a 48-byte block
    let _wall = heap.alloc(layout(16)); // 32 bytes, keeps `a`'s hole from merging
    heap.free(a).unwrap();
    // 16 bytes need a 32-byte block, which fits the budget (32 + 32 <= 64); first fit finds
    // the 48-byte hole, whose 16-byte tail cannot be a block, so the block would be 48 bytes.
    heap.set_budget(Some(Budget::fail(64).into()));
    let before = heap.usage();
    let e = heap.try_alloc(layout(16)).unwrap_err();
    assert_eq!(e.budget_exceeded().map(|b| b.requested), Some(48), "{e:?}");
    assert_eq!(heap.usage(), before);
    heap.set_budget(Some(Budget::fail(80).into()));
    heap.alloc(layout(16));
    assert_eq!(heap.usage().current, 80);
}

/// The same lists through `Tracked`: the heap's own methods, reached through `Deref`, with the
/// budget set on the wrapper.
mod tracked {
    use super::*;
    use arena_kit_core::tags::Tracked;
    type H = Tracked<FreeListHeap<'static>, &'static str>;
    heap_fail_policy_tests!(|budget: Budget| {
        Tracked::new(FreeListHeap::with_capacity(4096), "level assets", "Assets")
            .with_budget(budget)
    });
}

mod tracked_guarded {
    use super::*;
    use arena_kit_core::tags::Tracked;
    type G = Tracked<GuardedHeap<'static>, &'static str>;
    guarded_fail_policy_tests!(|budget: Budget| {
        Tracked::new(
            GuardedHeap::new(FreeListHeap::with_capacity(4096)),
            "debug assets",
            "Assets",
        )
        .with_budget(budget)
    });
}
