//! Where budget warnings and leak reports go without a logger: a report sink, or stderr in debug
//! builds (silenced by `ARENA_KIT_QUIET=1`). Its own test binary, so no test logger is installed;
//! each stderr case runs in a child process (this binary, re-run with `REPORT_SINK_CHILD` naming
//! the case) and checks what the child wrote. With the `log` feature off
//! (`--no-default-features --features std`) the same holds.

use std::cell::{Cell, RefCell};
use std::ops::Range;
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
#[cfg_attr(miri, ignore = "spawns a child process, which Miri cannot")]
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
#[cfg_attr(miri, ignore = "spawns a child process, which Miri cannot")]
fn arena_kit_quiet_silences_stderr() {
    assert_eq!(child_stderr("events", true), "");
}

#[test]
#[cfg_attr(miri, ignore = "spawns a child process, which Miri cannot")]
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
    // Leak checks are compiled into debug builds and `debug-checks` only.
    let leak_checked = cfg!(any(debug_assertions, feature = "debug-checks"));
    assert_eq!(seen.len(), 1 + usize::from(leak_checked), "{seen:?}");
    let Event::Budget(exceeded) = seen[0] else {
        panic!("{seen:?}")
    };
    assert_eq!((exceeded.allocator, exceeded.budget), ("particles", 1024));
    assert_eq!(seen[0].target(), "arena_kit::budget");
    assert!(!seen[0].is_error());
    if !leak_checked {
        return;
    }
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
/// crossing warns again (the sink is not left marked as running). The same for a SoA slice whose
/// rows need dropping (columns and drop record).
#[test]
fn a_panicking_sink_leaves_the_allocator_as_it_was() {
    type Over = fn(&Tracked<Arena, &'static str>);
    let values: Over = |a| {
        a.alloc([2u8; 64]);
    };
    let rows: Over = |a| {
        a.alloc_soa(4, named);
    };
    let _turn = SINK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    for over in [values, rows] {
        set_report_sink(Some(record));
        let arena = Tracked::new(Arena::with_capacity(4096), "particles", "FX")
            .with_budget(Budget::warn(64));
        arena.alloc([1u8; 32]);
        PANIC_IN_SINK.with(|p| p.set(true));
        let caught = catch_unwind(AssertUnwindSafe(|| over(&arena)));
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
}

thread_local! {
    /// The arena the re-entrant sink allocates from, and what it allocates.
    static REENTERED: RefCell<Option<Tracked<Arena, &'static str>>> = const { RefCell::new(None) };
    static SINK_LAYOUT: Cell<Option<std::alloc::Layout>> = const { Cell::new(None) };
    static SINK_BLOCK: Cell<usize> = const { Cell::new(0) };
}

/// Allocates `SINK_LAYOUT` from `REENTERED` (the arena whose warning this is) and keeps its
/// address in `SINK_BLOCK` (left at 0 if the arena refuses).
fn allocate_in_the_warning_arena(event: &Event) {
    record(event);
    REENTERED.with(|r| {
        let arena = r.borrow();
        let (Some(arena), Some(layout)) = (arena.as_ref(), SINK_LAYOUT.get()) else {
            return;
        };
        // A refusal (the arena full) leaves `SINK_BLOCK` at 0.
        if let Ok(block) = arena.try_alloc_layout(layout) {
            SINK_BLOCK.set(block.as_ptr() as usize);
        }
    });
}

/// Runs `f` on `arena` (in `REENTERED`) with the re-entrant sink set, the sink allocating
/// `in_sink`; returns `f`'s result, the sink's block (0 if the sink did not run) and the arena.
fn with_reentrant_sink<R>(
    arena: Tracked<Arena, &'static str>,
    in_sink: std::alloc::Layout,
    f: impl FnOnce(&Tracked<Arena, &'static str>) -> R,
) -> (R, usize, Tracked<Arena, &'static str>) {
    let _turn = SINK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    REENTERED.with(|r| *r.borrow_mut() = Some(arena));
    SINK_LAYOUT.set(Some(in_sink));
    SINK_BLOCK.set(0);
    set_report_sink(Some(allocate_in_the_warning_arena));
    let out = REENTERED.with(|r| f(r.borrow().as_ref().unwrap()));
    set_report_sink(None);
    take_seen();
    let arena = REENTERED.with(|r| r.borrow_mut().take()).unwrap();
    (out, SINK_BLOCK.get(), arena)
}

/// The warning for the padding of a new page's data start (the request alone fitted the
/// budget) comes while the arena holds that page, not yet entered. A sink that allocates from
/// the arena then must not be handed the same bytes as the request.
#[test]
fn a_sink_allocating_during_a_new_pages_padding_warning_gets_other_bytes() {
    use std::alloc::Layout;
    // A 1 MiB alignment makes the padding all but certain: a page's data start lies a few dozen
    // bytes past where the system allocator put the page (its own header, then the page's), and
    // allocators place a block this large on a page boundary or just past one, never 48 bytes
    // short of a MiB boundary. Where one did, the try is repeated with that arena kept alive, so
    // the next page is other memory rather than the same block freed and taken again (with a
    // small alignment and freed arenas, every try landed at the same address: one unlucky
    // placement failed them all).
    let request = Layout::from_size_align(8192, 1 << 20).unwrap();
    let in_sink = Layout::from_size_align(64, 4096).unwrap();
    let mut kept = Vec::new();
    for _ in 0..4 {
        let arena = Tracked::new(Arena::chained(1024), "chained", "Test");
        arena.alloc([0u8; 900]);
        let budget = arena.used() + request.size();
        let arena = arena.with_budget(Budget::warn(budget));
        let ((outer, padded), inner, arena) = with_reentrant_sink(arena, in_sink, |a| {
            let outer = a.alloc_layout(request).as_ptr() as usize;
            (outer, a.used() > budget)
        });
        if !padded {
            assert_eq!(inner, 0, "no padding, so no warning and no sink");
            kept.push((outer, arena));
            continue;
        }
        assert_ne!(
            inner, 0,
            "the padding crossed the budget, so the sink ran and allocated"
        );
        assert!(
            inner + in_sink.size() <= outer || outer + request.size() <= inner,
            "the sink's block {inner:#x} overlaps the request's {outer:#x}"
        );
        return;
    }
    let at: Vec<usize> = kept.iter().map(|&(outer, _)| outer).collect();
    panic!("no page needed padding in 4 tries, the request at {at:#x?}");
}

/// Growing the newest block in place over a budget warns before the block grows: a block the
/// sink allocates right after it must not end up inside the grown block.
#[cfg(feature = "allocator-api2")]
#[test]
fn a_sink_allocating_during_a_grow_in_place_warning_gets_other_bytes() {
    use allocator_api2::alloc::Allocator;
    use std::alloc::Layout;
    let arena =
        Tracked::new(Arena::with_capacity(4096), "fixed", "Test").with_budget(Budget::warn(256));
    let old = Layout::from_size_align(128, 8).unwrap();
    let new = Layout::from_size_align(512, 8).unwrap();
    let ((start, len), inner, _) = with_reentrant_sink(arena, Layout::new::<u64>(), |a| {
        let arena: &Arena = a;
        let block = arena.allocate(old).unwrap().cast::<u8>();
        // SAFETY: `block` is a live block of `old` from this allocator, and `new` is larger.
        let grown = unsafe { arena.grow(block, old, new) }.unwrap();
        (grown.cast::<u8>().as_ptr() as usize, grown.len())
    });
    assert_ne!(inner, 0, "the grow crossed the budget, so the sink ran");
    assert!(
        inner + 8 <= start || start + len <= inner,
        "the sink's block {inner:#x} is inside the grown block {start:#x}..+{len}"
    );
}

/// SoA rows that need dropping: a slice of them is the columns and a drop record.
#[derive(Debug, Default, arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Named {
    id: u32,
    name: String,
}

/// A container with its drop record (a SoA slice, `SoaTiles`) that crosses a `Warn` budget: the
/// warning's sink allocates from the same arena. When the columns and the record were two
/// allocations, the warning came between them, so the sink's block came before the columns; a
/// refused record then undid everything since the call began, the sink's block included, and
/// the next allocation got those bytes again while the sink still held them. Now both are one
/// bump.
///
/// `alloc` makes the allocation and returns the bytes its columns span, or `None` if refused;
/// `both_parts` is about what it uses in an arena of its own.
fn two_part_allocation_keeps_the_sinks_block(
    both_parts: usize,
    alloc: impl Fn(&Arena) -> Option<Range<usize>>,
) {
    use std::alloc::Layout;
    let in_sink = Layout::from_size_align(64, 8).unwrap();
    // `[a, a + 64)` does not meet `span`.
    let apart = |a: usize, span: &Range<usize>| a + 64 <= span.start || span.end <= a;
    // Room for the sink's block and both parts but one byte (two allocations refused the record
    // and undid the sink's block); then room for both parts but one byte.
    for capacity in [in_sink.size() + both_parts - 1, both_parts - 1] {
        let arena = Tracked::new(Arena::with_capacity(capacity), "fixed", "Test")
            .with_budget(Budget::warn(1));
        let ((columns, used, next), inner, _) = with_reentrant_sink(arena, in_sink, |a| {
            let columns = alloc(a);
            let used = a.used();
            let next = a.try_alloc_layout(in_sink).map(|p| p.as_ptr() as usize);
            (columns, used, next)
        });
        if inner == 0 {
            continue; // the sink's block did not fit
        }
        match columns {
            None => assert_eq!(
                used,
                in_sink.size(),
                "capacity {capacity}: the refused request gave back only its own parts"
            ),
            Some(columns) => assert!(
                apart(inner, &columns),
                "capacity {capacity}: the sink's block {inner:#x} is inside the rows {columns:x?}"
            ),
        }
        if let Ok(next) = next {
            assert!(
                apart(next, &(inner..inner + 64)),
                "capacity {capacity}: the next block {next:#x} overlaps the sink's {inner:#x}"
            );
        }
    }
}

/// Row `i`.
fn named(i: usize) -> Named {
    Named {
        id: i as u32,
        name: String::new(),
    }
}

/// The start and end of `len` values of `T` at `p`.
fn span<T>(p: *const T, len: usize) -> Range<usize> {
    p as usize..p as usize + len * size_of::<T>()
}

/// The smallest range holding both.
fn union(a: Range<usize>, b: Range<usize>) -> Range<usize> {
    a.start.min(b.start)..a.end.max(b.end)
}

#[test]
fn a_soa_slice_never_gives_back_the_block_its_warning_sink_allocated() {
    let probe = Arena::with_capacity(4096);
    probe.alloc_soa(4, named);
    two_part_allocation_keeps_the_sinks_block(probe.used(), |a| {
        let rows = a.try_alloc_soa(4, named).ok()?;
        let c = rows.slices();
        Some(union(span(c.id.as_ptr(), 4), span(c.name.as_ptr(), 4)))
    });
}

#[test]
fn soa_tiles_never_give_back_the_block_their_warning_sink_allocated() {
    let probe = Arena::with_capacity(4096);
    probe.alloc_tiles::<Named, 4, _>(6, named);
    two_part_allocation_keeps_the_sinks_block(probe.used(), |a| {
        let tiles = a.try_alloc_tiles::<Named, 4, _>(6, named).ok()?;
        tiles
            .tiles()
            .map(|t| union(span(t.id.as_ptr(), 4), span(t.name.as_ptr(), 4)))
            .reduce(union)
    });
}

/// A `HeapCell` whose heap has a `Warn` budget: the warning reaches the sink once the
/// allocation that crossed it is done and the heap is released, so the sink may use the cell
/// like any other code: read its stats, drop a box that lives in it (freed at once, not
/// leaked), allocate from it. (While the cell held the heap, reading it panicked and a box
/// dropped there leaked.)
#[cfg(feature = "allocator-api2")]
#[test]
fn a_sink_that_uses_the_heap_cell_whose_budget_warns() {
    use allocator_api2::boxed::Box as HeapBox;
    use arena_kit_core::heap::{FreeListHeap, HeapCell};
    use arena_kit_core::tags::Budgeted;

    type CellBox = HeapBox<[u8; 32], &'static HeapCell<'static>>;
    thread_local! {
        static CELL: Cell<Option<&'static HeapCell<'static>>> = const { Cell::new(None) };
        static HELD: RefCell<Option<CellBox>> = const { RefCell::new(None) };
        static LIVE_IN_SINK: Cell<Option<usize>> = const { Cell::new(None) };
    }
    fn use_the_cell(event: &Event) {
        record(event);
        let Some(cell) = CELL.with(Cell::get) else {
            return;
        };
        LIVE_IN_SINK.with(|l| l.set(Some(cell.stats().live_blocks)));
        HELD.with(|h| drop(h.borrow_mut().take()));
        let one = HeapBox::new_in(1u64, cell);
        assert_eq!(*one, 1);
    }

    let _turn = SINK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let raw = Box::into_raw(Box::new(HeapCell::new({
        let mut heap = FreeListHeap::with_capacity(4096);
        heap.set_budget(Some(Budget::warn(64).into()));
        heap
    })));
    // SAFETY: `raw` is a live box, freed only at the end of the test, once nothing refers to
    // it; the sink and the boxes need the cell for `'static`.
    let cell: &'static HeapCell<'static> = unsafe { &*raw };
    CELL.with(|c| c.set(Some(cell)));
    HELD.with(|h| *h.borrow_mut() = Some(HeapBox::new_in([7u8; 32], cell)));
    assert_eq!(cell.stats().live_blocks, 1);
    set_report_sink(Some(use_the_cell));
    let big = HeapBox::new_in([0u8; 200], cell); // crosses the budget
    set_report_sink(None);
    CELL.with(|c| c.set(None));
    let seen = take_seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(matches!(seen[0], Event::Budget(_)), "{seen:?}");
    assert_eq!(
        LIVE_IN_SINK.with(Cell::get),
        Some(2),
        "the sink read the heap with the new block in it"
    );
    assert!(HELD.with(|h| h.borrow().is_none()));
    assert_eq!(big[199], 0);
    drop(big);
    assert_eq!(
        cell.stats().live_blocks,
        0,
        "the box dropped in the sink was freed, not leaked"
    );
    cell.check().unwrap();
    // SAFETY: `raw` came from `Box::into_raw` above, and nothing refers to the cell any more:
    // `CELL` and `HELD` are empty and every box in it was dropped.
    drop(unsafe { Box::from_raw(raw) });
}
