//! Where budget warnings and leak reports go without a logger: a report sink, or stderr in debug
//! builds (silenced by `ARENA_KIT_QUIET=1`). Its own test binary, so no test logger is installed;
//! each stderr case runs in a child process (this binary, re-run with `REPORT_SINK_CHILD` naming
//! the case) and checks what the child wrote.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;
use std::sync::Mutex;

use arena_kit_core::arena::Arena;
use arena_kit_core::pool::Pool;
use arena_kit_core::tags::{Budget, Event, Tracked, set_report_sink};

/// The sink is process-wide: tests that set it take turns.
static SINK_TESTS: Mutex<()> = Mutex::new(());

const CHILD: &str = "REPORT_SINK_CHILD";

/// One budget warning and one leak report.
fn raise_a_warning_and_a_leak() {
    let arena =
        Tracked::new(Arena::with_capacity(4096), "particles", "FX").with_budget(Budget::warn(1024));
    arena.alloc([0u8; 2048]);
    let mut pool = Tracked::new(Pool::with_capacity(4), "bullets", "Gameplay");
    pool.insert(1u64);
    drop(pool);
}

/// Runs this binary's `child` test with `case` set, and returns what it wrote to stderr.
fn child_stderr(case: &str, quiet: bool) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, case);
    if quiet {
        cmd.env("ARENA_KIT_QUIET", "1");
    } else {
        cmd.env_remove("ARENA_KIT_QUIET");
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    // The harness's own lines go to stdout; keep only ours.
    String::from_utf8(out.stderr).unwrap()
}

/// The child side: raises events as `REPORT_SINK_CHILD` says (and nothing when run normally).
#[test]
fn child() {
    match std::env::var(CHILD).as_deref() {
        Ok("events") => raise_a_warning_and_a_leak(),
        Ok("sink") => {
            fn count(_: &Event) {}
            set_report_sink(Some(count));
            raise_a_warning_and_a_leak();
        }
        _ => {}
    }
}

#[test]
fn without_a_logger_debug_builds_print_one_line_per_event_to_stderr() {
    let err = child_stderr("events", false);
    if cfg!(debug_assertions) {
        assert_eq!(
            err,
            "[arena_kit::budget] warning: memory budget exceeded: `particles` (tag FX) would hold \
             2048 bytes (0 in use + 2048 requested), over its budget of 1024 bytes; free memory in \
             this subsystem first, or raise its budget\n\
             [arena_kit::leak] error: leak: `bullets` (tag Gameplay) was dropped with 1 live \
             allocation(s), 8 bytes; free them before dropping the allocator, or call \
             forgive_leaks() if this is intended\n"
        );
    } else {
        assert_eq!(err, "");
    }
}

#[test]
fn arena_kit_quiet_silences_stderr() {
    assert_eq!(child_stderr("events", true), "");
}

#[test]
fn a_report_sink_takes_the_place_of_stderr() {
    assert_eq!(child_stderr("sink", false), "");
}

thread_local! {
    static SEEN: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
    static SCRATCH: Tracked<Arena, &'static str> =
        Tracked::new(Arena::with_capacity(4096), "scratch", "Temp").with_budget(Budget::warn(64));
    static PANIC_IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// Records this thread's events (other tests' threads may raise theirs meanwhile).
fn record(event: &Event) {
    SEEN.with(|s| s.borrow_mut().push(*event));
    if PANIC_IN_SINK.with(Cell::get) {
        panic!("the sink panicked");
    }
}

fn take_seen() -> Vec<Event> {
    SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

#[test]
fn the_sink_receives_budget_warnings_and_leaks_as_typed_events() {
    let _turn = SINK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    set_report_sink(Some(record));
    raise_a_warning_and_a_leak();
    let seen = take_seen();
    set_report_sink(None);
    assert_eq!(seen.len(), 2, "{seen:?}");
    let Event::Budget(exceeded) = seen[0] else {
        panic!("{seen:?}")
    };
    assert_eq!((exceeded.allocator, exceeded.budget), ("particles", 1024));
    assert_eq!(seen[0].target(), "arena_kit::budget");
    assert!(!seen[0].is_error());
    let Event::Leak(leak) = seen[1] else {
        panic!("{seen:?}")
    };
    assert_eq!((leak.allocator, leak.count), ("bullets", 1));
    assert!(seen[1].is_error());
}

/// A sink that allocates from a thread-local arena, the one whose warning it is handling:
/// both allocations are made, apart, and the warning is delivered once.
#[test]
fn a_sink_that_allocates_from_the_warning_arena() {
    fn allocate_in_sink(event: &Event) {
        record(event);
        SCRATCH.with(|a| {
            a.alloc(0xABu8);
        });
    }
    let _turn = SINK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    set_report_sink(Some(allocate_in_sink));
    let (big, used) = SCRATCH.with(|a| {
        let big: *const [u8; 100] = a.alloc([7u8; 100]);
        (big as usize, a.used())
    });
    set_report_sink(None);
    let seen = take_seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(used, 101);
    SCRATCH.with(|a| {
        let small: *const u8 = a.alloc(1u8);
        assert!(small as usize >= big + 100 || (small as usize) < big);
    });
}

/// A sink that panics: the panic leaves the allocating call, nothing is allocated, and the next
/// crossing warns again (the sink is not left marked as running).
#[test]
fn a_panicking_sink_leaves_the_allocator_as_it_was() {
    let _turn = SINK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    set_report_sink(Some(record));
    let arena =
        Tracked::new(Arena::with_capacity(4096), "particles", "FX").with_budget(Budget::warn(64));
    arena.alloc([1u8; 32]);
    PANIC_IN_SINK.with(|p| p.set(true));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc([2u8; 64]);
    }));
    PANIC_IN_SINK.with(|p| p.set(false));
    assert!(caught.is_err());
    assert_eq!(arena.used(), 32);
    assert_eq!(take_seen().len(), 1);
    let v = arena.alloc([3u8; 64]);
    assert_eq!(v[63], 3);
    assert_eq!(arena.used(), 96);
    set_report_sink(None);
    assert_eq!(
        take_seen().len(),
        1,
        "the second crossing reaches the sink again"
    );
}
