//! Panic safety: every arena API that calls user code (constructor closures, slice fillers,
//! destructors run by rewind, scope end, reset and drop) is run with a panic injected at the
//! k-th user call, for every k up to the number of calls. Every value built is dropped exactly
//! once (never, for `alloc_no_drop`), and the arena stays usable.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::arena::{Arena, scratch};

use crate::support::panics::planned_panic;

thread_local! {
    /// User calls so far in this run.
    static CALLS: Cell<usize> = const { Cell::new(0) };
    /// The call that panics (once), if any.
    static PANIC_AT: Cell<Option<usize>> = const { Cell::new(None) };
    /// Drops per value id.
    static DROPS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// Whether each value id was built with `alloc_no_drop`.
    static NO_DROP: RefCell<Vec<bool>> = const { RefCell::new(Vec::new()) };
}

/// One user call: panics if it is the chosen one (only once per run, so a destructor run while
/// unwinding never panics a second time, which would abort).
fn user_call() {
    let n = CALLS.with(|c| c.replace(c.get() + 1));
    if PANIC_AT.with(|p| p.get()) == Some(n) {
        PANIC_AT.with(|p| p.set(None));
        planned_panic(format!("planned panic at user call {n}"));
    }
}

/// A value whose construction and destruction are user calls, and whose drops are counted.
struct Counted {
    id: usize,
    _payload: [u64; 2],
}

fn make(no_drop: bool) -> Counted {
    user_call();
    let id = DROPS.with(|d| {
        let mut d = d.borrow_mut();
        d.push(0);
        d.len() - 1
    });
    NO_DROP.with(|n| n.borrow_mut().push(no_drop));
    Counted {
        id,
        _payload: [id as u64; 2],
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let n = DROPS.with(|d| {
            let mut d = d.borrow_mut();
            d[self.id] += 1;
            d[self.id]
        });
        assert_eq!(n, 1, "value {} dropped twice", self.id);
        user_call();
    }
}

/// A second type holding a [`Counted`], so values of the two types can alternate (each after
/// the first then goes to a record's tail).
struct Other(#[allow(dead_code)] Counted); // held for its destructor only

fn make_other() -> Other {
    Other(make(false))
}

/// A zero-sized value with the same bookkeeping, through a side table.
struct CountedZst;

thread_local! {
    static ZST_BUILT: Cell<usize> = const { Cell::new(0) };
    static ZST_DROPPED: Cell<usize> = const { Cell::new(0) };
}

fn make_zst() -> CountedZst {
    user_call();
    ZST_BUILT.with(|b| b.set(b.get() + 1));
    CountedZst
}

impl Drop for CountedZst {
    fn drop(&mut self) {
        ZST_DROPPED.with(|d| d.set(d.get() + 1));
        user_call();
    }
}

fn start_run(panic_at: Option<usize>) {
    CALLS.with(|c| c.set(0));
    PANIC_AT.with(|p| p.set(panic_at));
    DROPS.with(|d| d.borrow_mut().clear());
    NO_DROP.with(|n| n.borrow_mut().clear());
    ZST_BUILT.with(|c| c.set(0));
    ZST_DROPPED.with(|c| c.set(0));
}

/// Checks that every value built was dropped exactly once, or never for `alloc_no_drop`.
fn check_drops(k: Option<usize>) {
    let drops = DROPS.with(|d| d.borrow().clone());
    let no_drop = NO_DROP.with(|n| n.borrow().clone());
    for (id, (&n, &nd)) in drops.iter().zip(&no_drop).enumerate() {
        let want = u32::from(!nd);
        assert_eq!(n, want, "panic at call {k:?}: value {id} dropped {n} times");
    }
    let (built, dropped) = (ZST_BUILT.with(Cell::get), ZST_DROPPED.with(Cell::get));
    assert_eq!(
        built, dropped,
        "panic at call {k:?}: zero-sized values built and dropped"
    );
}

/// Every API that calls user code, in one frame.
fn frame(arena: &mut Arena) {
    arena.alloc_with(|| make(false));
    arena.alloc_slice_fill_with(3, |_| make(false));
    arena.alloc_with(|| {
        // a constructor that allocates (with drop glue) before it finishes
        arena.alloc_with(|| make(false));
        arena.alloc_slice_fill_with(2, |_| make(false));
        make(false)
    });
    arena.alloc_no_drop(make(true));
    arena.alloc_with(make_zst);
    arena.alloc_slice_fill_with(3, |_| make_zst());
    arena.alloc_with(|| {
        arena.alloc_with(make_zst);
        make_zst()
    });
    // values of alternating types: the tail of one record
    for _ in 0..2 {
        arena.alloc_with(|| make(false));
        arena.alloc_with(make_other);
    }
    arena.alloc_with(|| {
        // a tail value's constructor that allocates both types and a zero-sized value
        arena.alloc_with(|| make(false));
        arena.alloc_with(make_other);
        arena.alloc_with(make_zst);
        make(false)
    });
    let m = arena.mark();
    arena.alloc_slice_fill_with(2, |_| make(false));
    arena.alloc_with(make_other);
    arena.alloc_with(|| make(false));
    arena.rewind(m).unwrap(); // destructors run by rewind
    {
        let scope = arena.scope();
        scope.alloc_with(|| make(false));
        scope.alloc_slice_fill_with(2, |_| make(false));
    } // destructors run at scope end
    arena.alloc(7u64);
    let _ = scratch(|s| {
        s.alloc_with(|| make(false));
        s.alloc_slice_fill_with(2, |_| make(false)).len()
    }); // destructors run by the scratch reset
    arena.reset(); // destructors run by reset
    arena.alloc_with(|| make(false));
    arena.alloc_slice_fill_with(2, |_| make(false));
}

/// Runs `frame` with a panic at each call k, then finishes (reset, drop) and checks.
fn panic_at_every_call(page: usize, guarded: bool) {
    let fresh = || {
        let a = Arena::chained(page);
        if guarded { a.with_guards() } else { a }
    };
    start_run(None);
    let mut arena = fresh();
    frame(&mut arena);
    drop(arena); // destructors run when the arena is dropped
    let total = CALLS.with(Cell::get);
    check_drops(None);
    assert!(total > 30, "the frame makes {total} user calls");

    for k in 0..total {
        start_run(Some(k));
        let mut arena = fresh();
        let r = catch_unwind(AssertUnwindSafe(|| frame(&mut arena)));
        if r.is_ok() {
            // the chosen call is a destructor run when the arena is dropped
            let r = catch_unwind(AssertUnwindSafe(move || drop(arena)));
            assert!(r.is_err(), "call {k} panicked");
            check_drops(Some(k));
            continue;
        }
        // usable afterwards: allocate, rewind, reset
        let m = arena.mark();
        arena.alloc_slice_fill_with(4, |i| i as u32);
        arena.rewind(m).unwrap();
        arena.reset();
        assert_eq!((arena.used(), arena.pending_drops()), (0, 0));
        arena.alloc(String::from("after the panic"));
        drop(arena);
        check_drops(Some(k));
    }
}

#[test]
fn a_panic_at_any_user_call_drops_every_built_value_exactly_once() {
    panic_at_every_call(4096, false);
}

#[test]
fn a_panic_at_any_user_call_across_small_pages_drops_every_built_value_exactly_once() {
    panic_at_every_call(160, false);
}

#[test]
fn a_panic_at_any_user_call_in_a_guarded_arena_drops_every_built_value_exactly_once() {
    panic_at_every_call(512, true);
}

#[test]
fn a_panic_while_dropping_the_arena_still_drops_the_rest_and_frees_the_pages() {
    for k in 0..6 {
        start_run(None);
        let arena = Arena::chained(128);
        for _ in 0..3 {
            arena.alloc_with(|| make(false));
            arena.alloc(1u8);
        }
        arena.alloc_slice_fill_with(3, |_| make(false));
        PANIC_AT.with(|p| p.set(Some(CALLS.with(Cell::get) + k)));
        let r = catch_unwind(AssertUnwindSafe(|| drop(arena)));
        assert!(r.is_err(), "destructor {k} panicked");
        check_drops(Some(k));
    }
}

#[test]
fn a_panic_in_a_slice_filler_at_every_index_drops_the_built_prefix_once() {
    let len = 6;
    for k in 0..len {
        start_run(Some(k));
        let mut arena = Arena::chained(256);
        let r = catch_unwind(AssertUnwindSafe(|| {
            arena.alloc_slice_fill_with(len, |_| make(false));
        }));
        assert!(r.is_err());
        // the prefix was dropped by the failed call itself
        let drops = DROPS.with(|d| d.borrow().clone());
        assert_eq!(drops, vec![1; k], "panic at element {k}");
        assert_eq!(arena.pending_drops(), 0);
        arena.reset();
        check_drops(Some(k));
    }
}
