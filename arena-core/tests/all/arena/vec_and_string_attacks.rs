//! `ArenaVec`'s and `ArenaString`'s editing methods (drain, retain, dedup, resize,
//! extend_from_within, append, split_off, spare_capacity_mut; the string's insert, remove,
//! retain, split_off), attacked the way std's `Vec` was: user code (`Clone`, `Drop`, closures)
//! that panics at each call, or that allocates from the vector's own arena while the method
//! runs; leaked and half-consumed drains; ranges at the ends, empty, reversed and out to
//! `usize::MAX`; zero-sized elements; sizes past the address space. Every element must be
//! dropped exactly once (or leaked where `Vec` leaks it), and a string must stay UTF-8.

use std::cell::{Cell, RefCell};
use std::ops::Bound;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::arena::Arena;
use arena_kit_core::collections::{ArenaString, ArenaVec};

use crate::support::miri_or;
use crate::support::panics::{panic_location, planned_panic};

/// Who was made, how often each was dropped, and when user code panics.
struct Ledger {
    /// Drops per id (ids are handed out in order).
    drops: RefCell<Vec<u32>>,
    /// Clones that succeed before the next one panics (`usize::MAX`: no limit).
    clones_left: Cell<usize>,
    /// The id whose destructor panics (once).
    bomb: Cell<Option<usize>>,
}

impl Ledger {
    fn new() -> Ledger {
        Ledger {
            drops: RefCell::new(Vec::new()),
            clones_left: Cell::new(usize::MAX),
            bomb: Cell::new(None),
        }
    }

    fn make<'a>(&'a self, val: u32, arena: Option<&'a Arena>) -> Tok<'a> {
        let mut d = self.drops.borrow_mut();
        d.push(0);
        Tok {
            id: d.len() - 1,
            val,
            l: self,
            arena,
        }
    }

    fn made(&self) -> usize {
        self.drops.borrow().len()
    }

    fn dropped(&self) -> usize {
        self.drops.borrow().iter().map(|&d| d as usize).sum()
    }

    /// Every value made was dropped exactly once, except the ids in `leaked` (never dropped).
    #[track_caller]
    fn check(&self, leaked: &[usize]) {
        for (id, &d) in self.drops.borrow().iter().enumerate() {
            let want = u32::from(!leaked.contains(&id));
            assert_eq!(d, want, "value {id} dropped {d} times, expected {want}");
        }
    }
}

/// An element with an identity (it borrows its ledger, so a leaked one leaks no heap memory):
/// clones get a new id and keep `val`. With an arena, its clone
/// and its destructor allocate from that arena (see [`churn`]).
struct Tok<'a> {
    id: usize,
    val: u32,
    l: &'a Ledger,
    arena: Option<&'a Arena>,
}

/// Allocates from `arena` while a method of a vector in it runs: a block kept, and a vector
/// grown (in place: it is the newest block) then dropped (its buffer given back). What is kept
/// must read back intact, and the vector under the method must not be overwritten.
/// A full arena makes it a planned panic (quiet), so a fixed-size arena turns it into user
/// code that panics part-way through the method.
fn churn(arena: &Arena, tag: u8) {
    if !try_churn(arena, tag) {
        planned_panic("the arena is full");
    }
}

/// [`churn`] that gives up quietly when the arena is full (for destructors, which must not
/// panic during an unwind); `false` then.
fn try_churn(arena: &Arena, tag: u8) -> bool {
    let Ok(kept) = arena.try_alloc_no_drop([tag; 24]) else {
        return false;
    };
    let mut tmp = ArenaVec::new_in(arena);
    for i in 0..9u64 {
        if tmp.try_push(i).is_err() {
            return false;
        }
    }
    assert!(tmp.iter().copied().eq(0..9));
    drop(tmp);
    assert_eq!(*kept, [tag; 24]);
    true
}

impl Clone for Tok<'_> {
    fn clone(&self) -> Self {
        let left = self.l.clones_left.get();
        if left == 0 {
            planned_panic("a clone panicked");
        }
        self.l.clones_left.set(left.saturating_sub(1));
        if let Some(a) = self.arena {
            churn(a, self.val as u8);
        }
        self.l.make(self.val, self.arena)
    }
}

impl Drop for Tok<'_> {
    fn drop(&mut self) {
        self.l.drops.borrow_mut()[self.id] += 1;
        if let Some(a) = self.arena {
            try_churn(a, 0xD0);
        }
        if self.l.bomb.get() == Some(self.id) {
            self.l.bomb.set(None);
            planned_panic("a destructor panicked");
        }
    }
}

fn vals(v: &[Tok<'_>]) -> Vec<u32> {
    v.iter().map(|t| t.val).collect()
}

fn toks<'a>(l: &'a Ledger, arena: &'a Arena, n: u32, reenter: bool) -> ArenaVec<'a, Tok<'a>> {
    let mut v = ArenaVec::new_in(arena);
    for i in 0..n {
        v.push(l.make(i, reenter.then_some(arena)));
    }
    v
}

thread_local! {
    static ZST_DROPS: Cell<usize> = const { Cell::new(0) };
}

/// A zero-sized element counting its drops on this thread.
#[derive(Clone, PartialEq)]
struct Z;

impl Drop for Z {
    fn drop(&mut self) {
        ZST_DROPS.with(|d| d.set(d.get() + 1));
    }
}

fn zst_drops() -> usize {
    ZST_DROPS.with(Cell::get)
}

/// The bad ranges for a vector of `len` elements: past the end, reversed, out to `usize::MAX`.
fn bad_ranges(len: usize) -> Vec<(Bound<usize>, Bound<usize>)> {
    use Bound::{Excluded, Included, Unbounded};
    vec![
        (Included(len + 1), Unbounded),
        (Unbounded, Excluded(len + 1)),
        (Unbounded, Included(len)),
        (Included(2), Excluded(1)),
        (Excluded(1), Excluded(1)),
        (Included(usize::MAX), Unbounded),
        (Excluded(usize::MAX), Unbounded),
        (Unbounded, Included(usize::MAX)),
        (Included(0), Excluded(usize::MAX)),
        (Included(usize::MAX), Included(usize::MAX)),
    ]
}

/// `extend_from_within` over every range shape, whose `clone` panics at each call: the clones
/// made so far stay (in order, after the originals), the rest is never made, and every value
/// is dropped exactly once in the end.
#[test]
fn extend_from_within_with_a_clone_panicking_at_each_call_keeps_each_value_once() {
    for (a, b) in [(0, 4), (0, 1), (3, 4), (1, 3), (2, 2), (4, 4), (0, 0)] {
        for k in 0..=(b - a) {
            let arena = Arena::new();
            let l = Ledger::new();
            let mut v = toks(&l, &arena, 4, false);
            l.clones_left.set(k);
            let r = catch_unwind(AssertUnwindSafe(|| v.extend_from_within(a..b)));
            assert_eq!(r.is_err(), k < b - a, "{a}..{b}, panic at clone {k}");
            let mut want: Vec<u32> = (0..4).collect();
            want.extend((a..b).take(k).map(|x| x as u32));
            assert_eq!(vals(&v), want, "{a}..{b}, panic at clone {k}");
            assert_eq!(l.made(), 4 + k.min(b - a));
            drop(v);
            l.check(&[]);
        }
    }
}

/// `extend_from_within` whose `clone` allocates from the vector's own arena (a kept block and
/// a grown-then-given-back vector, so the arena grows under the method, across small pages),
/// and whose destructors do too: the clones land where they belong and nothing is overwritten.
#[test]
fn extend_from_within_with_a_clone_that_allocates_from_the_same_arena() {
    for page in [256, 4096] {
        let arena = Arena::chained(page);
        let l = Ledger::new();
        // The buffer is the arena's newest block and exactly full: the reserve grows it in place.
        let mut v = ArenaVec::with_capacity_in(3, &arena);
        for i in 0..3 {
            v.push(l.make(i, Some(&arena)));
        }
        v.extend_from_within(..);
        v.extend_from_within(1..=2);
        v.extend_from_within(4..);
        assert_eq!(vals(&v), [0, 1, 2, 0, 1, 2, 1, 2, 1, 2, 1, 2]);
        // Grows again (the buffer is no longer newest: it moves).
        v.push(l.make(9, Some(&arena)));
        v.extend_from_within(..2);
        assert_eq!(vals(&v), [0, 1, 2, 0, 1, 2, 1, 2, 1, 2, 1, 2, 9, 0, 1]);
        // And a clone that panics part-way while reentering.
        l.clones_left.set(2);
        let r = catch_unwind(AssertUnwindSafe(|| v.extend_from_within(..)));
        assert!(r.is_err());
        assert_eq!(v.len(), 17);
        drop(v);
        l.check(&[]);
    }
}

/// Bad ranges make `extend_from_within` and `drain` panic before anything changes: no clone,
/// no drop, the vector as it was.
#[test]
fn bad_ranges_panic_before_extend_from_within_or_drain_change_anything() {
    let arena = Arena::new();
    let l = Ledger::new();
    let mut v = toks(&l, &arena, 4, false);
    for range in bad_ranges(4) {
        panic_location(|| v.extend_from_within(range));
        panic_location(|| drop(v.drain(range)));
        assert_eq!(vals(&v), [0, 1, 2, 3], "{range:?}");
        assert_eq!((l.made(), l.dropped()), (4, 0), "{range:?}");
    }
    let empty: ArenaVec<'_, u8> = ArenaVec::new_in(&arena);
    let mut empty = empty;
    for range in bad_ranges(0)
        .into_iter()
        .filter(|r| r.0 != Bound::Included(2))
    {
        panic_location(|| empty.extend_from_within(range));
        panic_location(|| drop(empty.drain(range)));
        assert!(empty.is_empty());
    }
    empty.extend_from_within(..);
    assert_eq!(empty.drain(..).count(), 0);
    drop(v);
    l.check(&[]);
}

/// `resize` clones `value` for all but the last new slot and moves it into that one: a clone
/// panicking at each call leaves the clones made so far, and `value` is dropped once whatever
/// happens (also when shrinking, and when a destructor panics while shrinking).
#[test]
fn resize_with_a_clone_or_destructor_panicking_drops_the_value_once() {
    for reenter in [false, true] {
        for k in 0..=4 {
            let arena = Arena::chained(512);
            let l = Ledger::new();
            let mut v = toks(&l, &arena, 2, reenter);
            let value = l.make(7, reenter.then_some(&arena));
            l.clones_left.set(k);
            let r = catch_unwind(AssertUnwindSafe(|| v.resize(6, value)));
            // 3 clones, then the value itself.
            assert_eq!(r.is_err(), k < 3, "panic at clone {k}");
            let added = if k < 3 { k } else { 4 };
            assert_eq!(vals(&v)[2..], vec![7; added][..], "panic at clone {k}");
            assert_eq!(l.dropped(), usize::from(k < 3), "the value, on a panic");
            l.clones_left.set(usize::MAX);
            drop(v);
            l.check(&[]);
        }
        // Shrinking, growing by one, staying: the value is dropped (or moved in) once.
        for (to, panicky) in [(1, None), (0, Some(2)), (2, None), (4, None), (1, Some(3))] {
            let arena = Arena::new();
            let l = Ledger::new();
            let mut v = toks(&l, &arena, 4, reenter);
            l.bomb.set(panicky);
            let value = l.make(9, reenter.then_some(&arena));
            l.clones_left.set(0); // never needed here
            let r = catch_unwind(AssertUnwindSafe(|| v.resize(to, value)));
            assert_eq!(r.is_err(), panicky.is_some(), "resize to {to}");
            let want: Vec<u32> = (0..4).take(to).chain((to > 4).then_some(9)).collect();
            assert_eq!(vals(&v), want);
            drop(v);
            l.check(&[]);
        }
        // Growing by exactly one from the same length moves the value in without a clone.
        let arena = Arena::new();
        let l = Ledger::new();
        let mut v = toks(&l, &arena, 4, reenter);
        l.clones_left.set(0);
        v.resize(5, l.make(9, None));
        assert_eq!(vals(&v), [0, 1, 2, 3, 9]);
        drop(v);
        l.check(&[]);
    }
}

/// `resize_with` whose closure panics at each call (keeping what it made), or allocates from
/// the vector's arena (the arena grows under the method); and `resize`/`resize_with` to sizes
/// past the address space are errors or panics before any element is made.
#[test]
fn resize_with_panicking_or_reentrant_closures_and_impossible_sizes() {
    for k in 0..4 {
        let arena = Arena::chained(256);
        let l = Ledger::new();
        let mut v = toks(&l, &arena, 1, true);
        let mut calls = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            v.resize_with(4, || {
                if calls == k {
                    planned_panic("the closure panicked");
                }
                calls += 1;
                churn(&arena, 0x5A);
                l.make(10 + calls, Some(&arena))
            });
        }));
        assert_eq!(r.is_err(), k < 3);
        let want: Vec<u32> = std::iter::once(0).chain(11..=10 + k.min(3)).collect();
        assert_eq!(vals(&v), want);
        drop(v);
        l.check(&[]);
    }

    let arena = Arena::new();
    let l = Ledger::new();
    let mut v = toks(&l, &arena, 2, false);
    for n in [
        usize::MAX,
        usize::MAX / 2,
        isize::MAX as usize,
        usize::MAX / 8 + 1,
    ] {
        assert!(
            v.try_resize_with(n, || unreachable!("nothing is made"))
                .is_err(),
            "try_resize_with({n})"
        );
        let value = l.make(5, None);
        assert!(v.try_resize(n, value).is_err(), "try_resize({n})");
        panic_location(|| v.resize_with(n, || unreachable!("nothing is made")));
        let value = l.make(6, None);
        panic_location(|| v.resize(n, value));
        assert!(v.try_reserve(n).is_err(), "try_reserve({n})");
        assert!(v.try_extend_from_within(..).is_ok());
        v.truncate(2);
        assert_eq!(vals(&v), [0, 1]);
    }
    drop(v);
    l.check(&[]);

    // Zero-sized: the capacity is unbounded, but the length cannot pass `usize::MAX`.
    let before = zst_drops();
    let mut z = ArenaVec::new_in(&arena);
    z.push(Z);
    assert_eq!(z.capacity(), usize::MAX);
    assert!(z.try_reserve(usize::MAX).is_err());
    assert!(z.try_resize_with(3, || Z).is_ok());
    z.resize(5, Z);
    z.extend_from_within(1..4);
    assert_eq!(z.len(), 8);
    assert!(z.spare_capacity_mut().is_empty());
    z.resize(2, Z);
    assert_eq!(
        zst_drops() - before,
        1 + 6,
        "the unused value and the cut tail"
    );
    drop(z);
    assert_eq!(zst_drops() - before, 9);
}

/// Every drain range of a 5-element vector, consumed in each way (not at all, once from each
/// end, fully, or leaked): the yielded values come out in order, the rest drop once with the
/// drain, the tail moves down; a leaked drain leaves the head only and drops nothing.
#[test]
fn every_drain_range_consumed_every_way_keeps_each_value_once() {
    for a in 0..=5usize {
        for b in a..=5 {
            for how in 0..6 {
                let arena = Arena::new();
                let l = Ledger::new();
                let mut v = toks(&l, &arena, 5, false);
                let mut got = Vec::new();
                {
                    let mut d = v.drain(a..b);
                    assert_eq!(d.len(), b - a);
                    match how {
                        0 => drop(d),
                        1 => got.extend(d.next()),
                        2 => got.extend(d.next_back()),
                        3 => {
                            got.extend(d.next());
                            got.extend(d.next_back());
                            assert_eq!(vals(d.as_slice()).len(), (b - a).saturating_sub(2));
                        }
                        4 => got.extend(d.by_ref()),
                        _ => {
                            got.extend(d.next());
                            std::mem::forget(d);
                        }
                    }
                }
                let got_vals: Vec<u32> = got.iter().map(|t| t.val).collect();
                let (want_got, want_left): (Vec<u32>, Vec<u32>) = match how {
                    0 => (vec![], (0..a).chain(b..5).map(|x| x as u32).collect()),
                    1 | 5 => ((a..b).take(1).map(|x| x as u32).collect(), vec![]),
                    2 => ((a..b).rev().take(1).map(|x| x as u32).collect(), vec![]),
                    3 => {
                        let mut g: Vec<u32> = (a..b).take(1).map(|x| x as u32).collect();
                        if b - a >= 2 {
                            g.push(b as u32 - 1);
                        }
                        (g, vec![])
                    }
                    _ => ((a..b).map(|x| x as u32).collect(), vec![]),
                };
                assert_eq!(got_vals, want_got, "{a}..{b}, way {how}");
                let left = if how == 5 {
                    (0..a as u32).collect::<Vec<_>>()
                } else if how == 0 {
                    want_left
                } else {
                    (0..a).chain(b..5).map(|x| x as u32).collect()
                };
                assert_eq!(vals(&v), left, "{a}..{b}, way {how}");
                let dropped_now = l.dropped();
                let expected_now = if how == 5 { 0 } else { (b - a) - got.len() };
                assert_eq!(dropped_now, expected_now, "{a}..{b}, way {how}");
                drop(got);
                drop(v);
                // Leaked: the unyielded rest of the range and the tail, never dropped.
                let leaked: Vec<usize> = if how == 5 {
                    (a + usize::from(b > a)..5).collect()
                } else {
                    vec![]
                };
                l.check(&leaked);
                // The vector's arena is whole: a new vector there reads back.
                let w = ArenaVec::from_iter_in(0..20u32, &arena);
                assert!(w.iter().copied().eq(0..20));
            }
        }
    }
}

/// A drain dropped part-way whose remaining elements' destructors panic (the first, a middle,
/// the last one), or allocate from the vector's arena: each remaining element dropped once,
/// the tail moved down behind the head, the vector usable after.
#[test]
fn a_half_consumed_drain_with_panicking_or_reentrant_destructors() {
    for reenter in [false, true] {
        for bomb in [None, Some(2), Some(3), Some(4), Some(5)] {
            let arena = Arena::chained(512);
            let l = Ledger::new();
            let mut v = toks(&l, &arena, 8, reenter);
            l.bomb.set(bomb);
            let r = catch_unwind(AssertUnwindSafe(|| {
                let mut d = v.drain(1..6);
                let first = d.next().expect("1");
                assert_eq!(first.val, 1);
                drop(first);
                drop(d); // drops 2, 3, 4, 5
            }));
            assert_eq!(r.is_err(), bomb.is_some(), "bomb {bomb:?}");
            assert_eq!(vals(&v), [0, 6, 7], "bomb {bomb:?}");
            assert_eq!(l.dropped(), 5);
            v.push(l.make(8, None));
            v.extend_from_within(..1);
            assert_eq!(vals(&v), [0, 6, 7, 8, 0]);
            drop(v);
            l.check(&[]);
        }
    }
}

/// Drains of zero-sized elements, yielded, dropped and leaked, count like any other.
#[test]
fn drains_of_zero_sized_elements() {
    let arena = Arena::new();
    let before = zst_drops();
    let mut z = ArenaVec::new_in(&arena);
    z.resize(6, Z);
    let mut d = z.drain(1..5);
    assert_eq!(d.len(), 4);
    drop(d.next());
    drop(d.next_back());
    drop(d);
    assert_eq!(zst_drops() - before, 4);
    assert_eq!(z.len(), 2);
    std::mem::forget(z.drain(1..));
    assert_eq!(z.len(), 1);
    assert_eq!(z.drain(..).count(), 1);
    assert_eq!(zst_drops() - before, 5);
    assert!(z.is_empty());
}

/// `retain_mut` whose closure changes the elements, allocates from the arena, and panics at
/// the first, a middle or the last call: kept elements keep their change, unvisited ones stay
/// as they were, in order, and each value is dropped once. `dedup_by_key` with a panicking key
/// the same. Zero-sized elements too.
#[test]
fn retain_mut_and_dedup_by_key_with_reentrant_and_panicking_closures() {
    for panic_at in [None, Some(0), Some(3), Some(5)] {
        let arena = Arena::chained(256);
        let l = Ledger::new();
        let mut v = toks(&l, &arena, 6, true);
        let mut calls = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            v.retain_mut(|t| {
                if panic_at == Some(calls) {
                    planned_panic("retain_mut's closure panicked");
                }
                calls += 1;
                churn(&arena, 0x33);
                t.val += 100;
                t.val % 2 == 1
            });
        }));
        assert_eq!(r.is_err(), panic_at.is_some());
        let visited = panic_at.unwrap_or(6);
        let want: Vec<u32> = (0..6)
            .filter_map(|i| {
                if i >= visited {
                    Some(i)
                } else {
                    (i % 2 == 1).then_some(i + 100)
                }
            })
            .collect();
        assert_eq!(vals(&v), want, "panic at {panic_at:?}");
        drop(v);
        l.check(&[]);
    }

    for panic_at in [None, Some(0), Some(2), Some(4)] {
        let arena = Arena::new();
        let l = Ledger::new();
        let mut v = ArenaVec::new_in(&arena);
        for x in [1, 1, 2, 2, 2, 3] {
            v.push(l.make(x, Some(&arena)));
        }
        let mut calls = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            v.dedup_by_key(|t| {
                // Two keys per comparison.
                if panic_at.map(|p| p * 2) == Some(calls) {
                    planned_panic("dedup's key panicked");
                }
                calls += 1;
                t.val
            });
        }));
        assert_eq!(r.is_err(), panic_at.is_some());
        let want: &[u32] = match panic_at {
            None => &[1, 2, 3],
            Some(0) => &[1, 1, 2, 2, 2, 3],
            Some(2) => &[1, 2, 2, 2, 3],
            _ => &[1, 2, 3], // the last comparison (3 after 2) panics
        };
        assert_eq!(vals(&v), want, "panic at {panic_at:?}");
        drop(v);
        l.check(&[]);
    }

    let before = zst_drops();
    let arena = Arena::new();
    let mut z = ArenaVec::new_in(&arena);
    z.resize(7, Z);
    let mut n = 0;
    z.retain(|_| {
        n += 1;
        n % 3 == 0
    });
    assert_eq!((z.len(), zst_drops() - before), (2, 5));
    z.resize(5, Z);
    z.dedup();
    assert_eq!((z.len(), zst_drops() - before), (1, 5 + 4));
    drop(z);
    assert_eq!(zst_drops() - before, 10);
}

/// `append` across arenas and within one, of zero-sized elements, and into a full arena (both
/// vectors unchanged); `split_off` at every index, past the end, at `usize::MAX`, and into a
/// full arena: each value dropped once.
#[test]
fn append_and_split_off_at_the_edges() {
    let a1 = Arena::new();
    let l = Ledger::new();
    {
        let a2 = Arena::chained(256);
        let mut v = toks(&l, &a1, 3, true);
        let mut w = toks(&l, &a2, 4, true);
        v.append(&mut w);
        assert!(w.is_empty());
        w.push(l.make(9, Some(&a2)));
        v.append(&mut w);
        let mut e = ArenaVec::new_in(&a2);
        v.append(&mut e);
        assert_eq!(vals(&v), [0, 1, 2, 0, 1, 2, 3, 9]);
        drop(v);
        drop(w);
    }
    l.check(&[]);

    let before = zst_drops();
    let mut z = ArenaVec::new_in(&a1);
    z.resize(3, Z);
    let mut z2 = ArenaVec::new_in(&a1);
    z2.resize(2, Z);
    z.append(&mut z2);
    let z3 = z.split_off(1);
    assert_eq!((z.len(), z2.len(), z3.len()), (1, 0, 4));
    drop((z, z2, z3));
    assert_eq!(zst_drops() - before, 5);

    for at in 0..=4usize {
        let l = Ledger::new();
        let arena = Arena::chained(256);
        let mut v = toks(&l, &arena, 4, true);
        let tail = v.split_off(at);
        assert_eq!(vals(&v), (0..at as u32).collect::<Vec<_>>());
        assert_eq!(vals(&tail), (at as u32..4).collect::<Vec<_>>());
        v.extend_from_within(..);
        drop(tail);
        drop(v);
        l.check(&[]);
    }
    let l = Ledger::new();
    let mut v = toks(&l, &a1, 4, false);
    for at in [5, usize::MAX] {
        panic_location(|| drop(v.split_off(at)));
        assert_eq!(vals(&v), [0, 1, 2, 3]);
    }
    drop(v);
    l.check(&[]);

    // A full arena: append and split_off panic, both vectors as they were.
    let full = Arena::with_capacity(256);
    let l = Ledger::new();
    let mut v = ArenaVec::with_capacity_in(4, &full);
    for i in 0..4 {
        v.push(l.make(i, None));
    }
    let mut w = toks(&l, &a1, 3, false);
    while full.try_alloc_no_drop(0u8).is_ok() {}
    panic_location(|| v.append(&mut w));
    assert!(v.try_append(&mut w).is_err());
    assert_eq!((vals(&v), vals(&w)), (vec![0, 1, 2, 3], vec![0, 1, 2]));
    panic_location(|| drop(v.split_off(1)));
    assert!(v.try_split_off(2).is_err());
    assert_eq!(vals(&v), [0, 1, 2, 3]);
    assert_eq!(
        v.split_off(4).len(),
        0,
        "nothing to move, nothing allocated"
    );
    drop((v, w));
    l.check(&[]);
}

/// `spare_capacity_mut` is exactly the unused slots; writing them changes no element, and
/// nothing written there is dropped (it was never counted).
#[test]
fn spare_capacity_is_the_unused_slots_only() {
    let arena = Arena::new();
    let l = Ledger::new();
    let mut v: ArenaVec<'_, Tok<'_>> = ArenaVec::with_capacity_in(6, &arena);
    assert_eq!(v.spare_capacity_mut().len(), 6);
    v.push(l.make(0, None));
    v.push(l.make(1, None));
    let cap = v.capacity();
    let spare = v.spare_capacity_mut();
    assert_eq!(spare.len(), cap - 2);
    for s in spare.iter_mut() {
        s.write(l.make(99, None)); // leaked: never counted by the vector
    }
    assert_eq!(vals(&v), [0, 1]);
    v.truncate(1);
    assert_eq!(v.spare_capacity_mut().len(), cap - 1);
    drop(v);
    let leaked: Vec<usize> = (2..2 + cap - 2).collect();
    l.check(&leaked);

    let mut e: ArenaVec<'_, u64> = ArenaVec::new_in(&arena);
    assert!(e.spare_capacity_mut().is_empty());
}

/// `ArenaString`'s insert, insert_str, remove, split_off and truncate off a char boundary,
/// past the end or at `usize::MAX` panic and change nothing.
#[test]
fn string_edits_off_a_char_boundary_panic_and_change_nothing() {
    let arena = Arena::new();
    let text = "aé€😀z";
    let mut s = ArenaString::from_str_in(text, &arena);
    let bad: Vec<usize> = (0..=text.len() + 1)
        .filter(|&i| !text.is_char_boundary(i))
        .chain([text.len() + 1, usize::MAX])
        .collect();
    for &i in &bad {
        for op in 0..5 {
            let mut edit = || match op {
                0 => s.insert(i, 'x'),
                1 => s.insert_str(i, "ü!"),
                2 => {
                    s.remove(i);
                }
                3 => drop(s.split_off(i)),
                _ => s.truncate(i),
            };
            if op != 4 || i < text.len() {
                panic_location(edit);
            } else {
                edit(); // truncating past the end is a no-op
            }
            assert_eq!(s, text, "op {op} at {i}");
        }
        panic_location(|| {
            let _ = s.try_insert_str(i, "q");
        });
    }
    // remove at the end: nothing to remove.
    panic_location(|| {
        s.remove(text.len());
    });
    // Every boundary works, each like `String`.
    for i in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
        let mut m = String::from(text);
        let mut t = ArenaString::from_str_in(text, &arena);
        m.insert_str(i, "ü€");
        t.insert_str(i, "ü€");
        m.insert(i, '😀');
        t.insert(i, '😀');
        assert_eq!(t, m.as_str());
        if i < text.len() {
            assert_eq!(t.remove(i), m.remove(i));
        }
        assert_eq!(t.split_off(i), m.split_off(i).as_str());
        assert_eq!(t, m.as_str());
    }
}

/// `ArenaString::retain` whose closure panics at each char (of mixed widths), or allocates from
/// the string's arena: the text stays UTF-8, holding the chars kept so far and every char not
/// yet visited.
#[test]
fn string_retain_with_a_panicking_or_reentrant_closure_stays_utf8() {
    let text = "a€😀bé€z😀";
    let chars: Vec<char> = text.chars().collect();
    for panic_at in (0..chars.len()).map(Some).chain([None]) {
        let arena = Arena::chained(256);
        let mut s = ArenaString::from_str_in(text, &arena);
        let mut seen = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            s.retain(|c| {
                if panic_at == Some(seen) {
                    planned_panic("retain's closure panicked");
                }
                seen += 1;
                churn(&arena, 0x77);
                let mut other = ArenaString::new_in(&arena);
                other.push(c);
                drop(other);
                c.len_utf8() % 2 == 1 // keeps 1- and 3-byte chars
            });
        }));
        assert_eq!(r.is_err(), panic_at.is_some());
        assert!(
            std::str::from_utf8(s.as_bytes()).is_ok(),
            "UTF-8 after a panic at {panic_at:?}"
        );
        let visited = panic_at.unwrap_or(chars.len());
        let want: String = chars
            .iter()
            .enumerate()
            .filter(|&(i, c)| i >= visited || c.len_utf8() % 2 == 1)
            .map(|(_, c)| c)
            .collect();
        assert_eq!(s, want.as_str(), "panic at {panic_at:?}");
        s.push('!');
        s.insert(0, '¡');
        assert_eq!(s.chars().count(), want.chars().count() + 2);
    }
}

/// `dedup_by` whose predicate swaps and changes the two elements it is lent (as `Vec`'s
/// allows): each value is still dropped exactly once, and the kept ones are what the
/// predicate left in the kept slot.
#[test]
fn dedup_by_that_swaps_its_arguments_keeps_each_value_once() {
    let arena = Arena::new();
    let l = Ledger::new();
    let mut v = ArenaVec::new_in(&arena);
    for x in [1, 1, 1, 2, 3, 3] {
        v.push(l.make(x, Some(&arena)));
    }
    let mut model: Vec<(usize, u32)> = v.iter().map(|t| (t.id, t.val)).collect();
    v.dedup_by(|a, b| {
        std::mem::swap(a, b);
        a.val == b.val
    });
    model.dedup_by(|a, b| {
        std::mem::swap(a, b);
        a.1 == b.1
    });
    let got: Vec<(usize, u32)> = v.iter().map(|t| (t.id, t.val)).collect();
    assert_eq!(got, model);
    drop(v);
    l.check(&[]);
}

/// A drain feeding another vector of the same arena, which grows (in place while it is the
/// newest block, then moving across small pages) while the drain holds the first one.
#[test]
fn a_drain_feeding_a_growing_vector_of_the_same_arena() {
    for page in [128, 4096] {
        let arena = Arena::chained(page);
        let l = Ledger::new();
        let mut v = toks(&l, &arena, 12, true);
        let mut w = ArenaVec::new_in(&arena);
        w.push(l.make(100, Some(&arena)));
        w.extend(v.drain(2..10).rev());
        assert_eq!(vals(&v), [0, 1, 10, 11]);
        assert_eq!(vals(&w), [100, 9, 8, 7, 6, 5, 4, 3, 2]);
        w.extend(v.drain(..1));
        w.append(&mut v);
        assert_eq!(vals(&w), [100, 9, 8, 7, 6, 5, 4, 3, 2, 0, 1, 10, 11]);
        drop((v, w));
        l.check(&[]);
    }
}

/// In fixed-size arenas of every size around the need, `extend_from_within`, `resize` and
/// `retain_mut` whose user code allocates from the full arena (and so panics part-way):
/// every value dropped exactly once, the vector's elements intact.
#[test]
fn methods_whose_user_code_runs_out_of_a_fixed_arena_keep_each_value_once() {
    for cap in (256..=1536).step_by(miri_or(16, 128)) {
        let arena = Arena::with_capacity(cap);
        let l = Ledger::new();
        let mut v = ArenaVec::new_in(&arena);
        if v.try_reserve(4).is_err() {
            continue;
        }
        for i in 0..4 {
            v.push(l.make(i, Some(&arena)));
        }
        let _ = catch_unwind(AssertUnwindSafe(|| {
            v.extend_from_within(1..);
            assert_eq!(vals(&v), [0, 1, 2, 3, 1, 2, 3]);
            v.resize(9, l.make(7, Some(&arena)));
            v.retain_mut(|t| {
                churn(&arena, 1);
                t.val != 2
            });
        }));
        let n = v.len();
        let got = vals(&v);
        assert!(got.starts_with(&[0, 1]), "{cap}: {got:?}");
        drop(v);
        assert!(n <= l.made());
        l.check(&[]);
    }
}

/// `ArenaString` edits in a full fixed-size arena: the fallible ones are errors and change
/// nothing, `retain` (which never allocates) still works.
#[test]
fn string_edits_in_a_full_arena() {
    let arena = Arena::with_capacity(64);
    let mut s = ArenaString::with_capacity_in(8, &arena);
    s.push_str("a€b");
    while arena.try_alloc_no_drop(0u8).is_ok() {}
    assert!(s.try_insert_str(1, "0123456789").is_err());
    assert_eq!(s, "a€b");
    panic_location(|| s.insert_str(0, "0123456789"));
    panic_location(|| drop(s.split_off(1)));
    assert_eq!(s, "a€b");
    s.insert(5, 'c'); // fits the capacity
    s.retain(|c| c != '€');
    assert_eq!(s, "abc");
    assert_eq!(s.remove(1), 'b');
    assert_eq!(s, "ac");
}
