//! Attacks on the tags and budgets layer from safe code, needing no process-wide state (no
//! report sink, no `Warn` budget crossed): tracked allocators swapped or given budgets below
//! their usage, budget arithmetic at the ends of `usize`, the recorder fed frees it never saw,
//! double frees and extreme values from several threads, and reports of sources whose counters
//! are at `usize::MAX`, whose tags form cycles or whose names need escaping.

use std::alloc::Layout;
use std::panic::Location;

use arena_kit_core::arena::Arena;
use arena_kit_core::heap::FreeListHeap;
use arena_kit_core::pool::Pool;
use arena_kit_core::soa::SoaVec;
use arena_kit_core::tags::{
    Budget, BudgetGate, Budgeted, MemoryUsage, Owner, Policy, Recorder, Registry, Report, Source,
    Tag, Tracked, Usage,
};

/// Two tracked arenas with different `Fail` budgets whose allocators are swapped through
/// `DerefMut` (`mem::swap(&mut *a, &mut *b)`): each wrapper's budget holds for the allocator it
/// holds now, naming the wrapper; the same for two tracked pools (allocating through `&mut`),
/// and swapping the wrappers themselves carries each budget along.
#[test]
fn swapping_tracked_allocators_keeps_each_wrappers_budget() {
    let mut small =
        Tracked::new(Arena::with_capacity(1024), "small", "AI").with_budget(Budget::fail(64));
    let mut large =
        Tracked::new(Arena::with_capacity(1024), "large", "AI").with_budget(Budget::fail(512));
    large.alloc([0u8; 300]);
    std::mem::swap(&mut *small, &mut *large);
    // `small` now holds the arena with 300 bytes in use: over its 64, so it refuses.
    let refused = small.try_alloc([0u8; 8]).unwrap_err();
    assert!(refused.to_string().contains("`small`"), "{refused}");
    assert_eq!(small.used(), 300);
    // `large` holds the empty one, under its 512.
    large.alloc([0u8; 500]);
    assert!(large.try_alloc([0u8; 16]).is_err());
    assert_eq!(small.budget(), Some(Budget::fail(64)));
    assert_eq!(large.budget(), Some(Budget::fail(512)));
    assert_eq!(
        Budgeted::budget(&*small).map(|g| g.owner().allocator),
        Some("small")
    );

    let mut few = Tracked::new(Pool::<u64>::with_capacity(64), "few", "Physics")
        .with_budget(Budget::fail(2 * 8));
    let mut many = Tracked::new(Pool::<u64>::with_capacity(64), "many", "Physics")
        .with_budget(Budget::fail(40 * 8));
    for i in 0..30 {
        many.insert(i);
    }
    std::mem::swap(&mut *few, &mut *many);
    let full = few.try_insert(99).unwrap_err();
    assert_eq!(full.budget_exceeded().map(|e| e.allocator), Some("few"));
    assert_eq!(few.len(), 30);
    for i in 0..40 {
        let _ = many.try_insert(i);
    }
    assert_eq!(many.len(), 40);
    few.clear();
    few.insert(1);
    few.insert(2);
    assert!(few.try_insert(3).is_err(), "the 2-value budget holds again");
    std::mem::swap(&mut few, &mut many);
    assert_eq!(
        (few.name(), few.budget()),
        ("many", Some(Budget::fail(320)))
    );
    few.clear();
    many.clear();
}

/// A row for the SoA vector below.
#[derive(Debug, arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core)]
struct Pair {
    a: u32,
    b: u32,
}

/// A `Fail` budget set below what an allocator already holds frees nothing and refuses every
/// growth, while frees, removes and resets go on; once usage is back under, it allows again.
/// Usage never goes below zero. For an arena, a pool, a SoA vector and a heap.
#[test]
fn a_budget_below_current_usage_refuses_growth_and_allows_frees() {
    let mut arena = Arena::with_capacity(1024);
    arena.alloc([0u8; 200]);
    arena.set_budget(Some(Budget::fail(100).into()));
    assert!(arena.try_alloc(0u8).is_err());
    assert_eq!(arena.used(), 200);
    arena.reset();
    arena.alloc([0u8; 100]);
    assert!(arena.try_alloc(0u8).is_err());

    let mut pool = Pool::<u64>::with_capacity(32);
    let handles: Vec<_> = (0..10).map(|i| pool.insert(i)).collect();
    pool.set_budget(Some(Budget::fail(4 * 8).into()));
    assert!(pool.try_insert(10).is_err());
    for h in &handles[..6] {
        assert!(pool.remove(*h).is_some());
        assert!(pool.try_insert(11).is_err(), "still over: {}", pool.len());
    }
    pool.remove(handles[6]);
    assert_eq!(pool.len(), 3);
    let h = pool.insert(12);
    assert!(pool.try_insert(13).is_err());
    assert_eq!(pool.usage().current, 4 * 8);
    pool.remove(h);
    for h in &handles[7..] {
        pool.remove(*h);
    }
    assert_eq!(pool.usage().current, 0);
    assert!(
        pool.remove(h).is_none(),
        "a removed handle frees nothing twice"
    );
    assert_eq!(pool.usage().current, 0);

    let mut v = SoaVec::<Pair>::new();
    for i in 0..16 {
        v.push(Pair { a: i, b: i });
    }
    v.set_budget(Some(Budget::fail(2 * size_of::<Pair>()).into()));
    assert!(v.try_push(Pair { a: 16, b: 0 }).is_err());
    while v.len() > 1 {
        v.pop();
    }
    v.push(Pair { a: 17, b: 0 });
    assert!(v.try_push(Pair { a: 18, b: 0 }).is_err());

    let mut heap = FreeListHeap::with_capacity(4096);
    let small = Layout::from_size_align(64, 8).unwrap();
    let blocks: Vec<_> = (0..4).map(|_| heap.alloc(small)).collect();
    heap.set_budget(Some(Budget::fail(64).into()));
    assert!(heap.try_alloc(small).is_err());
    for b in blocks {
        heap.free(b).unwrap();
    }
    let used = heap.stats().used;
    assert_eq!(used, 0);
    let b = heap.alloc(Layout::from_size_align(16, 8).unwrap());
    assert!(heap.free(b).is_ok());
    assert!(heap.free(b).is_err(), "a double free is refused");
    heap.check().unwrap();
}

/// A budget gate at the ends of `usize`: sums saturate (a request of `usize::MAX` on top of
/// `usize::MAX` in use is just over), the error's text says so without overflowing, a lifted
/// `Warn` gate stays lifted at `usize::MAX` and re-arms at 0, and allocators given `usize::MAX`
/// budgets refuse impossible requests with their own errors rather than overflowing.
#[test]
fn budget_arithmetic_at_the_ends_of_usize_saturates() {
    let owner = Owner::new("huge", "Test");
    let mut fail = BudgetGate::new(Budget::fail(0), owner);
    let e = fail.exceeded(usize::MAX, usize::MAX).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("would hold {}", usize::MAX))
    );
    let max = BudgetGate::new(Budget::fail(usize::MAX), owner);
    assert!(max.allows(usize::MAX, usize::MAX));
    let mut warn = BudgetGate::new(Budget::warn(usize::MAX - 1), owner);
    // (the warning goes to this thread's test logger)
    let (allowed, _) = crate::support::logged(|| warn.exceeded(usize::MAX, 1).is_ok());
    assert!(allowed);
    assert_eq!(warn.limit(), usize::MAX);
    warn.settle(usize::MAX);
    assert_eq!(warn.limit(), usize::MAX, "still over: stays lifted");
    warn.settle(0);
    assert_eq!(warn.limit(), usize::MAX - 1);
    let panics = std::panic::catch_unwind(|| {
        let mut p = BudgetGate::new(Budget::panic(1), owner);
        let _ = p.exceeded(usize::MAX, usize::MAX);
    });
    assert!(panics.is_err());

    let arena = Arena::with_capacity(256);
    let mut arena = arena;
    arena.set_budget(Some(Budget::fail(usize::MAX).into()));
    for size in [isize::MAX as usize - 7, isize::MAX as usize / 2, 1 << 40] {
        let layout = Layout::from_size_align(size, 8).unwrap();
        assert!(arena.try_alloc_layout(layout).is_err(), "{size}");
    }
    assert_eq!(arena.used(), 0);
    let mut chained = Arena::chained(1024);
    chained.set_budget(Some(Budget::new(usize::MAX, Policy::Fail).into()));
    let huge = Layout::from_size_align(isize::MAX as usize - 4095, 4096).unwrap();
    assert!(chained.try_alloc_layout(huge).is_err());
    let mut zst = Pool::<()>::with_capacity(8);
    zst.set_budget(Some(Budget::fail(0).into()));
    for _ in 0..8 {
        zst.insert(());
    }
    assert_eq!(zst.usage().current, 0);
    zst.clear();
    let mut heap = FreeListHeap::with_capacity(1024);
    heap.set_budget(Some(Budget::fail(usize::MAX).into()));
    let too_big = Layout::from_size_align(isize::MAX as usize - 7, 8).unwrap();
    assert!(heap.try_alloc(too_big).is_err());
}

/// A recorder fed what no allocator would send: frees of addresses never allocated, double
/// frees, frees of the wrong size, discards of unknown pools, allocations of `usize::MAX` bytes
/// at `usize::MAX`, frames at `u64::MAX` and going backwards, with a ring small enough to wrap.
/// Every query answers (sums saturate instead of wrapping), and the trace is valid JSON.
#[test]
fn a_recorder_fed_hostile_sequences_answers_every_query() {
    let site = Location::caller();
    for capacity in [1, 3, 64] {
        let r = Recorder::new(capacity);
        r.free("ghost", "None", 0x40, 16);
        r.alloc("big", "Huge", usize::MAX, usize::MAX, Some(site));
        r.alloc("big", "Huge", usize::MAX, usize::MAX, Some(site));
        r.alloc("big", "Huge", 0, usize::MAX, None);
        r.end_frame(0);
        r.free("big", "Huge", usize::MAX, 1);
        r.free("big", "Huge", usize::MAX, usize::MAX);
        r.free("big", "Huge", usize::MAX, usize::MAX); // a third: matches nothing
        r.discard("nobody", "None");
        r.end_frame(u64::MAX);
        assert_eq!(r.frame(), u64::MAX, "saturates");
        r.alloc("late", "Huge", 8, 8, Some(site));
        r.end_frame(u64::MAX);
        r.end_frame(3); // backwards
        r.alloc("late", "Huge", 8, 8, None);
        r.end_frame(2);
        for frame in [0, 1, 2, 3, u64::MAX - 1, u64::MAX] {
            let live = r.live_at(frame);
            assert!(live.value.len() <= capacity);
        }
        for (from, to) in [(0, u64::MAX), (u64::MAX, 0), (0, 0), (3, 2)] {
            let growth = r.growth(from, to).value;
            for row in growth.tags.iter().chain(&growth.pools) {
                let _ = (row.bytes_change(), row.count_change());
            }
        }
        if capacity == 64 {
            // The two live allocations of `usize::MAX` bytes at the end of frame 0.
            let g = r.growth(0, 0).value;
            let huge = g.tags.iter().find(|t| t.name == "Huge").unwrap();
            assert_eq!(huge.bytes_from, u64::MAX, "saturates, does not wrap");
            assert!(r.live_at(0).unmatched_frees >= 1);
        }
        let _ = r.outlived_frame();
        for age in [0, 1, u64::MAX] {
            for group in r.leak_candidates(age).value {
                assert!(group.count > 0);
            }
        }
        let trace = r.to_trace_json();
        serde_json::from_str::<serde_json::Value>(&trace)
            .unwrap_or_else(|e| panic!("capacity {capacity}: {e}: {trace}"));
        r.clear();
        assert!(r.is_empty());
        assert!(r.live_at(0).value.is_empty());
    }
}

/// Several threads recording into one small ring at once, each freeing the others' addresses,
/// freeing twice and ending frames out of order: nothing is lost from the counts (held plus
/// dropped is every event), and the queries answer.
#[test]
fn a_recorder_shared_by_threads_freeing_each_others_addresses_stays_whole() {
    let (threads, per) = if cfg!(miri) { (2, 20) } else { (4, 2000) };
    let r = Recorder::new(32);
    std::thread::scope(|s| {
        for t in 0..threads {
            let r = &r;
            s.spawn(move || {
                for i in 0..per {
                    let addr = 0x1000 + 16 * (i % 7);
                    r.alloc("shared", "Test", addr, 16, None);
                    r.free("shared", "Test", addr + 16 * (t % 2), 16);
                    r.free("shared", "Test", addr, 16);
                    if i % 9 == 0 {
                        r.end_frame((i as u64).wrapping_mul(t as u64 + 1));
                    }
                }
            });
        }
    });
    let per_thread = per * 3 + per.div_ceil(9);
    assert_eq!(r.len() as u64 + r.dropped(), (threads * per_thread) as u64);
    assert_eq!(r.len(), 32);
    for frame in [0, r.frame()] {
        let _ = r.live_at(frame);
        let _ = r.growth(0, frame);
    }
    let _ = r.leak_candidates(0);
    serde_json::from_str::<serde_json::Value>(&r.to_trace_json()).unwrap();
}

/// A tag whose parent chain is a cycle, one that is its own parent, and names that need
/// escaping in CSV, JSON and SVG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hostile {
    Ouroboros,
    Tail,
    Narcissus,
    Quoted,
}

impl Tag for Hostile {
    fn name(&self) -> &'static str {
        match self {
            Hostile::Ouroboros => "ouro\"boros",
            Hostile::Tail => "tail,\n<script>&amp;",
            Hostile::Narcissus => "narcissus\\",
            Hostile::Quoted => "\u{0}\u{1f}\"'</text>",
        }
    }
    fn parent(&self) -> Option<Self> {
        match self {
            Hostile::Ouroboros => Some(Hostile::Tail),
            Hostile::Tail => Some(Hostile::Ouroboros),
            Hostile::Narcissus => Some(Hostile::Narcissus),
            Hostile::Quoted => None,
        }
    }
}

/// A source whose counters are all `usize::MAX`.
struct Saturated;

impl MemoryUsage for Saturated {
    fn usage(&self) -> Usage {
        Usage {
            current: usize::MAX,
            peak: usize::MAX,
            allocations: usize::MAX,
            reserved: usize::MAX,
        }
    }
}

/// Reports of sources at `usize::MAX` under tags that form cycles: sums saturate, tag rows
/// follow cycles only so far, tag budgets at the extremes compare without overflow, and every
/// export (CSV, JSON, serde, SVG) finishes, the JSON parses and the SVG carries no raw markup
/// from a name.
#[test]
fn reports_of_saturated_sources_and_cyclic_tags_export_safely() {
    use Hostile::*;
    let sources: Vec<(&'static str, Hostile, Saturated)> = vec![
        ("a\"b", Ouroboros, Saturated),
        ("c,d\n", Tail, Saturated),
        ("e", Narcissus, Saturated),
        ("</svg>", Quoted, Saturated),
        ("g", Ouroboros, Saturated),
    ];
    let dyns: Vec<&dyn Source<Hostile>> =
        sources.iter().map(|s| s as &dyn Source<Hostile>).collect();
    let mut registry = Registry::with_history(0);
    registry.set_budget(Quoted, Budget::fail(usize::MAX));
    registry.set_budget(Ouroboros, Budget::fail(0));
    let over = registry.end_frame(&dyns).unwrap_err();
    assert_eq!(over.exceeded.tag, Ouroboros.name());
    let report = over.report;
    assert_eq!(report.total().current, usize::MAX);
    assert_eq!(report.total().allocations, usize::MAX);
    for row in report.tags() {
        assert_eq!(row.usage.current, usize::MAX);
    }
    assert!(report.over_budget().all(|e| e.tag != Quoted.name()));
    let json = report.to_json();
    let parsed: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(
        parsed["total"]["current"],
        serde_json::json!(usize::MAX as u64)
    );
    #[cfg(feature = "serde")]
    assert_eq!(serde_json::to_string(&report).unwrap(), json);
    let csv = report.to_csv();
    assert_eq!(
        csv.lines().count(),
        1 + report.tags().len() + report.allocators().len() + embedded_newlines(&csv),
        "{csv}"
    );
    let _ = report.totals().to_string();
    let _ = Report::gather(&dyns).to_string();
    for _ in 0..3 {
        let _ = registry.end_frame(&dyns);
    }
    let history = registry.history();
    assert_eq!(history.len(), 1, "a history of 0 frames keeps 1");
    serde_json::from_str::<serde_json::Value>(&history.to_json()).unwrap();
    let _ = history.to_csv();
    for (w, h) in [(0, 0), (1, 1), (640, 480), (u32::MAX, 2)] {
        if cfg!(miri) && w == u32::MAX {
            continue;
        }
        let svg = history.to_svg(w, h);
        assert!(!svg.contains("<script"), "a name's markup got into the SVG");
        assert!(!svg.contains("</text>\"'"), "{svg}");
        assert!(svg.ends_with("</svg>\n"));
    }
}

/// Newlines inside quoted CSV fields (each adds a line break to the text but not a record).
fn embedded_newlines(csv: &str) -> usize {
    let mut quoted = false;
    let mut n = 0;
    for c in csv.chars() {
        match c {
            '"' => quoted = !quoted,
            '\n' if quoted => n += 1,
            _ => {}
        }
    }
    n
}
