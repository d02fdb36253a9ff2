//! Values of alternating types (the tail entries of drop records) under attack: a model-based
//! fuzz over six types (sizes 0 to 4096 bytes, alignments 1 to 4096) with constructors that
//! allocate, take markers, grow and free allocator blocks, or panic, plus fixed arenas and budgets
//! that refuse exactly the tail's block, panicking destructors, markers taken inside
//! constructors and re-entrant scratch arenas. Every value built is dropped exactly once, in
//! reverse order of its slot's reservation, at an aligned address, and never if its constructor
//! panicked.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::arena::Arena;
use arena_kit_core::tags::{Budget, Budgeted};

use super::drop_ledger::{LIVE, LOG, born, check_no_errors, chk, died, panic_on, take_log, ty};
use crate::support::Rng;
use crate::support::panics::planned_panic;

/// The id every zero-sized value is logged under (above `drop_ledger::UNTRACKED`: untracked).
const ZMARK: u32 = u32::MAX;

ty!(S8; );
ty!(S24; p: u64, q: u64);
ty!(A64, repr(align(64)); );
ty!(A4096, repr(align(4096)); );

/// Size 5, align 1.
struct U5([u8; 5]);
impl U5 {
    fn new(id: u32) -> Self {
        assert!(id < 1 << 24);
        born(id);
        let b = id.to_le_bytes();
        U5([b[0], b[1], b[2], b[0] ^ 0x5A, b[1] ^ 0xA5])
    }
}
impl Drop for U5 {
    fn drop(&mut self) {
        let b = self.0;
        let id = u32::from_le_bytes([b[0], b[1], b[2], 0]);
        died(
            id,
            self as *mut Self as usize,
            1,
            b[3] == b[0] ^ 0x5A && b[4] == b[1] ^ 0xA5,
        );
    }
}

/// Zero-sized with drop glue: indistinguishable, logged as `ZMARK`.
struct Z;
impl Drop for Z {
    fn drop(&mut self) {
        died(ZMARK, self as *mut Self as usize, 1, true);
    }
}

/// Zero-sized, over-aligned.
#[repr(align(256))]
struct Z256;
impl Drop for Z256 {
    fn drop(&mut self) {
        died(ZMARK, self as *mut Self as usize, 256, true);
    }
}

// ---------------------------------------------------------------------------------------------
// Model-based fuzz
// ---------------------------------------------------------------------------------------------

/// The model: values in reservation order (seq), with their log id.
#[derive(Default)]
struct Model {
    next_seq: u64,
    next_id: u32,
    /// (seq, id) of built, pending values.
    live: Vec<(u64, u32)>,
}

impl Model {
    fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }
    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }
    /// Drops everything at or after `seq`, newest first.
    fn drop_from(&mut self, seq: u64) -> Vec<u32> {
        self.live.sort_by_key(|v| v.0);
        let keep = self.live.iter().take_while(|v| v.0 < seq).count();
        let mut gone: Vec<u32> = self.live.drain(keep..).map(|v| v.1).collect();
        gone.reverse();
        gone
    }
}

#[derive(Clone, Copy)]
struct Ctx<'a> {
    arena: &'a Arena,
    big: bool,
    /// Markers taken inside constructors, with the seq they keep below (None: discard them).
    inner_marks: Option<&'a RefCell<Vec<(arena_kit_core::Marker, u64)>>>,
}

/// Allocates one value of a random type, whose constructor may allocate more (to `depth`),
/// take a marker (closing runs), or panic. Returns whether it panicked.
fn alloc_one(cx: Ctx<'_>, m: &RefCell<Model>, rng: &RefCell<Rng>, depth: u32) {
    let kind = rng.borrow_mut().below(if cx.big { 8 } else { 7 });
    let seq = m.borrow_mut().reserve();
    let nested = if depth < 2 && rng.borrow_mut().below(4) == 0 {
        1 + rng.borrow_mut().below(3)
    } else {
        0
    };
    let panics = rng.borrow_mut().below(10) == 0;
    let mark_inside = rng.borrow_mut().below(8) == 0;
    let vec_inside = rng.borrow_mut().below(8) == 0;
    let arena = cx.arena;
    // the constructor body, shared by the types
    let body = || {
        for _ in 0..nested {
            let r = catch_unwind(AssertUnwindSafe(|| alloc_one(cx, m, rng, depth + 1)));
            drop(r);
            if mark_inside {
                let mk = arena.mark();
                if let Some(v) = cx.inner_marks {
                    let seq = m.borrow().next_seq + 1;
                    v.borrow_mut().push((mk, seq));
                }
            }
        }
        if vec_inside {
            let mut v: allocator_api2::vec::Vec<u8, &Arena> =
                allocator_api2::vec::Vec::new_in(arena);
            v.extend(0..(rng.borrow_mut().below(40) as u8));
            if rng.borrow_mut().below(2) == 0 {
                v.shrink_to_fit();
            }
            drop(v);
        }
        if panics {
            planned_panic("constructor panics");
        }
        let id = if kind == 5 || kind == 6 {
            ZMARK
        } else {
            m.borrow_mut().id()
        };
        m.borrow_mut().live.push((seq, id));
        id
    };
    macro_rules! go {
        ($t:ident) => {{
            let p = arena.alloc_with(|| $t::new(body()));
            assert_eq!((p as *mut $t as usize) % align_of::<$t>(), 0);
            assert!(p.id == chk(p.c) ^ 0 ^ 0 || true);
        }};
    }
    let r = catch_unwind(AssertUnwindSafe(|| match kind {
        0 => go!(S8),
        1 => go!(S24),
        2 => go!(A64),
        3 => {
            let p = arena.alloc_with(|| U5::new(body()));
            let _ = p;
        }
        4 => go!(S8),
        5 => {
            let p = arena.alloc_with(|| {
                body();
                Z
            });
            let _ = p;
        }
        6 => {
            let p = arena.alloc_with(|| {
                body();
                Z256
            });
            assert_eq!((p as *mut Z256 as usize) % 256, 0);
        }
        _ => go!(A4096),
    }));
    if r.is_err() && !panics {
        // an inner panic is caught inside; only our own may escape
        panic!("unexpected panic");
    }
}

fn fuzz(seed: u64, ops: usize, page: usize, big: bool) {
    let mut arena = Arena::chained(page);
    let m = RefCell::new(Model::default());
    let rng = RefCell::new(Rng(seed | 1));
    let mut markers: Vec<(arena_kit_core::Marker, u64)> = Vec::new();
    let compare = |what: &str, expected: Vec<u32>, step: usize| {
        let got = take_log();
        assert_eq!(got, expected, "seed {seed} step {step}: {what}");
    };
    for step in 0..ops {
        let op = rng.borrow_mut().below(100);
        let inner = RefCell::new(Vec::new());
        let cx = Ctx {
            arena: &arena,
            big,
            inner_marks: Some(&inner),
        };
        match op {
            0..=69 => {
                alloc_one(cx, &m, &rng, 0);
                markers.extend(inner.take());
            }
            70..=74 => {
                arena.alloc(rng.borrow_mut().next() as u8);
            }
            75..=79 => {
                let seq = m.borrow().next_seq + 1;
                markers.push((arena.mark(), seq));
            }
            80..=85 if !markers.is_empty() => {
                let i = rng.borrow_mut().below(markers.len());
                let (mk, seq) = markers[i];
                markers.truncate(i + 1);
                arena.rewind(mk).unwrap();
                let exp = m.borrow_mut().drop_from(seq);
                compare("rewind", exp, step);
            }
            86..=89 => {
                // a scope with a few allocations, maybe cleared
                let seq = m.borrow().next_seq + 1;
                let fill = |scope: &Arena, n: usize| {
                    for _ in 0..n {
                        let inner_marks = None;
                        alloc_one(
                            Ctx {
                                arena: scope,
                                big,
                                inner_marks,
                            },
                            &m,
                            &rng,
                            0,
                        );
                    }
                };
                {
                    let mut scope = arena.scope();
                    let n = rng.borrow_mut().below(5);
                    fill(&scope, n);
                    if rng.borrow_mut().below(2) == 0 {
                        scope.clear();
                        let exp = m.borrow_mut().drop_from(seq);
                        compare("scope clear", exp, step);
                        let n = rng.borrow_mut().below(4);
                        fill(&scope, n);
                    }
                }
                let exp = m.borrow_mut().drop_from(seq);
                compare("scope end", exp, step);
            }
            90..=94 => {
                // a vec that stays alive across allocations of alternating types
                let mut v: allocator_api2::vec::Vec<u8, &Arena> =
                    allocator_api2::vec::Vec::new_in(&arena);
                v.push(1);
                let cx = Ctx {
                    inner_marks: None,
                    ..cx
                };
                alloc_one(cx, &m, &rng, 0);
                v.extend([2, 3, 4, 5, 6, 7, 8, 9, 10]);
                alloc_one(cx, &m, &rng, 0);
                assert_eq!(v[..3], [1, 2, 3]);
            }
            95..=96 => {
                // pending_drops must be consistent (ZSTs in runs count per run, so only a bound)
                let n = arena.pending_drops();
                assert!(
                    n <= m.borrow().live.len(),
                    "seed {seed} step {step}: pending {n}"
                );
                assert_eq!(n == 0, m.borrow().live.is_empty());
            }
            _ => {
                arena.reset();
                markers.clear();
                let exp = m.borrow_mut().drop_from(0);
                compare("reset", exp, step);
            }
        }
        check_no_errors();
    }
    drop(arena);
    let exp = m.borrow_mut().drop_from(0);
    let got = take_log();
    assert_eq!(got, exp, "seed {seed}: arena drop");
    check_no_errors();
    LIVE.with(|l| assert!(l.borrow().is_empty(), "leaked: {:?}", l.borrow()));
}

#[test]
fn fuzz_alternating_types_against_a_model() {
    let (seeds, ops) = if cfg!(miri) { (2, 100) } else { (300, 1500) };
    for seed in 0..seeds {
        for page in [128usize, 512, 4096] {
            fuzz(
                0x9E37_79B9_7F4A_7C15 ^ (seed * 7919 + page as u64),
                ops,
                page,
                !cfg!(miri),
            );
        }
    }
}

#[test]
fn fuzz_fixed_arena_running_full_at_tail_bumps() {
    // A fixed arena: allocations fail once it is full; try_alloc drops the refused value.
    let sizes: &[usize] = if cfg!(miri) {
        &[200, 233]
    } else {
        &[100, 111, 200, 233, 256, 300, 1000]
    };
    for &cap in sizes {
        for start in 0..24usize {
            let mut arena = Arena::with_capacity(cap);
            for _ in 0..start {
                arena.alloc(0u8);
            }
            let mut built = vec![];
            let mut id = 0;
            loop {
                id += 1;
                let r = match id % 4 {
                    0 => arena.try_alloc(S8::new(id)).map(|_| ()),
                    1 => arena.try_alloc(S24::new(id)).map(|_| ()),
                    2 => arena.try_alloc(U5::new(id)).map(|_| ()),
                    _ => arena.try_alloc(A64::new(id)).map(|_| ()),
                };
                match r {
                    Ok(()) => built.push(id),
                    Err(_) => {
                        assert_eq!(take_log(), [id], "refused value dropped at once");
                        break;
                    }
                }
            }
            assert_eq!(arena.used(), arena.used());
            arena.reset();
            built.reverse();
            assert_eq!(take_log(), built, "cap {cap} start {start}");
            check_no_errors();
        }
    }
}

#[test]
fn budget_refusing_exactly_the_tail_block() {
    for extra in 0..48usize {
        let mut arena = Arena::chained(4096);
        arena.alloc(S8::new(1));
        let used = arena.used();
        arena.set_budget(Some(Budget::fail(used + extra).into()));
        let r = arena.try_alloc(S24::new(2)).is_ok();
        if !r {
            assert_eq!(take_log(), [2]);
        }
        let r2 = arena.try_alloc(S8::new(3)).is_ok();
        if !r2 {
            assert_eq!(take_log(), [3]);
        }
        assert!(
            arena.used() <= used + extra,
            "extra {extra}: used {}",
            arena.used()
        );
        arena.reset();
        let mut exp = vec![];
        if r2 {
            exp.push(3);
        }
        if r {
            exp.push(2);
        }
        exp.push(1);
        assert_eq!(take_log(), exp, "extra {extra}");
        check_no_errors();
    }
}

#[test]
fn tail_destructor_panics_on_reset_rewind_and_arena_drop() {
    for victim in 1..=6u32 {
        for how in 0..3 {
            let mut arena = Arena::chained(4096);
            arena.alloc(S8::new(1));
            arena.alloc(S24::new(2));
            let m = arena.mark();
            arena.alloc(S8::new(3));
            arena.alloc(S24::new(4));
            arena.alloc(U5::new(5));
            arena.alloc(S24::new(6));
            panic_on(&[victim]);
            match how {
                0 => {
                    let r = catch_unwind(AssertUnwindSafe(|| arena.reset()));
                    assert!(r.is_err());
                    assert_eq!(take_log(), [6, 5, 4, 3, 2, 1]);
                    panic_on(&[]);
                    // the arena is usable and empty
                    assert_eq!(arena.pending_drops(), 0);
                    arena.alloc(S8::new(7));
                    arena.alloc(S24::new(8));
                    arena.reset();
                    assert_eq!(take_log(), [8, 7]);
                }
                1 => {
                    let r = catch_unwind(AssertUnwindSafe(|| arena.rewind(m)));
                    panic_on(&[]);
                    if victim >= 3 {
                        assert!(r.is_err());
                    }
                    assert_eq!(take_log(), [6, 5, 4, 3]);
                    arena.alloc(S8::new(7));
                    arena.alloc(S24::new(8));
                    arena.alloc(U5::new(9));
                    arena.reset();
                    assert_eq!(take_log(), [9, 8, 7, 2, 1]);
                }
                _ => {
                    let r = catch_unwind(AssertUnwindSafe(|| drop(arena)));
                    assert!(r.is_err());
                    panic_on(&[]);
                    assert_eq!(take_log(), [6, 5, 4, 3, 2, 1]);
                }
            }
            panic_on(&[]);
            check_no_errors();
            LIVE.with(|l| assert!(l.borrow().is_empty()));
        }
    }
}

/// The Resume path with a record whose run ends at the position and whose tail passes it: a
/// marker rewound past and regrown past (documented as accepted).
#[test]
fn tail_destructor_panics_when_rewinding_to_a_regrown_marker() {
    let mut arena = Arena::with_capacity(4096);
    let m0 = arena.mark();
    arena.alloc([0u64; 32]);
    let m = arena.mark();
    let p = arena.used();
    arena.rewind(m0).unwrap();
    // a record (64 bytes) and a run of S8 ending exactly at `m`... pick filler so it does
    let cost = {
        let probe = Arena::with_capacity(4096);
        probe.alloc(S8::new(1000));
        probe.used()
    };
    take_log();
    let filler = p - cost;
    for _ in 0..filler {
        arena.alloc(0u8);
    }
    arena.alloc(S8::new(1));
    assert_eq!(arena.used(), p, "the run ends at the marker");
    arena.alloc(S24::new(2)); // tail past the marker
    arena.alloc(U5::new(3));
    panic_on(&[2]);
    let r = catch_unwind(AssertUnwindSafe(|| arena.rewind(m)));
    panic_on(&[]);
    assert!(r.is_err());
    let first = take_log();
    // Whatever was dropped at the rewind, the rest must drop once at reset.
    arena.alloc(S24::new(4));
    arena.alloc(S8::new(5));
    arena.alloc(U5::new(6));
    arena.reset();
    let second = take_log();
    assert_eq!(first[..2], [3, 2]);
    let mut all: Vec<u32> = first.iter().chain(&second).copied().collect();
    all.sort();
    assert_eq!(all, [1, 2, 3, 4, 5, 6]);
    check_no_errors();
}

#[test]
fn zero_sized_try_constructor_allocating_a_tail_candidate_then_failing() {
    let mut arena = Arena::chained(4096);
    arena.alloc(Z);
    let r = arena.alloc_try_with(|| {
        arena.alloc(S8::new(1));
        arena.alloc(S24::new(2));
        Err::<Z, ()>(())
    });
    assert!(r.is_err());
    arena.alloc(S8::new(3));
    arena.reset();
    assert_eq!(take_log(), [3, 2, 1, ZMARK]);
    // zero-sized outer via alloc_with (run), inner values join its tail, constructor panics
    arena.alloc(Z);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_with(|| -> Z {
            arena.alloc(S8::new(4));
            arena.alloc(S24::new(5));
            arena.alloc(Z);
            panic!("no")
        })
    }));
    assert!(r.is_err());
    assert_eq!(arena.pending_drops(), 4);
    arena.reset();
    assert_eq!(take_log(), [ZMARK, 5, 4, ZMARK]);
    check_no_errors();
}

#[test]
fn nested_tail_constructors_and_markers_inside() {
    let mut arena = Arena::chained(256);
    arena.alloc(S8::new(1));
    let mut inner_mark = None;
    arena.alloc_with(|| {
        // outer is S24 in S8's tail; inner values come after its slot
        arena.alloc(S8::new(3));
        arena.alloc_with(|| {
            arena.alloc(U5::new(5));
            inner_mark = Some(arena.mark());
            arena.alloc(S24::new(6));
            S8::new(4)
        });
        arena.alloc(A64::new(7));
        S24::new(2)
    });
    arena.alloc(U5::new(8));
    arena.rewind(inner_mark.unwrap()).unwrap();
    assert_eq!(take_log(), [8, 7, 6]);
    arena.reset();
    assert_eq!(take_log(), [5, 4, 3, 2, 1]);
    check_no_errors();
}

#[test]
fn huge_type_takes_the_record_path_error() {
    let arena = Arena::chained(4096);
    arena.alloc(S8::new(1));
    #[allow(dead_code)]
    struct Big([u8; 1 << 16]);
    impl Drop for Big {
        fn drop(&mut self) {
            LOG.with(|l| l.borrow_mut().push(9999));
        }
    }
    if !cfg!(miri) {
        arena.try_alloc_with(|| Big([0; 1 << 16])).unwrap();
    }
    drop(arena);
    let exp: &[u32] = if cfg!(miri) { &[1] } else { &[9999, 1] };
    assert_eq!(take_log(), exp);
    check_no_errors();
}

#[test]
fn scratch_destructor_of_tail_value_uses_scratch_with_alternating_types() {
    struct Nest(u32);
    impl Drop for Nest {
        fn drop(&mut self) {
            let id = self.0;
            arena_kit_core::scratch(|a| {
                a.alloc(S8::new(id * 100 + 1));
                a.alloc(S24::new(id * 100 + 2));
            });
            LOG.with(|l| l.borrow_mut().push(id));
        }
    }
    arena_kit_core::scratch(|a| {
        a.alloc(S8::new(1));
        a.alloc(Nest(2));
        a.alloc(S24::new(3));
        a.alloc(Nest(4));
    });
    assert_eq!(take_log(), [402, 401, 4, 3, 202, 201, 2, 1]);
    check_no_errors();
}

#[test]
fn vec_give_back_then_alternating_type_reuses_bytes_without_overlap() {
    let mut arena = Arena::with_capacity(4096);
    let a = arena.alloc(S8::new(1));
    let a_addr = a as *mut S8 as usize;
    {
        let mut v: allocator_api2::vec::Vec<u64, &Arena> = allocator_api2::vec::Vec::new_in(&arena);
        v.extend(0..10);
        v.shrink_to(0);
        drop(v);
    }
    let b = arena.alloc(S24::new(2));
    let b_addr = b as *mut S24 as usize;
    assert!(b_addr >= a_addr + 8 + 16);
    let mut v: allocator_api2::vec::Vec<u8, &Arena> = allocator_api2::vec::Vec::new_in(&arena);
    v.push(1);
    let c = arena.alloc(S8::new(3)); // not at the tail's end: a record
    v.push(2); // cannot grow in place any more
    v.extend(3..50);
    assert_eq!(c.id, 3);
    drop(v);
    arena.alloc(U5::new(4));
    arena.reset();
    assert_eq!(take_log(), [4, 3, 2, 1]);
    check_no_errors();
}

#[test]
fn guarded_arena_with_alternating_types() {
    let mut arena = Arena::chained(1024).with_guards();
    for id in 1..20 {
        if id % 2 == 0 {
            arena.alloc(S8::new(id));
        } else {
            arena.alloc(S24::new(id));
        }
    }
    arena.reset();
    assert_eq!(take_log(), (1..20).rev().collect::<Vec<_>>());
    check_no_errors();
}

/// A value whose constructor panicked after its tail entry was bumped: the entry stays in the
/// tail, is not counted by `pending_drops`, and the reset drops nothing for it (and everything
/// around it, in reverse order).
#[test]
fn a_tail_entry_whose_constructor_panicked_is_not_counted_and_drops_nothing() {
    let mut arena = Arena::chained(4096);
    arena.alloc(S8::new(1)); // a run of one
    arena.alloc(S24::new(2)); // another type: joins the run's tail
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_with(|| -> S8 { planned_panic("constructor panics") })
    }));
    assert!(r.is_err());
    assert_eq!(arena.pending_drops(), 2, "the unbuilt value is not counted");
    arena.alloc(S24::new(3));
    assert_eq!(arena.pending_drops(), 3);
    arena.reset();
    assert_eq!(take_log(), [3, 2, 1]);
    check_no_errors();
}
