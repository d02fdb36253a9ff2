//! `ArenaVec`, `ArenaString` and `ArenaBox`: growth in place and by moving, drops, `into_slice`
//! and its drop registration, scopes, budgets, panicking user code, boxes sent to another
//! thread, and a model-based test against `Vec`.

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::arena::{Arena, ArenaError};
use arena_kit_core::arena_format;
use arena_kit_core::collections::{ArenaBox, ArenaString, ArenaVec};
use arena_kit_core::tags::{Budget, Budgeted};
use proptest::prelude::*;

use crate::support::{counter, drops, miri_or, proptest_config};

#[derive(Debug, Clone)]
struct Counted(Arc<AtomicUsize>, u32);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl PartialEq for Counted {
    fn eq(&self, other: &Self) -> bool {
        self.1 == other.1
    }
}

fn hash_of<T: Hash + ?Sized>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

// --- ArenaVec basics ---

#[test]
fn push_a_bunch_of_items_and_read_them_back() {
    let arena = Arena::new();
    let mut v = ArenaVec::new_in(&arena);
    let n = miri_or(10_000, 300);
    for i in 0..n {
        v.push(i);
    }
    assert_eq!(v.len(), n);
    assert!(v.iter().copied().eq(0..n));
    assert_eq!(v.pop(), Some(n - 1));
    assert!(v.capacity() >= v.len());
}

#[test]
fn the_last_allocation_grows_in_place() {
    let arena = Arena::with_capacity(4096);
    let mut v: ArenaVec<u64> = ArenaVec::with_capacity_in(4, &arena);
    let start = v.as_ptr();
    v.extend(0..100);
    assert_eq!(v.as_ptr(), start, "nothing came after it: no move");
    assert_eq!(arena.used(), v.capacity() * 8);
}

#[test]
fn a_buffer_that_is_not_last_moves_and_keeps_its_elements() {
    let arena = Arena::with_capacity(4096);
    let mut v: ArenaVec<u32> = ArenaVec::with_capacity_in(4, &arena);
    v.extend([1, 2, 3, 4]);
    let start = v.as_ptr();
    let other = arena.alloc(9u32);
    v.push(5);
    assert_ne!(v.as_ptr(), start);
    assert_eq!(v, [1, 2, 3, 4, 5]);
    assert_eq!(*other, 9);
}

#[test]
fn a_dropped_vector_drops_its_elements_and_gives_its_buffer_back() {
    let arena = Arena::new();
    let c = counter();
    arena.alloc(1u64);
    let used = arena.used();
    {
        let mut v = ArenaVec::new_in(&arena);
        for i in 0..10 {
            v.push(Counted(Arc::clone(&c), i));
        }
        v.truncate(7);
        assert_eq!(drops(&c), 3);
    }
    assert_eq!(drops(&c), 10);
    assert_eq!(arena.used(), used, "the newest buffer went back");
    assert_eq!(arena.pending_drops(), 0);
}

#[test]
fn insert_remove_swap_remove_truncate_clear() {
    let arena = Arena::new();
    let mut v = ArenaVec::from_iter_in([1, 2, 3], &arena);
    v.insert(0, 0);
    v.insert(4, 4);
    v.insert(2, 9);
    assert_eq!(v, [0, 1, 9, 2, 3, 4]);
    assert_eq!(v.remove(2), 9);
    assert_eq!(v.swap_remove(0), 0);
    assert_eq!(v, [4, 1, 2, 3]);
    v.truncate(10);
    assert_eq!(v.len(), 4);
    v.clear();
    assert!(v.is_empty());
    assert!(v.capacity() >= 4);
}

#[test]
fn out_of_bounds_insert_and_remove_panic_and_change_nothing() {
    let arena = Arena::new();
    let mut v = ArenaVec::from_iter_in([1, 2], &arena);
    let r = catch_unwind(AssertUnwindSafe(|| v.insert(3, 0)));
    assert!(r.is_err());
    let r = catch_unwind(AssertUnwindSafe(|| v.remove(2)));
    assert!(r.is_err());
    assert_eq!(v, [1, 2]);
}

#[test]
fn try_push_hands_the_value_back_when_the_arena_is_full() {
    let arena = Arena::with_capacity(64);
    let c = counter();
    let mut v = ArenaVec::new_in(&arena);
    let mut pushed = 0;
    let full = loop {
        match v.try_push(Counted(Arc::clone(&c), pushed)) {
            Ok(()) => pushed += 1,
            Err(full) => break full,
        }
    };
    assert!(matches!(full.error, ArenaError::Full { .. }));
    assert_eq!(full.value.1, pushed);
    assert!(full.to_string().contains("handed back"));
    drop(full);
    assert_eq!(drops(&c), 1);
    assert_eq!(v.len() as u32, pushed);
    let r = v.try_insert(0, Counted(Arc::clone(&c), 100));
    assert_eq!(r.unwrap_err().into_value().1, 100);
    assert!(v.iter().map(|x| x.1).eq(0..pushed), "unchanged");
    assert!(matches!(
        v.try_reserve(usize::MAX),
        Err(ArenaError::SizeOverflow { .. })
    ));
}

#[test]
fn reserve_falls_back_to_the_exact_need_when_doubling_does_not_fit() {
    let arena = Arena::with_capacity(100);
    let mut v: ArenaVec<u8> = ArenaVec::with_capacity_in(60, &arena);
    v.extend([0u8; 60]);
    // doubling would want 120 bytes, the arena has 100: the exact 61 still fits
    v.push(1);
    assert_eq!(v.len(), 61);
    assert!(v.capacity() <= 100);
}

/// A budget's check before doubling counts what the growth adds: in place, only the bytes past
/// the old buffer. A limit that leaves room for those doubles the buffer, under every policy,
/// rather than stepping to the exact need.
#[test]
fn doubling_in_place_near_a_budget_counts_only_the_added_bytes() {
    for policy in ["fail", "panic", "warn"] {
        let arena = Arena::chained(4096);
        let mut v = ArenaVec::<u64>::with_capacity_in(4, &arena);
        v.extend([1, 2, 3, 4]);
        let limit = arena.used() + 32; // room for 4 more elements in place, not for 8 anywhere
        let budget = match policy {
            "fail" => Budget::fail(limit),
            "panic" => Budget::panic(limit),
            _ => Budget::warn(limit),
        };
        arena.restore_budget(&budget.into());
        let buffer = v.as_ptr();
        v.push(5);
        assert_eq!(v, [1, 2, 3, 4, 5]);
        assert_eq!(v.as_ptr(), buffer, "{policy}: grown in place");
        assert_eq!(v.capacity(), 8, "{policy}: doubled, as the limit allows");
        assert_eq!(arena.used(), limit, "{policy}");
    }
}

#[test]
fn zero_sized_elements_never_allocate() {
    let arena = Arena::with_capacity(0);
    let mut v = ArenaVec::new_in(&arena);
    let n = miri_or(1000, 100);
    for _ in 0..n {
        v.push(());
    }
    assert_eq!(v.len(), n);
    assert_eq!(v.capacity(), usize::MAX);
    assert_eq!(arena.used(), 0);
}

#[test]
fn traits_match_the_slice_and_vec() {
    let arena = Arena::new();
    let v = ArenaVec::from_iter_in([1u8, 2, 3], &arena);
    let w = v.clone();
    assert_eq!(v, w);
    assert_eq!(v, [1, 2, 3]);
    assert_eq!(v, &[1u8, 2, 3][..]);
    assert_eq!(format!("{v:?}"), "[1, 2, 3]");
    assert_eq!(hash_of(&v), hash_of(&vec![1u8, 2, 3]));
    let sum: u32 = (&v).into_iter().map(|&x| u32::from(x)).sum();
    assert_eq!(sum, 6);
    let mut m = v.clone();
    for x in &mut m {
        *x *= 2;
    }
    m.extend(&[8u8]);
    assert_eq!(m, [2, 4, 6, 8]);
    assert_ne!(m, v);
}

#[test]
fn recursive_vectors_in_one_arena() {
    let arena = Arena::new();
    let mut outer: ArenaVec<ArenaVec<u32>> = ArenaVec::new_in(&arena);
    for i in 0..10 {
        let mut inner = ArenaVec::new_in(&arena);
        for j in 0..i {
            inner.push(j);
        }
        outer.push(inner);
    }
    for (i, inner) in outer.iter_mut().enumerate() {
        inner.push(100); // every inner grows by moving: the arena moved on
        assert_eq!(inner.len(), i + 1);
        assert_eq!(inner[i], 100);
    }
}

#[test]
fn a_panicking_clone_in_extend_from_slice_keeps_what_was_cloned() {
    #[derive(Debug)]
    struct Bomb(bool);
    impl Clone for Bomb {
        fn clone(&self) -> Self {
            assert!(!self.0, "boom");
            Bomb(false)
        }
    }
    let arena = Arena::new();
    let src = [Bomb(false), Bomb(false), Bomb(true), Bomb(false)];
    let mut v = ArenaVec::new_in(&arena);
    let r = catch_unwind(AssertUnwindSafe(|| v.extend_from_slice(&src)));
    assert!(r.is_err());
    assert_eq!(v.len(), 2);
    v.push(Bomb(false));
    assert_eq!(v.len(), 3);
}

#[test]
fn a_panicking_destructor_in_truncate_or_drop_drops_the_rest_once() {
    struct Loud(Arc<AtomicUsize>, bool);
    impl Drop for Loud {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
            assert!(!self.1, "drop panics");
        }
    }
    let arena = Arena::new();
    let c = counter();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut v = ArenaVec::new_in(&arena);
        for i in 0..5 {
            v.push(Loud(Arc::clone(&c), i == 1));
        }
        drop(v);
    }));
    assert!(r.is_err());
    assert_eq!(drops(&c), 5);
    assert_eq!(arena.used(), 0, "the buffer went back despite the panic");
}

#[test]
fn growth_respects_a_fail_budget() {
    let mut arena = Arena::chained(4096);
    arena.set_budget(Some(Budget::fail(64).into()));
    let mut v: ArenaVec<u64> = ArenaVec::new_in(&arena);
    let mut n = 0;
    while v.try_push(n).is_ok() {
        n += 1;
    }
    assert!(arena.used() <= 64);
    assert_eq!(v.len(), 8);
    assert!(v.iter().copied().eq(0..n));
}

// --- into_slice ---

#[test]
fn into_slice_of_a_drop_type_registers_its_drop_and_frees_on_reset() {
    let mut arena = Arena::new();
    let c = counter();
    let s = {
        let mut v = ArenaVec::new_in(&arena);
        for i in 0..6 {
            v.push(Counted(Arc::clone(&c), i));
        }
        v.into_slice()
    };
    assert_eq!(
        s.iter().map(|x| x.1).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    s[0].1 = 40;
    assert_eq!(drops(&c), 0);
    assert_eq!(arena.pending_drops(), 1);
    arena.reset();
    assert_eq!(drops(&c), 6);
}

#[test]
fn into_slice_of_a_buffer_that_is_not_last_moves_next_to_its_record() {
    let mut arena = Arena::new();
    let c = counter();
    let mut v = ArenaVec::new_in(&arena);
    v.push(Counted(Arc::clone(&c), 1));
    v.push(Counted(Arc::clone(&c), 2));
    let later = arena.alloc(Counted(Arc::clone(&c), 3)); // registered after the vector's buffer
    let s = v.into_slice();
    assert_eq!((s[0].1, s[1].1, later.1), (1, 2, 3));
    // the slice's record is the newest: a rewind to a marker between drops only what follows
    let m = arena.mark();
    arena.alloc(Counted(Arc::clone(&c), 4));
    arena.rewind(m).unwrap();
    assert_eq!(drops(&c), 1);
    arena.reset();
    assert_eq!(drops(&c), 4);
}

#[test]
fn into_slice_keeps_the_drop_list_ordered_for_rewinds() {
    // a marker between the vector's buffer and a later value with a destructor: rewinding to
    // it must drop the later value and keep the slice
    let mut arena = Arena::new();
    let c = counter();
    let mut v = ArenaVec::with_capacity_in(4, &arena);
    v.push(Counted(Arc::clone(&c), 1));
    let m = arena.mark();
    arena.alloc(Counted(Arc::clone(&c), 2));
    let s = v.into_slice();
    assert_eq!(s[0].1, 1);
    arena.rewind(m).unwrap();
    // the value after the marker is gone; the slice was moved after it, so it goes too (it
    // reaches past the marker): every destructor ran exactly once
    assert_eq!(drops(&c), 2);
    arena.alloc([0xFFu8; 512]);
    arena.reset();
    assert_eq!(drops(&c), 2, "nothing dropped twice");
}

#[test]
fn into_slice_without_drop_glue_stays_in_place_and_gives_back_spare_capacity() {
    let arena = Arena::with_capacity(1024);
    let mut v: ArenaVec<u32> = ArenaVec::with_capacity_in(64, &arena);
    v.extend([1, 2, 3]);
    let start = v.as_ptr();
    let s = v.into_slice();
    assert_eq!(s.as_ptr(), start);
    assert_eq!(arena.used(), 12);
    assert_eq!(arena.pending_drops(), 0);
}

#[test]
#[cfg_attr(miri, ignore = "leaks on purpose, which Miri reports")]
fn into_slice_no_drop_takes_borrowing_types_and_never_drops() {
    let mut arena = Arena::new();
    let c = counter();
    let owner = String::from("x y");
    let words = {
        let mut v = ArenaVec::new_in(&arena);
        v.extend(owner.split(' '));
        v.into_slice_no_drop()
    };
    assert_eq!(words, ["x", "y"]);
    let mut v = ArenaVec::new_in(&arena);
    v.push(Counted(Arc::clone(&c), 1));
    let leaked = v.into_slice_no_drop();
    assert_eq!(leaked[0].1, 1);
    arena.reset();
    assert_eq!(drops(&c), 0, "as if forgotten");
}

#[test]
fn try_into_slice_hands_the_vector_back_when_it_cannot_move() {
    let arena = Arena::with_capacity(256);
    let c = counter();
    let mut v = ArenaVec::with_capacity_in(2, &arena);
    v.push(Counted(Arc::clone(&c), 1));
    v.push(Counted(Arc::clone(&c), 2));
    arena.alloc([0u8; 180]); // the buffer is not last, and no room is left for a moved copy
    let full = v.try_into_slice().unwrap_err();
    assert!(matches!(full.error, ArenaError::Full { .. }));
    let v = full.into_value();
    assert_eq!(v.len(), 2);
    drop(v);
    assert_eq!(drops(&c), 2);
}

#[test]
fn into_slice_of_zero_sized_drop_values() {
    struct Unit(Arc<AtomicUsize>);
    impl Drop for Unit {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let mut arena = Arena::new();
    let c = counter();
    let mut v = ArenaVec::new_in(&arena);
    for _ in 0..3 {
        v.push(Unit(Arc::clone(&c)));
    }
    assert_eq!(v.into_slice().len(), 3);
    let empty: &mut [Unit] = ArenaVec::new_in(&arena).into_slice();
    assert!(empty.is_empty());
    arena.reset();
    assert_eq!(drops(&c), 3);
}

// --- scopes and markers ---

#[test]
fn a_vector_from_a_scope_lives_and_dies_in_it() {
    let mut arena = Arena::with_capacity(4096);
    let c = counter();
    arena.alloc(0u64);
    {
        let scope = arena.scope();
        let mut v = ArenaVec::new_in(&scope);
        for i in 0..20 {
            v.push(Counted(Arc::clone(&c), i));
        }
        let s = v.into_slice();
        assert_eq!(s.len(), 20);
    }
    assert_eq!(drops(&c), 20, "the scope's end dropped the slice");
    assert_eq!(arena.used(), 8);
}

#[test]
fn a_marker_taken_while_a_vector_grows_in_place_rewinds_soundly() {
    let mut arena = Arena::with_capacity(4096);
    let c = counter();
    let mut v = ArenaVec::with_capacity_in(1, &arena);
    v.push(Counted(Arc::clone(&c), 1));
    let m = arena.mark(); // at the buffer's end
    for i in 2..10 {
        v.push(Counted(Arc::clone(&c), i)); // grows in place, past the marker
    }
    let s = v.into_slice();
    assert_eq!(s.len(), 9);
    // the slice reaches past the marker: the rewind drops it whole, once
    arena.rewind(m).unwrap();
    assert_eq!(drops(&c), 9);
    arena.reset();
    assert_eq!(drops(&c), 9);
}

// --- ArenaString ---

#[test]
fn strings_push_format_and_compare() {
    let arena = Arena::new();
    let mut s = ArenaString::new_in(&arena);
    s.push_str("hello");
    s.push(' ');
    let tag = "w";
    write!(s, "{tag}-{:03}", 7).unwrap();
    s.push('é');
    assert_eq!(s, "hello w-007é");
    assert_eq!("hello w-007é", s);
    assert_eq!(s.pop(), Some('é'));
    s.truncate(5);
    assert_eq!(s.as_str(), "hello");
    assert_eq!(format!("{s}|{s:?}"), "hello|\"hello\"");
    assert_eq!(hash_of(&s), hash_of("hello"));
    let t = ArenaString::from_str_in("hello", &arena);
    assert_eq!(s, t);
    s.clear();
    assert!(s.is_empty());
    let mut e = ArenaString::new_in(&arena);
    e.extend(['a', 'b']);
    e.extend(["cd", "e"]);
    assert_eq!(e, "abcde");
}

#[test]
fn truncate_off_a_char_boundary_panics_and_changes_nothing() {
    let arena = Arena::new();
    let mut s = ArenaString::from_str_in("aé", &arena);
    let r = catch_unwind(AssertUnwindSafe(|| s.truncate(2)));
    assert!(r.is_err());
    assert_eq!(s, "aé");
}

#[test]
fn format_a_bunch_of_strings() {
    let arena = Arena::new();
    let n = miri_or(1000, 50);
    let mut all = ArenaVec::new_in(&arena);
    for i in 0..n {
        all.push(arena_format!(in &arena, "{i}: {}", i * 2).into_str());
    }
    assert_eq!(&*all[n - 1], format!("{}: {}", n - 1, 2 * (n - 1)));
    assert_eq!(arena_format!(in &arena, "plain"), "plain");
    assert_eq!(arena_format!(in &arena, "{}", 1,), "1");
}

#[test]
fn format_into_a_full_arena_is_a_typed_error() {
    let arena = Arena::with_capacity(8);
    let r = ArenaString::try_format_in(&arena, format_args!("{}{}", "0123", "456789"));
    assert!(matches!(r, Err(ArenaError::Full { .. })));
    let mut s = ArenaString::with_capacity_in(8, &arena);
    s.push_str("abcdefgh");
    assert!(s.try_push_str("1").is_err());
    assert_eq!(s.try_push('x').unwrap_err().value, 'x');
    assert_eq!(s, "abcdefgh", "unchanged");
    assert!(write!(s, "{}", 12345).is_err());
}

#[test]
fn into_str_stays_in_the_arena() {
    let arena = Arena::with_capacity(256);
    let mut s = ArenaString::with_capacity_in(100, &arena);
    s.push_str("kept");
    let kept: &mut str = s.into_str();
    kept.make_ascii_uppercase();
    assert_eq!(kept, "KEPT");
    assert_eq!(arena.used(), 4, "the spare capacity went back");
}

#[test]
fn arena_format_works_through_a_scope() {
    let mut arena = Arena::new();
    let mut scope = arena.scope();
    let s = arena_format!(in &scope, "{}", 5);
    assert_eq!(s, "5");
    drop(s);
    scope.clear();
}

// --- model: ArenaVec against Vec ---

#[derive(Debug, Clone)]
enum Op {
    Push(u16),
    Pop,
    Insert(usize, u16),
    Remove(usize),
    SwapRemove(usize),
    Truncate(usize),
    Extend(Vec<u16>),
    Reserve(usize),
    Clear,
    /// Something else allocated in the arena: the next growth must move.
    Interleave(usize),
    /// Keep the elements whose value is not a multiple of this.
    Retain(u16),
    Dedup,
    ResizeWith(usize, u16),
    ExtendFromWithin(usize, usize),
    /// Append a second vector of these values, built in the same arena.
    Append(Vec<u16>),
    /// Split off at this index and append the tail back (or drop it, when `true`).
    SplitOff(usize, bool),
    /// Drain `a..b` (indexes reduced), taking this many from the front and from the back
    /// before dropping the drain.
    Drain(usize, usize, usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u16>().prop_map(Op::Push),
        2 => Just(Op::Pop),
        2 => (any::<usize>(), any::<u16>()).prop_map(|(i, x)| Op::Insert(i, x)),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::SwapRemove),
        1 => (0usize..40).prop_map(Op::Truncate),
        2 => proptest::collection::vec(any::<u16>(), 0..20).prop_map(Op::Extend),
        1 => (0usize..64).prop_map(Op::Reserve),
        1 => Just(Op::Clear),
        1 => (1usize..200).prop_map(Op::Interleave),
        1 => (2u16..5).prop_map(Op::Retain),
        1 => Just(Op::Dedup),
        1 => (0usize..40, any::<u16>()).prop_map(|(n, x)| Op::ResizeWith(n, x)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::ExtendFromWithin(a, b)),
        1 => proptest::collection::vec(any::<u16>(), 0..10).prop_map(Op::Append),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, d)| Op::SplitOff(i, d)),
        1 => (any::<usize>(), any::<usize>(), 0usize..4, 0usize..4)
            .prop_map(|(a, b, f, k)| Op::Drain(a, b, f, k)),
    ]
}

/// Up to six chars, any of them (multi-byte ones included): generated directly rather than from
/// a Unicode regex class, which Miri takes minutes to compile.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<char>(), 0..=6).prop_map(String::from_iter)
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn arena_vec_matches_vec(ops in proptest::collection::vec(op(), 0..miri_or(120, 30))) {
        let arena = Arena::chained(256); // small pages: growth crosses pages often
        let c = counter();
        let made = std::cell::Cell::new(0);
        let mut model: Vec<u32> = Vec::new();
        {
            let mut v: ArenaVec<Counted> = ArenaVec::new_in(&arena);
            let mk = |x: u16| {
                made.set(made.get() + 1);
                Counted(Arc::clone(&c), u32::from(x))
            };
            for op in ops {
                match op {
                    Op::Push(x) => { v.push(mk(x)); model.push(x.into()); }
                    Op::Pop => prop_assert_eq!(v.pop().map(|x| x.1), model.pop()),
                    Op::Insert(i, x) => {
                        let i = i % (model.len() + 1);
                        v.insert(i, mk(x));
                        model.insert(i, x.into());
                    }
                    Op::Remove(i) if !model.is_empty() => {
                        let i = i % model.len();
                        prop_assert_eq!(v.remove(i).1, model.remove(i));
                    }
                    Op::SwapRemove(i) if !model.is_empty() => {
                        let i = i % model.len();
                        prop_assert_eq!(v.swap_remove(i).1, model.swap_remove(i));
                    }
                    Op::Remove(_) | Op::SwapRemove(_) => {}
                    Op::Truncate(n) => { v.truncate(n); model.truncate(n); }
                    Op::Extend(xs) => {
                        v.extend(xs.iter().map(|&x| mk(x)));
                        model.extend(xs.iter().map(|&x| u32::from(x)));
                    }
                    Op::Reserve(n) => {
                        v.reserve(n);
                        prop_assert!(v.capacity() >= v.len() + n);
                    }
                    Op::Clear => { v.clear(); model.clear(); }
                    Op::Interleave(n) => { arena.alloc_slice_fill_copy(n, 0u8); }
                    Op::Retain(m) => {
                        let m = u32::from(m);
                        v.retain(|x| x.1 % m != 0);
                        model.retain(|x| x % m != 0);
                    }
                    Op::Dedup => {
                        v.dedup_by_key(|x| x.1 / 4);
                        model.dedup_by_key(|x| *x / 4);
                    }
                    Op::ResizeWith(n, x) => {
                        v.resize_with(n, || mk(x));
                        model.resize(n, x.into());
                    }
                    Op::ExtendFromWithin(a, b) => {
                        let (a, b) = (a % (model.len() + 1), b % (model.len() + 1));
                        let (a, b) = (a.min(b), a.max(b));
                        let before = v.len();
                        v.extend_from_within(a..b);
                        made.set(made.get() + (v.len() - before));
                        model.extend_from_within(a..b);
                    }
                    Op::Append(xs) => {
                        let mut other = ArenaVec::from_iter_in(xs.iter().map(|&x| mk(x)), &arena);
                        v.append(&mut other);
                        prop_assert!(other.is_empty());
                        model.extend(xs.iter().map(|&x| u32::from(x)));
                    }
                    Op::Drain(a, b, f, k) => {
                        let (a, b) = (a % (model.len() + 1), b % (model.len() + 1));
                        let (a, b) = (a.min(b), a.max(b));
                        let mut d = v.drain(a..b);
                        let mut m = model.drain(a..b);
                        for _ in 0..f {
                            prop_assert_eq!(d.next().map(|x| x.1), m.next());
                        }
                        for _ in 0..k {
                            prop_assert_eq!(d.next_back().map(|x| x.1), m.next_back());
                        }
                        prop_assert_eq!(d.len(), m.len());
                        prop_assert!(d.as_slice().iter().map(|x| x.1).eq(m.as_slice().iter().copied()));
                    }
                    Op::SplitOff(i, drop_tail) => {
                        let i = i % (model.len() + 1);
                        let mut tail = v.split_off(i);
                        let model_tail = model.split_off(i);
                        prop_assert!(tail.iter().map(|x| x.1).eq(model_tail.iter().copied()));
                        if !drop_tail {
                            v.append(&mut tail);
                            model.extend(model_tail);
                        }
                    }
                }
                prop_assert_eq!(v.len(), model.len());
                prop_assert!(v.iter().map(|x| x.1).eq(model.iter().copied()));
                prop_assert!(v.capacity() >= v.len());
                // everything made and not in the vector was dropped exactly once
                prop_assert_eq!(drops(&c) + v.len(), made.get());
            }
            drop(v);
            prop_assert_eq!(drops(&c), made.get());
        }
    }

    #[test]
    fn arena_string_matches_string(parts in proptest::collection::vec((text(), 0usize..8), 0..miri_or(60, 15))) {
        let arena = Arena::chained(128);
        let mut s = ArenaString::new_in(&arena);
        let mut model = String::new();
        for (text, cut) in parts {
            s.push_str(&text);
            model.push_str(&text);
            if cut == 0 {
                prop_assert_eq!(s.pop(), model.pop());
            } else if cut == 1 {
                let at = model.char_indices().map(|(i, _)| i).nth(model.chars().count() / 2).unwrap_or(0);
                s.truncate(at);
                model.truncate(at);
            } else if cut == 2 {
                arena.alloc_slice_fill_copy(cut * 10, 1u8);
            } else if cut == 3 {
                // the char boundary at a third of the chars: insert there, then remove it again
                let at = model.char_indices().map(|(i, _)| i).nth(model.chars().count() / 3).unwrap_or(model.len());
                s.insert_str(at, &text);
                model.insert_str(at, &text);
                if at < model.len() {
                    prop_assert_eq!(s.remove(at), model.remove(at));
                }
                s.insert(0, 'ü');
                model.insert(0, 'ü');
            } else if cut == 4 {
                s.retain(|c| !c.is_alphabetic());
                model.retain(|c| !c.is_alphabetic());
            } else if cut == 5 {
                let at = model.char_indices().map(|(i, _)| i).nth(model.chars().count() / 2).unwrap_or(model.len());
                let tail = s.split_off(at);
                let model_tail = model.split_off(at);
                prop_assert_eq!(tail.as_str(), model_tail.as_str());
                if at % 2 == 0 {
                    s.push_str(&tail);
                    model.push_str(&model_tail);
                }
            }
            prop_assert_eq!(s.as_str(), model.as_str());
        }
    }
}

// --- other arenas, guards, alignment after give-back, formatting edge cases ---

#[test]
fn vectors_work_in_guarded_buffer_and_frame_arenas() {
    use arena_kit_core::arena::FrameArena;
    use std::mem::MaybeUninit;
    let c = counter();
    // guarded: nothing grows in place (the back guard follows each block), guards stay intact
    let mut guarded = Arena::with_capacity(8192).with_guards();
    {
        let mut v = ArenaVec::new_in(&guarded);
        for i in 0..40 {
            v.push(Counted(Arc::clone(&c), i));
        }
        assert_eq!(v.into_slice().len(), 40);
    }
    guarded.check_guards().unwrap();
    guarded.reset();
    assert_eq!(drops(&c), 40);
    // over a borrowed buffer
    let mut buffer = [MaybeUninit::<u8>::uninit(); 512];
    let buffered = Arena::from_buffer(&mut buffer);
    let mut s = ArenaString::new_in(&buffered);
    s.push_str("in a buffer");
    assert_eq!(s.into_str(), "in a buffer");
    // in a frame
    let mut frames: FrameArena<2> = FrameArena::chained(1024);
    let frame = frames.begin_frame();
    let mut v = ArenaVec::new_in(&frame);
    v.extend(0..100u32);
    assert_eq!(v.iter().sum::<u32>(), 4950);
}

#[test]
fn allocations_after_a_given_back_buffer_stay_aligned() {
    let arena = Arena::with_capacity(1024);
    arena.alloc(1u8);
    {
        let mut v: ArenaVec<u8> = ArenaVec::new_in(&arena);
        v.extend([1, 2, 3]);
    } // given back: the bump pointer is at an odd address again
    let x = arena.alloc(7u64);
    assert_eq!((x as *mut u64 as usize) % 8, 0);
    let mut w: ArenaVec<u64> = ArenaVec::new_in(&arena);
    w.push(1);
    assert_eq!(w.as_ptr() as usize % 8, 0);
    let mut s = ArenaString::new_in(&arena);
    s.push('x');
    let mut big: ArenaVec<u128> = ArenaVec::new_in(&arena);
    big.push(5);
    assert_eq!(big.as_ptr() as usize % align_of::<u128>(), 0);
}

struct Nothing;

impl std::fmt::Display for Nothing {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}

struct Fails;

impl std::fmt::Display for Fails {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Err(std::fmt::Error)
    }
}

#[test]
fn formatting_nothing_allocates_nothing_and_into_str_keeps_exactly_the_text() {
    let arena = Arena::with_capacity(64);
    let empty = arena_format!(in &arena, "{Nothing}");
    assert!(empty.is_empty());
    drop(empty);
    assert_eq!(arena.used(), 0);
    let extra = arena_format!(in &arena, "ext{Nothing}ra").into_str();
    assert_eq!(extra, "extra");
    assert_eq!(arena.used(), 5);
}

#[test]
fn a_display_impl_that_fails_on_its_own_panics_with_a_message() {
    let arena = Arena::new();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _ = arena_format!(in &arena, "a{Fails}");
    }));
    let msg = r.unwrap_err();
    assert!(
        msg.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| msg.downcast_ref::<String>().cloned())
            .unwrap()
            .contains("Display impl returned an error")
    );
    arena_format!(in &arena, "still usable");
}

#[test]
fn growing_vectors_of_strings_across_pages() {
    let arena = Arena::chained(256);
    let mut v = ArenaVec::new_in(&arena);
    let n = miri_or(500, 40);
    for i in 0..n {
        v.push(i.to_string());
        let _ = arena.alloc(i as u64); // force moves now and then
    }
    assert!(v.iter().enumerate().all(|(i, s)| *s == i.to_string()));
    assert!(arena.page_count() > 1);
}

// --- ArenaBox ---

#[test]
fn a_box_drops_its_value_when_dropped_and_the_reset_drops_nothing_more() {
    let c = counter();
    let mut arena = Arena::with_capacity(1024);
    let b = arena.alloc_box(Counted(c.clone(), 7));
    assert_eq!(b.1, 7);
    assert_eq!(arena.pending_drops(), 0); // the arena registered nothing
    assert_eq!(arena.stats().allocations, 1);
    drop(b);
    assert_eq!(drops(&c), 1);
    assert!(arena.used() >= size_of::<Counted>()); // the memory stays used until the reset
    arena.reset();
    assert_eq!(drops(&c), 1);
    assert_eq!(arena.used(), 0);
}

/// Counts its drops in a static: what a leak test leaks holds no heap memory (Miri reports
/// leaked heap memory).
struct CountsIn(&'static AtomicUsize, u32);

impl Drop for CountsIn {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn into_inner_moves_the_value_out_and_leak_keeps_it_undropped() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mut arena = Arena::with_capacity(1024);
    let b = ArenaBox::new_in(CountsIn(&DROPS, 1), &arena);
    let v = ArenaBox::into_inner(b);
    assert_eq!(DROPS.load(Ordering::Relaxed), 0);
    drop(v);
    assert_eq!(DROPS.load(Ordering::Relaxed), 1);
    let leaked: &mut CountsIn = ArenaBox::leak(arena.alloc_box(CountsIn(&DROPS, 2)));
    leaked.1 = 3;
    assert_eq!(leaked.1, 3);
    let forgotten = arena.alloc_box(CountsIn(&DROPS, 4));
    std::mem::forget(forgotten);
    arena.reset(); // neither is dropped, and their memory goes back
    assert_eq!(DROPS.load(Ordering::Relaxed), 1);
    assert_eq!(arena.used(), 0);
}

/// A value that borrows and reads its borrow in its destructor: `alloc` refuses it (`'static`),
/// a box drops it while the borrow is alive.
struct Logs<'a> {
    into: &'a std::cell::RefCell<Vec<String>>,
    name: &'static str,
}

impl Drop for Logs<'_> {
    fn drop(&mut self) {
        self.into
            .borrow_mut()
            .push(format!("dropped {}", self.name));
    }
}

#[test]
fn a_box_of_a_borrowing_value_drops_it_while_the_borrow_lives() {
    let log = std::cell::RefCell::new(Vec::new());
    let arena = Arena::new();
    {
        let mut held = ArenaVec::new_in(&arena);
        for name in ["a", "b", "c"] {
            held.push(arena.alloc_box(Logs { into: &log, name }));
        }
        drop(held.remove(1));
        assert_eq!(*log.borrow(), ["dropped b"]);
    }
    assert_eq!(*log.borrow(), ["dropped b", "dropped a", "dropped c"]);
}

#[test]
fn a_full_arena_hands_the_value_back_with_the_reason_and_changes_nothing() {
    let c = counter();
    let arena = Arena::with_capacity(64);
    let _small = arena.alloc_box([0u8; 48]);
    let before = arena.stats();
    let full = arena
        .try_alloc_box((Counted(c.clone(), 9), [0u64; 8]))
        .unwrap_err();
    assert!(
        matches!(full.error, ArenaError::Full { .. }),
        "{:?}",
        full.error
    );
    assert_eq!(full.value.0.1, 9); // handed back whole, not dropped
    assert_eq!(drops(&c), 0);
    assert_eq!(arena.stats(), before);
    drop(full);
    assert_eq!(drops(&c), 1);
    // a value far larger than the arena is refused the same way (and `alloc_box` panics)
    let huge = arena.try_alloc_box([0u8; 1 << 12]).unwrap_err();
    assert_eq!(huge.value.len(), 1 << 12);
    let r = catch_unwind(AssertUnwindSafe(|| arena.alloc_box([1u8; 1 << 12])));
    assert!(r.is_err());
    assert_eq!(arena.stats(), before);
}

/// Panics in its destructor once its flag says so.
struct PanicsOnDrop(Arc<AtomicUsize>);

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
        panic!("destructor panics");
    }
}

#[test]
fn a_panicking_destructor_in_a_box_runs_once_and_the_arena_stays_usable() {
    let c = counter();
    let mut arena = Arena::with_capacity(1024);
    let b = arena.alloc_box(PanicsOnDrop(c.clone()));
    let r = catch_unwind(AssertUnwindSafe(move || drop(b)));
    assert!(r.is_err());
    assert_eq!(drops(&c), 1);
    assert_eq!(*arena.alloc(5u32), 5);
    arena.reset();
    assert_eq!(drops(&c), 1); // the reset does not run it again
}

/// Allocates from its own arena while it is dropped.
struct AllocatesOnDrop<'a> {
    arena: &'a Arena,
    made: &'a AtomicUsize,
}

impl Drop for AllocatesOnDrop<'_> {
    fn drop(&mut self) {
        let s = self
            .arena
            .alloc(String::from("made while a box was dropped"));
        let inner = self.arena.alloc_box([7u64; 4]);
        assert_eq!(inner[3], 7);
        self.made.store(s.len(), Ordering::Relaxed);
    }
}

#[test]
fn a_destructor_that_allocates_from_the_same_arena_while_its_box_drops() {
    let made = AtomicUsize::new(0);
    let mut arena = Arena::chained(128);
    {
        let a = &arena;
        let boxes: Vec<_> = (0..miri_or(40, 6))
            .map(|_| {
                a.alloc_box(AllocatesOnDrop {
                    arena: a,
                    made: &made,
                })
            })
            .collect();
        drop(boxes);
    }
    assert_eq!(
        made.load(Ordering::Relaxed),
        "made while a box was dropped".len()
    );
    assert!(arena.pending_drops() > 0); // the strings `alloc` took are the arena's to drop
    arena.reset();
    assert_eq!(arena.pending_drops(), 0);
}

#[test]
fn boxes_of_zero_sized_values_take_no_bytes_and_still_drop() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Unit;
    impl Drop for Unit {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }
    let arena = Arena::with_capacity(0);
    let boxes: Vec<_> = (0..3).map(|_| arena.alloc_box(Unit)).collect();
    assert_eq!(arena.used(), 0);
    // as `alloc_no_drop` of a zero-sized value: nothing taken, nothing counted
    assert_eq!(arena.allocation_count(), 0);
    drop(boxes);
    assert_eq!(DROPS.load(Ordering::Relaxed), 3);
}

#[test]
fn boxes_in_a_guarded_arena_keep_their_guards() {
    let c = counter();
    let mut arena = Arena::with_capacity(4096).with_guards();
    let mut b = arena.alloc_box([1u8; 24]);
    b[23] = 2; // the last byte of the value, right before its back guard
    let counted = arena.alloc_box(Counted(c.clone(), 0));
    assert!(arena.check_guards().is_ok());
    drop((b, counted));
    assert_eq!(drops(&c), 1);
    arena.reset();
    assert!(arena.check_guards().is_ok());
}

#[test]
fn a_box_sent_to_another_thread_drops_its_value_there_while_the_arena_allocates_here() {
    let c = counter();
    let arena = Arena::chained(256);
    let boxes: Vec<_> = (0..miri_or(64, 8))
        .map(|i| arena.alloc_box(Counted(c.clone(), i as u32)))
        .collect();
    std::thread::scope(|s| {
        let worker = s.spawn(move || {
            let sum: u32 = boxes.iter().map(|b| b.1).sum();
            drop(boxes);
            sum
        });
        for i in 0..miri_or(200, 20) {
            arena.alloc(i.to_string()); // new pages while the worker reads and drops
        }
        let n = miri_or(64, 8) as u32;
        assert_eq!(worker.join().unwrap(), n * (n - 1) / 2);
    });
    assert_eq!(drops(&c), miri_or(64, 8));
}

#[test]
fn a_box_compares_hashes_and_prints_as_its_value() {
    let arena = Arena::new();
    let a = arena.alloc_box(String::from("orc"));
    let b = arena.alloc_box(String::from("orc"));
    let z = arena.alloc_box(String::from("zombie"));
    assert_eq!(a, b);
    assert!(a < z && z.cmp(&a) == std::cmp::Ordering::Greater);
    assert_eq!(hash_of(&a), hash_of(&String::from("orc")));
    assert_eq!(format!("{a} {a:?}"), "orc \"orc\"");
    assert_eq!(format!("{a:p}"), format!("{:p}", ArenaBox::as_ptr(&a)));
    let as_ref: &String = a.as_ref();
    assert_eq!(as_ref.len(), 3);
}

// --- ArenaBox<[T]>: boxed slices ---

/// Logs its id into a shared log when dropped.
struct Logged<'a>(&'a std::sync::Mutex<Vec<u32>>, u32);

impl Drop for Logged<'_> {
    fn drop(&mut self) {
        self.0.lock().unwrap().push(self.1);
    }
}

/// Counts its drops, and panics in the one built with `true`.
struct Bomb(Arc<AtomicUsize>, bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
        assert!(!self.1, "this one panics");
    }
}

/// Drops of the zero-sized [`Unit`]s, one counter per test.
static UNIT_DROPS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// A zero-sized type with drop glue, counted in `UNIT_DROPS[K]`.
struct Unit<const K: usize>;

impl<const K: usize> Drop for Unit<K> {
    fn drop(&mut self) {
        UNIT_DROPS[K].fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_boxed_slice_drops_its_values_in_index_order_when_the_box_goes_and_the_arena_registers_nothing()
{
    let log = std::sync::Mutex::new(Vec::new());
    let mut arena = Arena::with_capacity(4096);
    let (used, count) = (arena.used(), arena.allocation_count());
    {
        // `Logged` borrows `log`: `alloc_slice_fill_with` would refuse it.
        let b = arena.alloc_box_slice_fill_with(4, |i| Logged(&log, i as u32));
        assert_eq!(b.len(), 4);
        assert_eq!(b[2].1, 2);
        assert_eq!(arena.pending_drops(), 0);
        assert_eq!(arena.used() - used, 4 * size_of::<Logged>());
        assert_eq!(
            arena.allocation_count(),
            count + 1,
            "one slice, one allocation"
        );
        assert!(log.lock().unwrap().is_empty());
    }
    assert_eq!(*log.lock().unwrap(), [0, 1, 2, 3]);
    arena.reset();
    assert_eq!(
        log.lock().unwrap().len(),
        4,
        "the reset drops nothing again"
    );
}

#[test]
fn a_panicking_fill_drops_what_it_built_and_gives_the_space_back() {
    let c = counter();
    let arena = Arena::with_capacity(4096);
    let (used, count) = (arena.used(), arena.allocation_count());
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_box_slice_fill_with(8, |i| {
            assert!(i < 3, "the fourth value fails");
            Counted(c.clone(), i as u32)
        })
    }));
    assert!(r.is_err());
    assert_eq!(drops(&c), 3, "the three built values are dropped once");
    assert_eq!((arena.used(), arena.allocation_count()), (used, count));
    let b = arena.alloc_box_slice_fill_with(2, |i| Counted(c.clone(), i as u32));
    assert_eq!(b[1].1, 1, "the arena is usable afterwards");
}

#[test]
fn a_fill_that_allocates_and_then_panics_keeps_what_it_allocated() {
    let c = counter();
    let arena = Arena::with_capacity(8192);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_box_slice_fill_with(4, |i| {
            // each element is itself a box from the same arena, bumped after the slice
            let inner = arena.alloc_box(Counted(c.clone(), i as u32));
            assert!(i < 2, "the third element fails");
            inner
        })
    }));
    assert!(r.is_err());
    assert_eq!(
        drops(&c),
        3,
        "two boxed elements and the one in hand are dropped"
    );
    let used = arena.used();
    // the slice is not the newest block (the boxes came after it), so its space stays used
    assert!(used >= 4 * size_of::<ArenaBox<Counted>>() + 3 * size_of::<Counted>());
    let b = arena.alloc_box(Counted(c.clone(), 9));
    assert_eq!(b.1, 9);
}

#[test]
fn boxed_slices_of_boxes_drop_every_value_once() {
    let c = counter();
    let mut arena = Arena::with_capacity(1 << 16);
    {
        let a = &arena;
        let held = a.alloc_box_slice_fill_with(50, |i| {
            (
                a.alloc_box(Counted(c.clone(), i as u32)),
                [a.alloc_box(Counted(c.clone(), 100 + i as u32))],
            )
        });
        assert_eq!(held[49].1[0].1, 149);
        assert_eq!(a.pending_drops(), 0);
    }
    assert_eq!(drops(&c), 100);
    arena.reset();
    assert_eq!(drops(&c), 100);
}

#[test]
fn empty_and_zero_sized_boxed_slices_take_and_count_nothing() {
    let arena = Arena::with_capacity(64);
    let (used, count) = (arena.used(), arena.allocation_count());
    let empty = arena.alloc_box_slice_fill_with(0, |_| -> String { unreachable!() });
    assert!(empty.is_empty());
    let units = arena.alloc_box_slice_fill_with(5, |_| Unit::<0>);
    assert_eq!(units.len(), 5);
    assert_eq!((arena.used(), arena.allocation_count()), (used, count));
    drop(units);
    assert_eq!(UNIT_DROPS[0].load(Ordering::Relaxed), 5);
    // a full arena still hands out both
    let full = Arena::with_capacity(0);
    assert!(full.try_alloc_box_slice_fill_with(3, |_| ()).is_ok());
    assert!(full.try_alloc_box_slice_fill_with(0, |_| 0u64).is_ok());
}

#[test]
fn a_boxed_slice_too_large_is_a_typed_error_and_fill_is_never_called() {
    let arena = Arena::with_capacity(256);
    let never = |_: usize| -> u64 { panic!("not called when the slice is refused") };
    assert!(matches!(
        arena.try_alloc_box_slice_fill_with(usize::MAX / 4, never),
        Err(ArenaError::SizeOverflow { .. })
    ));
    assert!(matches!(
        arena.try_alloc_box_slice_fill_with(1000, never),
        Err(ArenaError::Full { .. })
    ));
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_box_slice_fill_with(1000, never)
    }));
    assert!(r.is_err());
    assert_eq!(arena.used(), 0);
}

#[test]
fn a_boxed_slice_from_an_iterator_takes_its_len_and_refuses_a_short_one() {
    let c = counter();
    let arena = Arena::with_capacity(4096);
    let mut more = (0..5u32).map(|i| Counted(c.clone(), i));
    // `Take` reports 3; the rest stays in the iterator
    let b = arena.alloc_box_slice_fill_iter(more.by_ref().take(3));
    assert_eq!(b.iter().map(|v| v.1).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(more.next().map(|v| v.1), Some(3));
    drop(b);
    assert_eq!(drops(&c), 4);

    /// Says it has 4 items and yields 2.
    struct Liar(u32, Arc<AtomicUsize>);
    impl Iterator for Liar {
        type Item = Counted;
        fn next(&mut self) -> Option<Counted> {
            self.0 += 1;
            (self.0 <= 2).then(|| Counted(self.1.clone(), self.0))
        }
    }
    impl ExactSizeIterator for Liar {
        fn len(&self) -> usize {
            4
        }
    }
    let liar = counter();
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_box_slice_fill_iter(Liar(0, liar.clone()))
    }));
    assert!(r.is_err());
    assert_eq!(drops(&liar), 2, "the items taken are dropped");
}

#[test]
fn a_destructor_panicking_in_a_boxed_slice_still_drops_the_rest() {
    let c = counter();
    let arena = Arena::with_capacity(1024);
    let b = arena.alloc_box_slice_fill_with(5, |i| Bomb(c.clone(), i == 1));
    assert!(catch_unwind(AssertUnwindSafe(|| drop(b))).is_err());
    assert_eq!(drops(&c), 5);
}

#[test]
fn into_boxed_slice_drops_with_the_box_and_gives_the_spare_capacity_back() {
    let c = counter();
    let mut arena = Arena::with_capacity(4096);
    {
        let mut v = ArenaVec::with_capacity_in(16, &arena);
        for i in 0..3 {
            v.push(Counted(c.clone(), i));
        }
        let b: ArenaBox<[Counted]> = v.into_boxed_slice();
        assert_eq!(
            arena.used(),
            3 * size_of::<Counted>(),
            "spare capacity given back"
        );
        assert_eq!(arena.pending_drops(), 0);
        assert_eq!(b.iter().map(|v| v.1).collect::<Vec<_>>(), [0, 1, 2]);
    }
    assert_eq!(drops(&c), 3);
    arena.reset();
    assert_eq!(drops(&c), 3);
    let empty = ArenaVec::<String>::new_in(&arena).into_boxed_slice();
    assert!(empty.is_empty());
}

#[test]
fn boxed_slices_compare_hash_and_print_as_slices() {
    let arena = Arena::with_capacity(1024);
    let a = arena.alloc_box_slice_fill_with(3, |i| i as u8);
    let b = arena.alloc_box_slice_fill_iter([0u8, 1, 2]);
    let z = arena.alloc_box_slice_fill_iter([0u8, 9]);
    assert_eq!(a, b);
    assert!(a < z);
    assert_eq!(hash_of(&a), hash_of(&[0u8, 1, 2][..]));
    assert_eq!(format!("{a:?}"), "[0, 1, 2]");
    let leaked: &mut [u8] = ArenaBox::leak(a);
    leaked[0] = 5;
    assert_eq!(leaked, [5, 1, 2]);
}

#[test]
fn a_boxed_slice_moves_its_values_out_from_either_end_and_drops_the_rest_with_the_iterator() {
    let c = counter();
    let arena = Arena::with_capacity(4096);
    let b = arena.alloc_box_slice_fill_with(5, |i| Counted(c.clone(), i as u32));
    let mut it = b.into_iter();
    assert_eq!(it.len(), 5);
    let first = it.next().unwrap();
    let last = it.next_back().unwrap();
    assert_eq!((first.1, last.1), (0, 4));
    assert_eq!(drops(&c), 0, "moved out, not dropped");
    assert_eq!(
        it.as_slice().iter().map(|v| v.1).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    it.as_mut_slice()[0].1 = 10;
    assert_eq!(format!("{:?}", it.size_hint()), "(3, Some(3))");
    drop(it);
    assert_eq!(drops(&c), 3, "the three left drop with the iterator");
    drop((first, last));
    assert_eq!(drops(&c), 5);

    // all taken: nothing left to drop; the iterator is fused
    let b = arena.alloc_box_slice_fill_with(2, |i| Counted(c.clone(), i as u32));
    let mut it = b.into_iter();
    let taken: Vec<_> = it.by_ref().collect();
    assert_eq!(
        (it.next().is_none(), it.next_back().is_none()),
        (true, true)
    );
    drop(it);
    assert_eq!(drops(&c), 5);
    drop(taken);
    assert_eq!(drops(&c), 7);
}

#[test]
fn a_vector_moves_its_elements_out_by_value() {
    let c = counter();
    let arena = Arena::with_capacity(4096);
    let mut v = ArenaVec::with_capacity_in(8, &arena);
    for i in 0..4 {
        v.push(Counted(c.clone(), i));
    }
    let mut seen = Vec::new();
    for value in v {
        seen.push(value.1);
        if value.1 == 1 {
            break; // the two left drop with the iterator
        }
    }
    assert_eq!(seen, [0, 1]);
    assert_eq!(drops(&c), 4);
    assert_eq!(arena.pending_drops(), 0);
}

#[test]
fn a_destructor_panicking_in_the_iterators_drop_still_drops_the_rest() {
    let c = counter();
    let arena = Arena::with_capacity(1024);
    let mut it = arena
        .alloc_box_slice_fill_with(5, |i| Bomb(c.clone(), i == 2))
        .into_iter();
    drop(it.next());
    assert!(catch_unwind(AssertUnwindSafe(|| drop(it))).is_err());
    assert_eq!(drops(&c), 5, "each value dropped once");
}

#[test]
fn zero_sized_values_move_out_of_a_boxed_slice_too() {
    let arena = Arena::with_capacity(0);
    let mut it = arena
        .alloc_box_slice_fill_with(4, |_| Unit::<1>)
        .into_iter();
    assert_eq!(it.len(), 4);
    drop(it.next_back());
    assert_eq!(UNIT_DROPS[1].load(Ordering::Relaxed), 1);
    drop(it);
    assert_eq!(UNIT_DROPS[1].load(Ordering::Relaxed), 4);
}

#[test]
fn a_boxed_slice_iterates_by_reference_in_a_for_loop() {
    let arena = Arena::with_capacity(1024);
    let mut b = arena.alloc_box_slice_fill_iter([1u32, 2, 3]);
    for x in &mut b {
        *x *= 10;
    }
    let mut sum = 0;
    for x in &b {
        sum += x;
    }
    assert_eq!(sum, 60);
}

/// One step of the `ArenaBox` model test.
#[derive(Debug, Clone)]
enum BoxOp {
    /// Box a value.
    Push(u16),
    /// Drop the box at a position.
    Drop(usize),
    /// Move the value at a position out of its box.
    IntoInner(usize),
    /// Overwrite the value at a position through `DerefMut` (the old one drops).
    Set(usize, u16),
    /// An `alloc` in between: a value the arena drops at reset.
    AllocOther(u16),
    /// Box a slice of values.
    PushSlice(Vec<u16>),
    /// Drop the boxed slice at a position.
    DropSlice(usize),
    /// Move some values out of the boxed slice at a position, from the front, then drop the
    /// iterator with the rest.
    TakeFromSlice(usize, usize),
}

fn box_op() -> impl Strategy<Value = BoxOp> {
    prop_oneof![
        3 => any::<u16>().prop_map(BoxOp::Push),
        2 => any::<usize>().prop_map(BoxOp::Drop),
        1 => any::<usize>().prop_map(BoxOp::IntoInner),
        1 => (any::<usize>(), any::<u16>()).prop_map(|(i, x)| BoxOp::Set(i, x)),
        1 => any::<u16>().prop_map(BoxOp::AllocOther),
        1 => proptest::collection::vec(any::<u16>(), 0..5).prop_map(BoxOp::PushSlice),
        1 => any::<usize>().prop_map(BoxOp::DropSlice),
        1 => (any::<usize>(), 0usize..6).prop_map(|(i, k)| BoxOp::TakeFromSlice(i, k)),
    ]
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Boxes and boxed slices against plain values: every value reads back, each boxed value
    /// drops exactly once (when its box goes, is moved out, or is overwritten), and the arena's
    /// reset drops only what `alloc` took.
    #[test]
    fn arena_boxes_match_plain_values(ops in proptest::collection::vec(box_op(), 0..miri_or(120, 30))) {
        let mut arena = Arena::chained(256);
        let boxed = counter();
        let other = counter();
        let mut model: Vec<u32> = Vec::new();
        let (mut made, mut gone, mut others) = (0usize, 0usize, 0usize);
        {
            let a = &arena;
            let mut boxes: Vec<ArenaBox<Counted>> = Vec::new();
            let mut slices: Vec<ArenaBox<[Counted]>> = Vec::new();
            let mut slice_model: Vec<Vec<u32>> = Vec::new();
            for op in ops {
                match op {
                    BoxOp::Push(x) => {
                        boxes.push(a.alloc_box(Counted(Arc::clone(&boxed), x.into())));
                        model.push(x.into());
                        made += 1;
                    }
                    BoxOp::Drop(i) if !model.is_empty() => {
                        let i = i % model.len();
                        drop(boxes.remove(i));
                        model.remove(i);
                        gone += 1;
                    }
                    BoxOp::IntoInner(i) if !model.is_empty() => {
                        let i = i % model.len();
                        let v = ArenaBox::into_inner(boxes.remove(i));
                        prop_assert_eq!(v.1, model.remove(i));
                        prop_assert_eq!(drops(&boxed), gone);
                        drop(v);
                        gone += 1;
                    }
                    BoxOp::Set(i, x) if !model.is_empty() => {
                        let i = i % model.len();
                        *boxes[i] = Counted(Arc::clone(&boxed), x.into());
                        model[i] = x.into();
                        made += 1;
                        gone += 1;
                    }
                    BoxOp::AllocOther(x) => {
                        a.alloc(Counted(Arc::clone(&other), x.into()));
                        others += 1;
                    }
                    BoxOp::PushSlice(xs) => {
                        slices.push(a.alloc_box_slice_fill_with(xs.len(), |i| {
                            Counted(Arc::clone(&boxed), xs[i].into())
                        }));
                        made += xs.len();
                        slice_model.push(xs.iter().map(|&x| x.into()).collect());
                    }
                    BoxOp::DropSlice(i) if !slice_model.is_empty() => {
                        let i = i % slice_model.len();
                        drop(slices.remove(i));
                        gone += slice_model.remove(i).len();
                    }
                    BoxOp::TakeFromSlice(i, k) if !slice_model.is_empty() => {
                        let i = i % slice_model.len();
                        let expected = slice_model.remove(i);
                        let mut it = slices.remove(i).into_iter();
                        let taken: Vec<Counted> = it.by_ref().take(k).collect();
                        prop_assert_eq!(taken.iter().map(|v| v.1).collect::<Vec<_>>(), expected[..taken.len()].to_vec());
                        prop_assert_eq!(drops(&boxed), gone);
                        drop(it);
                        drop(taken);
                        gone += expected.len();
                    }
                    _ => {}
                }
                prop_assert_eq!(drops(&boxed), gone);
                prop_assert_eq!(boxes.iter().map(|b| b.1).collect::<Vec<_>>(), model.clone());
                for (b, m) in slices.iter().zip(&slice_model) {
                    prop_assert_eq!(b.iter().map(|v| v.1).collect::<Vec<_>>(), m.clone());
                }
            }
            prop_assert_eq!(drops(&other), 0);
        }
        prop_assert_eq!(drops(&boxed), made);
        arena.reset();
        prop_assert_eq!(drops(&boxed), made);
        prop_assert_eq!(drops(&other), others);
    }
}

/// `ArenaString::retain` whose predicate panics partway leaves valid UTF-8: the chars kept so
/// far, then every char not yet visited.
#[test]
fn a_string_retain_that_panics_leaves_valid_text() {
    let arena = Arena::new();
    for stop in 0..6 {
        let mut s = ArenaString::from_str_in("aé1ü2€", &arena);
        let mut calls = 0;
        let r = catch_unwind(AssertUnwindSafe(|| {
            s.retain(|c| {
                if calls == stop {
                    panic!("the predicate panicked");
                }
                calls += 1;
                !c.is_ascii_digit()
            })
        }));
        assert!(r.is_err());
        let visited: String = "aé1ü2€"
            .chars()
            .take(stop)
            .filter(|c| !c.is_ascii_digit())
            .collect();
        let rest: String = "aé1ü2€".chars().skip(stop).collect();
        assert_eq!(s, format!("{visited}{rest}"), "stopped at call {stop}");
    }
}

/// The collections compare, order and hash as their slices and texts do, so they work as map
/// keys looked up by `&str` or `&[T]`, and compare with `String` and `Vec`.
#[test]
// The keys hold a `&Arena` (interior mutability), which neither their hash nor their order reads.
#[allow(clippy::mutable_key_type)]
fn collections_order_and_look_up_as_their_contents() {
    use std::collections::{BTreeMap, HashMap};
    let arena = Arena::new();
    let mut names = BTreeMap::new();
    for n in ["mage", "archer", "knight"] {
        names.insert(ArenaString::from_str_in(n, &arena), n.len());
    }
    assert_eq!(names.get("archer"), Some(&6));
    assert_eq!(
        names.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
        ["archer", "knight", "mage"]
    );
    let mut paths = HashMap::new();
    paths.insert(ArenaVec::from_iter_in([1u8, 2], &arena), "a");
    assert_eq!(paths.get(&[1u8, 2][..]), Some(&"a"));
    let a = ArenaVec::from_iter_in([1, 2, 3], &arena);
    let b = ArenaVec::from_iter_in([1, 3], &arena);
    assert!(a < b);
    assert_eq!(a, vec![1, 2, 3]);
    assert_eq!(ArenaString::from_str_in("x", &arena), String::from("x"));
    assert_eq!(String::from("x"), ArenaString::from_str_in("x", &arena));
}

/// The spare capacity is written, then counted with `set_len`, as `Vec`'s users do; a vector of
/// zero-sized values lends no spare slots.
#[test]
fn spare_capacity_written_then_counted_with_set_len() {
    let arena = Arena::new();
    let mut v: ArenaVec<u32> = ArenaVec::with_capacity_in(4, &arena);
    v.push(1);
    let cap = v.capacity();
    let spare = v.spare_capacity_mut();
    assert_eq!(spare.len(), cap - 1);
    for (i, slot) in (10..).zip(spare.iter_mut().take(3)) {
        slot.write(i);
    }
    // SAFETY: the three slots after the first element were just written, within the capacity.
    unsafe { v.set_len(4) };
    assert_eq!(v, [1, 10, 11, 12]);
    let mut units: ArenaVec<()> = ArenaVec::new_in(&arena);
    assert!(units.spare_capacity_mut().is_empty());
}
