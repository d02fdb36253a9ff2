//! `ArenaVec`, `ArenaString`, `ArenaBox` and its `IntoIter` against safe code that works against
//! them: iterators whose `size_hint` lies or that allocate from the same arena between items,
//! destructors that allocate from the arena while their collection is being dropped (the buffer
//! must not be given back over what they allocated), zero-sized elements with a large alignment,
//! leaked iterators, and capacities past the address space (always an error or a panic, never a
//! wrapped size).

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::arena::Arena;
use arena_kit_core::collections::{ArenaBox, ArenaString, ArenaVec};

use crate::support::panics::panic_location;
use crate::support::{counter, drops, miri_or};

#[derive(Debug)]
struct Counted(Arc<AtomicUsize>, u32);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts its drop in `.0`, and panics in it if armed (`.2`); `.1` is its value.
struct Bomb(Arc<AtomicUsize>, u32, bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
        if self.2 {
            panic!("a destructor panicked");
        }
    }
}

/// Yields `Counted` values, allocating a few bytes from `arena` before each (so a vector being
/// extended is never the arena's newest block when it grows), panicking instead of yielding
/// item `panic_at`, and reporting `hint` as its size hint whatever is left.
struct Hostile<'a> {
    arena: &'a Arena,
    next: u32,
    end: u32,
    panic_at: Option<u32>,
    hint: (usize, Option<usize>),
    drops: Arc<AtomicUsize>,
}

impl Iterator for Hostile<'_> {
    type Item = Counted;
    fn next(&mut self) -> Option<Counted> {
        if self.next == self.end {
            return None;
        }
        if Some(self.next) == self.panic_at {
            panic!("the iterator panicked at item {}", self.next);
        }
        self.arena.alloc_no_drop([self.next as u8; 3]);
        self.next += 1;
        Some(Counted(Arc::clone(&self.drops), self.next - 1))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.hint
    }
}

#[test]
fn extend_with_lying_size_hints_and_interleaved_allocations_keeps_every_item_once() {
    let n = miri_or(200, 20) as u32;
    for hint in [
        (0, Some(0)),
        (1, Some(1)),
        (n as usize * 3, None),
        (3, Some(3)),
    ] {
        let arena = Arena::new();
        let c = counter();
        {
            let mut v = ArenaVec::new_in(&arena);
            v.push(Counted(Arc::clone(&c), u32::MAX));
            v.extend(Hostile {
                arena: &arena,
                next: 0,
                end: n,
                panic_at: None,
                hint,
                drops: Arc::clone(&c),
            });
            assert_eq!(v.len(), n as usize + 1, "{hint:?}");
            assert!(v[1..].iter().enumerate().all(|(i, x)| x.1 == i as u32));
            assert_eq!(drops(&c), 0, "{hint:?}: nothing dropped while moving");
        }
        assert_eq!(drops(&c), n as usize + 1, "{hint:?}: each dropped once");
    }
}

#[test]
fn an_iterator_panicking_mid_extend_leaves_the_items_taken_dropped_once() {
    let arena = Arena::new();
    let c = counter();
    let mut v = ArenaVec::new_in(&arena);
    let r = catch_unwind(AssertUnwindSafe(|| {
        v.extend(Hostile {
            arena: &arena,
            next: 0,
            end: 50,
            panic_at: Some(miri_or(37, 7) as u32),
            hint: (2, None),
            drops: Arc::clone(&c),
        });
    }));
    assert!(r.is_err());
    assert_eq!(v.len(), miri_or(37, 7));
    assert_eq!(drops(&c), 0);
    v.push(Counted(Arc::clone(&c), 99)); // still usable
    drop(v);
    assert_eq!(drops(&c), miri_or(37, 7) + 1);
}

/// A size hint past the address space makes `extend` panic (a capacity overflow), before it
/// takes any item; the vector keeps what it had.
#[test]
fn extend_with_a_size_hint_past_the_address_space_panics_before_taking_anything() {
    let arena = Arena::new();
    let c = counter();
    let mut v = ArenaVec::new_in(&arena);
    v.push(Counted(Arc::clone(&c), 7));
    for hint in [usize::MAX, usize::MAX / 2, isize::MAX as usize / 8 + 1] {
        let mut it = Hostile {
            arena: &arena,
            next: 0,
            end: 3,
            panic_at: None,
            hint: (hint, None),
            drops: Arc::clone(&c),
        };
        let r = catch_unwind(AssertUnwindSafe(|| v.extend(&mut it)));
        assert!(r.is_err(), "{hint}");
        assert_eq!(it.next, 0, "{hint}: no item taken");
        assert_eq!((v.len(), v[0].1), (1, 7));
    }
    drop(v);
    assert_eq!(drops(&c), 1);
}

#[test]
fn capacities_past_the_address_space_are_errors_and_change_nothing() {
    let arena = Arena::with_capacity(256);
    for cap in [
        usize::MAX,
        usize::MAX / 8 + 1,
        isize::MAX as usize / 8,
        isize::MAX as usize / 8 - 1,
        1 << 60,
    ] {
        assert!(
            ArenaVec::<u64>::try_with_capacity_in(cap, &arena).is_err(),
            "{cap}"
        );
        assert!(
            ArenaString::try_with_capacity_in(cap, &arena).is_err(),
            "{cap}"
        );
    }
    let mut v = ArenaVec::<u64>::with_capacity_in(4, &arena);
    v.extend([1, 2, 3]);
    let cap = v.capacity();
    for more in [
        usize::MAX,
        usize::MAX - 3,
        isize::MAX as usize / 8,
        isize::MAX as usize / 8 - 3,
    ] {
        assert!(v.try_reserve(more).is_err(), "{more}");
        assert_eq!((v.as_slice(), v.capacity()), (&[1, 2, 3][..], cap));
    }
    let mut s = ArenaString::from_str_in("abc", &arena);
    assert!(s.try_reserve(usize::MAX - 1).is_err());
    assert!(s.try_reserve(isize::MAX as usize).is_err());
    assert_eq!(s, "abc");
    // Still usable: the failed requests took nothing.
    v.push(4);
    s.push('d');
    assert_eq!((v.as_slice(), s.as_str()), (&[1, 2, 3, 4][..], "abcd"));
}

/// What a destructor allocated from the arena while its vector was being dropped.
type Stash<'a> = RefCell<Vec<&'a mut [u8; 24]>>;

/// Allocates 24 bytes of its id from the arena when dropped, keeping them in the stash.
struct AllocatesOnDrop<'a> {
    arena: &'a Arena,
    stash: &'a Stash<'a>,
    id: u8,
}

impl Drop for AllocatesOnDrop<'_> {
    fn drop(&mut self) {
        let bytes = self.arena.alloc_no_drop([self.id; 24]);
        self.stash.borrow_mut().push(bytes);
    }
}

fn check_stash(stash: &Stash<'_>, ids: impl Iterator<Item = u8>) {
    let stash = stash.borrow();
    let ids: Vec<u8> = ids.collect();
    assert_eq!(stash.len(), ids.len());
    for (bytes, id) in stash.iter().zip(ids) {
        assert!(
            bytes.iter().all(|&b| b == id),
            "allocation {id} overwritten"
        );
    }
}

/// The vector is the arena's newest block when it is dropped, so it gives its buffer back
/// unless its elements' destructors allocated after it: then it must not, or the next
/// allocation would land on what they allocated.
#[test]
fn destructors_that_allocate_while_their_vector_drops_keep_what_they_allocated() {
    let arena = Arena::with_capacity(4096);
    let stash: Stash<'_> = RefCell::new(Vec::new());
    {
        let mut v = ArenaVec::with_capacity_in(8, &arena);
        for id in 1..=5 {
            v.push(AllocatesOnDrop {
                arena: &arena,
                stash: &stash,
                id,
            });
        }
    }
    check_stash(&stash, 1..=5);
    // Allocations after the drop must not overlap what the destructors allocated.
    for _ in 0..8 {
        arena.alloc_no_drop([0u8; 40]);
    }
    check_stash(&stash, 1..=5);

    // The same through a boxed slice's iterator, dropped half-consumed.
    let mut v = ArenaVec::with_capacity_in(4, &arena);
    for id in 11..=14 {
        v.push(AllocatesOnDrop {
            arena: &arena,
            stash: &stash,
            id,
        });
    }
    let mut it = v.into_iter();
    drop(it.next());
    drop(it);
    for _ in 0..8 {
        arena.alloc_no_drop([0u8; 40]);
    }
    check_stash(&stash, (1..=5).chain(11..=14));
}

/// A zero-sized element with a page-sized alignment: the vector never allocates for it, but
/// every pointer it hands out is aligned, and every element is dropped once, through
/// `into_slice` (the arena drops them), `into_iter` and the vector's own drop.
#[test]
fn zero_sized_elements_with_a_large_alignment_stay_aligned_and_drop_once() {
    #[repr(align(4096))]
    struct Big(Arc<AtomicUsize>);
    impl Drop for Big {
        fn drop(&mut self) {
            assert!((self as *mut Big).addr().is_multiple_of(4096), "aligned");
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    // `Big` holds an `Arc`, so it is not zero-sized; its alignment is the point. A true ZST:
    #[repr(align(4096))]
    struct Zst;
    static ZST_DROPS: AtomicUsize = AtomicUsize::new(0);
    impl Drop for Zst {
        fn drop(&mut self) {
            assert!((self as *mut Zst).addr().is_multiple_of(4096), "aligned");
            ZST_DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }
    let mut arena = Arena::new();
    let c = counter();
    {
        let mut v = ArenaVec::new_in(&arena);
        for _ in 0..3 {
            v.push(Big(Arc::clone(&c)));
        }
        v.insert(1, Big(Arc::clone(&c)));
        drop(v.remove(0));
        let slice = v.into_slice();
        assert_eq!(slice.len(), 3);
        assert!(slice.as_ptr().addr().is_multiple_of(4096));
    }
    arena.reset();
    assert_eq!(drops(&c), 4);

    {
        let mut v = ArenaVec::new_in(&arena);
        assert_eq!(v.capacity(), usize::MAX);
        for _ in 0..5 {
            v.push(Zst);
        }
        v.insert(2, Zst);
        drop(v.swap_remove(0));
        assert_eq!(ZST_DROPS.load(Ordering::Relaxed), 1);
        let mut it = v.into_iter();
        drop(it.next_back());
        assert_eq!(it.len(), 4);
        drop(it);
        assert_eq!(ZST_DROPS.load(Ordering::Relaxed), 6);
        let mut v = ArenaVec::new_in(&arena);
        v.extend([Zst, Zst, Zst]);
        let slice = v.into_slice();
        assert_eq!(slice.len(), 3);
    }
    arena.reset();
    assert_eq!(ZST_DROPS.load(Ordering::Relaxed), 9);
}

/// Leaking a boxed slice's iterator or a box never drops their values (as `mem::forget`
/// allows) and the arena's reset drops nothing of theirs; the memory still comes back.
#[test]
#[cfg_attr(miri, ignore = "leaks on purpose, which Miri reports")]
fn leaked_boxes_and_iterators_drop_nothing_and_the_arena_stays_whole() {
    let mut arena = Arena::with_capacity(1024);
    let c = counter();
    {
        let b: ArenaBox<'_, [Counted]> =
            arena.alloc_box_slice_fill_with(4, |i| Counted(Arc::clone(&c), i as u32));
        let mut it = b.into_iter();
        drop(it.next());
        std::mem::forget(it);
        std::mem::forget(arena.alloc_box(Counted(Arc::clone(&c), 9)));
        let mut v = ArenaVec::new_in(&arena);
        v.push(Counted(Arc::clone(&c), 10));
        std::mem::forget(v);
    }
    assert_eq!(drops(&c), 1);
    arena.reset();
    assert_eq!(drops(&c), 1, "the arena drops none of the leaked values");
    assert_eq!(arena.used(), 0);
    let v = ArenaVec::from_iter_in(0..100u32, &arena);
    assert_eq!(v.iter().sum::<u32>(), 4950);
}

/// An `IntoIter` whose remaining values' destructors panic drops every other remaining value
/// once, and none of the taken ones again.
#[test]
fn an_iterator_dropped_with_panicking_destructors_drops_each_remaining_value_once() {
    let arena = Arena::with_capacity(1024);
    let c = counter();
    let mut v = ArenaVec::new_in(&arena);
    for i in 0..6 {
        v.push(Bomb(Arc::clone(&c), i, i == 3));
    }
    let mut it = v.into_iter();
    drop(it.next());
    drop(it.next_back());
    assert_eq!(drops(&c), 2);
    assert!(catch_unwind(AssertUnwindSafe(|| drop(it))).is_err());
    assert_eq!(drops(&c), 6);
}

/// A `Display` that writes a piece the arena has no room for, ignores the error (as a
/// formatter may: `let _ = write!(f, ...)`) and goes on writing what fits: `try_format_in`
/// returns the arena's error and `arena_format!` panics, never a text with a piece missing.
#[test]
fn formatting_reports_the_arena_error_even_when_a_display_impl_ignores_it() {
    struct IgnoresErrors;
    impl std::fmt::Display for IgnoresErrors {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let _ = f.write_str("a piece far longer than the sixteen bytes the arena holds");
            f.write_str("ok")
        }
    }
    let arena = Arena::with_capacity(16);
    let r = ArenaString::try_format_in(&arena, format_args!("{}", IgnoresErrors));
    assert!(
        r.is_err(),
        "a write the arena refused was dropped silently: Ok({:?})",
        r.as_ref().map(|s| s.as_str()).unwrap_or_default()
    );
    let arena = Arena::with_capacity(16);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena_kit_core::arena_format!(in &arena, "{}", IgnoresErrors).len()
    }));
    assert!(r.is_err(), "arena_format! returned a truncated text: {r:?}");
}

/// A `Panic` budget that panics while `into_slice` has the arena adopt the elements (growing
/// the block in place for the drop record, or the fresh allocation) leaves them the vector's,
/// dropped on the unwind, as a `Fail` budget's refusal hands the vector back
/// (`try_into_slice`) and `into_slice`'s panic drops it: nothing leaks.
#[test]
fn into_slice_under_a_panic_budget_still_drops_the_elements() {
    use arena_kit_core::tags::{Budget, Budgeted};
    for in_place in [true, false] {
        for panic_policy in [false, true] {
            let arena = Arena::chained(4096);
            let c = counter();
            let mut v = ArenaVec::with_capacity_in(2, &arena);
            v.push(Counted(Arc::clone(&c), 1));
            v.push(Counted(Arc::clone(&c), 2));
            if !in_place {
                arena.alloc_no_drop(0u64); // the buffer is not the newest: the values must move
            }
            let limit = arena.used() + 8; // no room for a drop record
            arena.restore_budget(
                &if panic_policy {
                    Budget::panic(limit)
                } else {
                    Budget::fail(limit)
                }
                .into(),
            );
            let r = catch_unwind(AssertUnwindSafe(|| {
                v.into_slice();
            }));
            assert!(r.is_err());
            assert_eq!(
                drops(&c),
                2,
                "in place {in_place}, Panic budget {panic_policy}: the elements were leaked"
            );
        }
    }
}

/// Near a budget's limit a full vector grows to the exact need when doubling would cross it,
/// under every policy: a `Panic` budget does not panic and a `Warn` budget does not warn (nor
/// let `used()` past the limit) over growth nothing asked for, as a `Fail` budget's refusal
/// already led to the exact need.
#[test]
fn growth_under_a_panic_or_warn_budget_falls_back_to_the_exact_need_as_under_fail() {
    use arena_kit_core::tags::{Budget, Budgeted};
    let mut wrong = Vec::new();
    for in_place in [true, false] {
        for policy in ["fail", "panic", "warn"] {
            let arena = Arena::chained(4096);
            let mut v = ArenaVec::<u64>::with_capacity_in(4, &arena);
            v.extend([1, 2, 3, 4]);
            if !in_place {
                arena.alloc_no_drop(0u64); // growth moves the buffer: 5 elements, 40 bytes
            }
            let limit = arena.used() + if in_place { 8 } else { 40 };
            let budget = match policy {
                "fail" => Budget::fail(limit),
                "panic" => Budget::panic(limit),
                _ => Budget::warn(limit),
            };
            arena.restore_budget(&budget.into());
            if catch_unwind(AssertUnwindSafe(|| v.push(5))).is_err() {
                wrong.push(format!(
                    "{policy} budget, in place {in_place}: push panicked although the exact need fits"
                ));
                continue;
            }
            assert_eq!(v, [1, 2, 3, 4, 5]);
            if arena.used() > limit {
                wrong.push(format!(
                    "{policy} budget, in place {in_place}: {} bytes used, over the limit of {limit} \
                     that the exact need kept to",
                    arena.used()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// One panicking call, by name.
type Case<'a> = (&'static str, Box<dyn Fn() + 'a>);

/// Every case panics, and reports its panic in this file (the test's call), not in the library.
#[track_caller]
fn assert_each_panics_here(cases: &[Case<'_>]) {
    let mut wrong = Vec::new();
    for (name, f) in cases {
        let at = panic_location(f);
        if !at.starts_with(file!()) {
            wrong.push(format!("{name} -> {at}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "panics reported inside the library: {wrong:#?}"
    );
}

/// A full arena (or an impossible capacity) is reported at the user's call, for every panicking
/// form of a `try_` method: the collections', the arena's own and the pools' constructors. (A
/// panic inside a closure such as `unwrap_or_else(|e| panic!("{e}"))` would point into the
/// library instead: closures do not inherit `#[track_caller]`.)
#[test]
fn a_full_arena_panics_at_the_callers_line() {
    let full = Arena::with_capacity(8);
    full.alloc_no_drop(0u64);
    let cases: Vec<Case<'_>> = vec![
        (
            "Arena::alloc",
            Box::new(|| {
                full.alloc(String::new());
            }),
        ),
        (
            "Arena::alloc_no_drop",
            Box::new(|| {
                full.alloc_no_drop(1u64);
            }),
        ),
        (
            "Arena::alloc_str",
            Box::new(|| {
                full.alloc_str("abc");
            }),
        ),
        (
            "Arena::alloc_slice_copy",
            Box::new(|| {
                full.alloc_slice_copy(&[1u64, 2]);
            }),
        ),
        (
            "Pool::with_capacity",
            Box::new(|| drop(arena_kit_core::Pool::<u64>::with_capacity(usize::MAX))),
        ),
        (
            "SecondaryPool::with_capacity",
            Box::new(|| {
                drop(arena_kit_core::pool::SecondaryPool::<u64, u64>::with_capacity(usize::MAX))
            }),
        ),
        (
            "insert",
            Box::new(|| ArenaVec::new_in(&full).insert(0, 1u64)),
        ),
        ("push", Box::new(|| ArenaVec::new_in(&full).push(1u64))),
        (
            "reserve",
            Box::new(|| ArenaVec::<u64>::new_in(&full).reserve(1)),
        ),
        (
            "with_capacity_in",
            Box::new(|| drop(ArenaVec::<u64>::with_capacity_in(3, &full))),
        ),
        (
            "extend",
            Box::new(|| ArenaVec::new_in(&full).extend([1u64, 2])),
        ),
        (
            "extend_from_slice",
            Box::new(|| ArenaVec::new_in(&full).extend_from_slice(&[1u64])),
        ),
        (
            "from_str_in",
            Box::new(|| drop(ArenaString::from_str_in("abc", &full))),
        ),
        (
            "push_str",
            Box::new(|| ArenaString::new_in(&full).push_str("abc")),
        ),
        (
            "arena_format!",
            Box::new(|| drop(arena_kit_core::arena_format!(in &full, "{}", 12345))),
        ),
    ];
    assert_each_panics_here(&cases);
}

/// A range out of bounds or decreasing is reported at the user's call by every `ArenaVec`
/// method that takes one (the check is the SoA containers' `range_or_panic`).
#[test]
fn a_bad_range_panics_at_the_callers_line() {
    let arena = Arena::with_capacity(1024);
    let v = RefCell::new(ArenaVec::from_iter_in([1u32, 2, 3, 4], &arena));
    #[allow(clippy::reversed_empty_ranges)]
    let cases: Vec<Case<'_>> = vec![
        ("drain", Box::new(|| drop(v.borrow_mut().drain(2..9)))),
        (
            "drain reversed",
            Box::new(|| drop(v.borrow_mut().drain(3..1))),
        ),
        (
            "extend_from_within",
            Box::new(|| v.borrow_mut().extend_from_within(..=4)),
        ),
        (
            "try_extend_from_within",
            Box::new(|| {
                let _ = v.borrow_mut().try_extend_from_within(1..=usize::MAX);
            }),
        ),
    ];
    assert_each_panics_here(&cases);
    assert_eq!(*v.borrow(), [1, 2, 3, 4], "a refused range changes nothing");
}

/// `retain` and `dedup_by` whose predicate panics at any call, or whose element's destructor
/// panics, keep every element exactly once: the vector then holds the elements kept so far and
/// those not yet visited, in order, and every rejected one was dropped once.
#[test]
fn retain_and_dedup_with_panics_keep_or_drop_each_element_once() {
    let values = [0u32, 0, 1, 2, 2, 3, 4, 4];
    for dedup in [false, true] {
        for (panic_call, bomb_at) in (0..values.len())
            .map(|k| (Some(k), None))
            .chain((0..values.len()).map(|k| (None, Some(k))))
        {
            let arena = Arena::with_capacity(1024);
            let c = counter();
            let mut v = ArenaVec::new_in(&arena);
            for (i, &x) in values.iter().enumerate() {
                v.push(Bomb(Arc::clone(&c), x, bomb_at == Some(i)));
            }
            let mut calls = 0;
            let mut rejected = Vec::new();
            let r = catch_unwind(AssertUnwindSafe(|| {
                let mut judge = |x: u32, prev: u32| {
                    if panic_call == Some(calls) {
                        panic!("the predicate panicked");
                    }
                    calls += 1;
                    let drop_it = if dedup {
                        x == prev
                    } else {
                        x.is_multiple_of(2)
                    };
                    if drop_it {
                        rejected.push(x);
                    }
                    drop_it
                };
                if dedup {
                    v.dedup_by(|a, b| judge(a.1, b.1));
                } else {
                    v.retain(|a| !judge(a.1, u32::MAX));
                }
            }));
            let panicked = panic_call.is_some_and(|k| k < values.len() - usize::from(dedup))
                || bomb_at.is_some_and(|i| {
                    if dedup {
                        i > 0 && values[i] == values[i - 1]
                    } else {
                        values[i].is_multiple_of(2)
                    }
                });
            assert_eq!(
                r.is_err(),
                panicked,
                "dedup {dedup}, {panic_call:?}, {bomb_at:?}"
            );
            let left: Vec<u32> = v.iter().map(|b| b.1).collect();
            assert!(
                left.windows(2).all(|w| w[0] <= w[1]),
                "dedup {dedup}, {panic_call:?}, {bomb_at:?}: order kept: {left:?}"
            );
            assert_eq!(
                drops(&c),
                rejected.len(),
                "dedup {dedup}, {panic_call:?}, {bomb_at:?}: each rejected element dropped once"
            );
            assert_eq!(
                left.len() + rejected.len(),
                values.len(),
                "dedup {dedup}, {panic_call:?}, {bomb_at:?}: {left:?} + {rejected:?}"
            );
            // (A kept bomb goes off here.)
            let _ = catch_unwind(AssertUnwindSafe(|| drop(v)));
            assert_eq!(
                drops(&c),
                values.len(),
                "every element dropped once in the end"
            );
        }
    }
}

/// A drain whose elements' destructors panic when it is dropped, or that is leaked, keeps every
/// element exactly once: the unyielded ones dropped once, the tail moved down behind the kept
/// head; a leaked drain leaves the head only (the rest leaked, never dropped twice).
#[test]
fn a_drain_dropped_with_panicking_destructors_or_leaked_keeps_each_element_once() {
    let arena = Arena::with_capacity(1024);
    let c = counter();
    let mut v = ArenaVec::new_in(&arena);
    for i in 0..8 {
        v.push(Bomb(Arc::clone(&c), i, i == 3));
    }
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut d = v.drain(2..6);
        drop(d.next()); // 2
        drop(d);
    }));
    assert!(r.is_err(), "the bomb went off");
    assert_eq!(
        drops(&c),
        4,
        "2 yielded, then 3, 4, 5 dropped with the drain"
    );
    assert_eq!(v.iter().map(|b| b.1).collect::<Vec<_>>(), [0, 1, 6, 7]);
    drop(v);
    assert_eq!(drops(&c), 8);

    let mut plain = ArenaVec::from_iter_in(0u32..6, &arena);
    std::mem::forget(plain.drain(1..3));
    assert_eq!(plain, [0]);
}
