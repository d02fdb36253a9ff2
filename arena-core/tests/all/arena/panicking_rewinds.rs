//! Rewinds and drops of an arena whose destructors panic at any one value: the values of
//! alternating types (records, tail entries, constructors that panic or allocate) drop in
//! reverse order of their slots, each once, and the arena stays usable.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use arena_kit_core::arena::Arena;

/// The ids of the values dropped, in order.
type Log = Arc<Mutex<Vec<u32>>>;

/// A destructor that logs its id and panics when its id is the bomb.
struct A(Log, u32, u32, #[allow(dead_code)] u64);
/// As [`A`], another type, so that the two alternate.
struct B(Log, u32, u32, #[allow(dead_code)] [u64; 3]);
impl Drop for A {
    fn drop(&mut self) {
        dropped(&self.0, self.1, self.2);
    }
}
impl Drop for B {
    fn drop(&mut self) {
        dropped(&self.0, self.1, self.2);
    }
}

/// Logs `id`, and panics if it is the `bomb`.
fn dropped(log: &Log, id: u32, bomb: u32) {
    log.lock().unwrap_or_else(|e| e.into_inner()).push(id);
    assert_ne!(id, bomb, "this destructor panics");
}

/// Allocates the ids in order with the pattern given ('a', 'b', 'x' = try_alloc_with that
/// panics, 'n' = try_alloc_with whose closure allocates a B first).
fn fill(arena: &Arena, log: &Log, bomb: u32, pattern: &str, first: u32) -> Vec<u32> {
    let mut made = Vec::new();
    let mut id = first;
    for c in pattern.chars() {
        match c {
            'a' => {
                arena.alloc(A(log.clone(), id, bomb, 0));
                made.push(id);
            }
            'b' => {
                arena.alloc(B(log.clone(), id, bomb, [0; 3]));
                made.push(id);
            }
            'x' => {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    arena.alloc_with(|| -> A { panic!("ctor") });
                }));
                assert!(r.is_err());
            }
            'n' => {
                let inner = id;
                id += 1;
                let l = log.clone();
                arena.alloc_with(|| {
                    arena.alloc(B(l.clone(), inner, bomb, [0; 3]));
                    A(l, id, bomb, 0)
                });
                // the outer slot was bumped first: the inner value lies after it
                made.push(id);
                made.push(inner);
            }
            _ => unreachable!(),
        }
        id += 1;
    }
    made
}

const PRE: &str = "abab";
const POST: &str = "ababaabxbabnabbaab";

fn expected_rev(v: &[u32]) -> Vec<u32> {
    v.iter().rev().copied().collect()
}

fn rewind_case(arena: Arena, bomb: u32) {
    let mut arena = arena;
    let log: Log = Arc::default();
    let pre = fill(&arena, &log, bomb, PRE, 0);
    let pending_pre = arena.pending_drops();
    let m = arena.mark();
    let post = fill(&arena, &log, bomb, POST, 100);
    let r = catch_unwind(AssertUnwindSafe(|| arena.rewind(m).unwrap()));
    assert_eq!(r.is_err(), post.contains(&bomb), "bomb {bomb}");
    assert_eq!(
        *log.lock().unwrap(),
        expected_rev(&post),
        "rewind, bomb {bomb}"
    );
    assert_eq!(arena.pending_drops(), pending_pre, "bomb {bomb}");
    log.lock().unwrap().clear();
    // allocate again after the rewind (reuses the memory), then reset
    let again = fill(&arena, &log, u32::MAX, POST, 200);
    let r = catch_unwind(AssertUnwindSafe(|| arena.reset()));
    assert_eq!(r.is_err(), pre.contains(&bomb));
    let mut all = pre.clone();
    all.extend(&again);
    assert_eq!(
        *log.lock().unwrap(),
        expected_rev(&all),
        "reset, bomb {bomb}"
    );
    assert_eq!(arena.pending_drops(), 0);
}

#[test]
fn a_rewind_with_a_destructor_panicking_anywhere_drops_in_order_and_once() {
    let bombs: Vec<u32> = if cfg!(miri) {
        // a bomb in the middle of a tail, one in a run, none
        vec![102, 108, u32::MAX]
    } else {
        (0..4).chain(100..125).chain([u32::MAX]).collect()
    };
    for &bomb in &bombs {
        rewind_case(Arena::with_capacity(1 << 14), bomb);
        rewind_case(Arena::chained(4096), bomb);
        rewind_case(Arena::chained(96), bomb);
    }
}

#[test]
fn dropping_the_arena_with_a_destructor_panicking_anywhere_drops_in_order_and_once() {
    let bombs: Vec<u32> = if cfg!(miri) {
        vec![3, u32::MAX]
    } else {
        (0..30).chain([u32::MAX]).collect()
    };
    for bomb in bombs {
        let log: Log = Arc::default();
        let arena = Arena::with_capacity(1 << 14);
        let made = fill(&arena, &log, bomb, POST, 0);
        let r = catch_unwind(AssertUnwindSafe(|| drop(arena)));
        assert_eq!(r.is_err(), made.contains(&bomb));
        assert_eq!(*log.lock().unwrap(), expected_rev(&made), "bomb {bomb}");
    }
}

/// `pending_drops` counts each value of alternating types as it lands in a tail, over memory
/// that still holds earlier entries' drop words (a value already built arms its entry only
/// as it is moved in).
#[test]
fn pending_drops_counts_each_built_value_in_a_tail_over_stale_entries() {
    let log: Log = Arc::default();
    let mut arena = Arena::with_capacity(1 << 14);
    // stale memory: fill, rewind (memory now holds old entries with valid drop words)
    let m = arena.mark();
    fill(&arena, &log, u32::MAX, POST, 0);
    arena.rewind(m).unwrap();
    log.lock().unwrap().clear();
    let mut n = 0;
    for i in 0..40u32 {
        if i % 2 == 0 {
            arena.alloc(A(log.clone(), i, u32::MAX, 0));
        } else {
            arena.alloc(B(log.clone(), i, u32::MAX, [0; 3]));
        }
        n += 1;
        assert_eq!(arena.pending_drops(), n);
    }
    arena.reset();
    assert_eq!(*log.lock().unwrap(), (0..40).rev().collect::<Vec<_>>());
}
