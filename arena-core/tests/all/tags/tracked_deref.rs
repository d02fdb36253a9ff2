//! `Tracked` as a thin wrapper: every method of the allocator is reached through `Deref` and
//! `DerefMut`, the budget is the allocator's own and survives replacing the allocator, and the
//! name, tag and leak check are all the wrapper adds. Checked with two small allocators written
//! against the public `MemoryUsage` and `Budgeted` traits: one that allocates through `&mut self`
//! (like a pool or heap), one through `&self` (like an arena).

use std::cell::Cell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::tags::{
    Budget, BudgetExceeded, BudgetGate, Budgeted, MemoryUsage, Owner, Report, Tag, Tracked, Usage,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryTag {
    Audio,
}

impl Tag for MemoryTag {
    fn name(&self) -> &'static str {
        "Audio"
    }
}

use MemoryTag::Audio;

use crate::support::logged;

/// Whether this build sends warnings and leak reports anywhere.
const LOGS: bool = cfg!(feature = "log");

// --- a heap-like allocator: blocks of bytes, taken and given back through `&mut self` ---

#[derive(Debug, Clone, PartialEq, Eq)]
enum BlocksError {
    Full { requested: usize },
    OverBudget(BudgetExceeded),
}

impl fmt::Display for BlocksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlocksError::Full { requested } => write!(f, "full: {requested} bytes do not fit"),
            BlocksError::OverBudget(e) => e.fmt(f),
        }
    }
}

struct Blocks {
    used: usize,
    peak: usize,
    live: usize,
    capacity: usize,
    budget: Option<BudgetGate>,
}

impl Blocks {
    fn new(capacity: usize) -> Blocks {
        Blocks {
            used: 0,
            peak: 0,
            live: 0,
            capacity,
            budget: None,
        }
    }

    /// The limit check a real allocator already has, with the budget folded into it.
    fn try_take(&mut self, bytes: usize) -> Result<(), BlocksError> {
        if self.used + bytes > self.capacity {
            return Err(BlocksError::Full { requested: bytes });
        }
        if let Some(gate) = &mut self.budget
            && !gate.allows(self.used, bytes)
        {
            gate.exceeded(self.used, bytes)
                .map_err(BlocksError::OverBudget)?;
        }
        self.used += bytes;
        self.peak = self.peak.max(self.used);
        self.live += 1;
        Ok(())
    }

    #[track_caller]
    fn take(&mut self, bytes: usize) {
        if let Err(e) = self.try_take(bytes) {
            panic!("{e}")
        }
    }

    fn give_back(&mut self, bytes: usize) {
        self.used -= bytes;
        self.live -= 1;
        if let Some(gate) = &mut self.budget {
            gate.settle(self.used);
        }
    }
}

impl MemoryUsage for Blocks {
    fn usage(&self) -> Usage {
        Usage {
            current: self.used,
            peak: self.peak,
            allocations: self.live,
            reserved: self.capacity,
        }
    }
    fn reports_leaks(&self) -> bool {
        true
    }
}

impl Budgeted for Blocks {
    fn budget(&self) -> Option<BudgetGate> {
        self.budget
    }
    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.budget = gate;
    }
}

// --- an arena-like allocator: bumps through `&self`, its budget in a `Cell` ---

struct Bump {
    used: Cell<usize>,
    capacity: usize,
    budget: Cell<Option<BudgetGate>>,
}

impl Bump {
    fn new(capacity: usize) -> Bump {
        Bump {
            used: Cell::new(0),
            capacity,
            budget: Cell::new(None),
        }
    }

    fn try_bump(&self, bytes: usize) -> Result<usize, BlocksError> {
        let used = self.used.get();
        if used + bytes > self.capacity {
            return Err(BlocksError::Full { requested: bytes });
        }
        if let Some(mut gate) = self.budget.get()
            && !gate.allows(used, bytes)
        {
            let outcome = gate.exceeded(used, bytes);
            self.budget.set(Some(gate));
            outcome.map_err(BlocksError::OverBudget)?;
        }
        self.used.set(used + bytes);
        Ok(used)
    }
}

impl MemoryUsage for Bump {
    fn usage(&self) -> Usage {
        Usage {
            current: self.used.get(),
            peak: self.used.get(),
            allocations: 0,
            reserved: self.capacity,
        }
    }
}

impl Budgeted for Bump {
    fn budget(&self) -> Option<BudgetGate> {
        self.budget.get()
    }
    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.budget.set(gate);
    }
    fn restore_budget(&self, gate: &BudgetGate) {
        if !self.budget.get().is_some_and(|have| have.same_budget(gate)) {
            self.budget.set(Some(*gate));
        }
    }
}

fn over_budget(e: BlocksError) -> BudgetExceeded {
    match e {
        BlocksError::OverBudget(e) => e,
        other => panic!("expected a budget refusal, got {other}"),
    }
}

#[test]
fn the_allocators_own_methods_meet_the_budget_naming_the_wrapper() {
    let mut sounds =
        Tracked::new(Blocks::new(1000), "sound bank", Audio).with_budget(Budget::fail(100));
    sounds.try_take(60).unwrap();
    let e = over_budget(sounds.try_take(50).unwrap_err());
    assert_eq!(
        (e.allocator, e.tag, e.budget, e.current, e.requested),
        ("sound bank", "Audio", 100, 60, 50)
    );
    assert_eq!(sounds.usage().current, 60, "nothing was taken");
    assert_eq!(sounds.usage().allocations, 1);
    // The allocator's own errors still come through unchanged.
    assert_eq!(
        sounds.try_take(5000),
        Err(BlocksError::Full { requested: 5000 })
    );
    // Exactly at the budget is allowed.
    sounds.try_take(40).unwrap();
    // The allocator holds the budget, naming the wrapper; the wrapper reports it.
    let gate = sounds.allocator().budget().unwrap();
    assert_eq!(gate.owner(), Owner::new("sound bank", "Audio"));
    assert_eq!(sounds.budget(), Some(Budget::fail(100)));
    let report = Report::gather(&[&sounds]);
    assert_eq!(report.allocators()[0].budget, Some(100));
    sounds.give_back(100);
    sounds.give_back(0);
}

#[test]
fn the_budget_is_applied_on_first_shared_access_too() {
    let scratch = Tracked::new(Bump::new(1000), "scratch", Audio).with_budget(Budget::fail(64));
    assert_eq!(scratch.try_bump(64), Ok(0));
    let e = over_budget(scratch.try_bump(1).unwrap_err());
    assert_eq!((e.allocator, e.current, e.requested), ("scratch", 64, 1));
    assert_eq!(scratch.usage().current, 64);
}

#[test]
fn replacing_the_allocator_through_deref_mut_keeps_the_budget() {
    let mut sounds =
        Tracked::new(Blocks::new(1000), "sound bank", Audio).with_budget(Budget::fail(100));
    sounds.take(90);
    sounds.give_back(90);
    *sounds = Blocks::new(1000); // no budget of its own
    let e = over_budget(sounds.try_take(150).unwrap_err());
    assert_eq!((e.allocator, e.budget), ("sound bank", 100));
    assert_eq!(sounds.usage().current, 0);

    // Through `&self` allocation: the next shared access restores it.
    let mut scratch = Tracked::new(Bump::new(1000), "scratch", Audio).with_budget(Budget::fail(64));
    *scratch = Bump::new(1000);
    let e = over_budget(scratch.try_bump(65).unwrap_err());
    assert_eq!((e.allocator, e.budget), ("scratch", 64));

    // A budget changed on the allocator directly: the wrapper's is put back.
    Budgeted::set_budget(&mut *sounds, None);
    assert!(sounds.try_take(150).is_err());
    Budgeted::set_budget(&mut *sounds, Some(Budget::fail(10_000).into()));
    assert!(sounds.try_take(150).is_err());
}

#[test]
fn set_budget_none_removes_it_from_the_allocator() {
    let mut sounds =
        Tracked::new(Blocks::new(1000), "sound bank", Audio).with_budget(Budget::fail(10));
    assert!(sounds.try_take(20).is_err());
    sounds.set_budget(None);
    assert_eq!(sounds.budget(), None);
    sounds.try_take(20).unwrap();
    assert_eq!(sounds.allocator().budget(), None);
    sounds.give_back(20);
}

#[test]
fn a_budget_given_before_wrapping_is_left_alone() {
    let mut blocks = Blocks::new(1000);
    blocks.set_budget(Some(Budget::fail(10).into()));
    let mut sounds = Tracked::new(blocks, "sound bank", Audio);
    assert_eq!(sounds.budget(), None);
    let e = over_budget(sounds.try_take(20).unwrap_err());
    assert_eq!(e.allocator, Owner::UNNAMED.allocator);
    // ... and stays with the allocator when unwrapped.
    assert!(sounds.into_inner().budget().is_some());
}

#[test]
fn warn_policy_warns_once_per_crossing_and_rearms_after_a_free() {
    let ((), records) = logged(|| {
        let mut sounds =
            Tracked::new(Blocks::new(1000), "sound bank", Audio).with_budget(Budget::warn(100));
        sounds.take(60);
        sounds.take(50); // over: warns, and is allowed
        sounds.take(10); // still over: no second warning
        assert_eq!(sounds.usage().current, 120);
        sounds.give_back(50);
        sounds.give_back(10); // back to 60: armed again
        sounds.take(50); // warns again
        sounds.give_back(50);
        sounds.give_back(60);
    });
    if LOGS {
        assert_eq!(records.len(), 2, "{records:?}");
        for (level, target, text) in &records {
            assert_eq!(
                (*level, target.as_str()),
                (log::Level::Warn, "arena_kit::budget")
            );
            assert!(text.contains("`sound bank` (tag Audio)"), "{text}");
            assert!(text.contains("budget of 100 bytes"), "{text}");
        }
    } else {
        assert!(records.is_empty());
    }
}

#[test]
fn panic_policy_panics_with_the_budget_text() {
    let mut sounds =
        Tracked::new(Blocks::new(1000), "sound bank", Audio).with_budget(Budget::panic(64));
    sounds.take(64);
    let err = catch_unwind(AssertUnwindSafe(|| {
        let _ = sounds.try_take(1);
    }))
    .unwrap_err();
    let text = err.downcast_ref::<String>().unwrap();
    assert!(text.contains("`sound bank` (tag Audio)"), "{text}");
    assert!(text.contains("budget of 64 bytes"), "{text}");
    assert_eq!(sounds.usage().current, 64, "nothing was taken");
    sounds.give_back(64);
}

#[test]
fn leaks_are_reported_on_drop_unless_forgiven_or_unwrapped() {
    let ((), records) = logged(|| {
        let mut sounds = Tracked::new(Blocks::new(1000), "sound bank", Audio);
        sounds.take(24);
        sounds.take(8);
        assert_eq!(sounds.leak().unwrap().count, 2);
    });
    if arena_kit_core::poison::ENABLED && LOGS {
        assert_eq!(records.len(), 1, "{records:?}");
        let (level, target, text) = &records[0];
        assert_eq!(
            (*level, target.as_str()),
            (log::Level::Error, "arena_kit::leak")
        );
        assert!(
            text.contains(
                "`sound bank` (tag Audio) was dropped with 2 live allocation(s), 32 bytes"
            ),
            "{text}"
        );
    } else {
        assert!(records.is_empty(), "{records:?}");
    }

    let (blocks, quiet) = logged(|| {
        let mut forgiven = Tracked::new(Blocks::new(100), "level", Audio).forgive_leaks();
        forgiven.take(1);
        let mut toggled = Tracked::new(Blocks::new(100), "toggled", Audio);
        toggled.set_forgive_leaks(true);
        toggled.take(1);
        let arena_like = Tracked::new(Bump::new(100), "frame", Audio);
        arena_like.try_bump(8).unwrap();
        assert!(
            arena_like.leak().is_none(),
            "values that die together are no leak"
        );
        let mut unwrapped =
            Tracked::new(Blocks::new(100), "handed on", Audio).with_budget(Budget::fail(50));
        unwrapped.take(30);
        unwrapped.into_inner()
    });
    assert!(quiet.is_empty(), "{quiet:?}");
    // The allocator comes back with its values and without the wrapper's budget.
    assert_eq!((blocks.used, blocks.live), (30, 1));
    assert_eq!(blocks.budget(), None);
}

#[test]
fn debug_shows_the_labels_and_the_counters() {
    let sounds = Tracked::new(Blocks::new(1000), "sound bank", Audio)
        .with_budget(Budget::fail(100))
        .forgive_leaks();
    let text = format!("{sounds:?}");
    assert!(
        text.starts_with("Tracked { name: \"sound bank\", tag: Audio"),
        "{text}"
    );
    assert!(text.contains("bytes: 100"), "{text}");
}
