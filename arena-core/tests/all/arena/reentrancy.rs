//! Re-entrancy: constructors and destructors that call back into the same arena or into
//! `scratch` get fresh memory or a different arena, never the arena being built or reset, and
//! every destructor still runs exactly once.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::arena::{Arena, scratch, scratch_depth};

thread_local! {
    /// Addresses of the scratch arenas destructors were handed, innermost last.
    static SEEN: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// How deep the destructor of `NestsScratch` nests its own scratch calls.
    static NEST: Cell<usize> = const { Cell::new(1) };
}

fn seen() -> Vec<usize> {
    SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

fn addr(arena: &Arena) -> usize {
    std::ptr::from_ref(arena) as usize
}

/// Calls `scratch` from its destructor (nested `NEST` deep), allocating in each arena it gets
/// (values with destructors too, so the nested resets have work to do).
struct NestsScratch;

fn nest(levels: usize) {
    if levels == 0 {
        return;
    }
    scratch(|a| {
        SEEN.with(|s| s.borrow_mut().push(addr(a)));
        let n = a.alloc(41u64);
        a.alloc(String::from("allocated by a destructor"));
        *n += 1;
        nest(levels - 1);
        assert_eq!(*n, 42, "a nested call did not clobber this arena");
    });
}

impl Drop for NestsScratch {
    fn drop(&mut self) {
        nest(NEST.with(Cell::get));
    }
}

#[test]
fn a_destructor_run_by_the_scratch_reset_gets_a_different_scratch_arena() {
    let outer = scratch(|a| {
        a.alloc(NestsScratch);
        a.alloc(String::from("dropped by the same reset"));
        addr(a)
    });
    let inner = seen();
    assert_eq!(inner.len(), 1);
    assert_ne!(
        inner[0], outer,
        "the destructor was handed the arena being reset"
    );
    assert_eq!(scratch_depth(), 0);
    assert_eq!(scratch(|a| a.used()), 0, "every scratch arena was reset");
}

#[test]
fn scratch_inside_scratch_inside_a_destructor_gets_distinct_arenas() {
    NEST.with(|n| n.set(3));
    let (outer, middle) = scratch(|a| {
        let middle = scratch(|b| {
            b.alloc(NestsScratch);
            addr(b)
        });
        (addr(a), middle)
    });
    NEST.with(|n| n.set(1));
    let mut all = seen();
    assert_eq!(all.len(), 3);
    all.push(outer);
    all.push(middle);
    let mut unique = all.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        all.len(),
        "some scratch call got an arena in use: {all:x?}"
    );
    assert_eq!(scratch_depth(), 0);
}

#[test]
fn a_destructor_run_by_an_arena_reset_can_use_scratch() {
    let mut arena = Arena::chained(256);
    for _ in 0..4 {
        arena.alloc(NestsScratch);
        arena.alloc(7u32);
    }
    arena.reset();
    assert_eq!(seen().len(), 4);
    drop(arena);
    assert_eq!(scratch_depth(), 0);
}

/// A zero-sized type with a destructor; each test counts in its own counter.
macro_rules! counted_zst {
    ($name:ident, $counter:ident) => {
        static $counter: AtomicUsize = AtomicUsize::new(0);
        struct $name;
        impl Drop for $name {
            fn drop(&mut self) {
                $counter.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
}

#[test]
fn a_zero_sized_constructor_that_allocates_its_own_type_loses_no_destructor() {
    counted_zst!(Zst, DROPS);
    let mut arena = Arena::chained(1024);
    arena.alloc_with(|| {
        arena.alloc(Zst);
        Zst
    });
    arena.reset();
    assert_eq!(DROPS.load(Ordering::Relaxed), 2);

    // and when a run of the type is already open
    arena.alloc(Zst);
    arena.alloc_with(|| {
        arena.alloc(Zst);
        arena.alloc_with(|| {
            arena.alloc(Zst);
            Zst
        });
        Zst
    });
    arena.reset();
    assert_eq!(DROPS.load(Ordering::Relaxed), 2 + 5);
}

#[test]
fn a_zero_sized_slice_whose_elements_allocate_their_own_type_loses_no_destructor() {
    counted_zst!(Zst, DROPS);
    let mut arena = Arena::chained(1024);
    arena.alloc_slice_fill_with(3, |_| {
        arena.alloc(Zst);
        Zst
    });
    arena.reset();
    assert_eq!(DROPS.load(Ordering::Relaxed), 6);
}

#[test]
fn a_constructor_that_marks_keeps_later_values_out_of_the_open_run() {
    counted_zst!(Zst, DROPS);
    let mut arena = Arena::chained(1024);
    let mut inner = None;
    arena.alloc_with(|| {
        inner = Some(arena.mark());
        Zst
    });
    arena.alloc(Zst);
    arena.alloc(Zst);
    arena.rewind(inner.unwrap()).unwrap();
    assert_eq!(
        DROPS.load(Ordering::Relaxed),
        2,
        "values allocated after the marker are dropped by the rewind"
    );
    arena.reset();
    assert_eq!(DROPS.load(Ordering::Relaxed), 3);
}

#[test]
fn values_allocated_inside_a_constructor_of_a_sized_type_drop_once() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Big([u64; 3]);
    impl Drop for Big {
        fn drop(&mut self) {
            DROPS.fetch_add(self.0[0] as usize, Ordering::Relaxed);
        }
    }
    let mut arena = Arena::chained(256);
    for _ in 0..10 {
        arena.alloc_with(|| {
            arena.alloc(Big([1; 3]));
            arena.alloc_slice_fill_with(2, |_| Big([10; 3]));
            Big([100; 3])
        });
    }
    arena.reset();
    assert_eq!(DROPS.load(Ordering::Relaxed), 10 * 121);
}
