//! Report sinks that re-enter the allocator whose `Warn` budget they are handling, for every
//! allocator that can carry a budget: the arena (and a frame of a frame arena), the heap cell,
//! the pools, the SoA containers and the heaps used through `&mut`. A sink may allocate from the
//! allocator, free into it, read it, change its budget, or panic; the allocator must stay
//! consistent (no block handed out twice, none leaked, the budget as last set) and nothing may
//! hang. Also: sinks replaced or removed from inside the sink, and a tag whose `==` opens a
//! scope while the tagging allocator claims a slot.
//!
//! Its own binary: the report sink and the tag slots are process-wide. Tests that set the sink
//! take turns, and each runs its body on a thread of its own with a time limit, so a deadlock
//! fails the test instead of hanging the run.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use arena_kit_core::arena::{Arena, Frame, FrameArena};
use arena_kit_core::pool::Pool;
use arena_kit_core::tags::{
    Budget, BudgetGate, Budgeted, Event, MemoryUsage, Owner, Policy, Tracked, set_report_sink,
};

/// The sink is process-wide: tests that set it take turns.
static SINK_TESTS: Mutex<()> = Mutex::new(());

fn turn() -> MutexGuard<'static, ()> {
    SINK_TESTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long a test body may take before it counts as hung. Miri's clock is virtual (it advances
/// with the instructions run), so its limit is far from anything a correct run reaches.
const LIMIT: Duration = Duration::from_secs(if cfg!(miri) { 3600 } else { 20 });

/// Runs `f` on a thread of its own; fails if it has not finished within [`LIMIT`] (a thread that
/// hangs is left behind: it cannot be stopped), and passes its panic on.
fn within<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    struct Done(mpsc::Sender<()>);
    impl Drop for Done {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _done = Done(tx);
        f()
    });
    match rx.recv_timeout(LIMIT) {
        Ok(()) => handle.join().unwrap_or_else(|p| resume_unwind(p)),
        Err(_) => panic!("{what}: still running after {LIMIT:?}: a deadlock"),
    }
}

thread_local! {
    /// The events this thread's sink received.
    static SEEN: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
    /// What the sink does after recording the event.
    static ACTION: Cell<Option<fn(&Event)>> = const { Cell::new(None) };
}

/// The report sink of every test here: records the event, then runs this thread's action.
fn dispatch(event: &Event) {
    SEEN.with(|s| s.borrow_mut().push(*event));
    if let Some(action) = ACTION.with(Cell::get) {
        action(event);
    }
}

/// Takes the sink off (also when a test fails half-way).
struct SinkOff;

impl Drop for SinkOff {
    fn drop(&mut self) {
        set_report_sink(None);
        ACTION.with(|a| a.set(None));
    }
}

/// Sets [`dispatch`] as the sink with `action`, until the guard is dropped.
fn sink(action: fn(&Event)) -> SinkOff {
    ACTION.with(|a| a.set(Some(action)));
    SEEN.with(|s| s.borrow_mut().clear());
    set_report_sink(Some(dispatch));
    SinkOff
}

fn take_seen() -> Vec<Event> {
    SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

/// The number of budget warnings in `events`.
fn warnings(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Budget(_)))
        .count()
}

/// Whether `[a, a + a_len)` and `[b, b + b_len)` share a byte.
fn overlap(a: usize, a_len: usize, b: usize, b_len: usize) -> bool {
    a < b + b_len && b < a + a_len
}

fn panicking_sink(_: &Event) {
    panic!("the sink panicked");
}

// --- arenas: allocation through `&self`, so the sink can reach the very arena ---

thread_local! {
    static ARENA: RefCell<Option<Tracked<Arena, &'static str>>> = const { RefCell::new(None) };
    /// Blocks the sink allocated: (address, bytes).
    static SINK_BLOCKS: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
    /// `used()` as the sink saw it.
    static USED_IN_SINK: Cell<Option<usize>> = const { Cell::new(None) };
    /// Whether the sink fills the rest of the page (a chained arena then takes a new one).
    static FILL: Cell<bool> = const { Cell::new(false) };
}

fn with_arena<R>(f: impl FnOnce(&Tracked<Arena, &'static str>) -> R) -> R {
    ARENA.with(|a| f(a.borrow().as_ref().expect("the test put an arena in")))
}

/// Reads the arena, allocates a small block, a block that fills the rest of the page (if
/// [`FILL`] says so), and a value it gives back through the `Allocator` impl (the newest block, so its bytes return):
/// each of them from the arena whose budget warned, while its allocation is under way.
fn use_the_arena(_: &Event) {
    with_arena(|a| {
        USED_IN_SINK.with(|u| u.set(Some(a.used())));
        let _ = a.usage();
        let small = a.alloc([0x5Au8; 24]);
        let small = (small.as_ptr() as usize, 24);
        // Most of what is left in the page: the caller's request no longer fits there.
        let rest = a.remaining().saturating_sub(8);
        let mut blocks = vec![small];
        if FILL.with(Cell::get)
            && rest > 0
            && let Ok(p) = a.try_alloc_layout(std::alloc::Layout::from_size_align(rest, 1).unwrap())
        {
            blocks.push((p.as_ptr() as usize, rest));
        }
        #[cfg(feature = "allocator-api2")]
        {
            let arena: &Arena = a;
            let given_back = allocator_api2::boxed::Box::new_in([1u64; 4], arena);
            drop(given_back);
        }
        SINK_BLOCKS.with(|b| b.borrow_mut().extend(blocks));
    });
}

/// A sink that allocates, fills the page and gives a block back, in the arena whose `Warn`
/// budget it is handling, both when the request fits its page (only the budget clamp sent it to
/// the slow path) and when it needs a new page: the request gets bytes of its own, the sink was
/// called once, and the arena goes on (a reset re-arms the budget, the next crossing warns).
#[test]
fn an_arena_sink_that_allocates_fills_and_frees_gets_other_bytes() {
    let _turn = turn();
    within("arena sink", || {
        for chained in [false, true] {
            let arena = if chained {
                Arena::chained(1024)
            } else {
                Arena::with_capacity(4096)
            };
            let arena = Tracked::new(arena, "particles", "FX").with_budget(Budget::warn(256));
            ARENA.with(|a| *a.borrow_mut() = Some(arena));
            SINK_BLOCKS.with(|b| b.borrow_mut().clear());
            FILL.with(|f| f.set(chained));
            let _off = sink(use_the_arena);
            with_arena(|a| {
                a.alloc([0u8; 200]);
            });
            // Crosses the budget (200 + 100 > 256): the sink runs inside this call.
            let outer = with_arena(|a| {
                let v = a.alloc([7u8; 100]);
                (v.as_ptr() as usize, v.len())
            });
            let seen = take_seen();
            assert_eq!(warnings(&seen), 1, "chained {chained}: {seen:?}");
            assert_eq!(USED_IN_SINK.with(Cell::get), Some(200));
            for (at, len) in SINK_BLOCKS.with(|b| b.borrow().clone()) {
                assert!(
                    !overlap(outer.0, outer.1, at, len),
                    "chained {chained}: the request {outer:x?} overlaps the sink's block {at:#x}+{len}"
                );
            }
            // The arena keeps working, and a reset re-arms the warning.
            let mut arena = ARENA.with(|a| a.borrow_mut().take()).unwrap();
            assert!(arena.used() >= 200 + 24 + 100);
            arena.reset();
            ARENA.with(|a| *a.borrow_mut() = Some(arena));
            let _off = sink(|_| {});
            with_arena(|a| {
                a.alloc([0u8; 300]);
            });
            assert_eq!(warnings(&take_seen()), 1, "chained {chained}: warns again");
            drop(_off);
            ARENA.with(|a| a.borrow_mut().take());
        }
    });
}

thread_local! {
    static PLAIN: RefCell<Option<Arena>> = const { RefCell::new(None) };
}

const RAISED: usize = 128;

/// The gate the sink puts on: a `Fail` budget of [`RAISED`] bytes.
fn raised_gate() -> BudgetGate {
    BudgetGate::new(Budget::fail(RAISED), Owner::new("scratch", "AI")).stamped()
}

/// Changes the budget of the arena whose warning this is, through `&Arena`
/// ([`Budgeted::restore_budget`], the one way to set an arena's budget through a shared
/// reference).
fn tighten_the_budget(_: &Event) {
    PLAIN.with(|a| {
        let arena = a.borrow();
        let arena = arena.as_ref().unwrap();
        arena.restore_budget(&raised_gate());
        assert_eq!(arena.budget().unwrap().budget(), Budget::fail(RAISED));
    });
}

/// A sink that handles a warning by changing the arena's budget (through `&Arena`, which is
/// what `Budgeted::restore_budget` takes): the budget it set is the one in force afterwards,
/// and a request over it is refused. (The slow path kept a copy of the old gate while the sink
/// ran and wrote it back afterwards: the `Fail` budget was gone, while the arena's budget stamp
/// still named it, so putting the same gate on again did nothing.)
#[test]
fn a_budget_the_sink_sets_on_the_arena_is_the_one_in_force_afterwards() {
    let _turn = turn();
    within("budget set in the sink", || {
        let mut arena = Arena::with_capacity(4096);
        arena.set_budget(Some(Budget::warn(64).into()));
        PLAIN.with(|a| *a.borrow_mut() = Some(arena));
        let _off = sink(tighten_the_budget);
        PLAIN.with(|a| {
            a.borrow().as_ref().unwrap().alloc([0u8; 100]); // crosses 64: the sink runs
        });
        drop(_off);
        assert_eq!(warnings(&take_seen()), 1);
        PLAIN.with(|a| {
            let arena = a.borrow();
            let arena = arena.as_ref().unwrap();
            let gate = arena.budget().expect("a budget");
            assert_eq!(
                gate.budget(),
                Budget::fail(RAISED),
                "the budget the sink set was overwritten by the one it replaced"
            );
            assert!(
                arena.try_alloc([0u8; 100]).is_err(),
                "200 bytes in use are over the sink's Fail budget of {RAISED}"
            );
        });
        PLAIN.with(|a| a.borrow_mut().take());
    });
}

/// Puts a new `Warn` budget of 16 bytes on the arena, below what it holds: every request
/// crosses it.
fn lower_the_budget(_: &Event) {
    PLAIN.with(|a| {
        let arena = a.borrow();
        let gate = BudgetGate::new(Budget::warn(16), Owner::new("scratch", "AI")).stamped();
        arena.as_ref().unwrap().restore_budget(&gate);
    });
}

/// Allocates a block from the arena and gives it back (the newest block: its bytes return, and
/// usage falls back under the budget, which re-arms it).
#[cfg(feature = "allocator-api2")]
fn allocate_and_give_back(_: &Event) {
    PLAIN.with(|a| {
        let arena = a.borrow();
        let arena: &Arena = arena.as_ref().unwrap();
        drop(allocator_api2::boxed::Box::new_in([1u64; 2], arena));
    });
}

/// Sinks that undo the warning's effect, for a request that fits its page (only the budget
/// clamp sent it to the slow path, which places it again after the sink): one that frees back
/// under the budget, re-arming it, and one that puts on a new `Warn` budget the request
/// crosses. The request must finish, warning once: its retry may not call the sink again
/// (each call would undo the lift again, and the request never finish).
#[test]
fn a_sink_that_rearms_the_budget_lets_the_request_finish_warning_once() {
    let _turn = turn();
    within("a sink that re-arms", || {
        type Action = (&'static str, fn(&Event));
        let mut sinks: Vec<Action> = vec![("lower the budget", lower_the_budget)];
        #[cfg(feature = "allocator-api2")]
        sinks.push(("give a block back", allocate_and_give_back));
        for (what, action) in sinks {
            let mut arena = Arena::with_capacity(4096);
            arena.set_budget(Some(Budget::warn(64).into()));
            PLAIN.with(|a| *a.borrow_mut() = Some(arena));
            PLAIN.with(|a| {
                a.borrow().as_ref().unwrap().alloc([0u8; 40]);
            });
            let _off = sink(action);
            let v = PLAIN.with(|a| {
                let arena = a.borrow();
                let v = arena.as_ref().unwrap().alloc([9u8; 40]); // 80 > 64: the sink runs
                (v[0], v[39])
            });
            drop(_off);
            assert_eq!(v, (9, 9), "{what}");
            assert_eq!(warnings(&take_seen()), 1, "{what}: one warning");
            PLAIN.with(|a| {
                let arena = a.borrow();
                let arena = arena.as_ref().unwrap();
                assert_eq!(arena.used(), 80, "{what}");
                if what == "lower the budget" {
                    assert_eq!(arena.budget().unwrap().budget(), Budget::warn(16));
                }
            });
            PLAIN.with(|a| a.borrow_mut().take());
        }
    });
}

// --- a frame of a frame arena ---

thread_local! {
    /// The buffer of the frame in progress.
    static FRAME_BUFFER: Cell<Option<&'static Arena>> = const { Cell::new(None) };
    static FRAME_SINK_BLOCK: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

fn use_the_frame_buffer(_: &Event) {
    let Some(buffer) = FRAME_BUFFER.with(Cell::get) else {
        return;
    };
    let _ = buffer.usage();
    let v = buffer.alloc([3u8; 40]);
    FRAME_SINK_BLOCK.with(|b| b.set(Some((v.as_ptr() as usize, 40))));
}

/// The same for a frame: the sink allocates from the buffer of the frame whose (per-buffer)
/// budget warned, while the frame's allocation is under way.
#[test]
fn a_frame_sink_that_allocates_from_the_frame_gets_other_bytes() {
    let _turn = turn();
    within("frame sink", || {
        let mut frames = FrameArena::<2>::with_capacity(2048);
        frames.set_budget(Some(Budget::warn(64).into()));
        let raw = Box::into_raw(Box::new(frames));
        {
            // SAFETY: `raw` is a live box, freed only at the end, after the frame's (which
            // borrows it) last use, once `FRAME_BUFFER` no longer refers to it; the sink needs
            // the buffer for `'static`.
            let frames: &'static mut FrameArena<2> = unsafe { &mut *raw };
            let frame: Frame<'static> = frames.begin_frame();
            FRAME_BUFFER.with(|b| b.set(Some(frame.arena())));
            FRAME_SINK_BLOCK.with(|b| b.set(None));
            let _off = sink(use_the_frame_buffer);
            frame.alloc([0u8; 48]);
            let outer = frame.alloc([9u8; 32]); // 80 > 64
            let outer = (outer.as_ptr() as usize, outer.len());
            drop(_off);
            assert_eq!(warnings(&take_seen()), 1);
            let (at, len) = FRAME_SINK_BLOCK
                .with(Cell::get)
                .expect("the sink allocated");
            assert!(!overlap(outer.0, outer.1, at, len), "{outer:x?} vs {at:#x}");
            assert_eq!(frame.used(), 48 + 40 + 32);
            FRAME_BUFFER.with(|b| b.set(None));
        }
        // SAFETY: from `Box::into_raw` above; the frame's last use is above and nothing refers
        // to the frame arena any more.
        drop(unsafe { Box::from_raw(raw) });
    });
}

// --- the heap cell: the warning is raised after the heap operation ---

/// A heap cell over 8 KiB with a `Warn` budget of `budget` bytes.
#[cfg(feature = "allocator-api2")]
fn cell(budget: usize) -> arena_kit_core::heap::HeapCell<'static> {
    let mut heap = arena_kit_core::heap::FreeListHeap::with_capacity(8192);
    heap.set_budget(Some(Budget::warn(budget).into()));
    arena_kit_core::heap::HeapCell::new(heap)
}

#[cfg(feature = "allocator-api2")]
mod heap_cell {
    use super::*;
    use allocator_api2::boxed::Box as HeapBox;
    use allocator_api2::vec::Vec as HeapVec;
    use arena_kit_core::heap::HeapCell;

    /// A sink that panics while a heap cell allocates over its `Warn` budget: the panic leaves
    /// the call and nothing stays allocated (the sink's docs: the allocation is not made, the
    /// allocator is as it was). The cell raised the warning after the allocation was made and
    /// the heap released, so the panic skipped handing the block out: it stayed live, owned by
    /// nobody.
    #[test]
    fn a_panicking_sink_leaves_no_heap_cell_block_behind() {
        let _turn = turn();
        within("heap cell allocate", || {
            let cell = cell(64);
            let held = HeapBox::new_in([1u8; 48], &cell);
            let before = cell.stats();
            let _off = sink(panicking_sink);
            let caught = catch_unwind(AssertUnwindSafe(|| HeapBox::new_in([2u8; 200], &cell)));
            drop(_off);
            assert!(caught.is_err(), "the sink's panic leaves the call");
            assert_eq!(warnings(&take_seen()), 1);
            let after = cell.stats();
            assert_eq!(
                (after.live_blocks, after.used),
                (before.live_blocks, before.used),
                "a block no one owns stayed allocated"
            );
            cell.check().unwrap();
            drop(held);
        });
    }

    /// A sink that panics while a heap cell grows a vector over its `Warn` budget, the block
    /// moving (a neighbour keeps it from growing in place). The vector keeps its old block when
    /// `grow` unwinds, so that block must still be its own: nothing else may be handed it. (The
    /// cell raised the warning after the move, with the old block already freed: the vector
    /// kept a freed block, the next allocation was handed the same bytes, and writing one
    /// changed the other; dropping the vector then freed a block it did not own.)
    #[test]
    fn a_panicking_sink_during_a_heap_cell_grow_leaves_the_vector_its_block() {
        let _turn = turn();
        within("heap cell grow", || {
            let cell = cell(128);
            let mut v: HeapVec<u64, &HeapCell<'static>> = HeapVec::with_capacity_in(4, &cell);
            v.extend([1, 2, 3, 4]);
            // Right after the vector's block: it cannot grow in place.
            let neighbour = HeapBox::new_in([0u64; 4], &cell);
            let before = cell.stats();
            let _off = sink(panicking_sink);
            let caught = catch_unwind(AssertUnwindSafe(|| v.reserve(60)));
            drop(_off);
            assert!(caught.is_err(), "the sink's panic leaves the call");
            assert_eq!(warnings(&take_seen()), 1);
            assert_eq!(v.capacity(), 4, "the vector kept its old block");
            // With the bug the vector's block is freed: dropping it would free it again (a
            // failed debug assertion while unwinding, which aborts). Check first, and keep the
            // vector out of the unwinding if a check fails.
            let after = cell.stats();
            let kept = (after.live_blocks, after.used) == (before.live_blocks, before.used);
            // A block the size of the vector's: it must not be the vector's.
            let other = HeapBox::new_in([0xEEEE_EEEE_EEEE_EEEEu64; 4], &cell);
            let v_at = v.as_ptr() as usize;
            let other_at = &*other as *const [u64; 4] as usize;
            let apart = !overlap(v_at, 32, other_at, 32);
            let intact = v[..] == [1, 2, 3, 4];
            if !(kept && apart && intact) {
                std::mem::forget(v);
                panic!(
                    "the heap changed under the vector: {before:?} became {after:?} (kept \
                     {kept}); the vector's block {v_at:#x} handed out again at {other_at:#x} \
                     ({}); its values intact: {intact}",
                    !apart
                );
            }
            cell.check().unwrap();
            drop((v, neighbour, other));
            assert_eq!(cell.stats().live_blocks, 0);
        });
    }

    thread_local! {
        static CELL: Cell<Option<&'static HeapCell<'static>>> = const { Cell::new(None) };
        static LIVE_IN_SINK: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// Reads the cell, checks it, and allocates and frees a block in it.
    fn use_the_cell(_: &Event) {
        let Some(cell) = CELL.with(Cell::get) else {
            return;
        };
        LIVE_IN_SINK.with(|l| l.set(Some(cell.stats().live_blocks)));
        cell.check().unwrap();
        let b = HeapBox::new_in([5u8; 24], cell);
        assert_eq!(b[23], 5);
        drop(b);
    }

    /// A vector in a heap cell that grows over its `Warn` budget, moving: the sink reads,
    /// checks, allocates from and frees into the cell, and the vector ends up with its values
    /// in a block of its own.
    #[test]
    fn a_sink_that_uses_the_heap_cell_during_a_grow_that_moves() {
        let _turn = turn();
        within("heap cell grow, sink uses the cell", || {
            let raw = Box::into_raw(Box::new(cell(128)));
            {
                // SAFETY: `raw` is a live box, freed below once the vector and boxes in it are
                // dropped and `CELL` no longer refers to it; the sink needs it for `'static`.
                let cell: &'static HeapCell<'static> = unsafe { &*raw };
                CELL.with(|c| c.set(Some(cell)));
                let mut v: HeapVec<u64, _> = HeapVec::with_capacity_in(4, cell);
                v.extend([1, 2, 3, 4]);
                let neighbour = HeapBox::new_in([0u64; 4], cell);
                let _off = sink(use_the_cell);
                v.extend(5..=40);
                drop(_off);
                CELL.with(|c| c.set(None));
                assert_eq!(warnings(&take_seen()), 1);
                // The warning comes from the new block: the old one is freed only once the
                // values are copied over, so the sink sees both, and the neighbour.
                assert_eq!(
                    LIVE_IN_SINK.with(Cell::get),
                    Some(3),
                    "the vector's old and new blocks, neighbour"
                );
                assert!(v.iter().copied().eq(1..=40));
                assert_eq!(cell.stats().live_blocks, 2);
                cell.check().unwrap();
                drop((v, neighbour));
                assert_eq!(cell.stats().live_blocks, 0);
            }
            // SAFETY: from `Box::into_raw`; nothing refers to the cell any more.
            drop(unsafe { Box::from_raw(raw) });
        });
    }
}

// --- the heap cell, growing in place: a panicking sink's undo shrinks the block back ---

#[cfg(feature = "allocator-api2")]
mod heap_cell_in_place {
    use super::*;
    use allocator_api2::boxed::Box as HeapBox;
    use allocator_api2::vec::Vec as HeapVec;
    use arena_kit_core::heap::HeapCell;

    thread_local! {
        static CELL: Cell<Option<&'static HeapCell<'static>>> = const { Cell::new(None) };
        /// Blocks the sink allocated and kept: (address, bytes), freed by the test.
        static KEPT: RefCell<Vec<HeapBox<[u8; 40], &'static HeapCell<'static>>>> =
            const { RefCell::new(Vec::new()) };
    }

    /// Allocates a block through the cell and keeps it (it may land right past the block being
    /// grown in place), then panics.
    fn keep_a_block_then_panic(_: &Event) {
        if let Some(cell) = CELL.with(Cell::get) {
            let b = HeapBox::new_in([0x5Au8; 40], cell);
            KEPT.with(|k| k.borrow_mut().push(b));
        }
        panic!("the sink panicked after allocating");
    }

    /// A vector grown in place over a `Warn` budget whose sink allocates from the same cell,
    /// then panics: the vector keeps its old capacity and block, the heap takes the grown
    /// tail back, the sink's block is the sink's (apart from the vector's), and the vector can
    /// still grow and be freed.
    #[test]
    fn a_panicking_sink_during_an_in_place_grow_leaves_the_vector_and_the_heap_whole() {
        let _turn = turn();
        within(
            "heap cell in-place grow, sink allocates then panics",
            || {
                let raw = Box::into_raw(Box::new(cell(128)));
                {
                    // SAFETY: `raw` is a live box, freed below once nothing in it or naming it is
                    // left; the sink needs it for `'static`.
                    let cell: &'static HeapCell<'static> = unsafe { &*raw };
                    CELL.with(|c| c.set(Some(cell)));
                    // Alone in the heap: it grows in place.
                    let mut v: HeapVec<u64, _> = HeapVec::with_capacity_in(4, cell);
                    v.extend([1, 2, 3, 4]);
                    let at = v.as_ptr() as usize;
                    let before = cell.stats();
                    let _off = sink(keep_a_block_then_panic);
                    let caught = catch_unwind(AssertUnwindSafe(|| v.reserve(40)));
                    drop(_off);
                    assert!(caught.is_err(), "the sink's panic leaves the call");
                    assert_eq!(warnings(&take_seen()), 1);
                    assert_eq!((v.capacity(), v.as_ptr() as usize), (4, at));
                    assert_eq!(v[..], [1, 2, 3, 4]);
                    cell.check().unwrap();
                    let kept: Vec<usize> = KEPT.with(|k| {
                        k.borrow()
                            .iter()
                            .map(|b| &**b as *const [u8; 40] as usize)
                            .collect()
                    });
                    for &b in &kept {
                        assert!(!overlap(at, 32, b, 40), "the sink's block is apart");
                    }
                    assert_eq!(
                        cell.stats().live_blocks,
                        before.live_blocks + kept.len(),
                        "the vector's block and the sink's, nothing more"
                    );
                    // Other blocks the size of the grown tail do not land on the vector.
                    let others: Vec<_> = (0..4)
                        .map(|i| HeapBox::new_in([i as u64; 8], cell))
                        .collect();
                    for o in &others {
                        assert!(!overlap(at, 32, &**o as *const [u64; 8] as usize, 64));
                    }
                    v.extend(5..=12);
                    assert!(v.iter().copied().eq(1..=12));
                    KEPT.with(|k| {
                        for b in k.borrow_mut().drain(..) {
                            assert!(b.iter().all(|&x| x == 0x5A));
                        }
                    });
                    drop((v, others));
                    cell.check().unwrap();
                    assert_eq!(cell.stats().live_blocks, 0);
                    CELL.with(|c| c.set(None));
                }
                // SAFETY: from `Box::into_raw`; nothing refers to the cell any more.
                drop(unsafe { Box::from_raw(raw) });
            },
        );
    }
}

// --- allocators used through `&mut`: the sink cannot reach them, but may panic ---

thread_local! {
    static DROPS: Cell<usize> = const { Cell::new(0) };
    /// Whether the sink found the allocator borrowed (it always should: the caller holds it).
    static BUSY_IN_SINK: Cell<Option<bool>> = const { Cell::new(None) };
}

/// A value that counts its drops.
#[derive(Debug)]
struct Counted(#[allow(dead_code)] u64);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.with(|d| d.set(d.get() + 1));
    }
}

fn drops() -> usize {
    DROPS.with(Cell::get)
}

/// A row of the SoA containers: one field that counts its drops.
#[derive(Debug, arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core)]
struct Row {
    x: u64,
    c: Counted,
}

fn row(i: u64) -> Row {
    Row {
        x: i,
        c: Counted(i),
    }
}

thread_local! {
    static POOL: RefCell<Option<Tracked<Pool<Counted>, &'static str>>> = const { RefCell::new(None) };
}

/// Tries to reach the pool (borrowed by the caller), then panics.
fn reach_the_pool_then_panic(_: &Event) {
    BUSY_IN_SINK.with(|b| b.set(Some(POOL.with(|p| p.try_borrow().is_err()))));
    panic!("the sink panicked");
}

/// A pool insert over a `Warn` budget whose sink panics: the value is dropped once (not kept,
/// not dropped twice), the pool keeps its values and counts, the next crossing warns again and
/// goes ahead, and every value is dropped exactly once in the end. Tried with `insert`,
/// `try_insert` and `insert_with` (whose closure must not run).
#[test]
fn a_panicking_sink_during_a_pool_insert_drops_the_value_once() {
    let _turn = turn();
    within("pool", || {
        type Insert = fn(&mut Tracked<Pool<Counted>, &'static str>);
        let insert: Insert = |p| {
            p.insert(Counted(100));
        };
        let try_insert: Insert = |p| {
            let _ = p.try_insert(Counted(100));
        };
        let insert_with: Insert = |p| {
            p.insert_with(|_| panic!("insert_with's closure ran before the budget's policy"));
        };
        for (name, over) in [
            ("insert", insert),
            ("try_insert", try_insert),
            ("insert_with", insert_with),
        ] {
            DROPS.with(|d| d.set(0));
            let pool = Tracked::new(Pool::with_capacity(16), "bodies", "Physics")
                .with_budget(Budget::warn(4 * 8));
            POOL.with(|p| *p.borrow_mut() = Some(pool));
            POOL.with(|p| {
                let mut p = p.borrow_mut();
                let p = p.as_mut().unwrap();
                for i in 0..4 {
                    p.insert(Counted(i));
                }
            });
            let before = POOL.with(|p| p.borrow().as_ref().unwrap().usage());
            let off = sink(reach_the_pool_then_panic);
            let caught = catch_unwind(AssertUnwindSafe(|| {
                POOL.with(|p| over(p.borrow_mut().as_mut().unwrap()));
            }));
            drop(off);
            assert!(caught.is_err(), "{name}: the sink's panic leaves the call");
            assert_eq!(warnings(&take_seen()), 1, "{name}");
            assert_eq!(BUSY_IN_SINK.with(Cell::get), Some(true), "{name}");
            let dropped = if name == "insert_with" { 0 } else { 1 };
            assert_eq!(
                drops(),
                dropped,
                "{name}: the refused value is dropped once"
            );
            POOL.with(|p| {
                let mut p = p.borrow_mut();
                let p = p.as_mut().unwrap();
                assert_eq!(p.usage(), before, "{name}");
                assert_eq!(p.len(), 4, "{name}");
                // The next crossing warns again (a sink that records only) and goes ahead.
                let _off = sink(|_| {});
                let h = p.insert(Counted(5));
                drop(_off);
                assert_eq!(warnings(&take_seen()), 1, "{name}: the next crossing warns");
                assert_eq!(p.get(h).map(|c| c.0), Some(5));
                p.clear();
            });
            POOL.with(|p| p.borrow_mut().take());
            assert_eq!(
                drops(),
                dropped + 5,
                "{name}: each value dropped exactly once"
            );
        }
    });
}

/// The same for the SoA containers (`SoaPool::insert`, `SoaVec::push`): a panicking sink drops
/// the row's fields once, and the container is unchanged.
#[test]
fn a_panicking_sink_during_a_soa_insert_drops_the_row_once() {
    use arena_kit_core::soa::{SoaPool, SoaVec};
    let _turn = turn();
    within("soa", || {
        let row_bytes = size_of::<Row>();
        // A growable pool (its rows grow on the slow path) and a fixed one.
        for growable in [false, true] {
            DROPS.with(|d| d.set(0));
            let mut pool = if growable {
                SoaPool::<Row>::growable(2)
            } else {
                SoaPool::<Row>::with_capacity(16)
            };
            pool.set_budget(Some(Budget::warn(3 * row_bytes).into()));
            for i in 0..3 {
                pool.insert(row(i));
            }
            let before = pool.usage();
            let off = sink(panicking_sink);
            let caught = catch_unwind(AssertUnwindSafe(|| pool.insert(row(9))));
            drop(off);
            assert!(caught.is_err());
            assert_eq!(warnings(&take_seen()), 1);
            assert_eq!(drops(), 1, "growable {growable}: the row is dropped once");
            assert_eq!((pool.len(), pool.usage()), (3, before));
            let _off = sink(|_| {});
            pool.insert(row(10));
            drop(_off);
            assert_eq!(warnings(&take_seen()), 1, "the next crossing warns again");
            assert_eq!(pool.len(), 4);
            drop(pool);
            assert_eq!(drops(), 5, "growable {growable}: every row dropped once");
        }
        DROPS.with(|d| d.set(0));
        let mut rows = SoaVec::<Row>::new();
        rows.set_budget(Some(Budget::warn(3 * row_bytes).into()));
        for i in 0..3 {
            rows.push(row(i));
        }
        let before = rows.usage();
        let off = sink(panicking_sink);
        let caught = catch_unwind(AssertUnwindSafe(|| rows.push(row(9))));
        drop(off);
        assert!(caught.is_err());
        assert_eq!(warnings(&take_seen()), 1);
        assert_eq!(drops(), 1);
        assert_eq!((rows.len(), rows.usage()), (3, before));
        let _off = sink(|_| {});
        rows.push(row(10));
        drop(_off);
        assert_eq!(warnings(&take_seen()), 1);
        drop(rows);
        assert_eq!(drops(), 5);
    });
}

/// A free-list heap (and a guarded one) used directly raises its warning where it is crossed:
/// a panicking sink leaves the heap as it was (same blocks, consistent), for an allocation and
/// for a reallocation that must move, and the next crossing warns again.
#[test]
fn a_panicking_sink_leaves_a_heap_used_through_mut_as_it_was() {
    use arena_kit_core::heap::{FreeListHeap, GuardedHeap};
    use std::alloc::Layout;
    let _turn = turn();
    within("heaps", || {
        let small = Layout::from_size_align(32, 8).unwrap();
        let big = Layout::from_size_align(256, 8).unwrap();
        let mut heap = FreeListHeap::with_capacity(8192);
        heap.set_budget(Some(Budget::warn(128).into()));
        let a = heap.alloc(small);
        let _b = heap.alloc(small);
        let before = heap.stats();
        for moving in [false, true] {
            let off = sink(panicking_sink);
            let caught = catch_unwind(AssertUnwindSafe(|| {
                if moving {
                    heap.realloc(a, big);
                } else {
                    heap.alloc(big);
                }
            }));
            drop(off);
            assert!(caught.is_err(), "moving {moving}");
            assert_eq!(warnings(&take_seen()), 1, "moving {moving}");
            assert_eq!(heap.stats(), before, "moving {moving}");
            heap.check().unwrap();
        }
        let _off = sink(|_| {});
        heap.alloc(big);
        drop(_off);
        assert_eq!(warnings(&take_seen()), 1, "the next crossing warns");
        heap.check().unwrap();

        let mut heap = FreeListHeap::with_capacity(8192);
        heap.set_budget(Some(Budget::warn(128).into()));
        let mut guarded = GuardedHeap::new(heap);
        guarded.alloc(small);
        let before = guarded.usage();
        let off = sink(panicking_sink);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            guarded.alloc(big);
        }));
        drop(off);
        assert!(caught.is_err());
        assert_eq!(warnings(&take_seen()), 1);
        assert_eq!(guarded.usage(), before);
        guarded.check_guards().unwrap();
    });
}

// --- the sink itself: replaced or removed while it runs, events raised inside it ---

thread_local! {
    static OTHER_ARENA: RefCell<Option<Tracked<Arena, &'static str>>> = const { RefCell::new(None) };
    static SECOND_SINK_RAN: Cell<usize> = const { Cell::new(0) };
}

fn second_sink(_: &Event) {
    SECOND_SINK_RAN.with(|s| s.set(s.get() + 1));
}

/// Replaces itself with `second_sink`, and raises a warning of another arena meanwhile.
fn replace_myself(_: &Event) {
    let previous = set_report_sink(Some(second_sink));
    assert!(previous.is_some());
    OTHER_ARENA.with(|a| {
        // Crosses that arena's budget: an event raised while the sink runs goes to stderr.
        a.borrow().as_ref().unwrap().alloc([0u8; 64]);
    });
}

/// A sink that replaces itself (and raises another warning) while it runs: no deadlock on the
/// sink's lock, the nested event does not reach any sink, and the next event goes to the new
/// sink.
#[test]
fn a_sink_that_replaces_itself_while_running() {
    let _turn = turn();
    within("sink replaced in the sink", || {
        let other =
            Tracked::new(Arena::with_capacity(1024), "other", "UI").with_budget(Budget::warn(16));
        OTHER_ARENA.with(|a| *a.borrow_mut() = Some(other));
        SECOND_SINK_RAN.with(|s| s.set(0));
        let arena = Tracked::new(Arena::with_capacity(1024), "particles", "FX")
            .with_budget(Budget::warn(16));
        let _off = sink(replace_myself);
        arena.alloc([0u8; 32]);
        assert_eq!(warnings(&take_seen()), 1, "dispatch ran once");
        assert_eq!(
            SECOND_SINK_RAN.with(Cell::get),
            0,
            "the nested warning reached no sink"
        );
        // The next crossing (a new arena) reaches the sink set from inside the old one.
        let third =
            Tracked::new(Arena::with_capacity(1024), "third", "UI").with_budget(Budget::warn(16));
        third.alloc([0u8; 32]);
        assert_eq!(SECOND_SINK_RAN.with(Cell::get), 1);
        assert!(take_seen().is_empty());
        drop(_off);
        OTHER_ARENA.with(|a| a.borrow_mut().take());
    });
}

/// A tag budget's warning (`Registry::end_frame`) whose sink panics: the frame is recorded and
/// counted, and the next frame warns again (the tag was not marked as warned).
#[test]
fn a_panicking_sink_during_end_frame_leaves_the_registry_consistent() {
    use arena_kit_core::tags::Registry;
    let _turn = turn();
    within("registry", || {
        let mut registry = Registry::new();
        registry.set_budget("FX", Budget::new(64, Policy::Warn));
        let arena = Tracked::new(Arena::with_capacity(1024), "particles", "FX");
        arena.alloc([0u8; 100]);
        let off = sink(panicking_sink);
        let caught = catch_unwind(AssertUnwindSafe(|| registry.end_frame(&[&arena])));
        drop(off);
        assert!(caught.is_err());
        assert_eq!(registry.frame(), 1);
        assert_eq!(registry.history().len(), 1);
        let _off = sink(|_| {});
        registry.end_frame(&[&arena]).unwrap();
        let seen = take_seen();
        assert!(
            matches!(seen[..], [Event::TagBudget { frame: 1, .. }]),
            "{seen:?}"
        );
    });
}

/// A tracked pool dropped with live values whose leak report's sink panics: the values are
/// still dropped, each once (in builds with the leak check; others report nothing).
#[test]
fn a_panicking_leak_sink_still_drops_the_pools_values_once() {
    let _turn = turn();
    within("leak sink", || {
        DROPS.with(|d| d.set(0));
        let mut pool = Tracked::new(Pool::with_capacity(8), "bullets", "Gameplay");
        for i in 0..3 {
            pool.insert(Counted(i));
        }
        let off = sink(panicking_sink);
        let caught = catch_unwind(AssertUnwindSafe(|| drop(pool)));
        drop(off);
        let checked = cfg!(any(debug_assertions, feature = "debug-checks"));
        assert_eq!(caught.is_err(), checked);
        assert_eq!(take_seen().len(), usize::from(checked));
        assert_eq!(drops(), 3);
    });
}

// --- the tagging allocator's slot table: the one piece of user code it runs is a tag's `==` ---

/// A tag whose `==`, while armed, opens a scope of a tag of another type (one no scope has seen).
#[derive(Debug, Clone, Copy)]
struct Nosy(u8);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fresh(u32);

impl arena_kit_core::tags::Tag for Fresh {
    fn name(&self) -> &'static str {
        "fresh"
    }
}

static NOSY_ARMED: AtomicBool = AtomicBool::new(false);
/// The next `Fresh` tag: each nested scope is of a tag no scope has seen.
static NEXT_FRESH: AtomicU32 = AtomicU32::new(0);

impl PartialEq for Nosy {
    fn eq(&self, other: &Nosy) -> bool {
        if NOSY_ARMED.load(Ordering::Relaxed) {
            drop(arena_kit_core::tags::tag_scope(Fresh(
                NEXT_FRESH.fetch_add(1, Ordering::Relaxed),
            )));
        }
        self.0 == other.0
    }
}

impl Eq for Nosy {}

impl arena_kit_core::tags::Tag for Nosy {
    fn name(&self) -> &'static str {
        "nosy"
    }
}

/// A tag whose `==` opens a scope of a new tag (user code re-entering the tag table) while
/// `tag_scope` looks its own tag up and claims it a slot: both scopes are made, and nothing
/// hangs. (The claim compares tags under a spin lock, and the nested scope's claim spun on that
/// lock forever, on the thread that held it.)
#[test]
#[cfg_attr(
    miri,
    ignore = "a spin that never ends; Miri only reaches the time limit slowly"
)]
fn a_tag_whose_eq_opens_a_scope_does_not_deadlock_the_slot_table() {
    within("tag_scope inside a tag's ==", || {
        drop(arena_kit_core::tags::tag_scope(Nosy(0)));
        NOSY_ARMED.store(true, Ordering::Relaxed);
        drop(arena_kit_core::tags::tag_scope(Nosy(1)));
        NOSY_ARMED.store(false, Ordering::Relaxed);
        drop(arena_kit_core::tags::tag_scope(Nosy(2)));
    });
}

// --- attacks on the undo of a heap cell's change, and on an arena's in-place grow ---

#[cfg(feature = "allocator-api2")]
mod heap_cell_undo {
    use super::*;
    use allocator_api2::alloc::Allocator;
    use allocator_api2::boxed::Box as HeapBox;
    use allocator_api2::vec::Vec as HeapVec;
    use arena_kit_core::heap::HeapCell;
    use std::alloc::Layout;
    use std::ptr::NonNull;

    /// A vector alone in the heap grows in place (into the free space after it) over the
    /// `Warn` budget and the sink panics: the block shrinks back, the vector keeps its capacity
    /// and values, the heap is as it was, and the next crossing warns again.
    #[test]
    fn a_panicking_sink_during_an_in_place_heap_cell_grow_shrinks_the_block_back() {
        let _turn = turn();
        within("heap cell grow in place", || {
            let cell = cell(128);
            let mut v: HeapVec<u64, &HeapCell<'static>> = HeapVec::with_capacity_in(4, &cell);
            v.extend([1, 2, 3, 4]);
            let at = v.as_ptr() as usize;
            let before = cell.stats();
            let off = sink(panicking_sink);
            let caught = catch_unwind(AssertUnwindSafe(|| v.reserve_exact(36)));
            drop(off);
            assert!(caught.is_err(), "the sink's panic leaves the call");
            assert_eq!(warnings(&take_seen()), 1);
            assert_eq!((v.capacity(), v.as_ptr() as usize), (4, at));
            assert_eq!(v[..], [1, 2, 3, 4]);
            let after = cell.stats();
            assert_eq!(
                (after.live_blocks, after.used),
                (before.live_blocks, before.used),
                "the grown block shrank back"
            );
            cell.check().unwrap();
            // The bytes the block grew into are free again and not the vector's.
            let other = HeapBox::new_in([0xABu8; 64], &cell);
            let other_at = &*other as *const [u8; 64] as usize;
            assert!(!overlap(at, 32, other_at, 64));
            assert_eq!(v[..], [1, 2, 3, 4]);
            drop(other);
            // Re-armed: the next crossing warns again, and goes ahead.
            let _off = sink(|_| {});
            v.reserve_exact(36);
            drop(_off);
            assert_eq!(warnings(&take_seen()), 1, "the next crossing warns");
            assert_eq!(v[..], [1, 2, 3, 4]);
            cell.check().unwrap();
            drop(v);
            assert_eq!(cell.stats().live_blocks, 0);
        });
    }

    /// A block that a starting allocation left at an address aligned to 16 and not to 64.
    fn misaligned_block(
        cell: &HeapCell<'static>,
        size: usize,
    ) -> (Vec<NonNull<[u8]>>, NonNull<u8>) {
        let layout = Layout::from_size_align(size, 16).unwrap();
        let small = Layout::from_size_align(16, 16).unwrap();
        let mut pads = Vec::new();
        loop {
            let p = (&cell).allocate(layout).unwrap().cast::<u8>();
            if !(p.as_ptr() as usize).is_multiple_of(64) {
                return (pads, p);
            }
            // SAFETY: `p` was just allocated with `layout` from this cell.
            unsafe { (&cell).deallocate(p, layout) };
            pads.push((&cell).allocate(small).unwrap());
        }
    }

    /// A shrink to a larger alignment must move: the new block crosses the `Warn` budget and
    /// the sink panics. The old block is untouched and still the caller's, the new one freed.
    #[test]
    fn a_panicking_sink_during_a_heap_cell_shrink_that_moves_keeps_the_old_block() {
        let _turn = turn();
        within("heap cell shrink that moves", || {
            // Over 400 only once the shrink's new block is taken (at most two pads before).
            let cell = cell(400);
            let (pads, p) = misaligned_block(&cell, 256);
            assert!(pads.len() <= 2);
            // SAFETY: `p` is a live block of 256 bytes.
            unsafe { p.as_ptr().write_bytes(0x5C, 256) };
            let before = cell.stats();
            let old = Layout::from_size_align(256, 16).unwrap();
            let new = Layout::from_size_align(128, 64).unwrap();
            let off = sink(panicking_sink);
            // SAFETY: `p` is a live block of this cell that fits `old`; `new` is smaller.
            let caught = catch_unwind(AssertUnwindSafe(|| unsafe { (&cell).shrink(p, old, new) }));
            drop(off);
            assert!(caught.is_err(), "the sink's panic leaves the call");
            assert_eq!(warnings(&take_seen()), 1);
            let after = cell.stats();
            assert_eq!(
                (after.live_blocks, after.used),
                (before.live_blocks, before.used)
            );
            // SAFETY: `p` is still a live block of 256 bytes (the shrink did not finish).
            let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr(), 256) };
            assert!(bytes.iter().all(|&b| b == 0x5C));
            cell.check().unwrap();
            // SAFETY: `p` is a live block of this cell that fits `old`.
            unsafe { (&cell).deallocate(p, old) };
            for pad in pads {
                // SAFETY: each pad is a live 16-byte block of this cell.
                unsafe { (&cell).deallocate(pad.cast(), Layout::from_size_align(16, 16).unwrap()) };
            }
            assert_eq!(cell.stats().live_blocks, 0);
        });
    }

    thread_local! {
        static CELL: Cell<Option<&'static HeapCell<'static>>> = const { Cell::new(None) };
        /// A block the sink may free (its own), and the one it made.
        static HELD: RefCell<Option<HeapBox<[u8; 64], &'static HeapCell<'static>>>> = const { RefCell::new(None) };
        static MADE_IN_SINK: RefCell<Option<HeapBox<[u8; 200], &'static HeapCell<'static>>>> = const { RefCell::new(None) };
    }

    /// Reads, checks, allocates from and frees into the cell, without panicking.
    fn use_the_cell(_: &Event) {
        let Some(cell) = CELL.with(Cell::get) else {
            return;
        };
        cell.check().unwrap();
        let _ = cell.with(|heap| heap.stats());
        drop(HeapBox::new_in([9u8; 40], cell));
    }

    /// Frees the block it holds (usage falls back under the budget, re-arming it), allocates a
    /// block that crosses the budget again (a warning raised inside the sink), keeps it, then
    /// panics.
    fn free_cross_again_then_panic(_: &Event) {
        let cell = CELL.with(Cell::get).expect("the test set the cell");
        HELD.with(|h| h.borrow_mut().take());
        let big = HeapBox::new_in([0x77u8; 200], cell);
        MADE_IN_SINK.with(|m| *m.borrow_mut() = Some(big));
        let _ = cell.stats();
        panic!("the sink panicked after using the cell");
    }

    /// Runs `f` with a `'static` cell of `budget` set in [`CELL`], then frees the cell.
    fn with_static_cell(budget: usize, f: impl FnOnce(&'static HeapCell<'static>)) {
        let raw = Box::into_raw(Box::new(cell(budget)));
        {
            // SAFETY: `raw` is a live box, freed below once everything in it is dropped and
            // `CELL` no longer refers to it.
            let cell: &'static HeapCell<'static> = unsafe { &*raw };
            CELL.with(|c| c.set(Some(cell)));
            f(cell);
            CELL.with(|c| c.set(None));
            HELD.with(|h| h.borrow_mut().take());
            MADE_IN_SINK.with(|m| m.borrow_mut().take());
            assert_eq!(cell.stats().live_blocks, 0);
        }
        // SAFETY: from `Box::into_raw`; nothing refers to the cell any more.
        drop(unsafe { Box::from_raw(raw) });
    }

    /// A sink that frees, allocates over the budget again and then panics, during a grow that
    /// moves, a grow in place, and an allocation: the caller's block is its own (the values
    /// intact), the sink's block stays live (it is the sink's), nothing is freed twice and the
    /// heap is consistent.
    #[test]
    fn a_sink_that_frees_crosses_again_and_panics_leaves_the_heap_cell_consistent() {
        let _turn = turn();
        within("heap cell, sink crosses again", || {
            for case in ["grow moves", "grow in place", "allocate"] {
                with_static_cell(160, |cell| {
                    HELD.with(|h| *h.borrow_mut() = Some(HeapBox::new_in([1u8; 64], cell)));
                    let mut v: HeapVec<u64, _> = HeapVec::with_capacity_in(4, cell);
                    v.extend([1, 2, 3, 4]);
                    let neighbour =
                        (case == "grow moves").then(|| HeapBox::new_in([0u64; 2], cell));
                    if case == "grow in place" {
                        // The held block sits before the vector: the vector ends the heap.
                        assert!(cell.stats().live_blocks == 2);
                    }
                    let off = sink(free_cross_again_then_panic);
                    let caught = catch_unwind(AssertUnwindSafe(|| {
                        if case == "allocate" {
                            drop(HeapBox::new_in([3u8; 128], cell));
                        } else {
                            v.reserve_exact(28);
                        }
                    }));
                    drop(off);
                    assert!(caught.is_err(), "{case}");
                    assert_eq!(warnings(&take_seen()), 1, "{case}: the outer warning");
                    assert_eq!(v.capacity(), 4, "{case}");
                    assert_eq!(v[..], [1, 2, 3, 4], "{case}");
                    let made = MADE_IN_SINK.with(|m| {
                        let m = m.borrow();
                        let b = m.as_ref().expect("the sink's block");
                        assert!(b.iter().all(|&x| x == 0x77), "{case}");
                        &**b as *const [u8; 200] as usize
                    });
                    assert!(!overlap(v.as_ptr() as usize, 32, made, 200), "{case}");
                    cell.check().unwrap();
                    let live = 1 + 1 + usize::from(neighbour.is_some());
                    assert_eq!(cell.stats().live_blocks, live, "{case}");
                    drop((v, neighbour));
                    cell.check().unwrap();
                });
            }
        });
    }

    /// `grow_zeroed` (the trait's default: a new zeroed block, a copy, a free; the cell does not
    /// override it, so it always moves) and a shrink to a larger alignment, with a sink that uses
    /// the cell while the new block and the old are both live: the contents are copied, the new
    /// bytes zeroed, the result aligned, the old block freed.
    #[test]
    fn grow_zeroed_and_an_aligning_shrink_through_a_heap_cell_whose_sink_uses_it() {
        let _turn = turn();
        within("heap cell grow_zeroed", || {
            for moving in [false, true] {
                with_static_cell(128, |cell| {
                    let old = Layout::from_size_align(64, 8).unwrap();
                    let new = Layout::from_size_align(256, 8).unwrap();
                    let p = cell.allocate(old).unwrap().cast::<u8>();
                    // SAFETY: a live block of 64 bytes.
                    unsafe { p.as_ptr().write_bytes(0x11, 64) };
                    let neighbour = moving.then(|| HeapBox::new_in([0u8; 16], cell));
                    let _off = sink(use_the_cell);
                    // SAFETY: `p` is a live block of this cell that fits `old`; `new` is larger.
                    let grown = unsafe { cell.grow_zeroed(p, old, new) }.unwrap();
                    drop(_off);
                    assert_eq!(warnings(&take_seen()), 1, "moving {moving}");
                    assert_eq!(grown.len(), 256);
                    let q = grown.cast::<u8>();
                    assert_eq!(cell.stats().live_blocks, 1 + usize::from(moving));
                    // SAFETY: `q` is a live block of 256 bytes.
                    let bytes = unsafe { std::slice::from_raw_parts(q.as_ptr(), 256) };
                    assert!(bytes[..64].iter().all(|&b| b == 0x11), "moving {moving}");
                    assert!(bytes[64..].iter().all(|&b| b == 0), "moving {moving}");
                    cell.check().unwrap();
                    // A shrink to 64-byte alignment (moving unless already aligned).
                    let aligned = Layout::from_size_align(100, 64).unwrap();
                    // SAFETY: `q` is a live block of this cell that fits `new`.
                    let s = unsafe { cell.shrink(q, new, aligned) }.unwrap();
                    let s = s.cast::<u8>();
                    assert_eq!(s.as_ptr() as usize % 64, 0);
                    // SAFETY: `s` is a live block of 100 bytes.
                    let bytes = unsafe { std::slice::from_raw_parts(s.as_ptr(), 100) };
                    assert!(bytes[..64].iter().all(|&b| b == 0x11));
                    assert!(bytes[64..].iter().all(|&b| b == 0));
                    // SAFETY: `s` is a live block of this cell that fits `aligned`.
                    unsafe { cell.deallocate(s, aligned) };
                    drop(neighbour);
                    cell.check().unwrap();
                });
            }
        });
    }
}

#[cfg(feature = "allocator-api2")]
mod arena_grow_in_place {
    use super::*;
    use allocator_api2::vec::Vec as ArenaVec2;

    /// The arena's `Warn` budget is crossed by growing the newest block in place (the vector
    /// is the last allocation and the page has room): the sink puts on a `Fail` budget below
    /// what the grown block would use. As for an allocation, that budget decides the request:
    /// the arena's usage stays within it. (Checked against the allocation path in the same
    /// state, which refuses.)
    #[test]
    fn a_fail_budget_the_sink_sets_during_an_in_place_grow_decides_that_grow() {
        let _turn = turn();
        within("arena grow in place, sink sets Fail", || {
            const FAIL_AT: usize = 100;
            fn set_fail(_: &Event) {
                PLAIN.with(|a| {
                    let arena = a.borrow();
                    let gate = BudgetGate::new(Budget::fail(FAIL_AT), Owner::new("scratch", "AI"))
                        .stamped();
                    arena.as_ref().unwrap().restore_budget(&gate);
                });
            }
            // The allocation path: refused by the sink's Fail budget.
            let mut arena = Arena::with_capacity(4096);
            arena.set_budget(Some(Budget::warn(64).into()));
            PLAIN.with(|a| *a.borrow_mut() = Some(arena));
            let off = sink(set_fail);
            let alloc_path = PLAIN.with(|a| {
                let arena = a.borrow();
                let arena = arena.as_ref().unwrap();
                arena.alloc([0u8; 16]);
                let r = arena.try_alloc([0u8; 100]).is_ok(); // 116 > 64: the sink runs
                (r, arena.used())
            });
            drop(off);
            assert_eq!(warnings(&take_seen()), 1);
            PLAIN.with(|a| a.borrow_mut().take());
            assert_eq!(
                alloc_path,
                (false, 16),
                "the allocation is refused by the sink's budget"
            );

            // The in-place grow path, in the same state.
            let mut arena = Arena::with_capacity(4096);
            arena.set_budget(Some(Budget::warn(64).into()));
            PLAIN.with(|a| *a.borrow_mut() = Some(arena));
            let off = sink(set_fail);
            let grow_path = PLAIN.with(|a| {
                let arena = a.borrow();
                let arena: &Arena = arena.as_ref().unwrap();
                let mut v: ArenaVec2<u8, &Arena> = ArenaVec2::with_capacity_in(16, arena);
                v.extend([7u8; 16]);
                // In place to 116 > 64: the sink runs. `try_reserve` must not panic.
                let r = catch_unwind(AssertUnwindSafe(|| v.try_reserve_exact(100).is_ok()));
                assert!(v.iter().all(|&b| b == 7));
                let r = r.unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    panic!(
                        "Vec::try_reserve over a &Arena panicked inside the arena after the sink \
                         set a Fail budget: {msg:?}"
                    )
                });
                (r, arena.used())
            });
            drop(off);
            assert_eq!(warnings(&take_seen()), 1);
            PLAIN.with(|a| a.borrow_mut().take());
            assert!(
                grow_path.1 <= FAIL_AT,
                "the in-place grow went through a Fail budget of {FAIL_AT} the sink set: used {} \
                 (grow ok: {}), while the same allocation was refused",
                grow_path.1,
                grow_path.0
            );
        });
    }

    /// The sink panics while the newest block grows in place over the `Warn` budget: the
    /// vector keeps its block and values, the arena's usage is as before, and the budget is
    /// armed again (the next crossing warns).
    #[test]
    fn a_panicking_sink_during_an_in_place_arena_grow_leaves_the_block_and_rearms() {
        let _turn = turn();
        within("arena grow in place, sink panics", || {
            let mut arena = Arena::with_capacity(4096);
            arena.set_budget(Some(Budget::warn(64).into()));
            PLAIN.with(|a| *a.borrow_mut() = Some(arena));
            PLAIN.with(|a| {
                let arena = a.borrow();
                let arena: &Arena = arena.as_ref().unwrap();
                let mut v: ArenaVec2<u8, &Arena> = ArenaVec2::with_capacity_in(16, arena);
                v.extend([7u8; 16]);
                let used = arena.used();
                let off = sink(panicking_sink);
                let caught = catch_unwind(AssertUnwindSafe(|| v.try_reserve_exact(100)));
                drop(off);
                assert!(caught.is_err());
                assert_eq!(warnings(&take_seen()), 1);
                assert_eq!(v.capacity(), 16);
                assert!(v.iter().all(|&b| b == 7));
                assert_eq!(arena.used(), used);
                let _off = sink(|_| {});
                assert!(v.try_reserve_exact(100).is_ok());
                assert_eq!(
                    warnings(&take_seen()),
                    1,
                    "armed again: the next crossing warns"
                );
                assert!(v.iter().all(|&b| b == 7));
            });
            PLAIN.with(|a| a.borrow_mut().take());
        });
    }

    thread_local! {
        /// The sink's block (its pointer keeps its provenance for the read after).
        static SINK_BLOCK: Cell<Option<(*const u8, usize)>> = const { Cell::new(None) };
    }

    /// Allocates from the arena (so the growing block is no longer the newest).
    fn allocate_after(_: &Event) {
        PLAIN.with(|a| {
            let arena = a.borrow();
            let v = arena.as_ref().unwrap().alloc([0xEEu8; 24]);
            SINK_BLOCK.with(|b| b.set(Some((v.as_ptr(), 24))));
        });
    }

    /// The sink allocates from the arena while the newest block grows in place: the block must
    /// move instead of growing over the sink's bytes.
    #[test]
    fn a_sink_that_allocates_during_an_in_place_arena_grow_makes_the_block_move() {
        let _turn = turn();
        within("arena grow in place, sink allocates", || {
            let mut arena = Arena::with_capacity(4096);
            arena.set_budget(Some(Budget::warn(64).into()));
            PLAIN.with(|a| *a.borrow_mut() = Some(arena));
            PLAIN.with(|a| {
                let arena = a.borrow();
                let arena: &Arena = arena.as_ref().unwrap();
                let mut v: ArenaVec2<u8, &Arena> = ArenaVec2::with_capacity_in(16, arena);
                v.extend([7u8; 16]);
                let off = sink(allocate_after);
                v.reserve_exact(100);
                drop(off);
                assert_eq!(warnings(&take_seen()), 1);
                v.extend(std::iter::repeat_n(8u8, 100));
                let (at, len) = SINK_BLOCK.with(Cell::get).expect("the sink allocated");
                assert!(!overlap(
                    v.as_ptr() as usize,
                    v.capacity(),
                    at as usize,
                    len
                ));
                // SAFETY: the sink's 24 bytes are a live allocation of the arena (a `&mut [u8]`
                // the sink dropped without freeing; arena memory lives until reset).
                let sink_bytes = unsafe { std::slice::from_raw_parts(at, len) };
                assert!(sink_bytes.iter().all(|&b| b == 0xEE));
                assert!(v[..16].iter().all(|&b| b == 7) && v[16..].iter().all(|&b| b == 8));
            });
            PLAIN.with(|a| a.borrow_mut().take());
        });
    }
}

// --- the tag slot table under threads ---

/// A tag type for the race: its `==` is slow (a spin), widening the window between comparing
/// outside the claim lock and claiming.
#[derive(Debug, Clone, Copy)]
struct Raced(u32);

impl PartialEq for Raced {
    fn eq(&self, other: &Raced) -> bool {
        for _ in 0..if cfg!(miri) { 2 } else { 200 } {
            std::hint::spin_loop();
        }
        self.0 == other.0
    }
}

impl Eq for Raced {}

impl arena_kit_core::tags::Tag for Raced {
    fn name(&self) -> &'static str {
        "raced"
    }
}

/// A tag whose `==` panics while armed.
#[derive(Debug, Clone, Copy)]
struct Touchy(u8);

static TOUCHY_ARMED: AtomicBool = AtomicBool::new(false);

impl PartialEq for Touchy {
    fn eq(&self, other: &Touchy) -> bool {
        if TOUCHY_ARMED.load(Ordering::Relaxed) {
            panic!("a tag's == panicked");
        }
        self.0 == other.0
    }
}

impl Eq for Touchy {}

impl arena_kit_core::tags::Tag for Touchy {
    fn name(&self) -> &'static str {
        "touchy"
    }
}

/// A tag whose `==` says no even to itself: every scope claims a new slot.
#[derive(Debug, Clone, Copy)]
struct Liar(#[allow(dead_code)] u32);

impl PartialEq for Liar {
    fn eq(&self, _: &Liar) -> bool {
        false
    }
}

impl Eq for Liar {}

impl arena_kit_core::tags::Tag for Liar {
    fn name(&self) -> &'static str {
        "liar"
    }
}

fn rows_of<G: arena_kit_core::tags::Tag>(untracked: G, tag: G) -> usize {
    arena_kit_core::tags::global_rows(untracked)
        .iter()
        .filter(|r| r.tag == tag)
        .count()
}

/// Threads race to open scopes of the same new tags (each thread in its own order): every tag
/// gets exactly one slot. Then a tag whose `==` panics claims nothing; then a tag whose `==` is
/// never true fills the table, after which new tags are charged "Untracked" (counted), tags
/// that have a slot keep it, and nothing hangs.
#[test]
fn threads_racing_for_new_tags_give_each_tag_one_slot_and_a_full_table_overflows() {
    within("tag races", || {
        const TAGS: u32 = 6;
        let threads = if cfg!(miri) { 3 } else { 8 };
        let rounds = if cfg!(miri) { 1 } else { 20 };
        for round in 0..rounds {
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(threads));
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let barrier = barrier.clone();
                    std::thread::spawn(move || {
                        barrier.wait();
                        for k in 0..TAGS {
                            let k = if t % 2 == 0 { k } else { TAGS - 1 - k };
                            drop(arena_kit_core::tags::tag_scope(Raced(round * 100 + k)));
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            // Only one round's worth of slots: keep the table for the rest.
            for k in 0..TAGS {
                let tag = Raced(round * 100 + k);
                let n = rows_of(Raced(u32::MAX), tag);
                assert!(
                    n == 1 || (n == 0 && arena_kit_core::tags::overflowed_scopes() > 0),
                    "round {round}: {tag:?} has {n} slots"
                );
            }
            if round >= 2 {
                break;
            }
        }

        // A tag whose == panics: the scope is not made, and no slot is claimed.
        drop(arena_kit_core::tags::tag_scope(Touchy(0)));
        assert_eq!(rows_of(Touchy(255), Touchy(0)), 1);
        TOUCHY_ARMED.store(true, Ordering::Relaxed);
        let caught = catch_unwind(|| drop(arena_kit_core::tags::tag_scope(Touchy(1))));
        TOUCHY_ARMED.store(false, Ordering::Relaxed);
        assert!(caught.is_err());
        assert_eq!(rows_of(Touchy(255), Touchy(1)), 0, "nothing claimed");
        drop(arena_kit_core::tags::tag_scope(Touchy(1)));
        assert_eq!(rows_of(Touchy(255), Touchy(1)), 1);

        // A liar fills the table (each scope claims a slot, from threads at once too).
        let before = arena_kit_core::tags::overflowed_scopes();
        let handles: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..arena_kit_core::tags::MAX_TAG_SLOTS as u32 {
                        drop(arena_kit_core::tags::tag_scope(Liar(t * 1000 + i)));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(
            arena_kit_core::tags::overflowed_scopes() > before,
            "the table overflowed"
        );
        let liars = arena_kit_core::tags::global_rows(Liar(u32::MAX)).len() - 1;
        assert!(liars < arena_kit_core::tags::MAX_TAG_SLOTS);
        // Tags with a slot keep it; a new one overflows.
        assert_eq!(rows_of(Touchy(255), Touchy(0)), 1);
        drop(arena_kit_core::tags::tag_scope(Touchy(0)));
        assert_eq!(rows_of(Touchy(255), Touchy(0)), 1);
        let before = arena_kit_core::tags::overflowed_scopes();
        drop(arena_kit_core::tags::tag_scope(Touchy(77)));
        assert_eq!(rows_of(Touchy(255), Touchy(77)), 0);
        assert_eq!(arena_kit_core::tags::overflowed_scopes(), before + 1);
    });
}

/// A `SoaPool` (fixed and growable, across chunks) whose `Warn` budget's sink panics on every
/// kind of insert: nothing is claimed, the closure of `insert_with` does not run, and afterwards
/// every value comes back through `remove` with its own fields, in an order that moves the last
/// row into each freed one (the remove path writes the moved row's slot without a check).
#[test]
fn a_panicking_sink_on_every_soa_pool_insert_leaves_rows_that_remove_cleanly() {
    use arena_kit_core::soa::SoaPool;
    let _turn = turn();
    within("soa pool inserts", || {
        let row_bytes = size_of::<Row>();
        for growable in [false, true] {
            DROPS.with(|d| d.set(0));
            let mut pool = if growable {
                SoaPool::<Row>::growable(2)
            } else {
                SoaPool::<Row>::with_capacity(16)
            };
            pool.set_budget(Some(Budget::warn(5 * row_bytes).into()));
            let mut live: Vec<_> = (0..5).map(|i| (pool.insert(row(i)), i)).collect();
            // Churn so that rows and slots differ.
            let (h, _) = live.remove(1);
            assert_eq!(pool.remove(h).map(|r| r.x), Some(1));
            live.push((pool.insert(row(20)), 20));
            type Attempt = fn(&mut SoaPool<Row>);
            let attempts: [(&str, Attempt); 4] = [
                ("insert", |p| {
                    let _ = p.insert(row(90));
                }),
                ("try_insert", |p| drop(p.try_insert(row(91)))),
                ("insert_with", |p| {
                    let _ = p.insert_with(|_| panic!("insert_with's closure ran"));
                }),
                ("try_insert_with", |p| {
                    let _ = p.try_insert_with(|_| panic!("try_insert_with's closure ran"));
                }),
            ];
            for (name, attempt) in attempts {
                let off = sink(panicking_sink);
                let caught = catch_unwind(AssertUnwindSafe(|| attempt(&mut pool)));
                drop(off);
                assert!(caught.is_err(), "{name}");
                let seen = take_seen();
                assert_eq!(warnings(&seen), 1, "{name}: {seen:?}");
                assert_eq!(pool.len(), 5, "{name}");
            }
            // Every value, removed row 0 first (the last row moves each time).
            loop {
                let first = pool.iter().next().map(|(h, _)| h);
                let Some(h) = first else { break };
                let at = live
                    .iter()
                    .position(|&(l, _)| l == h)
                    .expect("a known handle");
                let (h, x) = live.swap_remove(at);
                let got = pool.remove(h).expect("live");
                assert_eq!((got.x, got.c.0), (x, x));
                for &(l, lx) in &live {
                    assert_eq!(pool.get(l).map(|r| (*r.x, r.c.0)), Some((lx, lx)));
                }
            }
            assert!(live.is_empty());
            drop(pool);
            // 6 values made and dropped, and the 2 refused rows of insert and try_insert.
            assert_eq!(drops(), 8, "growable {growable}");
        }
    });
}
