//! Destructors: reverse order on reset, rewind, scope end and drop; nothing lost or doubled when
//! a constructor or destructor panics.

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arena_kit_core::arena::Arena;
use arena_kit_core::tags::Budgeted;

/// Records its id in a shared log when dropped; `Send + 'static` as the arena requires.
struct Logged {
    id: u32,
    log: Arc<Mutex<Vec<u32>>>,
    panic_on_drop: bool,
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.id);
        if self.panic_on_drop {
            panic!("destructor {} panics", self.id);
        }
    }
}

fn logged(id: u32, log: &Arc<Mutex<Vec<u32>>>) -> Logged {
    Logged {
        id,
        log: Arc::clone(log),
        panic_on_drop: false,
    }
}

fn taken(log: &Arc<Mutex<Vec<u32>>>) -> Vec<u32> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// Asserts that `arena` has `records` pending drop records (and tail entries). A value joins a
/// run, or starts one after a tail entry of its type, when its drop function's address matches,
/// and Miri gives a function several addresses, picked at random: there a run may break into
/// more records, up to one per value (`at_most`). That costs bytes, not correctness; the drop
/// order is checked either way.
#[track_caller]
fn assert_pending(arena: &Arena, records: usize, at_most: usize) {
    let n = arena.pending_drops();
    if cfg!(miri) {
        assert!((records..=at_most).contains(&n), "{n} pending");
    } else {
        assert_eq!(n, records);
    }
}

#[test]
fn reset_drops_in_reverse_allocation_order() {
    let log = Arc::default();
    let mut arena = Arena::chained(256);
    for id in 0..20 {
        arena.alloc(logged(id, &log));
        arena.alloc(7u64); // values without drop glue in between
    }
    assert_eq!(
        arena.pending_drops(),
        20,
        "values of other types in between break the runs"
    );
    arena.reset();
    assert_eq!(taken(&log), (0..20).rev().collect::<Vec<_>>());
    assert_eq!(arena.pending_drops(), 0);
    arena.reset();
    assert!(taken(&log).is_empty(), "nothing is dropped twice");
}

#[test]
fn values_without_drop_glue_leave_no_record() {
    let arena = Arena::chained(256);
    arena.alloc(1u32);
    arena.alloc_slice_fill_with(10, |i| i as u8);
    arena.alloc_str("text");
    assert_eq!(arena.pending_drops(), 0);
    assert_eq!(arena.used(), 4 + 10 + 4);
}

#[test]
fn rewind_and_scopes_drop_only_what_came_after() {
    let log = Arc::default();
    let mut arena = Arena::chained(128);
    arena.alloc(logged(1, &log));
    let m = arena.mark();
    arena.alloc(logged(2, &log));
    arena.alloc_slice_fill_with(3, |i| logged(10 + i as u32, &log));
    {
        let mut outer = arena.scope();
        outer.alloc(logged(20, &log));
        {
            let inner = outer.scope();
            inner.alloc(logged(30, &log));
            inner.alloc(logged(31, &log));
        }
        assert_eq!(taken(&log), [31, 30]);
        outer.alloc(logged(21, &log));
    }
    assert_eq!(taken(&log), [21, 20]);
    arena.rewind(m).unwrap();
    assert_eq!(
        taken(&log),
        [12, 11, 10, 2],
        "slice elements drop last to first, like everything else"
    );
    drop(arena);
    assert_eq!(taken(&log), [1]);
}

#[test]
fn a_panicking_constructor_drops_nothing() {
    let log = Arc::default();
    let mut arena = Arena::chained(256);
    arena.alloc(logged(1, &log));
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_with(|| -> Logged { panic!("constructor fails") });
    }));
    assert!(r.is_err());
    assert!(taken(&log).is_empty());
    arena.reset();
    assert_eq!(taken(&log), [1], "the half-built value was never dropped");
}

#[test]
fn a_panicking_slice_fill_drops_the_built_prefix_once() {
    let log = Arc::default();
    let mut arena = Arena::chained(1024);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_slice_fill_with(5, |i| {
            if i == 3 {
                panic!("element 3")
            } else {
                logged(i as u32, &log)
            }
        });
    }));
    assert!(r.is_err());
    assert_eq!(taken(&log), [0, 1, 2]);
    arena.reset();
    assert!(taken(&log).is_empty());
}

#[test]
fn a_panicking_destructor_still_drops_the_rest_and_resets() {
    let log = Arc::default();
    let mut arena = Arena::chained(256);
    for id in 0..5 {
        arena.alloc(Logged {
            id,
            log: Arc::clone(&log),
            panic_on_drop: id == 2,
        });
    }
    let r = catch_unwind(AssertUnwindSafe(|| arena.reset()));
    assert!(r.is_err());
    assert_eq!(
        taken(&log),
        [4, 3, 2, 1, 0],
        "every value dropped exactly once"
    );
    assert_eq!(arena.used(), 0);
    assert_eq!(arena.pending_drops(), 0);
    arena.alloc(logged(9, &log));
    drop(arena);
    assert_eq!(taken(&log), [9]);
}

#[test]
fn dropping_the_arena_drops_pending_values() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    /// Not `Send`: it can only go in through `alloc_no_drop`.
    struct NotSend(#[allow(dead_code)] PhantomData<*const ()>);
    impl Drop for NotSend {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }
    let arena = Arena::chained(256);
    arena.alloc_no_drop(NotSend(PhantomData));
    drop(arena);
    assert_eq!(
        DROPS.load(Ordering::Relaxed),
        0,
        "alloc_no_drop never drops, like mem::forget"
    );

    let log = Arc::default();
    let arena = Arena::with_capacity(256);
    arena.alloc(logged(1, &log));
    arena.alloc(logged(2, &log));
    drop(arena);
    assert_eq!(taken(&log), [2, 1]);
}

#[test]
fn zero_sized_values_with_drop_glue_are_dropped() {
    static DROPS: Mutex<u32> = Mutex::new(0);
    struct Zst;
    impl Drop for Zst {
        fn drop(&mut self) {
            *DROPS.lock().unwrap() += 1;
        }
    }
    let mut arena = Arena::with_capacity(256);
    for _ in 0..3 {
        arena.alloc(Zst);
    }
    arena.alloc_slice_fill_with(4, |_| Zst);
    arena.reset();
    assert_eq!(*DROPS.lock().unwrap(), 7);
}

#[test]
fn forgetting_a_scope_keeps_its_values_until_reset() {
    let log = Arc::default();
    let mut arena = Arena::chained(256);
    let scope = arena.scope();
    scope.alloc(logged(1, &log));
    std::mem::forget(scope);
    assert!(taken(&log).is_empty());
    arena.reset();
    assert_eq!(taken(&log), [1]);
}

#[test]
fn a_constructor_that_allocates_keeps_the_drop_list_in_order() {
    let log = Arc::default();
    let mut arena = Arena::chained(256);
    let mut inner_mark = None;
    arena.alloc_with(|| {
        // allocating (and marking) while the outer value is being built
        inner_mark = Some(arena.mark());
        arena.alloc(logged(2, &log));
        logged(1, &log)
    });
    arena.alloc_slice_fill_with(2, |i| {
        arena.alloc(logged(10 + i as u32, &log));
        logged(20 + i as u32, &log)
    });
    arena.rewind(inner_mark.unwrap()).unwrap();
    // everything allocated after the mark is dropped, newest registration first: the slice's
    // nested values, the slice (registered before its elements were built), then value 2
    assert_eq!(taken(&log), [11, 10, 21, 20, 2]);
    arena.reset();
    assert_eq!(taken(&log), [1]);
}

#[test]
fn back_to_back_values_of_one_type_share_a_record_and_still_drop_in_reverse() {
    let log = Arc::default();
    let mut arena = Arena::chained(4096);
    for id in 0..10 {
        arena.alloc(logged(id, &log));
    }
    assert_pending(&arena, 1, 10); // one run
    let m = arena.mark(); // a marker ends the run
    arena.alloc(logged(10, &log));
    arena.alloc(logged(11, &log));
    assert_pending(&arena, 2, 12);
    arena.rewind(m).unwrap();
    assert_eq!(taken(&log), [11, 10]);
    arena.alloc(logged(12, &log)); // after a rewind, a new run
    assert_pending(&arena, 2, 11);
    arena.reset();
    assert_eq!(taken(&log), [12, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
}

#[test]
fn a_constructor_inside_an_open_run_that_allocates_its_own_type_keeps_both_values() {
    // The outer value's slot is bumped at the end of an open run before its constructor runs;
    // the value the constructor allocates must not join that run ahead of the unbuilt slot.
    let log = Arc::default();
    let mut arena = Arena::chained(4096);
    arena.alloc(logged(0, &log)); // opens a run
    arena.alloc_with(|| {
        arena.alloc(logged(2, &log));
        logged(1, &log)
    });
    arena.alloc(logged(3, &log)); // joins the newest run
    assert_pending(&arena, 2, 4);
    arena.reset();
    // newest registration first: the inner run (2, 3), then the outer one (1, 0)
    assert_eq!(taken(&log), [3, 2, 1, 0]);

    // the same, with the constructor panicking after its allocation: the outer slot is
    // never covered, the inner value is dropped once
    arena.alloc(logged(0, &log));
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_with(|| -> Logged {
            arena.alloc(logged(2, &log));
            panic!("constructor panics")
        })
    }));
    assert!(r.is_err());
    arena.alloc(logged(3, &log));
    arena.reset();
    assert_eq!(taken(&log), [3, 2, 0]);
}

/// A zero-sized value with drop glue, counted.
struct Unit;
static UNITS_DROPPED: AtomicUsize = AtomicUsize::new(0);
impl Drop for Unit {
    fn drop(&mut self) {
        UNITS_DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn zero_sized_values_built_inside_a_zero_sized_constructor_are_each_counted_once() {
    // A zero-sized value's record ends at the bump pointer while it is built, so a value of
    // the same type built by its constructor joins the same run: each counts itself in.
    let mut arena = Arena::chained(256);
    UNITS_DROPPED.store(0, Ordering::Relaxed);
    arena.alloc(Unit);
    arena.alloc_with(|| {
        arena.alloc_with(|| {
            arena.alloc(Unit);
            Unit
        });
        Unit
    });
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_with(|| -> Unit {
            arena.alloc(Unit);
            panic!("constructor panics")
        })
    }));
    assert!(r.is_err());
    arena.reset();
    assert_eq!(
        UNITS_DROPPED.load(Ordering::Relaxed),
        5,
        "4 built values and 1 inside the panic"
    );
}

#[test]
fn values_after_with_guards_do_not_join_a_run_opened_before() {
    // Guarded values each get their own record and guard bytes; a run opened before the
    // arena took guards must not take them (debug builds and `debug-checks` only).
    let log = Arc::default();
    let arena = Arena::chained(4096);
    arena.alloc(logged(0, &log));
    let mut arena = arena.with_guards();
    arena.alloc(logged(1, &log));
    arena.alloc(logged(2, &log));
    // Without guard bytes (release builds), 1 and 2 share a run, but not 0's: `with_guards`
    // closes the open run whether or not guards are compiled in.
    let expected = if arena_kit_core::poison::ENABLED {
        3
    } else {
        2
    };
    assert_pending(&arena, expected, 3);
    arena.check_guards().unwrap();
    arena.reset();
    assert_eq!(taken(&log), [2, 1, 0]);
}

#[test]
fn over_aligned_zero_sized_values_are_dropped_at_an_aligned_address_once_each_even_past_a_panic() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    static PANICS: AtomicUsize = AtomicUsize::new(0);
    #[repr(align(64))]
    struct Marker;
    impl Drop for Marker {
        fn drop(&mut self) {
            assert_eq!(
                (self as *mut Marker).addr() % 64,
                0,
                "dropped at an aligned address"
            );
            if DROPS.fetch_add(1, Ordering::Relaxed) == 2 && PANICS.load(Ordering::Relaxed) == 0 {
                PANICS.fetch_add(1, Ordering::Relaxed);
                panic!("the third destructor panics");
            }
        }
    }
    let mut arena = Arena::with_capacity(1024);
    arena.alloc(0u8);
    for _ in 0..5 {
        arena.alloc(Marker);
    }
    arena.alloc_slice_fill_with(3, |_| Marker);
    let r = catch_unwind(AssertUnwindSafe(|| arena.reset()));
    assert!(r.is_err(), "the panic reaches the caller");
    assert_eq!(
        DROPS.load(Ordering::Relaxed),
        8,
        "every value dropped exactly once"
    );
    assert_eq!(arena.pending_drops(), 0);
}

/// A second type that logs like [`Logged`], so that two types alternate: every value after the
/// first then gets a tail entry of the first one's record.
struct Other(#[allow(dead_code)] Logged); // held for its destructor only

#[test]
fn a_panicking_destructor_among_many_records_still_drops_the_rest_on_rewind_and_reset() {
    for panicking in 0..6 {
        let log = Arc::default();
        let mut arena = Arena::chained(256);
        arena.alloc(logged(100, &log));
        let marker = arena.mark();
        for id in 0..6 {
            let value = Logged {
                id,
                log: Arc::clone(&log),
                panic_on_drop: id == panicking,
            };
            alloc_as(&arena, id % 2, value);
        }
        assert!(
            arena.pending_drops() >= 6,
            "a record or a tail entry per value (each page starts a record)"
        );
        let r = catch_unwind(AssertUnwindSafe(|| arena.rewind(marker)));
        assert!(r.is_err(), "the panic reaches the caller");
        assert_eq!(
            taken(&log),
            [5, 4, 3, 2, 1, 0],
            "every value past the marker dropped once, newest first (panic at {panicking})"
        );
        assert_eq!(
            arena.pending_drops(),
            1,
            "the value before the marker is still pending"
        );
        arena.reset();
        assert_eq!(taken(&log), [100]);
    }
}

// --- Values of alternating types: one record, each later value a 16-byte entry -------------

/// A 64-aligned type with drop glue, logging its id, that checks its own alignment on drop.
#[repr(align(64))]
struct Wide(#[allow(dead_code)] Logged); // held for its destructor only

impl Drop for Wide {
    fn drop(&mut self) {
        assert_eq!(
            (self as *mut Wide).addr() % 64,
            0,
            "dropped at an aligned address"
        );
    }
}

/// Allocates `value` as one of three types with drop glue, chosen by `kind % 3`: [`Logged`]
/// itself, [`Other`] or [`Wide`]. Alternating kinds alternate the types.
fn alloc_as(arena: &Arena, kind: u32, value: Logged) {
    match kind % 3 {
        0 => {
            arena.alloc(value);
        }
        1 => {
            arena.alloc(Other(value));
        }
        _ => {
            arena.alloc(Wide(value));
        }
    }
}

#[test]
fn alternating_types_drop_in_reverse_order_and_cost_16_bytes_of_bookkeeping_each() {
    let log = Arc::default();
    let mut arena = Arena::with_capacity(64 * 1024);
    arena.alloc(logged(0, &log));
    let after_first = arena.used();
    for id in 1..100 {
        alloc_as(&arena, id % 2, logged(id, &log));
    }
    // 99 more values of 40 bytes each, 8-aligned: 16 bytes of entry per value, no record.
    let value = size_of::<Logged>().next_multiple_of(8);
    assert_eq!(arena.used() - after_first, 99 * (16 + value));
    assert_eq!(arena.pending_drops(), 100, "one run and 99 entries");
    arena.reset();
    assert_eq!(taken(&log), (0..100).rev().collect::<Vec<_>>());
    assert_eq!(arena.pending_drops(), 0);
}

#[test]
fn a_value_of_the_newest_entrys_type_or_after_a_longer_run_starts_a_record() {
    let log = Arc::default();
    let mut arena = Arena::chained(4096);
    arena.alloc(logged(0, &log)); // a record: a run of one `Logged`
    arena.alloc(Other(logged(1, &log))); // after a run of one: an entry of its tail
    for id in 2..10 {
        arena.alloc(Other(logged(id, &log))); // the newest entry's type: a record, then its run
    }
    assert_pending(&arena, 3, 10);
    arena.alloc(logged(10, &log)); // after a run of 8: a record of its own
    arena.alloc(logged(11, &log)); // which it extends
    assert_pending(&arena, 4, 12);
    arena.alloc(Other(logged(12, &log))); // after a run of 2: a record of its own
    assert_pending(&arena, 5, 13);
    arena.reset();
    assert_eq!(taken(&log), (0..13).rev().collect::<Vec<_>>());
}

#[test]
fn a_marker_ends_a_tail_and_rewinding_to_it_drops_exactly_what_came_after() {
    let log = Arc::default();
    let mut arena = Arena::chained(4096);
    arena.alloc(logged(0, &log));
    arena.alloc(Other(logged(1, &log)));
    let m = arena.mark();
    arena.alloc(logged(2, &log)); // not in the tail before the marker: a record of its own
    arena.alloc(Other(logged(3, &log)));
    arena.alloc(logged(4, &log));
    assert_eq!(arena.pending_drops(), 5);
    arena.rewind(m).unwrap();
    assert_eq!(taken(&log), [4, 3, 2]);
    arena.alloc(Other(logged(5, &log))); // after a rewind, no tail continues
    arena.alloc(logged(6, &log));
    arena.reset();
    assert_eq!(taken(&log), [6, 5, 1, 0]);
}

#[test]
fn scopes_over_alternating_types_drop_their_own_values_only() {
    let log = Arc::default();
    let mut arena = Arena::chained(256);
    arena.alloc(logged(0, &log));
    arena.alloc(Other(logged(1, &log)));
    {
        let mut scope = arena.scope();
        for id in 2..8 {
            alloc_as(&scope, id % 2, logged(id, &log));
        }
        scope.clear();
        assert_eq!(taken(&log), [7, 6, 5, 4, 3, 2]);
        scope.alloc(Other(logged(8, &log)));
    }
    assert_eq!(taken(&log), [8]);
    arena.alloc(logged(9, &log));
    arena.reset();
    assert_eq!(taken(&log), [9, 1, 0]);
}

#[test]
fn alternating_types_across_many_small_pages_drop_in_reverse_order() {
    let log = Arc::default();
    let mut arena = Arena::chained(256);
    for id in 0..200 {
        alloc_as(&arena, id % 3, logged(id, &log));
    }
    arena.reset();
    assert_eq!(taken(&log), (0..200).rev().collect::<Vec<_>>());
}

#[test]
fn an_over_aligned_value_in_a_tail_is_aligned_and_dropped_once() {
    let log = Arc::default();
    let mut arena = Arena::with_capacity(4096);
    arena.alloc(logged(0, &log));
    arena.alloc(7u8); // leaves the bump pointer unaligned
    arena.alloc(logged(1, &log));
    for id in 2..8 {
        let w = arena.alloc(Wide(logged(id, &log)));
        assert_eq!((w as *mut Wide).addr() % 64, 0);
        arena.alloc(Other(logged(100 + id, &log)));
    }
    arena.reset();
    let mut expected = vec![];
    for id in (2..8).rev() {
        expected.extend([100 + id, id]);
    }
    expected.extend([1, 0]);
    assert_eq!(taken(&log), expected);
}

#[test]
fn a_constructor_of_a_tail_value_that_allocates_or_panics_keeps_the_drop_order() {
    let log = Arc::default();
    let mut arena = Arena::chained(4096);
    arena.alloc(logged(0, &log));
    // The outer value's entry is bumped before its constructor runs; what the constructor
    // allocates comes after it and is dropped before it.
    arena.alloc_with(|| {
        arena.alloc(logged(2, &log));
        arena.alloc(Other(logged(3, &log)));
        Other(logged(1, &log))
    });
    // A constructor that panics after allocating: its entry drops nothing, the inner value
    // is dropped once.
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_with(|| -> Other {
            arena.alloc(logged(4, &log));
            panic!("constructor panics")
        })
    }));
    assert!(r.is_err());
    arena.alloc(Other(logged(5, &log)));
    arena.reset();
    assert_eq!(taken(&log), [5, 4, 3, 2, 1, 0]);
}

#[test]
fn zero_sized_values_alternating_with_sized_ones_are_each_dropped_once_in_order() {
    static ORDER: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    struct Mark;
    impl Drop for Mark {
        fn drop(&mut self) {
            ORDER.lock().unwrap().push(u32::MAX);
        }
    }
    let log = Arc::default();
    let mut arena = Arena::chained(4096);
    for id in 0..6 {
        arena.alloc(Mark);
        arena.alloc(logged(id, &log));
    }
    // a zero-sized value whose constructor allocates a sized one: the sized value may go to
    // the zero-sized record's tail, and is dropped first
    arena.alloc_with(|| {
        arena.alloc(logged(6, &log));
        Mark
    });
    arena.reset();
    assert_eq!(ORDER.lock().unwrap().len(), 7);
    assert_eq!(taken(&log), (0..7).rev().collect::<Vec<_>>());
}

#[test]
fn a_budget_that_refuses_a_tail_value_changes_nothing_and_drops_the_value() {
    let log = Arc::default();
    let mut arena = Arena::chained(4096);
    arena.alloc(logged(0, &log));
    let limit = arena.used() + 8;
    arena.set_budget(Some(arena_kit_core::tags::Budget::fail(limit).into()));
    let (used, pending) = (arena.used(), arena.pending_drops());
    assert!(arena.try_alloc(Other(logged(1, &log))).is_err());
    assert_eq!(taken(&log), [1], "the refused value is dropped");
    assert_eq!((arena.used(), arena.pending_drops()), (used, pending));
    arena.reset();
    assert_eq!(taken(&log), [0]);
}

#[test]
fn a_marker_taken_while_a_slice_or_fallible_value_is_built_ends_its_run() {
    // The record is linked before its values are built and opened as a run once they are; a
    // marker taken meanwhile must keep it closed, or a later value (of either type) would join
    // it past the marker and a rewind to the marker would drop the values before it too.
    for later_type in 0..2 {
        let log = Arc::default();
        let mut arena = Arena::chained(4096);
        let mut m = None;
        arena
            .alloc_try_with(|| {
                m = Some(arena.mark());
                Ok::<_, ()>(logged(1, &log))
            })
            .unwrap();
        alloc_as(&arena, later_type, logged(2, &log));
        arena.rewind(m.unwrap()).unwrap();
        assert_eq!(taken(&log), [2], "only the value after the marker");

        let mut m = None;
        arena.alloc_slice_fill_with(3, |i| {
            if i == 2 {
                m = Some(arena.mark());
            }
            logged(10 + i as u32, &log)
        });
        alloc_as(&arena, later_type, logged(20, &log));
        arena.rewind(m.unwrap()).unwrap();
        assert_eq!(taken(&log), [20], "only the value after the marker");
        arena.reset();
        assert_eq!(taken(&log), [12, 11, 10, 1]);
    }
}
