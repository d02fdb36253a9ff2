//! Attacks on the destructor bookkeeping (drop records, runs, tails) from safe code:
//! nested constructors of mixed types, markers and rewinds inside tails, panicking constructors
//! and destructors, slice builders that panic or fail, zero-sized and over-aligned types,
//! guarded arenas, re-entrant scratch arenas, and types whose drop glue the compiler may merge.
//! Every value must be dropped exactly once, in reverse order of its slot's reservation, at an
//! aligned address.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::arena::{AllocOrInitError, Arena, ArenaError};

use super::drop_ledger::{LOG, UNTRACKED, check_clean, died, panic_on, take_log, ty};

/// The ids the two zero-sized types are logged under.
const Z1: u32 = UNTRACKED;
const Z2: u32 = 2 * UNTRACKED;

ty!(A; );
ty!(B; p: u64, q: u64);
ty!(C; s: [u8; 3]);
ty!(H64, repr(align(64)); );
ty!(H4096, repr(align(4096)); );

/// Zero-sized with drop glue.
struct Z;
impl Drop for Z {
    fn drop(&mut self) {
        died(Z1, self as *mut Self as usize, 1, true);
    }
}

/// Zero-sized, page-aligned.
#[repr(align(4096))]
struct ZBig;
impl Drop for ZBig {
    fn drop(&mut self) {
        died(Z2, self as *mut Self as usize, 4096, true);
    }
}

fn reversed(v: &[u32]) -> Vec<u32> {
    v.iter().rev().copied().collect()
}

// ---------------------------------------------------------------------------------------------
// Nested constructors
// ---------------------------------------------------------------------------------------------

/// Constructors nested four deep, each allocating values of its own type, of other types,
/// zero-sized ones and over-aligned ones before building its own value: drops come in reverse
/// order of reservation (the outer slot is reserved before its constructor runs).
#[test]
fn nested_constructors_of_mixed_types_drop_in_reverse_reservation_order() {
    let mut arena = Arena::chained(512);
    let mut order = Vec::new();
    let o = RefCell::new(&mut order);
    let note = |id: u32| o.borrow_mut().push(id);
    note(1);
    arena.alloc(A::new(1));
    note(2);
    arena.alloc_with(|| {
        note(3);
        arena.alloc(A::new(3));
        note(4);
        arena.alloc_with(|| {
            note(Z1);
            arena.alloc(Z);
            note(5);
            arena.alloc_with(|| {
                note(6);
                arena.alloc(C::new(6));
                note(7);
                arena.alloc_with(|| {
                    note(8);
                    arena.alloc(B::new(8));
                    note(Z1);
                    arena.alloc_with(|| Z);
                    H64::new(7)
                });
                note(9);
                arena.alloc(B::new(9));
                A::new(5)
            });
            C::new(4)
        });
        note(10);
        arena.alloc(H64::new(10));
        B::new(2)
    });
    note(11);
    arena.alloc(C::new(11));
    note(Z2);
    arena.alloc(ZBig);
    note(12);
    arena.alloc(A::new(12));
    arena.reset();
    assert_eq!(take_log(), reversed(&order));
    check_clean();
}

/// The same nesting, with a marker taken at every depth; rewinding to each (innermost first)
/// drops exactly what was reserved after it.
#[test]
fn markers_taken_inside_nested_constructors_rewind_exactly() {
    let mut arena = Arena::chained(1024);
    let mut marks = Vec::new();
    let m = RefCell::new(&mut marks);
    arena.alloc(A::new(1));
    arena.alloc_with(|| {
        arena.alloc(C::new(3)); // after B(2)'s slot
        m.borrow_mut().push((arena.mark(), 4));
        arena.alloc_with(|| {
            arena.alloc(B::new(5));
            m.borrow_mut().push((arena.mark(), 6));
            arena.alloc_with(|| {
                m.borrow_mut().push((arena.mark(), 7));
                arena.alloc(Z);
                arena.alloc(A::new(7));
                C::new(6)
            });
            A::new(4)
        });
        B::new(2)
    });
    arena.alloc(C::new(8));
    let marks = m.into_inner();
    // innermost marker first: it is the latest position
    let (m7, _) = marks[2];
    let (m6, _) = marks[1];
    let (m4, _) = marks[0];
    arena.rewind(m7).unwrap();
    assert_eq!(take_log(), [8, 7, Z1]);
    arena.rewind(m6).unwrap();
    assert_eq!(take_log(), [6]);
    arena.rewind(m4).unwrap();
    assert_eq!(take_log(), [5, 4]);
    arena.reset();
    assert_eq!(take_log(), [3, 2, 1]);
    check_clean();
}

/// Constructors that panic after allocating, caught at each level: built values drop once, the
/// values whose constructor panicked never.
#[test]
fn panicking_constructors_caught_at_every_depth() {
    let mut arena = Arena::chained(512);
    arena.alloc(A::new(1));
    arena.alloc_with(|| {
        arena.alloc(C::new(3));
        let r = catch_unwind(AssertUnwindSafe(|| {
            arena.alloc_with(|| -> B {
                arena.alloc(A::new(4));
                arena.alloc(Z);
                let r = catch_unwind(AssertUnwindSafe(|| {
                    arena.alloc_with(|| -> C {
                        arena.alloc(B::new(5));
                        panic!("inner");
                    })
                }));
                assert!(r.is_err());
                arena.alloc(C::new(6));
                panic!("middle");
            })
        }));
        assert!(r.is_err());
        arena.alloc(B::new(7));
        arena.alloc(A::new(8));
        A::new(2)
    });
    arena.alloc(A::new(9));
    arena.alloc(A::new(10));
    arena.reset();
    assert_eq!(take_log(), [10, 9, 8, 7, 6, 5, Z1, 4, 3, 2, 1]);
    check_clean();
}

// ---------------------------------------------------------------------------------------------
// Alternating types and markers
// ---------------------------------------------------------------------------------------------

/// A, B, A, B ... with a marker after every value: rewinding to each marker in turn drops exactly
/// the newest value.
#[test]
fn alternating_types_marker_after_each_value() {
    let mut arena = Arena::chained(4096);
    let mut marks = Vec::new();
    for id in 1..=12 {
        marks.push(arena.mark());
        match id % 3 {
            0 => drop(arena.alloc(A::new(id))),
            1 => drop(arena.alloc(B::new(id))),
            _ => drop(arena.alloc(C::new(id))),
        }
    }
    for id in (1..=12).rev() {
        arena.rewind(marks[id as usize - 1]).unwrap();
        assert_eq!(take_log(), [id]);
    }
    check_clean();
}

/// Runs of mixed lengths with markers in the middle of tails, then allocation after the rewind
/// goes on; every value drops once.
#[test]
fn runs_of_mixed_lengths_with_rewinds_into_tails() {
    let mut arena = Arena::chained(1024);
    let mut next = 1u32;
    let mut all_live: Vec<u32> = Vec::new();
    let pattern: &[(u8, usize)] = &[
        (0, 1),
        (1, 1),
        (0, 1),
        (2, 3),
        (1, 1),
        (0, 2),
        (2, 1),
        (1, 1),
    ];
    for round in 0..4 {
        let mut marks = Vec::new();
        for (k, &(t, n)) in pattern.iter().enumerate() {
            if (k + round) % 3 == 0 {
                marks.push((arena.mark(), all_live.len()));
            }
            for _ in 0..n {
                let id = next;
                next += 1;
                all_live.push(id);
                match t {
                    0 => drop(arena.alloc(A::new(id))),
                    1 => drop(arena.alloc(B::new(id))),
                    _ => drop(arena.alloc(C::new(id))),
                }
            }
        }
        // rewind to the middle marker, and to the last
        let (mk, keep) = marks[marks.len() / 2];
        let expect: Vec<u32> = all_live[keep..].iter().rev().copied().collect();
        all_live.truncate(keep);
        arena.rewind(mk).unwrap();
        assert_eq!(take_log(), expect, "round {round}");
        // markers past the position are stale now
        let (last, _) = marks[marks.len() - 1];
        if marks.len() > 1 && last != mk {
            assert!(arena.rewind(last).is_err());
        }
    }
    arena.reset();
    assert_eq!(take_log(), reversed(&all_live));
    check_clean();
}

/// A scope opened in the middle of a tail; values of alternating types inside; nested scopes
/// and `clear`.
#[test]
fn scopes_inside_tails() {
    let mut arena = Arena::chained(1024);
    arena.alloc(A::new(1));
    arena.alloc(B::new(2)); // A's tail
    {
        let mut s = arena.scope();
        s.alloc(A::new(3));
        s.alloc(B::new(4));
        {
            let inner = s.scope();
            inner.alloc(C::new(5));
            inner.alloc(Z);
            inner.alloc(A::new(6));
        }
        assert_eq!(take_log(), [6, Z1, 5]);
        s.alloc(C::new(7));
        s.clear();
        assert_eq!(take_log(), [7, 4, 3]);
        s.alloc(B::new(8));
    }
    assert_eq!(take_log(), [8]);
    arena.alloc(A::new(9)); // must not join anything closed by the scope
    arena.alloc(C::new(10));
    arena.reset();
    assert_eq!(take_log(), [10, 9, 2, 1]);
    check_clean();
}

// ---------------------------------------------------------------------------------------------
// Panicking destructors
// ---------------------------------------------------------------------------------------------

/// One destructor panics in the middle of a run, one in a tail, on reset, rewind, scope end and
/// the arena's drop: the others still run, each once; the arena stays usable.
#[test]
fn one_panicking_destructor_in_runs_and_tails() {
    for (where_, victim) in [
        (0u8, 3u32),
        (0, 5),
        (0, 6),
        (1, 3),
        (1, 5),
        (1, 6),
        (2, 4),
        (3, 2),
        (3, 6),
    ] {
        let mut holder = Some(Arena::chained(512));
        let arena = holder.as_mut().unwrap();
        let base = arena.mark();
        arena.alloc(A::new(1));
        arena.alloc(A::new(2));
        arena.alloc(A::new(3)); // run of three
        arena.alloc(B::new(4)); // record of its own (after a run of 3)
        arena.alloc(C::new(5)); // B's tail
        arena.alloc(A::new(6)); // B's tail
        panic_on(&[victim]);
        let r = match where_ {
            0 => catch_unwind(AssertUnwindSafe(|| arena.reset())),
            1 => catch_unwind(AssertUnwindSafe(|| arena.rewind(base).unwrap())),
            2 => catch_unwind(AssertUnwindSafe(|| {
                let s = arena.scope();
                s.alloc(B::new(100));
                s.alloc(A::new(101));
                s.alloc(C::new(102));
                panic_on(&[101]);
                drop(s);
            })),
            _ => catch_unwind(AssertUnwindSafe(|| drop(holder.take()))),
        };
        panic_on(&[]);
        assert!(r.is_err(), "case {where_} {victim}");
        let log = take_log();
        if where_ == 2 {
            assert_eq!(log, [102, 101, 100], "case {where_}");
            let arena = holder.as_mut().unwrap();
            arena.alloc(B::new(7));
            arena.reset();
            assert_eq!(take_log(), [7, 6, 5, 4, 3, 2, 1]);
        } else {
            assert_eq!(log, [6, 5, 4, 3, 2, 1], "case {where_} {victim}");
            if let Some(arena) = holder.as_mut() {
                arena.alloc(A::new(8));
                arena.alloc(B::new(9));
                arena.reset();
                assert_eq!(take_log(), [9, 8]);
            }
        }
        drop(holder);
        assert_eq!(take_log(), Vec::<u32>::new());
        check_clean();
    }
}

/// A destructor that panics while a rewind runs a record's tail, and the panicking entry is the
/// last of its tail.
#[test]
fn panic_in_last_tail_entry_during_rewind() {
    let mut arena = Arena::chained(512);
    arena.alloc(A::new(1));
    let m = arena.mark();
    arena.alloc(A::new(2));
    arena.alloc(B::new(3)); // tail of A(2)'s record
    arena.alloc(C::new(4));
    panic_on(&[3]);
    let r = catch_unwind(AssertUnwindSafe(|| arena.rewind(m)));
    assert!(r.is_err());
    assert_eq!(take_log(), [4, 3, 2]);
    arena.alloc(A::new(5));
    arena.alloc(B::new(6));
    arena.reset();
    assert_eq!(take_log(), [6, 5, 1]);
    check_clean();
}

// ---------------------------------------------------------------------------------------------
// Slice builders
// ---------------------------------------------------------------------------------------------

/// `alloc_slice_fill_with` whose closure allocates values of other types and of its own type,
/// takes a marker, then panics at element 3: the three built drop once (now), the values the
/// closure allocated stay until the reset, the marker stays usable or stale, never unsafe.
#[test]
fn slice_fill_closure_allocates_marks_then_panics() {
    let mut arena = Arena::chained(1024);
    arena.alloc(A::new(1));
    let mut mark = None;
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_slice_fill_with(6, |i| {
            let i = i as u32;
            arena.alloc(B::new(100 + i));
            if i == 1 {
                mark = Some(arena.mark());
            }
            arena.alloc(C::new(200 + i));
            if i == 3 {
                panic!("element 3");
            }
            A::new(10 + i)
        })
    }));
    assert!(r.is_err());
    assert_eq!(
        take_log(),
        [10, 11, 12],
        "built elements dropped in index order by the guard"
    );
    arena.alloc(A::new(2));
    arena.alloc(B::new(3));
    arena.rewind(mark.unwrap()).unwrap();
    assert_eq!(take_log(), [3, 2, 203, 103, 202, 102, 201]);
    arena.reset();
    assert_eq!(take_log(), [101, 200, 100, 1]);
    check_clean();
}

/// A failing `try_` slice builder whose closure allocated nothing: its block is given back and
/// the next values run on as if it never happened; one whose closure allocated keeps its block.
#[test]
fn try_fill_with_errors_give_back_or_keep() {
    let mut arena = Arena::with_capacity(4096);
    arena.alloc(A::new(1));
    let used = arena.used();
    let r = arena.try_alloc_slice_try_fill_with(5, |i| {
        if i == 2 {
            Err("stop")
        } else {
            Ok(B::new(10 + i as u32))
        }
    });
    assert!(matches!(r, Err(AllocOrInitError::Init("stop"))));
    assert_eq!(take_log(), [10, 11]);
    assert_eq!(arena.used(), used, "given back");
    arena.alloc(A::new(2)); // joins A(1)'s run again
    arena.alloc(C::new(3));
    let r = arena.alloc_slice_try_fill_with(3, |i| {
        arena.alloc(A::new(20 + i as u32));
        if i == 1 {
            Err(())
        } else {
            Ok(C::new(30 + i as u32))
        }
    });
    assert!(r.is_err());
    assert_eq!(take_log(), [30]);
    arena.alloc(B::new(4));
    let r = arena.try_alloc_try_with(|| -> Result<A, u8> {
        arena.alloc(C::new(5));
        Err(7)
    });
    assert!(matches!(r, Err(AllocOrInitError::Init(7))));
    arena.alloc(A::new(6));
    arena.reset();
    assert_eq!(take_log(), [6, 5, 4, 21, 20, 3, 2, 1]);
    check_clean();
}

/// `alloc_box_slice_fill_with` whose closure allocates arena values and panics midway.
#[test]
fn box_slice_fill_panics_midway_after_allocating() {
    let mut arena = Arena::chained(1024);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_box_slice_fill_with(5, |i| {
            let i = i as u32;
            arena.alloc(A::new(100 + i));
            if i == 2 {
                panic!("box element 2");
            }
            B::new(i)
        });
    }));
    assert!(r.is_err());
    assert_eq!(take_log(), [0, 1]);
    {
        let b = arena.alloc_box_slice_fill_with(3, |i| C::new(10 + i as u32));
        arena.alloc(A::new(20));
        drop(b);
        assert_eq!(take_log(), [10, 11, 12]);
    }
    arena.reset();
    assert_eq!(take_log(), [20, 102, 101, 100]);
    check_clean();
}

/// Sizes that overflow are errors, never wrapped sizes, for every slice builder and type kind.
#[test]
fn overflowing_slice_lengths_are_errors() {
    let arena = Arena::chained(1024);
    let called = std::cell::Cell::new(false);
    for len in [
        usize::MAX,
        usize::MAX / 2,
        isize::MAX as usize,
        (isize::MAX as usize) / 16 + 1,
    ] {
        let r = arena.try_alloc_slice_fill_with(len, |i| {
            called.set(true);
            B::new(i as u32)
        });
        assert!(
            matches!(r, Err(ArenaError::SizeOverflow { .. })),
            "{len}: {r:?}",
            r = r.map(|_| ())
        );
        let r = arena.try_alloc_box_slice_fill_with(len, |_| [0u64; 2]);
        assert!(matches!(r, Err(ArenaError::SizeOverflow { .. })));
        let r = arena.try_alloc_slice_try_fill_with(len, |_| Ok::<_, ()>(H4096::new(0)));
        assert!(matches!(
            r,
            Err(AllocOrInitError::Alloc(ArenaError::SizeOverflow { .. }))
        ));
    }
    assert!(!called.get());
    // just under the limit once a record is added in front
    let len = (isize::MAX as usize - 63) / 16;
    let r = arena.try_alloc_slice_fill_with(len, |i| B::new(i as u32));
    assert!(r.is_err());
    // zero-sized values with drop glue: any length is fine; a panic part way drops those built
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_slice_fill_with(usize::MAX, |i| {
            if i == 3 {
                panic!("enough");
            }
            Z
        })
    }));
    assert!(r.is_err());
    assert_eq!(take_log(), [Z1, Z1, Z1]);
    drop(arena);
    assert_eq!(take_log(), Vec::<u32>::new());
    check_clean();
}

// ---------------------------------------------------------------------------------------------
// Zero-sized and over-aligned
// ---------------------------------------------------------------------------------------------

#[test]
fn zero_sized_and_page_aligned_values_in_runs_and_tails() {
    let mut arena = Arena::chained(256);
    arena.alloc(A::new(1));
    arena.alloc(ZBig);
    arena.alloc(H4096::new(2));
    arena.alloc(Z);
    arena.alloc(ZBig);
    arena.alloc(C::new(3));
    arena.alloc(H4096::new(4));
    arena.alloc(H64::new(5));
    arena.alloc(H4096::new(6));
    let m = arena.mark();
    arena.alloc(ZBig);
    arena.alloc(ZBig);
    arena.alloc(H64::new(7));
    arena.alloc_with(|| {
        arena.alloc(ZBig);
        arena.alloc(H4096::new(9));
        ZBig
    });
    arena.alloc_slice_fill_with(3, |_| ZBig);
    arena.alloc_slice_fill_with(2, |i| H4096::new(10 + i as u32));
    arena.rewind(m).unwrap();
    assert_eq!(take_log(), [11, 10, Z2, Z2, Z2, 9, Z2, Z2, 7, Z2, Z2]);
    arena.reset();
    assert_eq!(take_log(), [6, 5, 4, 3, Z2, Z1, 2, Z2, 1]);
    check_clean();
}

// ---------------------------------------------------------------------------------------------
// Guarded arenas
// ---------------------------------------------------------------------------------------------

#[test]
fn guarded_arena_nested_constructors_slices_and_markers() {
    let mut arena = Arena::chained(1024).with_guards();
    arena.alloc(A::new(1));
    let m = arena.mark();
    arena.alloc_with(|| {
        arena.alloc(A::new(3));
        arena.alloc(Z);
        let r = catch_unwind(AssertUnwindSafe(|| {
            arena.alloc_slice_fill_with(4, |i| {
                if i == 2 {
                    panic!("guarded slice");
                }
                C::new(10 + i as u32)
            })
        }));
        assert!(r.is_err());
        B::new(2)
    });
    assert_eq!(take_log(), [10, 11]);
    arena.alloc(B::new(4));
    arena.alloc(H64::new(5));
    arena.check_guards().unwrap();
    arena.rewind(m).unwrap();
    assert_eq!(take_log(), [5, 4, Z1, 3, 2]);
    drop(arena);
    assert_eq!(take_log(), [1]);
    check_clean();
}

// ---------------------------------------------------------------------------------------------
// Re-entrancy through the scratch arenas
// ---------------------------------------------------------------------------------------------

/// Destructors run by a scratch reset that open scratch scopes three deep, each allocating
/// values of alternating types whose own destructors open scratch again.
#[test]
fn scratch_destructors_reenter_several_deep() {
    struct Nest(u32, u32);
    impl Drop for Nest {
        fn drop(&mut self) {
            let (id, depth) = (self.0, self.1);
            arena_kit_core::scratch(|a| {
                a.alloc(A::new(id * 10 + 1));
                if depth > 0 {
                    a.alloc(Nest(id * 10 + 2, depth - 1));
                }
                a.alloc(B::new(id * 10 + 3));
            });
            LOG.with(|l| l.borrow_mut().push(id));
        }
    }
    arena_kit_core::scratch(|a| {
        a.alloc(A::new(1));
        a.alloc(Nest(2, 2));
        a.alloc(B::new(3));
    });
    assert_eq!(take_log(), [3, 23, 223, 2223, 2221, 222, 221, 22, 21, 2, 1]);
    check_clean();
}

// ---------------------------------------------------------------------------------------------
// Types whose drop glue the compiler may merge
// ---------------------------------------------------------------------------------------------

static MERGED_DROPS: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Copy, Default)]
#[repr(align(16))]
struct Align16;

#[derive(Clone, Copy, Default)]
#[repr(align(4096))]
struct Align4096;

/// Same size whatever `X` is (16 bytes); alignment 8 for `X = u8`, 16 for `X = Align16`. The
/// destructor does not depend on `X`, so both instances compile to identical code, which
/// LLVM's function merging (on in optimised builds) may fold into one function: then
/// `drop_values::<W<u8>>` and `drop_values::<W<Align16>>` have the same address.
struct W<X> {
    _words: [u64; 2],
    _align: [X; 0],
}
impl<X> Drop for W<X> {
    fn drop(&mut self) {
        MERGED_DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

/// 4096 bytes; alignment 1 or 4096.
struct P<X> {
    _bytes: [u8; 4096],
    _align: [X; 0],
}
impl<X> Drop for P<X> {
    fn drop(&mut self) {
        MERGED_DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Zero-sized; alignment 1 or 4096.
struct Zs<X>([X; 0]);
impl<X> Drop for Zs<X> {
    fn drop(&mut self) {
        MERGED_DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

/// A value of a more-aligned type must never join the run of a less-aligned type of the same
/// size, even if the two types' drop functions share an address. FAILS in optimised builds
/// (`cargo test --release`), where LLVM merges the identical `drop_values` instances: `open_run`
/// then takes the `W<Align16>` for a `W<u8>` run and `alloc_in`'s fast path bumps it with
/// alignment 1. Passes in debug builds and under Miri (no merging there).
#[test]
fn a_more_aligned_type_never_lands_misaligned_after_a_run() {
    let arena = Arena::with_capacity(1 << 16);
    let mut bad = Vec::new();
    for round in 0..4 {
        // put the cursor at 8 mod 16
        arena.alloc_no_drop(0u64);
        if arena.used().is_multiple_of(16) {
            arena.alloc_no_drop(0u64);
        }
        let _ = round;
        arena.alloc(W::<u8> {
            _words: [1, 2],
            _align: [],
        });
        let w16 = arena.alloc(W::<Align16> {
            _words: [3, 4],
            _align: [],
        });
        // `black_box`: the optimiser otherwise folds `addr % 16` to 0 from the reference's type
        let addr = std::hint::black_box(w16 as *mut W<Align16> as usize);
        if !addr.is_multiple_of(16) {
            bad.push(format!("W<Align16> at {addr:#x}"));
        }
    }
    let arena = Arena::chained(64 * 1024);
    arena.alloc_no_drop(0u8);
    arena.alloc(P::<u8> {
        _bytes: [0; 4096],
        _align: [],
    });
    let p = arena.alloc(P::<Align4096> {
        _bytes: [0; 4096],
        _align: [],
    });
    let addr = std::hint::black_box(p as *mut P<Align4096> as usize);
    if !addr.is_multiple_of(4096) {
        bad.push(format!("P<Align4096> at {addr:#x}"));
    }
    // zero-sized: the run's values all sit at the record's value address
    let arena = Arena::with_capacity(1 << 16);
    arena.alloc_no_drop(0u8);
    arena.alloc(Zs::<u8>([]));
    let z = arena.alloc(Zs::<Align4096>([]));
    let addr = std::hint::black_box(z as *mut Zs<Align4096> as usize);
    if !addr.is_multiple_of(4096) {
        bad.push(format!("Zs<Align4096> at {addr:#x}"));
    }
    assert!(bad.is_empty(), "misaligned values handed out: {bad:?}");
}

// ---------------------------------------------------------------------------------------------
// Re-entrancy through shared references
// ---------------------------------------------------------------------------------------------

/// The only way for a destructor run by a reset to reach the same arena without `unsafe` is a
/// shared cell around it (the values are `'static`): the cell refuses, so the destructor sees an
/// error instead of a second reference.
#[test]
fn a_destructor_cannot_reach_a_refcell_arena_being_reset() {
    thread_local! {
        static SHARED: RefCell<Arena> = RefCell::new(Arena::chained(512));
        static REFUSED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    struct Reach(#[allow(dead_code)] A);
    impl Drop for Reach {
        fn drop(&mut self) {
            SHARED.with(|s| match s.try_borrow() {
                Ok(a) => drop(a.alloc(B::new(999))),
                Err(_) => REFUSED.with(|r| r.set(r.get() + 1)),
            });
        }
    }
    SHARED.with(|s| {
        let a = s.borrow();
        a.alloc(Reach(A::new(1)));
        a.alloc(B::new(2));
        a.alloc(Reach(A::new(3)));
    });
    SHARED.with(|s| s.borrow_mut().reset());
    assert_eq!(take_log(), [3, 2, 1]);
    assert_eq!(REFUSED.with(|r| r.get()), 2);
    check_clean();
}

/// Boxed slices take any type: values holding the arena whose destructors allocate from it,
/// dropped by the builder's guard when the constructor panics, and by the box.
#[test]
fn boxed_values_whose_destructors_allocate_from_the_same_arena() {
    struct Back<'a>(&'a Arena, u32);
    impl Drop for Back<'_> {
        fn drop(&mut self) {
            self.0.alloc(B::new(self.1 + 500));
            self.0.alloc(A::new(self.1 + 600));
            LOG.with(|l| l.borrow_mut().push(self.1));
        }
    }
    let mut arena = Arena::chained(256);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_box_slice_fill_with(4, |i| {
            if i == 2 {
                panic!("third");
            }
            Back(&arena, i as u32)
        });
    }));
    assert!(r.is_err());
    assert_eq!(take_log(), [0, 1]);
    let b = arena.alloc_box_slice_fill_with(2, |i| Back(&arena, 10 + i as u32));
    arena.alloc(C::new(20));
    drop(b);
    assert_eq!(take_log(), [10, 11]);
    let one = arena.alloc_box(Back(&arena, 30));
    drop(one);
    assert_eq!(take_log(), [30]);
    arena.reset();
    assert_eq!(
        take_log(),
        [630, 530, 611, 511, 610, 510, 20, 601, 501, 600, 500]
    );
    check_clean();
}

/// One-element slices (the `alloc_try_with` path) whose constructors allocate other types
/// before failing or succeeding: tails never take values past the record being built.
#[test]
fn try_with_constructors_allocating_tail_candidates() {
    let mut arena = Arena::chained(512);
    arena.alloc(A::new(1));
    let r = arena.alloc_try_with(|| -> Result<B, ()> {
        arena.alloc(C::new(3));
        arena.alloc(A::new(4));
        Ok(B::new(2))
    });
    assert!(r.is_ok());
    arena.alloc(C::new(5));
    arena.alloc(B::new(6));
    let m = arena.mark();
    let r = arena.alloc_try_with(|| -> Result<C, ()> {
        arena.alloc(A::new(7));
        Err(())
    });
    assert!(r.is_err());
    arena.alloc(B::new(8));
    arena.rewind(m).unwrap();
    assert_eq!(take_log(), [8, 7]);
    arena.reset();
    assert_eq!(take_log(), [6, 5, 4, 3, 2, 1]);
    check_clean();
}
