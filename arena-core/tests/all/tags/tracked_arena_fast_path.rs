//! A tracked arena's own `alloc` / `try_alloc` skip the wrapper's stamp compare while the
//! wrapper's budget is known to be on the arena (the arena is "armed"). Everything that could
//! take that budget off (replacing or swapping the arena through `DerefMut`, a budget set on
//! the arena directly, through `&mut` or `&`, unwrapping it) must send the next allocation
//! back to the check. These tests do each of those after the fast path has been armed, and a
//! model test runs random sequences of them against the same wrapper allocating through
//! `Deref` (which compares stamps on every access).

use std::mem;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::Arena;
use arena_kit_core::arena::ArenaError;
use arena_kit_core::tags::{Budget, BudgetGate, Budgeted, MemoryUsage, Tracked};

use crate::support::{Rng, counter, drops};

/// A value with a destructor, counting its drops.
#[derive(Debug)]
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// The budget that refused `e`: its allocator's name and its bytes.
fn refused_by(e: ArenaError) -> (&'static str, usize) {
    match e {
        ArenaError::OverBudget(b) => (b.allocator, b.budget),
        other => panic!("expected a budget refusal, got {other:?}"),
    }
}

#[test]
fn swapping_two_armed_tracked_arenas_keeps_each_wrappers_budget() {
    let mut small =
        Tracked::new(Arena::with_capacity(4096), "small", "Test").with_budget(Budget::fail(64));
    let mut large =
        Tracked::new(Arena::with_capacity(4096), "large", "Test").with_budget(Budget::fail(2048));
    // Both fast paths armed.
    small.alloc(1u64);
    large.alloc(1u64);
    mem::swap(&mut *small, &mut *large);
    // `small` now holds the arena that carried `large`'s budget, and the other way round.
    assert_eq!(
        refused_by(small.try_alloc([0u8; 128]).unwrap_err()),
        ("small", 64)
    );
    large.try_alloc([0u8; 1024]).unwrap();
    assert_eq!(small.budget().map(|b| b.bytes), Some(64));
    assert_eq!(large.budget().map(|b| b.bytes), Some(2048));
}

#[test]
fn replacing_an_armed_tracked_arena_keeps_the_budget() {
    let mut scratch =
        Tracked::new(Arena::with_capacity(4096), "scratch", "Test").with_budget(Budget::fail(64));
    scratch.alloc(1u64);
    *scratch = Arena::with_capacity(4096); // no budget of its own
    assert_eq!(
        refused_by(scratch.try_alloc([0u8; 65]).unwrap_err()),
        ("scratch", 64)
    );
    // A value with a destructor takes the other fast path (a record, then its run): refused
    // the same way.
    let mut owners =
        Tracked::new(Arena::with_capacity(8192), "owners", "Test").with_budget(Budget::fail(512));
    let c = counter();
    owners.alloc(Counted(Arc::clone(&c)));
    owners.alloc(Counted(Arc::clone(&c))); // extends the run: the armed path
    *owners = Arena::with_capacity(8192);
    assert_eq!(drops(&c), 2);
    let big: [Counted; 64] = std::array::from_fn(|_| Counted(Arc::clone(&c)));
    assert_eq!(
        refused_by(owners.try_alloc(big).unwrap_err()),
        ("owners", 512)
    );
    assert_eq!(drops(&c), 66, "the refused value was dropped, nothing else");
    assert_eq!(owners.usage().current, 0);
    assert_eq!(scratch.usage().current, 0);
}

#[test]
fn an_armed_arena_taken_out_of_its_wrapper_checks_again_in_its_next_one() {
    let mut first =
        Tracked::new(Arena::with_capacity(4096), "first", "Test").with_budget(Budget::fail(2048));
    first.alloc(1u64);
    let arena = mem::replace(&mut *first, Arena::with_capacity(4096));
    // The arena keeps the gate the first wrapper put on it; a second wrapper with its own
    // budget replaces it before its first allocation.
    let second = Tracked::new(arena, "second", "Test").with_budget(Budget::fail(64));
    assert_eq!(
        refused_by(second.try_alloc([0u8; 128]).unwrap_err()),
        ("second", 64)
    );
    // Unwrapped: a wrapper-managed budget comes off with the wrapper.
    let bare = second.into_inner();
    assert_eq!(bare.budget(), None);
    bare.alloc([0u8; 1024]);
}

#[test]
fn a_budget_changed_on_an_armed_arena_is_put_back_before_the_wrappers_next_alloc() {
    let mut scratch =
        Tracked::new(Arena::with_capacity(8192), "scratch", "Test").with_budget(Budget::fail(64));
    scratch.alloc(1u64);
    // Through `&mut`: removed, then raised.
    Budgeted::set_budget(&mut *scratch, None);
    assert_eq!(
        refused_by(scratch.try_alloc([0u8; 128]).unwrap_err()),
        ("scratch", 64)
    );
    scratch.alloc(1u64);
    Budgeted::set_budget(&mut *scratch, Some(Budget::fail(1 << 20).into()));
    assert_eq!(
        refused_by(scratch.try_alloc([0u8; 128]).unwrap_err()),
        ("scratch", 64)
    );
    // Through `&`: the arena keeps its budget in a `Cell`, so a shared borrow can change it.
    scratch.alloc(1u64);
    let arena: &Arena = &scratch;
    let lenient: BudgetGate = Budget::fail(1 << 20).into();
    arena.restore_budget(&lenient);
    assert_eq!(arena.budget().map(|g| g.budget().bytes), Some(1 << 20));
    assert_eq!(
        refused_by(scratch.try_alloc([0u8; 128]).unwrap_err()),
        ("scratch", 64)
    );
    assert_eq!(scratch.usage().current, 24);
}

/// The stamp an arena reports (`budget_stamp`, what a wrapper compares) is the stamp of the
/// budget it reports (`budget`), whichever way the budget arrived: set, re-applied as the same
/// budget under another stamp (a `stamped` copy), or re-applied unstamped.
#[test]
fn the_budget_an_arena_reports_carries_the_stamp_it_reports() {
    let consistent = |arena: &Arena, what: &str| {
        assert_eq!(
            arena.budget().map_or(0, |g| g.stamp()),
            arena.budget_stamp(),
            "{what}"
        );
        assert_ne!(
            arena.budget_stamp(),
            0,
            "{what}: a budget in force has a stamp"
        );
    };
    let mut arena = Arena::with_capacity(4096);
    let gate: BudgetGate = Budget::fail(1024).into();
    arena.set_budget(Some(gate));
    consistent(&arena, "set unstamped");
    let copy = arena.budget().unwrap().stamped();
    arena.restore_budget(&copy);
    consistent(&arena, "the same budget, stamped anew");
    assert_eq!(arena.budget_stamp(), copy.stamp());
    arena.restore_budget(&gate);
    consistent(&arena, "the same budget, unstamped");
    assert_eq!(arena.budget_stamp(), copy.stamp());
    arena.restore_budget(&Budget::fail(2048).into());
    consistent(&arena, "another budget");
    assert_eq!(arena.budget().unwrap().budget().bytes, 2048);
    arena.alloc([0u8; 1500]);
    assert!(arena.try_alloc([0u8; 1024]).is_err());
}

#[test]
fn an_armed_arena_follows_its_pages_and_a_lifted_warn_budget() {
    // Chained pages of 256 bytes: the fast path's end moves with every page.
    let mut chained =
        Tracked::new(Arena::chained(256), "chained", "Test").with_budget(Budget::fail(1000));
    let mut bare = Arena::chained(256);
    bare.set_budget(Some(Budget::fail(1000).into()));
    let (mut through_wrapper, mut bare_count) = (0, 0);
    while chained.try_alloc([7u64; 8]).is_ok() {
        through_wrapper += 1;
    }
    while bare.try_alloc([7u64; 8]).is_ok() {
        bare_count += 1;
    }
    assert_eq!(through_wrapper, bare_count);
    assert_eq!(chained.usage().current, bare.usage().current);
    chained.reset();
    assert_eq!(chained.usage().current, 0);
    chained.alloc([7u64; 8]);

    // A `Warn` budget lifts its clamp once crossed: the wrapper keeps allocating past it.
    let warned =
        Tracked::new(Arena::with_capacity(4096), "warned", "Test").with_budget(Budget::warn(128));
    for i in 0..8u64 {
        warned.alloc([i; 8]);
    }
    assert_eq!(warned.usage().current, 512);
}

#[test]
fn guarded_and_zero_sized_values_through_an_armed_wrapper() {
    let guarded = Tracked::new(Arena::with_capacity(4096).with_guards(), "guarded", "Test")
        .with_budget(Budget::fail(4096));
    guarded.alloc(1u64);
    let x = guarded.alloc(2u64);
    *x += 1;
    guarded.alloc(());
    guarded.check_guards().unwrap();
    let big = guarded.alloc([3u8; 3000]); // past the small form of the fast path
    assert_eq!(big[2999], 3);
    assert_eq!(
        refused_by(guarded.try_alloc([0u8; 3000]).unwrap_err()),
        ("guarded", 4096)
    );
}

/// The same operation on two wrappers of identical arenas: `fast` allocates through the
/// wrapper's own `try_alloc` (the armed path), `model` through `Deref` (a stamp compare on
/// every access, as before the armed path existed).
struct Pair {
    fast: Tracked<Arena, &'static str>,
    model: Tracked<Arena, &'static str>,
    spare: (Arena, Arena),
    drops: (Arc<AtomicUsize>, Arc<AtomicUsize>),
}

fn arena(kind: usize) -> Arena {
    match kind {
        0 => Arena::with_capacity(2048),
        1 => Arena::chained(512),
        _ => Arena::with_capacity(1 << 14),
    }
}

fn describe<T>(r: Result<&mut T, ArenaError>) -> Result<(), String> {
    r.map(|_| ()).map_err(|e| e.to_string())
}

impl Pair {
    fn new() -> Pair {
        Pair {
            fast: Tracked::new(arena(1), "pair", "Test"),
            model: Tracked::new(arena(1), "pair", "Test"),
            spare: (arena(2), arena(2)),
            drops: (counter(), counter()),
        }
    }

    fn alloc(&mut self, kind: usize, id: u64) {
        let (f, m) = (&self.fast, &self.model);
        let model: &Arena = m;
        let (a, b) = match kind {
            0 => (
                describe(f.try_alloc([id; 8])),
                describe(model.try_alloc([id; 8])),
            ),
            1 => (
                describe(f.try_alloc(id as u8)),
                describe(model.try_alloc(id as u8)),
            ),
            2 => (
                describe(f.try_alloc(Counted(Arc::clone(&self.drops.0)))),
                describe(model.try_alloc(Counted(Arc::clone(&self.drops.1)))),
            ),
            3 => (describe(f.try_alloc(())), describe(model.try_alloc(()))),
            4 => (
                describe(f.try_alloc([id as u8; 2100])),
                describe(model.try_alloc([id as u8; 2100])),
            ),
            _ => (
                describe(f.try_alloc(id as u16)),
                describe(model.try_alloc(id as u16)),
            ),
        };
        assert_eq!(a, b, "allocation of kind {kind}");
    }

    /// Compares what the two wrappers report without reaching either arena through `Deref`
    /// (which would put the wrapper's budget back and hide a missed check).
    fn check(&self, step: usize) {
        assert_eq!(self.fast.usage(), self.model.usage(), "step {step}");
        assert_eq!(drops(&self.drops.0), drops(&self.drops.1), "step {step}");
    }
}

#[test]
fn the_wrappers_own_alloc_matches_allocation_through_deref_over_random_sequences() {
    let (seeds, steps) = if cfg!(miri) { (2, 120) } else { (64, 600) };
    for seed in 0..seeds {
        let mut rng = Rng(seed);
        let mut p = Pair::new();
        for step in 0..steps {
            match rng.below(20) {
                0 => {
                    p.fast.reset();
                    p.model.reset();
                }
                1 => {
                    let budget = match rng.below(4) {
                        0 => None,
                        1 => Some(Budget::warn(rng.between(64, 4096))),
                        _ => Some(Budget::fail(rng.between(64, 4096))),
                    };
                    p.fast.set_budget(budget);
                    p.model.set_budget(budget);
                }
                2 => {
                    let kind = rng.below(3);
                    *p.fast = arena(kind);
                    *p.model = arena(kind);
                }
                3 => {
                    let gate =
                        (rng.below(2) == 0).then(|| Budget::fail(rng.between(64, 8192)).into());
                    Budgeted::set_budget(&mut *p.fast, gate);
                    Budgeted::set_budget(&mut *p.model, gate);
                }
                4 => {
                    let gate: BudgetGate = Budget::fail(rng.between(64, 8192)).into();
                    p.fast.allocator().restore_budget(&gate);
                    p.model.allocator().restore_budget(&gate);
                }
                5 => {
                    mem::swap(&mut *p.fast, &mut p.spare.0);
                    mem::swap(&mut *p.model, &mut p.spare.1);
                }
                // Under Miri a function can have several addresses, so two arenas may give
                // the same values with destructors a different number of drop records (bytes,
                // not correctness: see `Arena::alloc`): the model compares bytes, so Miri
                // runs it without them (the tests above take that path under Miri).
                _ => match rng.below(6) {
                    2 if cfg!(miri) => p.alloc(0, step as u64),
                    kind => p.alloc(kind, step as u64),
                },
            }
            p.check(step);
        }
    }
}

// --- Attacks on the armed path that hold (review of the armed fast path) ---

/// A zero-sized value with a destructor: takes the drop path with no bytes.
struct ZeroDrop;

impl Drop for ZeroDrop {
    fn drop(&mut self) {}
}

/// The largest value the armed path takes (size and alignment `SLACK / 2`).
#[derive(Clone, Copy)]
#[repr(C, align(2048))]
struct Edge2k([u8; 2048]);

/// Past the armed path's alignment: its slow path rounds the cursor to 4096.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Page4k([u8; 4096]);

/// A value with a destructor at the edge of the armed path's size.
#[repr(C)]
struct DropEdge(Counted, [u8; 2040]);

/// Two wrappers of identical arenas: `fast` allocates through the wrapper's own `try_alloc`
/// (the armed path), `model` through its `Deref` (what the wrapper's `try_alloc` did before the
/// armed path). Everything else is done to both alike: through `&Arena` (budgets, limits, the
/// `Allocator` impl's give-back and growth, markers), `&mut` (scopes, rewinds, replacing,
/// swapping and taking the arena), the wrapper's own `reset` and budgets, and swaps of whole
/// wrappers. (A wrapper of a wrapper is no use here: the outer one's `Deref` reads the inner
/// one's budget through the inner one's `Deref`, which checks it every time.)
type Wrapped = Tracked<Arena, &'static str>;

struct Twin {
    fast: Wrapped,
    model: Wrapped,
    spare_arenas: (Arena, Arena),
    spare_wrappers: (Wrapped, Wrapped),
    marks: Option<(arena_kit_core::Marker, arena_kit_core::Marker)>,
    drops: (Arc<AtomicUsize>, Arc<AtomicUsize>),
    with_drop: bool,
}

fn small_arena(kind: usize) -> Arena {
    match kind {
        0 => Arena::with_capacity(3000),
        1 => Arena::chained(512),
        2 => Arena::chained(5000).with_limit(12_000),
        3 => Arena::with_capacity(9000).with_guards(),
        _ => Arena::chained(1024).with_guards(),
    }
}

fn spare_wrapper(budget: usize) -> Wrapped {
    Tracked::new(small_arena(1), "spare", "Test").with_budget(Budget::fail(budget))
}

fn new_wrapped(kind: usize) -> Wrapped {
    Tracked::new(small_arena(kind), "twin", "Test")
}

impl Twin {
    fn new(kind: usize, with_drop: bool) -> Twin {
        Twin {
            fast: new_wrapped(kind),
            model: new_wrapped(kind),
            spare_arenas: (small_arena(kind), small_arena(kind)),
            spare_wrappers: (spare_wrapper(700), spare_wrapper(700)),
            marks: None,
            drops: (counter(), counter()),
            with_drop,
        }
    }

    /// One allocation of `kind` through each (alignments up to the page alignment, 16: past it
    /// the padding depends on where the system allocator put each page); the results, and where
    /// each value landed in its arena (only when `place`, which goes through `Deref` and so puts the wrapper's budget
    /// back, hiding a missed check from the steps after it).
    fn alloc(&mut self, kind: usize, id: u64, place: bool) {
        let f = &self.fast;
        let m: &Arena = self.model.allocator();
        macro_rules! both {
            ($v:expr) => {{
                let a = f.try_alloc($v).map(|r| &raw const *r as *const u8);
                let b = m.try_alloc($v).map(|r| &raw const *r as *const u8);
                (a, b)
            }};
        }
        let (a, b) = match kind {
            0 => both!([id; 8]),
            1 => both!(id as u8),
            2 => both!(id as u16),
            3 => both!(()),
            4 => both!([id as u8; 2048]),
            5 => both!([id as u8; 2049]),
            6 => both!([id as u128; 128]),
            7 => both!([id as u128; 129]),
            8 => both!(ZeroDrop),
            9 if self.with_drop => {
                let a = f
                    .try_alloc(Counted(Arc::clone(&self.drops.0)))
                    .map(|r| &raw const *r as *const u8);
                let b = m
                    .try_alloc(Counted(Arc::clone(&self.drops.1)))
                    .map(|r| &raw const *r as *const u8);
                (a, b)
            }
            10 if self.with_drop => {
                let a = f
                    .try_alloc(DropEdge(Counted(Arc::clone(&self.drops.0)), [0; 2040]))
                    .map(|r| &raw const *r as *const u8);
                let b = m
                    .try_alloc(DropEdge(Counted(Arc::clone(&self.drops.1)), [0; 2040]))
                    .map(|r| &raw const *r as *const u8);
                (a, b)
            }
            11 if self.with_drop => {
                let a = f
                    .try_alloc(String::from("armed"))
                    .map(|r| &raw const *r as *const u8);
                let b = m
                    .try_alloc(String::from("armed"))
                    .map(|r| &raw const *r as *const u8);
                (a, b)
            }
            _ => both!([id as u32; 3]),
        };
        match (a, b) {
            (Ok(pa), Ok(pb)) => {
                if place {
                    let fa: &Arena = f.allocator();
                    assert_eq!(fa.offset_of(pa), m.offset_of(pb), "placed, kind {kind}");
                }
            }
            (Err(ea), Err(eb)) => assert_eq!(ea.to_string(), eb.to_string(), "kind {kind}"),
            (a, b) => panic!("kind {kind}: wrapper {a:?}, model {b:?}"),
        }
    }

    /// Runs `op` on the arena of each, reached through `&` (both wrappers' `Deref`).
    fn shared<R: PartialEq + std::fmt::Debug>(&self, op: impl Fn(&Arena) -> R) {
        let (a, b) = (op(&self.fast), op(&self.model));
        assert_eq!(a, b);
    }

    fn check(&self, step: usize) {
        assert_eq!(self.fast.usage(), self.model.usage(), "step {step}");
        assert_eq!(drops(&self.drops.0), drops(&self.drops.1), "step {step}");
    }

    fn step(&mut self, rng: &mut Rng, step: usize) {
        let budget = |rng: &mut Rng| match rng.below(5) {
            0 => None,
            1 => Some(Budget::warn(rng.between(16, 6000))),
            _ => Some(Budget::fail(rng.between(16, 6000))),
        };
        match rng.below(32) {
            0 => {
                self.fast.reset();
                self.model.reset();
                self.marks = None;
            }
            1 => {
                let b = budget(rng);
                self.fast.set_budget(b);
                self.model.set_budget(b);
            }
            2 => {
                // Through `Budgeted`, on the wrapper itself.
                let gate = budget(rng).map(BudgetGate::from);
                Budgeted::set_budget(&mut self.fast, gate);
                Budgeted::set_budget(&mut self.model, gate);
            }
            3 => {
                let kind = rng.below(5);
                *self.fast = small_arena(kind);
                *self.model = small_arena(kind);
                self.marks = None;
            }
            4 => {
                let gate = budget(rng).map(BudgetGate::from);
                Budgeted::set_budget(&mut *self.fast, gate);
                Budgeted::set_budget(&mut *self.model, gate);
            }
            5 => {
                // Through `&Arena`: another gate, the arena's own gate unstamped (the same
                // budget and owner: only the stamp moves), or a stamped copy of it.
                let how = rng.below(3);
                let bytes = rng.between(16, 6000);
                self.shared(|a| {
                    let gate = match (how, a.budget()) {
                        (1, Some(g)) => BudgetGate::new(g.budget(), g.owner()),
                        (2, Some(g)) => g,
                        _ => Budget::fail(bytes).into(),
                    };
                    a.restore_budget(&gate);
                    a.budget_stamp() == gate.stamp()
                });
            }
            6 => {
                mem::swap(&mut *self.fast, &mut self.spare_arenas.0);
                mem::swap(&mut *self.model, &mut self.spare_arenas.1);
                self.marks = None;
            }
            7 => {
                mem::swap(&mut self.fast, &mut self.spare_wrappers.0);
                mem::swap(&mut self.model, &mut self.spare_wrappers.1);
                self.marks = None;
            }
            8 => {
                let limit = (rng.below(2) == 0).then(|| rng.between(0, 20_000));
                self.shared(|a| a.set_limit(limit));
            }
            9 => {
                use allocator_api2::alloc::Allocator;
                use std::alloc::Layout;
                let (size, align) = (rng.between(1, 600), 1 << rng.below(5));
                let grow = rng.between(0, 900);
                let give_back = rng.below(3);
                self.shared(|a| {
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let Ok(p) = a.allocate(layout) else {
                        return None;
                    };
                    let p = p.cast::<u8>();
                    let at = a.offset_of(p.as_ptr());
                    let bigger = Layout::from_size_align(size + grow, align).unwrap();
                    // SAFETY: `p` is the block just allocated with `layout` from this arena.
                    let grown = unsafe { a.grow(p, layout, bigger) }.ok();
                    let (p, layout) = match grown {
                        Some(g) => (g.cast::<u8>(), bigger),
                        None => (p, layout),
                    };
                    match give_back {
                        // SAFETY: `p` is a live block of `layout` from this arena.
                        0 => unsafe { a.deallocate(p, layout) },
                        1 => {
                            let smaller = Layout::from_size_align(size / 2, align).unwrap();
                            // SAFETY: as above; `smaller` is no larger.
                            let _ = unsafe { a.shrink(p, layout, smaller) };
                        }
                        _ => {}
                    }
                    Some((at, grown.is_some(), a.used()))
                });
            }
            10 => {
                let n = rng.between(1, 6);
                for arena in [&mut *self.fast, &mut *self.model] {
                    let s = arena.scope();
                    for i in 0..n {
                        let _ = s.try_alloc([i as u8; 40]);
                    }
                }
            }
            11 => match self.marks {
                None => {
                    let a: &Arena = &self.fast;
                    let b: &Arena = &self.model;
                    self.marks = Some((a.mark(), b.mark()));
                }
                Some((a, b)) => {
                    let ra = self.fast.rewind(a).map_err(|e| e.to_string());
                    let rb = self.model.rewind(b).map_err(|e| e.to_string());
                    assert_eq!(ra, rb, "rewind");
                    self.marks = None;
                }
            },
            12 => {
                let taken = (mem::take(&mut *self.fast), mem::take(&mut *self.model));
                // Back into the spare wrappers: their budgets go on at their next allocation.
                *self.spare_wrappers.0 = taken.0;
                *self.spare_wrappers.1 = taken.1;
                self.marks = None;
            }
            _ => {
                let kind = rng.below(13);
                let kind = if cfg!(miri) && (9..=11).contains(&kind) {
                    0
                } else {
                    kind
                };
                self.alloc(kind, step as u64, rng.below(4) == 0);
            }
        }
        self.check(step);
    }
}

#[test]
fn guards_limits_api2_scopes_markers_and_swapped_wrappers_match_deref_over_random_sequences() {
    let (seeds, steps) = if cfg!(miri) { (3, 80) } else { (96, 500) };
    for seed in 0..seeds {
        let mut rng = Rng(seed);
        let mut twin = Twin::new(seed as usize % 5, !cfg!(miri));
        for step in 0..steps {
            twin.step(&mut rng, step);
        }
    }
}

/// Values past the armed path's reach (an alignment of 4096) and at its edge (2048 bytes at
/// 2048), mixed with small ones and values with destructors, through the wrapper's own
/// `try_alloc`: each is aligned, inside the arena, apart from every other, keeps its bytes, and
/// usage never passes the `Fail` budget. (Alignments past the page alignment, 16, pad by where
/// the system allocator put each page, so these are checked against the rules rather than
/// against a second arena.)
#[test]
fn over_aligned_and_edge_sized_values_through_the_armed_path_stay_aligned_apart_and_in_budget() {
    let steps = if cfg!(miri) { 40 } else { 400 };
    for kind in 0..4u64 {
        let arena = match kind {
            0 => Arena::with_capacity(40_000),
            1 => Arena::chained(9000),
            2 => Arena::chained(3000).with_limit(30_000),
            _ => Arena::with_capacity(40_000).with_guards(),
        };
        let budget = 30_000;
        let wrapper = Tracked::new(arena, "aligned", "Test").with_budget(Budget::fail(budget));
        let c = counter();
        let mut rng = Rng(kind);
        let mut live: Vec<(&[u8], u8)> = Vec::new();
        for i in 0..steps {
            let byte = i as u8;
            let got: Result<(&[u8], usize), ArenaError> = match rng.below(7) {
                0 => wrapper
                    .try_alloc(Edge2k([byte; 2048]))
                    .map(|v| (&v.0[..], 2048)),
                1 => wrapper
                    .try_alloc(Page4k([byte; 4096]))
                    .map(|v| (&v.0[..], 4096)),
                2 => wrapper.try_alloc([byte; 1]).map(|v| (&v[..], 1)),
                3 => wrapper.try_alloc([byte; 24]).map(|v| (&v[..], 1)),
                4 if !cfg!(miri) => wrapper
                    .try_alloc(DropEdge(Counted(Arc::clone(&c)), [byte; 2040]))
                    .map(|v| (&v.1[..], 8)),
                5 => wrapper.try_alloc(ZeroDrop).map(|_| (&[][..], 1)),
                _ => wrapper.try_alloc([byte; 2049]).map(|v| (&v[..], 1)),
            };
            assert!(wrapper.usage().current <= budget, "step {i}");
            match got {
                Ok(([], _)) => {}
                Ok((bytes, align)) => {
                    let start = bytes.as_ptr() as usize;
                    let end = start + bytes.len();
                    assert_eq!(start % align, 0, "step {i}: {start:#x} at {align}");
                    let arena: &Arena = &wrapper;
                    assert!(arena.offset_of(bytes.as_ptr()).is_some(), "step {i}");
                    for (other, _) in &live {
                        let s = other.as_ptr() as usize;
                        assert!(end <= s || s + other.len() <= start, "step {i}: overlaps");
                    }
                    live.push((bytes, byte));
                }
                Err(e) => assert!(
                    matches!(
                        e,
                        ArenaError::OverBudget(_)
                            | ArenaError::Full { .. }
                            | ArenaError::LimitReached { .. }
                    ),
                    "step {i}: {e:?}"
                ),
            }
        }
        for (bytes, byte) in &live {
            // A comparison of whole slices: one `memcmp`, where Miri would step through a
            // closure call per byte.
            assert!(*bytes == vec![*byte; bytes.len()], "bytes changed");
        }
        wrapper.check_guards().unwrap();
    }
}

/// A wrapper of a tracked arena: the inner wrapper's own `alloc` armed, then its arena swapped,
/// replaced and re-budgeted through the outer wrapper's `DerefMut` and the inner one's, and
/// budgets set at both levels. Each allocation through the inner wrapper's own `try_alloc`
/// gives what allocation through its `Deref` gives on a twin.
#[test]
fn a_wrapper_of_an_armed_tracked_arena_checks_it_as_deref_does() {
    type Nested = Tracked<Tracked<Arena, &'static str>, &'static str>;
    let make = || -> Nested {
        Tracked::new(
            Tracked::new(Arena::with_capacity(4096), "inner", "Test").with_budget(Budget::fail(64)),
            "outer",
            "Test",
        )
    };
    let (mut fast, mut model) = (make(), make());
    let (mut spare_f, mut spare_m) = (Arena::with_capacity(4096), Arena::with_capacity(4096));
    let outcome = |fast: &Nested, model: &Nested, size: usize| {
        let a = match size {
            8 => fast.try_alloc([0u8; 8]).map(|_| ()),
            _ => fast.try_alloc([0u8; 200]).map(|_| ()),
        };
        let b = match size {
            8 => model
                .allocator()
                .allocator()
                .try_alloc([0u8; 8])
                .map(|_| ()),
            _ => model
                .allocator()
                .allocator()
                .try_alloc([0u8; 200])
                .map(|_| ()),
        };
        assert_eq!(a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()));
        assert_eq!(fast.usage(), model.usage());
    };
    outcome(&fast, &model, 8);
    mem::swap(&mut **fast, &mut spare_f);
    mem::swap(&mut **model, &mut spare_m);
    outcome(&fast, &model, 200);
    outcome(&fast, &model, 8);
    for w in [&mut fast, &mut model] {
        w.set_budget(Some(Budget::fail(1000)));
    }
    outcome(&fast, &model, 200);
    for w in [&mut fast, &mut model] {
        Budgeted::set_budget(&mut ***w, None);
    }
    outcome(&fast, &model, 200);
    outcome(&fast, &model, 200);
    for w in [&mut fast, &mut model] {
        (**w).set_budget(Some(Budget::fail(300)));
        **w = Tracked::new(Arena::with_capacity(4096), "inner", "Test");
    }
    for _ in 0..4 {
        outcome(&fast, &model, 200);
    }
}

/// A `Panic` budget crossed through the wrapper's own `alloc` (armed, then missing at the
/// clamp): the panic leaves the arena as allocation through `Deref` leaves it, and the
/// allocations after it (armed again or not) agree too.
#[test]
fn a_panic_budget_crossed_through_the_armed_path_leaves_the_arena_as_deref_does() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let make =
        || Tracked::new(Arena::chained(600), "panicky", "Test").with_budget(Budget::panic(500));
    let (mut fast, mut model) = (make(), make());
    let mut rng = Rng(3);
    for step in 0..if cfg!(miri) { 40 } else { 400 } {
        if rng.below(10) == 0 {
            fast.reset();
            model.reset();
        }
        let kind = rng.below(3);
        let a = catch_unwind(AssertUnwindSafe(|| match kind {
            0 => drop(fast.alloc([7u8; 40])),
            1 => drop(fast.alloc(7u8)),
            _ => drop(fast.alloc([7u64; 30])),
        }))
        .is_ok();
        let arena: &Arena = model.allocator();
        let b = catch_unwind(AssertUnwindSafe(|| match kind {
            0 => drop(arena.alloc([7u8; 40])),
            1 => drop(arena.alloc(7u8)),
            _ => drop(arena.alloc([7u64; 30])),
        }))
        .is_ok();
        assert_eq!(a, b, "step {step}");
        assert_eq!(fast.usage(), model.usage(), "step {step}");
        assert!(fast.usage().current <= 500);
    }
}

mod sink_reentry {
    //! A `Warn` budget's warning runs the report sink, which may reach the same tracked arena
    //! (through a thread-local): it allocates through the wrapper, changes the arena's budget
    //! through `&Arena`, and allocates again. The wrapper's own `try_alloc` (the armed path)
    //! and allocation through its `Deref` must agree throughout: the same outcomes, the same
    //! usage, and the same warnings (a budget the sink loosened is the wrapper's again at its
    //! next allocation, so the next crossing warns again).

    use std::cell::{Cell, RefCell};
    use std::sync::Mutex;

    use arena_kit_core::Arena;
    use arena_kit_core::tags::{Budget, BudgetGate, Budgeted, Event, Tracked, set_report_sink};

    use crate::support::Rng;

    /// The sink is process-wide: these tests take turns (no other test in this binary sets
    /// one; events of other threads pass through it untouched).
    static TURN: Mutex<()> = Mutex::new(());

    type Wrapped = Tracked<Arena, &'static str>;

    fn wrapped(name: &'static str) -> RefCell<Wrapped> {
        RefCell::new(Tracked::new(Arena::chained(700), name, "Test").with_budget(Budget::warn(300)))
    }

    thread_local! {
        /// `fast` allocates through the wrapper's own `try_alloc`, `model` through `Deref`.
        static FAST: RefCell<Wrapped> = wrapped("fast");
        static MODEL: RefCell<Wrapped> = wrapped("model");
        /// What this thread's sink does (0: nothing).
        static ACTION: Cell<u64> = const { Cell::new(0) };
        /// The outcomes of every allocation so far, folded, and the warnings, for each.
        static OUTCOMES: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        static WARNINGS: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
    }

    fn alloc(fast: bool, wrapper: &Wrapped, what: u64) -> bool {
        // Under Miri a function can have several addresses, so values with destructors may
        // take a different number of drop records in the two arenas (bytes, not
        // correctness): it allocates values without destructors only.
        let kinds = if cfg!(miri) { 2 } else { 3 };
        let ok = match (fast, what % kinds) {
            (true, 0) => wrapper.try_alloc([what; 5]).is_ok(),
            (false, 0) => wrapper.allocator().try_alloc([what; 5]).is_ok(),
            (true, 1) => wrapper.try_alloc(what as u8).is_ok(),
            (false, 1) => wrapper.allocator().try_alloc(what as u8).is_ok(),
            (true, _) => wrapper.try_alloc(vec![what as u8; 3]).is_ok(),
            (false, _) => wrapper.allocator().try_alloc(vec![what as u8; 3]).is_ok(),
        };
        OUTCOMES.with(|o| {
            let (f, m) = o.get();
            let fold = |h: u64| h.wrapping_mul(31).wrapping_add(what * 2 + u64::from(ok));
            o.set(if fast { (fold(f), m) } else { (f, fold(m)) });
        });
        ok
    }

    fn sink(event: &Event) {
        let Event::Budget(exceeded) = event else {
            return;
        };
        let action = ACTION.with(Cell::get);
        let fast = exceeded.allocator == "fast";
        if action == 0 || !(fast || exceeded.allocator == "model") {
            return;
        }
        WARNINGS.with(|w| {
            let (f, m) = w.get();
            w.set(if fast { (f + 1, m) } else { (f, m + 1) });
        });
        let key = if fast { &FAST } else { &MODEL };
        key.with(|w| {
            let w = w.borrow();
            alloc(fast, &w, action);
            let gate: BudgetGate = match action % 4 {
                0 => Budget::fail(64).into(),
                1 => Budget::warn(1 << 20).into(),
                2 => Budget::fail(1 << 20).into(),
                _ => return,
            };
            // Through `&Arena`: the budget is now another; the wrapper's next allocation puts
            // its own back.
            let arena: &Arena = w.allocator();
            arena.restore_budget(&gate);
            alloc(fast, &w, action + 1);
            alloc(fast, &w, action + 2);
        });
    }

    struct SinkOff;

    impl Drop for SinkOff {
        fn drop(&mut self) {
            set_report_sink(None);
            ACTION.with(|a| a.set(0));
        }
    }

    #[test]
    fn a_warn_sink_reentering_the_tracked_arena_sees_what_it_sees_through_deref() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let _off = SinkOff;
        set_report_sink(Some(sink));
        let steps = if cfg!(miri) { 80 } else { 1000 };
        let mut rng = Rng(7);
        for step in 0..steps {
            if rng.below(12) == 0 {
                // Back under the budget: the wrapper's own reset (no `DerefMut`).
                FAST.with(|w| w.borrow_mut().reset());
                MODEL.with(|w| w.borrow_mut().reset());
            }
            ACTION.with(|a| a.set(1 + rng.below(40) as u64));
            let what = rng.below(1000) as u64;
            let a = FAST.with(|w| alloc(true, &w.borrow(), what));
            let b = MODEL.with(|w| alloc(false, &w.borrow(), what));
            assert_eq!(a, b, "step {step}");
            let (f, m) = OUTCOMES.with(Cell::get);
            assert_eq!(f, m, "step {step}: what the sinks allocated");
            let (f, m) = WARNINGS.with(Cell::get);
            assert_eq!(f, m, "step {step}: warnings");
            let usage = (
                FAST.with(|w| w.borrow().usage()),
                MODEL.with(|w| w.borrow().usage()),
            );
            assert_eq!(usage.0, usage.1, "step {step}");
        }
        let least = if cfg!(miri) { 1 } else { 20 };
        assert!(WARNINGS.with(Cell::get).0 >= least, "the sink ran");
    }
}

/// A budget in force always has a stamp (the trait's promise: 0 only without a budget), also
/// when it was put on through `&Arena` as a gate that had none: a copy of the budget in force,
/// or another budget.
#[test]
fn a_budget_restored_from_an_unstamped_gate_keeps_a_stamp() {
    let mut arena = Arena::with_capacity(1024);
    arena.set_budget(Some(Budget::fail(64).into()));
    assert_ne!(arena.budget_stamp(), 0);
    let same: BudgetGate = Budget::fail(64).into();
    assert_eq!(same.stamp(), 0);
    arena.restore_budget(&same);
    assert_eq!(arena.budget().map(|g| g.budget()), Some(Budget::fail(64)));
    assert_ne!(
        arena.budget_stamp(),
        0,
        "the same budget, restored unstamped"
    );
    let other: BudgetGate = Budget::fail(128).into();
    arena.restore_budget(&other);
    assert_eq!(arena.budget().map(|g| g.budget()), Some(Budget::fail(128)));
    assert_ne!(
        arena.budget_stamp(),
        0,
        "another budget, restored unstamped"
    );
    assert_eq!(
        arena.budget().map(|g| g.stamp()),
        Some(arena.budget_stamp())
    );
}
