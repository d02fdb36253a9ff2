//! Memory tags, budgets, reports, leak reports and named guard checks, with the tracker
//! example built from real allocators.

use crate::soa_rows;
use crate::support;

use std::panic::{AssertUnwindSafe, catch_unwind};

use std::alloc::Layout;

use arena_kit_core::arena::{Arena, FrameArena, GuardSide};
use arena_kit_core::heap::{FreeError, FreeListHeap};
use arena_kit_core::pool::Pool;
use arena_kit_core::soa::{SoaPool, SoaVec};
use arena_kit_core::tags::{
    Budget, GuardedHeap, MemoryUsage, Policy, Registry, Report, Source, Tag, TagPath, Tracked,
};
use proptest::prelude::*;
use soa_rows::Particle;
use support::{miri_or, proptest_config};

/// The tags, with `Particles` under `Rendering` for hierarchy tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryTag {
    Physics,
    Audio,
    Rendering,
    Particles,
    AI,
}

impl Tag for MemoryTag {
    fn name(&self) -> &'static str {
        match self {
            MemoryTag::Physics => "Physics",
            MemoryTag::Audio => "Audio",
            MemoryTag::Rendering => "Rendering",
            MemoryTag::Particles => "Particles",
            MemoryTag::AI => "AI",
        }
    }

    fn parent(&self) -> Option<Self> {
        match self {
            MemoryTag::Particles => Some(MemoryTag::Rendering),
            _ => None,
        }
    }
}

use MemoryTag::*;

/// What this thread logged during `f`.
fn logged(f: impl FnOnce()) -> Vec<(log::Level, String, String)> {
    crate::support::logged(f).1
}

/// A 64-byte rigid body.
#[derive(Clone, Copy)]
struct RigidBody {
    _state: [f32; 16],
}

const BODY: RigidBody = RigidBody { _state: [0.0; 16] };

#[test]
fn tracker_report_from_real_allocators() {
    // A rigid body pool (64 bodies of 64 bytes), a decoded music buffer, this frame's arena and
    // pathfinding scratch: the four `Track` calls, made by the allocators themselves.
    let mut bodies = Tracked::new(Pool::with_capacity(64), "rigid bodies", Physics);
    for _ in 0..64 {
        bodies.insert(BODY);
    }
    let music = Tracked::new(Arena::with_capacity(65536), "music", Audio);
    music.alloc_slice_copy(&[0i16; 32768]);
    let mut frames = Tracked::new(FrameArena::<2>::with_capacity(1 << 20), "frame", Rendering);
    let paths = Tracked::new(Arena::with_capacity(4096), "pathfinding", AI);
    paths.alloc([0u32; 512]);

    frames
        .begin_frame()
        .alloc_layout(std::alloc::Layout::from_size_align(1 << 20, 16).unwrap());

    let mut registry = Registry::new();
    let report = registry
        .end_frame(&[&bodies, &music, &frames, &paths])
        .unwrap();
    assert_eq!(
        report.totals().to_string(),
        "Physics: 4096 bytes\nAudio: 65536 bytes\nRendering: 1048576 bytes\nAI: 2048 bytes\n"
    );
    assert_eq!(report.total().current, 4096 + 65536 + 1048576 + 2048);
    let physics = report.tag(Physics).unwrap();
    assert_eq!(physics.usage.allocations, 64);
    assert_eq!(physics.usage.peak, 4096);
    // Reserved: the pool's slots (a 64-byte body and its generation), the frame arena's buffers.
    assert!(physics.usage.reserved >= 64 * 68);
    assert_eq!(report.tag(Rendering).unwrap().usage.reserved, 2 << 20);
    let table = report.to_string();
    assert!(table.contains("rigid bodies"), "{table}");
    bodies.clear();
}

#[test]
fn table_lists_every_tag_and_allocator() {
    let a = Tracked::new(Arena::with_capacity(256), "physics scratch", Physics)
        .with_budget(Budget::warn(200));
    a.alloc([0u8; 100]);
    let report = Report::gather(&[&a]);
    let table = report.to_string();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "memory report, frame 0");
    assert!(lines[1].starts_with("tag"), "{table}");
    assert!(lines[2].starts_with("Physics"), "{table}");
    assert!(
        lines[2]
            .split_whitespace()
            .eq(["Physics", "100", "100", "1", "256", "-"])
    );
    assert!(
        lines[3]
            .split_whitespace()
            .eq(["total", "100", "100", "1", "256", "-"])
    );
    let row: Vec<&str> = lines[5].split_whitespace().collect();
    assert_eq!(
        row,
        [
            "physics", "scratch", "100", "100", "1", "256", "200", "Physics"
        ]
    );
}

#[test]
fn child_tags_count_towards_their_parent_once() {
    let sprites = Tracked::new(Arena::with_capacity(1024), "sprites", Rendering);
    let sparks = Tracked::new(Arena::with_capacity(1024), "sparks", Particles);
    let physics = Tracked::new(Arena::with_capacity(1024), "physics", Physics);
    sprites.alloc([0u8; 100]);
    sparks.alloc([0u8; 30]);
    physics.alloc([0u8; 7]);
    // Given child first: the parent row still comes before it.
    let report = Report::gather(&[&sparks, &physics, &sprites]);
    assert_eq!(
        report.totals().to_string(),
        "Rendering: 130 bytes\nRendering/Particles: 30 bytes\nPhysics: 7 bytes\n"
    );
    let rendering = report.tag(Rendering).unwrap();
    assert_eq!((rendering.own.current, rendering.allocators), (100, 2));
    assert_eq!(report.total().current, 137); // each byte once
    assert_eq!(TagPath(Particles).to_string(), "Rendering/Particles");
}

#[test]
fn fail_policy_refuses_and_changes_nothing() {
    let arena =
        Tracked::new(Arena::with_capacity(1024), "ai scratch", AI).with_budget(Budget::fail(256));
    arena.alloc([0u8; 200]);
    let err = arena.try_alloc([0u8; 100]).unwrap_err();
    let exceeded = *err.budget_exceeded().unwrap();
    assert_eq!(
        (exceeded.allocator, exceeded.tag, exceeded.budget),
        ("ai scratch", "AI", 256)
    );
    assert_eq!((exceeded.current, exceeded.requested), (200, 100));
    let text = err.to_string();
    assert!(text.contains("`ai scratch` (tag AI)"), "{text}");
    assert!(text.contains("raise its budget"), "{text}");
    assert_eq!(arena.usage().current, 200);
    assert_eq!(arena.usage().allocations, 1);
    // Exactly at the budget is allowed.
    arena.alloc([0u8; 56]);
    assert!(arena.try_alloc_str("x").is_err());
    assert!(arena.try_alloc_slice_copy(&[1u8]).is_err());

    // A pool gives the value back.
    let mut pool =
        Tracked::new(Pool::with_capacity(8), "bodies", Physics).with_budget(Budget::fail(2 * 64));
    pool.insert(BODY);
    pool.insert(BODY);
    let refused = pool.try_insert(BODY).unwrap_err();
    let exceeded = refused
        .budget_exceeded()
        .expect("expected a budget refusal");
    assert_eq!((exceeded.current, exceeded.requested), (128, 64));
    assert_eq!(pool.len(), 2);
    // The pool's own refusal is told apart.
    let mut small = Tracked::new(Pool::with_capacity(1), "one", Physics);
    small.insert(1u8);
    let full = small.try_insert(2u8).unwrap_err();
    assert!(
        full.budget_exceeded().is_none(),
        "expected the pool's refusal"
    );
    assert_eq!(full.into_inner(), 2);
    pool.clear();
    small.clear();
}

#[test]
fn panic_policy_panics_with_the_budget_text() {
    let arena =
        Tracked::new(Arena::with_capacity(1024), "audio mix", Audio).with_budget(Budget::panic(64));
    arena.alloc([0u8; 64]);
    let panic = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc([0u8; 1]);
    }))
    .unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(text.contains("`audio mix` (tag Audio)"), "{text}");
    assert!(text.contains("budget of 64 bytes"), "{text}");
    assert_eq!(arena.usage().current, 64);
}

#[test]
#[cfg_attr(
    not(feature = "log"),
    ignore = "checks what is logged: needs the `log` feature"
)]
fn warn_policy_logs_once_per_crossing() {
    let mut arena = Tracked::new(Arena::with_capacity(1024), "particles", Particles)
        .with_budget(Budget::warn(100));
    let records = logged(|| {
        arena.alloc([0u8; 80]);
        arena.alloc([0u8; 40]); // crosses: warns
        arena.alloc([0u8; 40]); // still over: quiet
    });
    assert_eq!(records.len(), 1, "{records:?}");
    let (level, target, text) = &records[0];
    assert_eq!(
        (*level, target.as_str()),
        (log::Level::Warn, "arena_kit::budget")
    );
    assert!(text.contains("`particles` (tag Particles)"), "{text}");
    assert_eq!(arena.usage().current, 160); // warn allows
    arena.reset();
    let again = logged(|| {
        arena.alloc([0u8; 101]);
    });
    assert_eq!(again.len(), 1);
}

#[test]
#[cfg_attr(
    not(feature = "log"),
    ignore = "checks what is logged: needs the `log` feature"
)]
fn tag_budgets_are_checked_at_the_end_of_a_frame() {
    let mut registry = Registry::new();
    registry.set_budget(Physics, Budget::fail(100));
    registry.set_budget(AI, Budget::warn(10));
    let a = Tracked::new(Arena::with_capacity(1024), "broadphase", Physics);
    let b = Tracked::new(Arena::with_capacity(1024), "narrowphase", Physics);
    let ai = Tracked::new(Arena::with_capacity(1024), "ai", AI);
    a.alloc([0u8; 60]);
    registry.end_frame(&[&a, &b, &ai]).unwrap();
    b.alloc([0u8; 60]); // neither allocator is over 100, the tag is
    let err = registry.end_frame(&[&a, &b, &ai]).unwrap_err();
    assert_eq!(err.exceeded.tag, "Physics");
    assert_eq!((err.exceeded.current, err.exceeded.budget), (120, 100));
    assert_eq!(err.report.frame(), 1);
    assert!(err.to_string().contains("all allocators"), "{err}");
    assert_eq!(registry.history().len(), 2); // recorded anyway

    let records = logged(|| {
        ai.alloc([0u8; 11]);
        let _ = registry.end_frame(&[&ai]);
        let _ = registry.end_frame(&[&ai]); // still over: quiet
    });
    assert_eq!(records.len(), 1, "{records:?}");

    registry.set_budget(Audio, Budget::panic(1));
    let audio = Tracked::new(Arena::with_capacity(64), "audio", Audio);
    audio.alloc(7u16);
    let panicked = catch_unwind(AssertUnwindSafe(|| registry.end_frame(&[&audio])));
    assert!(panicked.is_err());
}

#[test]
fn peaks_across_frames() {
    let mut frames = Tracked::new(FrameArena::<2>::with_capacity(4096), "frame", Rendering);
    let mut registry = Registry::new();
    let sizes = [100usize, 1000, 300, 200];
    for &n in &sizes {
        frames.begin_frame().alloc_slice_copy(&vec![0u8; n]);
        registry.end_frame(&[&frames]).unwrap();
    }
    // Two buffers: each frame's bytes plus the previous frame's, still held for readers.
    let current: Vec<usize> = registry
        .history()
        .series(Rendering)
        .map(|(_, u)| u.current)
        .collect();
    assert_eq!(current, [100, 1100, 1300, 500]);
    // The peak is the high-water mark so far: it never goes down.
    let peaks: Vec<usize> = registry
        .history()
        .series(Rendering)
        .map(|(_, u)| u.peak)
        .collect();
    assert_eq!(peaks, [100, 1100, 1300, 1300]);
    assert_eq!(registry.history().peak_frame(Rendering), Some((2, 1300)));
    let frames_seen: Vec<u64> = registry.history().samples().map(|s| s.frame).collect();
    assert_eq!(frames_seen, [0, 1, 2, 3]);
}

#[test]
fn frame_budgets_apply_to_each_frame() {
    let mut frames = Tracked::new(
        FrameArena::<2>::with_capacity(1024),
        "draw lists",
        Rendering,
    )
    .with_budget(Budget::fail(256));
    for _ in 0..3 {
        let frame = frames.begin_frame();
        assert_eq!(
            (frame.name(), frame.budget()),
            ("draw lists", Some(Budget::fail(256)))
        );
        frame.alloc([0u8; 200]);
        // The previous frame's 200 bytes are in the other buffer: only this frame's count.
        let err = frame.try_alloc([0u8; 100]).unwrap_err();
        assert_eq!(err.budget_exceeded().unwrap().current, 200);
    }
    assert_eq!(frames.usage().current, 400); // both buffers
}

#[test]
fn buffer_arenas_are_tracked_too() {
    let mut buffer = [std::mem::MaybeUninit::<u8>::uninit(); 128];
    let scratch = Tracked::new(Arena::from_buffer(&mut buffer), "stack scratch", AI)
        .with_budget(Budget::fail(64));
    scratch.alloc([1u8; 64]);
    assert!(
        scratch
            .try_alloc(1u8)
            .unwrap_err()
            .budget_exceeded()
            .is_some()
    );
    assert_eq!(scratch.usage().reserved, 128);
}

#[test]
fn history_keeps_a_bounded_window() {
    let a = Tracked::new(Arena::with_capacity(64), "a", AI);
    let mut registry = Registry::with_history(3);
    for _ in 0..5 {
        registry.end_frame(&[&a]).unwrap();
    }
    let frames: Vec<u64> = registry.history().samples().map(|s| s.frame).collect();
    assert_eq!(frames, [2, 3, 4]);
}

#[test]
fn exports_csv_json_and_svg() {
    let mut bodies = Tracked::new(Pool::with_capacity(4), "bodies, dynamic", Physics);
    let sparks = Tracked::new(Arena::with_capacity(256), "sparks \"hot\"", Particles)
        .with_budget(Budget::fail(200));
    bodies.insert(BODY);
    sparks.alloc([0u8; 10]);
    let mut registry = Registry::new();
    registry.set_budget(Rendering, Budget::warn(1000));
    let report = registry.end_frame(&[&bodies, &sparks]).unwrap();
    sparks.alloc([0u8; 20]);
    registry.end_frame(&[&bodies, &sparks]).unwrap();

    let csv = report.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "kind,name,tag,current,peak,allocations,reserved,budget"
    );
    assert_eq!(lines.len(), 1 + 3 + 2);
    assert!(lines.contains(&"tag,Rendering/Particles,Rendering/Particles,10,10,1,256,"));
    assert!(lines.contains(&"tag,Rendering,Rendering,10,10,1,256,1000"));
    assert!(
        lines.contains(&"allocator,\"sparks \"\"hot\"\"\",Rendering/Particles,10,10,1,256,200")
    );
    assert!(lines.contains(&"allocator,\"bodies, dynamic\",Physics,64,64,1,272,"));

    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["frame"], 0);
    assert_eq!(json["tags"][0]["tag"], "Physics");
    assert_eq!(json["tags"][1]["budget"], 1000);
    assert_eq!(json["tags"][0]["budget"], serde_json::Value::Null);
    assert_eq!(json["allocators"][1]["name"], "sparks \"hot\"");
    assert_eq!(json["total"]["current"], 74);

    let history = registry.history();
    let csv = history.to_csv();
    assert!(
        csv.starts_with("frame,tag,current,peak\n0,Physics,64,64\n"),
        "{csv}"
    );
    assert!(csv.contains("1,Rendering/Particles,30,30\n"), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&history.to_json()).unwrap();
    assert_eq!(json["frames"][1]["tags"][2]["current"], 30);

    let svg = history.to_svg(640, 320);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<polyline").count(), 3);
    assert!(svg.contains("Rendering/Particles (max 30 B)"), "{svg}");
    bodies.clear();
}

#[test]
#[cfg_attr(
    not(feature = "log"),
    ignore = "checks what is logged: needs the `log` feature"
)]
fn leak_reports_name_the_allocator_count_bytes_and_tag() {
    let records = logged(|| {
        let mut bodies = Tracked::new(Pool::with_capacity(8), "rigid bodies", Physics);
        bodies.insert(BODY);
        bodies.insert(BODY);
        let h = bodies.insert(BODY);
        bodies.remove(h);
        assert_eq!(bodies.leak().unwrap().count, 2);
    });
    if arena_kit_core::poison::ENABLED {
        assert_eq!(records.len(), 1, "{records:?}");
        let (level, target, text) = &records[0];
        assert_eq!(
            (*level, target.as_str()),
            (log::Level::Error, "arena_kit::leak")
        );
        assert!(
            text.contains(
                "`rigid bodies` (tag Physics) was dropped with 2 live allocation(s), 128 bytes"
            ),
            "{text}"
        );
    } else {
        assert!(records.is_empty());
    }

    // Forgiven, emptied, or an arena (whose values die together): no report. (Unwrapped:
    // tests/tracked_deref.rs.)
    let quiet = logged(|| {
        let mut forgiven = Tracked::new(Pool::with_capacity(8), "level", Physics).forgive_leaks();
        forgiven.insert(1u32);
        let mut emptied = Tracked::new(Pool::with_capacity(8), "emptied", Physics);
        let h = emptied.insert(1u32);
        emptied.remove(h);
        let arena = Tracked::new(Arena::with_capacity(64), "frame", Rendering);
        arena.alloc(1u64);
        assert!(arena.leak().is_none());
    });
    assert!(quiet.is_empty(), "{quiet:?}");
}

#[test]
#[cfg_attr(
    not(feature = "log"),
    ignore = "checks what is logged: needs the `log` feature"
)]
fn heaps_are_tracked_budgeted_and_leak_checked() {
    let layout = Layout::from_size_align(1000, 8).unwrap();
    let records = logged(|| {
        let mut sounds = Tracked::new(FreeListHeap::with_capacity(8192), "sound bank", Audio)
            .with_budget(Budget::fail(2500));
        let a = sounds.try_alloc(layout).unwrap();
        let b = sounds.try_alloc(layout).unwrap();
        // 2 blocks of 1000 bytes, rounded to 1008, plus 16 bytes of tags each: 2048 in use. The
        // budget counts what the usage counts, so the third request is its block: 1024 bytes.
        let err = sounds.try_alloc(layout).unwrap_err();
        let exceeded = *err.budget_exceeded().unwrap();
        assert_eq!((exceeded.current, exceeded.requested), (2048, 1024));
        let usage = sounds.usage();
        assert_eq!(
            (usage.current, usage.allocations, usage.reserved),
            (2048, 2, 8192)
        );
        sounds.free(a).unwrap();
        assert!(sounds.free(a).is_err()); // the heap's double-free check still answers
        let report = Report::gather(&[&sounds]);
        assert_eq!(report.totals().to_string(), "Audio: 1024 bytes\n");
        assert_eq!(report.tag(Audio).unwrap().usage.peak, 2048);
        assert_eq!(sounds.stats().live_blocks, 1); // reads go to the heap
        let _ = b; // dropped with one live block: a leak
    });
    if arena_kit_core::poison::ENABLED {
        assert_eq!(records.len(), 1, "{records:?}");
        assert!(
            records[0].2.contains(
                "`sound bank` (tag Audio) was dropped with 1 live allocation(s), 1024 bytes"
            ),
            "{records:?}"
        );
    }
    let quiet = logged(|| {
        let mut level =
            Tracked::new(FreeListHeap::with_capacity(4096), "level", Audio).forgive_leaks();
        level.try_alloc(layout).unwrap();
    });
    assert!(quiet.is_empty());
}

#[test]
fn poison_is_visible_after_heap_free() {
    let mut heap = Tracked::new(FreeListHeap::with_capacity(4096), "assets", Rendering);
    let p = heap
        .try_alloc(Layout::from_size_align(64, 8).unwrap())
        .unwrap();
    // SAFETY: `p` is a live 64-byte block.
    unsafe { p.write_bytes(7, 64) };
    heap.free(p).unwrap();
    if arena_kit_core::poison::ENABLED {
        // SAFETY: the freed block's payload is still heap memory (now on a free list,
        // its first bytes hold list links); the bytes after the links read as FREED.
        let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr().add(32), 32) };
        assert!(
            bytes.iter().all(|&b| b == arena_kit_core::poison::FREED),
            "{bytes:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "log"),
    ignore = "checks what is logged: needs the `log` feature"
)]
fn guard_corruption_names_the_allocator() {
    let mut arena = Tracked::new(
        Arena::with_capacity(256).with_guards(),
        "hud text",
        Rendering,
    );
    // The health array: three ints, then a write one past the end.
    let health = arena.alloc_layout(std::alloc::Layout::array::<i32>(3).unwrap());
    assert!(arena.check_guards().is_ok());
    if arena_kit_core::poison::ENABLED {
        // SAFETY: the write lands in the back guard, inside the arena's own block (the
        // pointer came from the arena's bump pointer), so it simulates an overrun without
        // undefined behaviour.
        unsafe { health.cast::<i32>().add(3).write_unaligned(999) };
        let report = arena.check_guards().unwrap_err();
        assert_eq!((report.allocator, report.tag), ("hud text", "Rendering"));
        assert_eq!(report.violation.side, GuardSide::Back);
        assert_eq!(report.violation.size, 12);
        let text = report.to_string();
        assert!(
            text.starts_with("in `hud text` (tag Rendering): guard bytes after the 12-byte"),
            "{text}"
        );
        // Reset logs the named report before the arena's own panic.
        let records = logged(|| {
            assert!(catch_unwind(AssertUnwindSafe(|| arena.reset())).is_err());
        });
        assert_eq!(records.len(), 1, "{records:?}");
        assert!(records[0].2.contains("`hud text`"));
    } else {
        assert!(arena.check_guards().is_ok());
    }
}

#[test]
fn heap_guard_corruption_names_the_allocator_and_size() {
    let mut heap = Tracked::new(
        GuardedHeap::new(FreeListHeap::with_capacity(4096)),
        "enemy table",
        AI,
    );
    let layout = Layout::array::<i32>(3).unwrap();
    let a = heap.try_alloc(layout).unwrap();
    let b = heap
        .try_alloc(Layout::from_size_align(40, 32).unwrap())
        .unwrap();
    assert_eq!(b.as_ptr() as usize % 32, 0);
    assert!(heap.check_guards().is_ok());
    heap.free(b).unwrap();
    assert!(heap.free(b).is_err()); // double free: the heap's error, nothing changes
    assert!(heap.check_guards().is_ok());
    if !arena_kit_core::poison::ENABLED {
        heap.free(a).unwrap();
        return;
    }
    // The overrun: health[3] = 999, into the back guard (inside the block, through the
    // pointer the heap handed out).
    // SAFETY: the write lands in the 8 guard bytes after the 12-byte allocation, inside its block.
    unsafe { a.cast::<i32>().add(3).write_unaligned(999) };
    let report = heap.check_guards().unwrap_err();
    assert_eq!((report.allocator, report.tag), ("enemy table", "AI"));
    assert_eq!(
        (report.violation.size, report.violation.side),
        (12, GuardSide::Back)
    );
    assert_eq!(report.violation.found, 0xE7); // 999 = 0x3E7, little end first
    let text = report.to_string();
    assert!(
        text.starts_with("in `enemy table` (tag AI): guard bytes after the 12-byte"),
        "{text}"
    );
    // Freeing it is an error (there is no panicking free), logged with the allocator's name.
    let mut freed = None;
    let records = logged(|| freed = Some(heap.free(a)));
    assert!(
        matches!(freed, Some(Err(FreeError::GuardDamaged(v))) if v == report.violation),
        "{freed:?}"
    );
    assert_eq!(records.len(), 1, "{records:?}");
    let text = &records[0].2;
    assert!(
        text.contains("`enemy table`") && text.contains("12-byte"),
        "{text}"
    );
    assert_eq!(heap.usage().allocations, 1); // not freed
    // Once looked at, it is freed despite the damage, which comes back naming the allocator
    // (and is not logged again: `free` did).
    let mut forced = None;
    let records = logged(|| forced = Some(heap.free_despite_guards(a)));
    assert_eq!(forced, Some(Ok(Some(report))));
    assert!(records.is_empty(), "{records:?}");
    assert_eq!(heap.usage().allocations, 0);
    assert!(heap.check_guards().is_ok());
}

#[test]
fn heap_front_guard_and_poison_after_free() {
    let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(1024));
    let p = heap
        .try_alloc(Layout::from_size_align(24, 8).unwrap())
        .unwrap();
    if arena_kit_core::poison::ENABLED {
        // SAFETY: the byte just before the allocation is its front guard, inside its block.
        unsafe { p.sub(1).write(0) };
        let v = heap.check_guards().unwrap_err();
        assert_eq!((v.side, v.byte, v.found), (GuardSide::Front, 0, 0));
        // SAFETY: as above; restores the guard.
        unsafe { p.sub(1).write(arena_kit_core::poison::GUARD) };
    }
    heap.free(p).unwrap();
    assert_eq!(heap.stats().live_blocks, 0);
    if arena_kit_core::poison::ENABLED {
        // SAFETY: the freed block's payload is still heap memory; past its free-list links the
        // heap filled it with FREED.
        let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr().add(16), 8) };
        assert!(
            bytes.iter().all(|&b| b == arena_kit_core::poison::FREED),
            "{bytes:?}"
        );
    }
}

#[test]
fn poison_is_visible_after_reset() {
    let mut arena = Tracked::new(Arena::with_capacity(64), "scratch", AI);
    let p = arena.alloc([7u8; 16]).as_mut_ptr();
    arena.reset();
    let fresh = arena.alloc_layout(std::alloc::Layout::new::<[u8; 16]>());
    assert_eq!(fresh.as_ptr(), p);
    // SAFETY: the 16 bytes were just allocated and filled by the arena in debug builds.
    let bytes = unsafe { std::slice::from_raw_parts(fresh.as_ptr(), 16) };
    if arena_kit_core::poison::ENABLED {
        assert!(bytes.iter().all(|&b| b == arena_kit_core::poison::FRESH));
    }
}

fn particle() -> Particle {
    Particle {
        x: 0.0,
        y: 0.0,
        z: 0.0,
        vx: 1.0,
        vy: 0.0,
        vz: 0.0,
        life: 1.0,
    }
}

#[test]
fn soa_containers_are_tracked_and_budgeted() {
    // The 28-byte particle.
    let mut sparks = Tracked::new(SoaVec::with_capacity(8), "sparks", Particles)
        .with_budget(Budget::fail(3 * 28));
    for _ in 0..3 {
        sparks.push(particle());
    }
    let refused = sparks.try_push(particle()).unwrap_err();
    assert_eq!(refused.budget_exceeded().unwrap().current, 84);
    assert_eq!(sparks.len(), 3); // reads go to the vector
    let mut enemies = Tracked::new(SoaPool::with_capacity(4), "debris", Particles);
    let h = enemies.insert(particle());
    enemies.try_insert(particle()).unwrap();
    assert!(enemies.remove(h).is_some());
    let report = Report::gather(&[&sparks, &enemies]);
    assert_eq!(
        report.totals().to_string(),
        "Rendering: 112 bytes\nRendering/Particles: 112 bytes\n"
    );
    assert_eq!(report.allocators()[0].usage.reserved, 8 * 28);
    enemies.set_forgive_leaks(true);
    sparks.clear();
    assert!(sparks.pop().is_none());
}

#[test]
fn tuples_report_untracked_allocators() {
    let arena = Arena::with_capacity(128);
    arena.alloc(1u64);
    let pool: Pool<u16> = Pool::with_capacity(4);
    let report = Report::gather(&[&("plain arena", AI, &arena), &("plain pool", AI, &pool)]);
    assert_eq!(report.tag(AI).unwrap().usage.current, 8);
    assert_eq!(report.allocators()[0].budget, None);
    assert!(!arena.reports_leaks());
    let s: &dyn Source<MemoryTag> = &("x", AI, &arena);
    assert_eq!(s.name(), "x");
}

#[test]
fn budgets_can_change() {
    let mut a = Tracked::new(Arena::with_capacity(64), "a", "Tools");
    assert_eq!(a.budget(), None);
    a.set_budget(Some(Budget::new(8, Policy::Fail)));
    assert!(a.try_alloc([0u8; 9]).is_err());
    a.set_budget(None);
    assert!(a.try_alloc([0u8; 9]).is_ok());
    assert!(format!("{a:?}").contains("Tools"));
}

#[derive(Debug, Clone)]
enum Op {
    Insert,
    Remove(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![Just(Op::Insert), (0usize..16).prop_map(Op::Remove)]
}

proptest! {
    #![proptest_config(proptest_config())]

    /// A tracked pool with a failing budget against a model: a Vec of live values and the rule
    /// "refuse when live + 1 values exceed the budget".
    #[test]
    fn pool_budget_matches_a_model(
        budget_values in 0usize..8,
        ops in proptest::collection::vec(op(), 0..miri_or(64, 12)),
    ) {
        let budget = budget_values * 4 + 2; // not a multiple of the value size
        let mut pool = Tracked::new(Pool::with_capacity(8), "p", AI)
            .with_budget(Budget::fail(budget));
        let mut model: Vec<(arena_kit_core::Handle<u32>, u32)> = Vec::new();
        let mut refused = 0usize;
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Insert => {
                    let over = (model.len() + 1) * 4 > budget;
                    let full = model.len() == 8;
                    match pool.try_insert(i as u32) {
                        Ok(h) => { prop_assert!(!over && !full); model.push((h, i as u32)); }
                        Err(e) => match e.budget_exceeded().copied() {
                            Some(exceeded) => {
                                prop_assert!(over);
                                prop_assert_eq!(exceeded.current, model.len() * 4);
                                prop_assert_eq!(e.into_inner(), i as u32);
                                refused += 1;
                            }
                            None => prop_assert!(full && !over),
                        },
                    }
                }
                Op::Remove(k) if !model.is_empty() => {
                    let (h, v) = model.swap_remove(k % model.len());
                    prop_assert_eq!(pool.remove(h), Some(v));
                }
                Op::Remove(_) => {}
            }
            let usage = pool.usage();
            prop_assert_eq!(usage.current, model.len() * 4);
            prop_assert!(usage.current <= budget);
        }
        let _ = refused;
        pool.clear();
    }
}

/// Two tracked arenas whose allocators are swapped through `DerefMut`: each wrapper's budget
/// follows the wrapper, not the arena it held, on the fast path (an armed arena) and after it.
#[test]
fn arenas_swapped_between_tracked_wrappers_keep_each_wrappers_budget() {
    let mut tight = Tracked::new(Arena::with_capacity(4096), "tight", "Tools");
    let mut loose = Tracked::new(Arena::with_capacity(4096), "loose", "Tools");
    tight.set_budget(Some(Budget::new(64, Policy::Fail)));
    loose.set_budget(Some(Budget::new(2048, Policy::Fail)));
    // Arm both fast paths.
    assert!(tight.try_alloc([0u8; 16]).is_ok());
    assert!(loose.try_alloc([0u8; 16]).is_ok());
    core::mem::swap(&mut *tight, &mut *loose);
    // `tight` now holds the arena `loose` armed under 2048 bytes: 64 still binds it.
    assert!(tight.try_alloc([0u8; 100]).is_err());
    for _ in 0..3 {
        assert!(tight.try_alloc([0u8; 8]).is_ok());
    }
    assert!(tight.try_alloc([0u8; 64]).is_err());
    // `loose` holds the arena armed under 64 bytes: 2048 applies.
    assert!(loose.try_alloc([0u8; 1000]).is_ok());
    assert!(loose.try_alloc([0u8; 2000]).is_err());
    assert_eq!(tight.budget().map(|b| b.bytes), Some(64));
}
