//! The tour of arena-kit: every part on a small game example, one screen per stop.
//!
//! `cargo run --release --example tour`. Each stop prints at most 24 lines, names the line of
//! this file its code starts at, and ends with a result you can check against that code. The
//! pictures it draws go to `target/arena-kit-examples/` (or `$CARGO_TARGET_DIR`'s). The longer
//! examples (`particles`, `bullets`, `level_heap`, `memory_report`, ...) go deeper.
#![allow(dead_code)]

use std::alloc::Layout as AllocLayout;
use std::time::{Duration, Instant};

use arena_kit::HasEnumLayout;
use arena_kit::layout::snapshot::{Row, Snapshot};
use arena_kit::prelude::*;
use arena_kit::tags::{ChartScale, PER_TAG_RATIO};

#[path = "support/mod.rs"]
mod support;

/// The most lines one stop prints, its heading included.
pub const MAX_LINES: usize = 24;

/// One stop of the tour: its heading and the lines it prints.
pub struct Stop {
    /// What the stop shows.
    pub title: &'static str,
    /// The line of `examples/tour.rs` its code starts at.
    pub line: u32,
    /// What it prints, heading excluded.
    pub lines: Vec<String>,
}

impl Stop {
    fn new(title: &'static str, line: u32) -> Stop {
        Stop {
            title,
            line,
            lines: Vec::new(),
        }
    }

    fn say(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    /// Every line of `text`, in order.
    fn say_all(&mut self, text: &str) {
        for l in text.lines() {
            self.say(l);
        }
    }
}

/// The stops, in order.
pub const STOPS: [fn() -> Stop; 10] = [
    layout_report,
    layout_checks,
    layout_snapshot,
    soa_columns,
    arena_scopes,
    frame_arena,
    pool_handles,
    free_list_heap,
    tags_and_budgets,
    pictures,
];

// ---------------------------------------------------------------------------------------------

/// An enemy with its fields in a poor order.
#[derive(Layout)]
#[repr(C)]
struct Enemy {
    alive: bool,
    health: f64,
    kind: u8,
    id: i32,
}

/// The same fields in the order the report suggests; the build fails if it ever grows.
#[derive(Layout)]
#[layout(size = 16, optimal)]
#[repr(C)]
struct EnemyReordered {
    health: f64,
    id: i32,
    alive: bool,
    kind: u8,
}

fn layout_report() -> Stop {
    let mut s = Stop::new("what a struct costs: #[derive(Layout)]", line!());
    s.say_all(&Enemy::LAYOUT.to_string());
    s.say("");
    let (bad, good) = (Enemy::LAYOUT.size(), EnemyReordered::LAYOUT.size());
    s.say(format!(
        "EnemyReordered, the order the report suggests: {good} bytes ({bad} -> {good})"
    ));
    s.say(format!(
        "check: a million enemies take {bad} MB as written, {good} MB reordered"
    ));
    s
}

// ---------------------------------------------------------------------------------------------

/// A trybuild case and the compiler's output for it, kept true by `cargo test --test ui`.
const OPTIMAL_CASE: &str = include_str!("../tests/ui/layout-optimal.rs");
const OPTIMAL_ERROR: &str = include_str!("../tests/ui/layout-optimal.stderr");

fn layout_checks() -> Stop {
    let mut s = Stop::new(
        "the build fails when a struct wastes bytes: #[layout(...)]",
        line!(),
    );
    s.say("tests/ui/layout-optimal.rs:");
    for l in OPTIMAL_CASE
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("use ") && !l.starts_with("fn main"))
    {
        s.say(format!("    {l}"));
    }
    s.say("cargo build says (tests/ui/layout-optimal.stderr, checked by `cargo test --test ui`):");
    s.say_all(OPTIMAL_ERROR);
    s.say("");
    s.say("check: the message names stop 1's fix, (health, id, alive, kind) in 16 bytes;");
    s.say("also size = N, max_size, align, max_padding, and assert_layout!(Type<Args>, ...)");
    s
}

// ---------------------------------------------------------------------------------------------

/// A game command: three small variants and one big one.
#[derive(Layout)]
#[repr(u8)]
enum Command {
    Move { x: f32, y: f32 },
    Fire { target: u32 },
    Mesh([u64; 8]),
    Quit,
}

fn layout_snapshot() -> Stop {
    let mut s = Stop::new("enums, and a table of every layout a test checks", line!());
    s.say_all(&Command::LAYOUT.to_string());
    let (size, best) = (Command::LAYOUT.size(), Command::LAYOUT.best_size());
    s.say(format!(
        "check: every command takes {size} bytes for Mesh's 64; boxed, {best} (8 + the tag, aligned)"
    ));
    s.say("");
    // The committed table says Enemy is 16 bytes (stop 1's reordered one); today's build has
    // the 24-byte order. With the `layout-registry` feature, `snapshot::check(path)` builds the
    // table from every #[derive(Layout)] type in the program instead of these rows.
    let committed = Snapshot::from_rows([Row::of_struct("game::Enemy", &EnemyReordered::LAYOUT)]);
    let path = support::output_dir().join("tour-layouts.txt");
    let today = Snapshot::from_rows([Row::of_struct("game::Enemy", &Enemy::LAYOUT)]);
    match committed.bless(&path).map(|()| today.compare(&path)) {
        Ok(Err(diff)) => s.say_all(&diff.to_string()),
        Ok(Ok(())) => s.say("the tables agree (they should not here)"),
        Err(e) => s.say(format!("could not write the table: {e}")),
    }
    s.say("check: Enemy grew by 24 - 16 = 8 bytes, the saving stop 1's report names");
    s
}

// ---------------------------------------------------------------------------------------------

/// A particle: seven `f32`, 28 bytes, no padding; `tiled` lets it be stored in `SoaTiles` too.
#[derive(Layout, Soa, Clone, Copy)]
#[layout(size = 28, max_padding = 0)]
#[soa(tiled)]
#[repr(C)]
struct Particle {
    x: f32,
    y: f32,
    z: f32,
    vx: f32,
    vy: f32,
    vz: f32,
    life: f32,
}

fn particle(i: usize) -> Particle {
    Particle {
        x: 0.0,
        y: 0.0,
        z: 0.0,
        vx: i as f32,
        vy: 0.0,
        vz: 0.0,
        life: 1.0,
    }
}

/// The best of ten timings of `f`.
fn best_of_ten(mut f: impl FnMut()) -> Duration {
    (0..10)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn soa_columns() -> Stop {
    let mut s = Stop::new(
        "a particle system as columns: #[derive(Soa)], SoaVec and SoaTiles",
        line!(),
    );
    // 1,000 particles, one column per field, all in one allocation.
    let mut particles: SoaVec<Particle> = (0..1000).map(particle).collect();
    let ParticleSlicesMut { x, vx, .. } = particles.slices_mut();
    for (x, vx) in x.iter_mut().zip(vx.iter()) {
        *x += vx * 0.5;
    }
    let cols = particles.slices();
    let base = cols.x.as_ptr() as usize;
    s.say("column  offset   bytes");
    for (name, col) in [
        ("x", cols.x),
        ("y", cols.y),
        ("vx", cols.vx),
        ("life", cols.life),
    ] {
        let offset = col.as_ptr() as usize - base;
        s.say(format!(
            "{name:<6} {offset:>7} {:>7}",
            std::mem::size_of_val(col)
        ));
    }
    s.say("(z, vy and vz likewise: 7 columns of 4000 bytes in one block)");
    let sum: f32 = cols.x.iter().sum();
    s.say(format!(
        "check: after x += vx * 0.5, x[999] = {}, sum of x = {sum}",
        cols.x[999]
    ));
    s.say("       (0.5 * 999 and 0.5 * (0 + 1 + ... + 999) = 0.5 * 499500)");

    // The same one-field pass over many particles, both layouts, timed here and now.
    let n = if cfg!(debug_assertions) {
        100_000
    } else {
        1_000_000
    };
    let mut aos: Vec<Particle> = (0..n).map(particle).collect();
    let mut soa: SoaVec<Particle> = (0..n).map(particle).collect();
    let t_aos = best_of_ten(|| aos.iter_mut().for_each(|p| p.x += p.vx * 0.5));
    let t_soa = best_of_ten(|| {
        let c = soa.slices_mut();
        c.x.iter_mut()
            .zip(c.vx.iter())
            .for_each(|(x, vx)| *x += vx * 0.5);
    });
    s.say("");
    let build = if cfg!(debug_assertions) {
        "a debug build (--release for real timings)"
    } else {
        "best of 10 runs on this machine"
    };
    s.say(format!("x += vx * 0.5 over {n} particles, {build}:"));
    s.say(format!(
        "  Vec<Particle> {:.3} ms, SoaVec<Particle> {:.3} ms",
        t_aos.as_secs_f64() * 1e3,
        t_soa.as_secs_f64() * 1e3
    ));
    s.say(format!(
        "  cache lines read: {} (28-byte rows) vs {} (two 4-byte columns)",
        (n * 28).div_ceil(64),
        2 * (n * 4).div_ceil(64)
    ));
    // The same rows tiled by 8 (`#[soa(tiled)]`, AoSoA): a row's fields sit in one tile, so a
    // whole-row read at random touches fewer lines, and each tile's lanes are `[f32; 8]` arrays.
    let tiled: SoaTiles<Particle, 8> = (0..1000).map(particle).collect();
    let lines_of = |r: ParticleRef<'_>| {
        let mut lines: Vec<usize> = [r.x, r.y, r.z, r.vx, r.vy, r.vz, r.life]
            .iter()
            .map(|f| *f as *const f32 as usize / 64)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines.len()
    };
    let (in_tiles, in_columns) = (
        lines_of(tiled.get(500).expect("1000 rows")),
        lines_of(particles.get(500).expect("1000 rows")),
    );
    s.say(format!(
        "check: row 500 as SoaTiles<Particle, 8> spans {in_tiles} cache lines, as SoaVec {in_columns}"
    ));
    s
}

// ---------------------------------------------------------------------------------------------

const USE_AFTER_RESET: &str = include_str!("../tests/ui/arena-use-after-reset.stderr");

fn arena_scopes() -> Stop {
    let mut s = Stop::new(
        "a level arena with a scope per frame: Arena, scope(), mark()",
        line!(),
    );
    let mut level = Arena::with_capacity(64 * 1024);
    let map = level.alloc_slice_fill_with(1024, |_| 0u8); // level data, kept all level
    let map_len = map.len();
    let after_level = level.mark();
    for frame in 0..3 {
        let scope = level.scope(); // per-frame work above the level data
        let paths = scope.alloc_slice_fill_with(1000, |i| (i + frame) as u32);
        assert_eq!(paths.len(), 1000);
    } // each scope's 4000 bytes are freed here
    s.say(format!(
        "level data: {map_len} bytes; three frames each took 4000 bytes in a scope"
    ));
    s.say(format!(
        "check: used after the frames = {} bytes (= the marker's {}), high water {}",
        level.used(),
        after_level.used(),
        level.stats().high_water
    ));
    level.reset();
    s.say(format!(
        "after reset(): used {} bytes, ready for the next level",
        level.used()
    ));
    s.say("");
    s.say("using a value after reset() does not compile (tests/ui/arena-use-after-reset.stderr):");
    s.say_all(USE_AFTER_RESET);
    s
}

// ---------------------------------------------------------------------------------------------

fn frame_arena() -> Stop {
    let mut s = Stop::new(
        "per-frame data another thread reads: FrameArena and FrameReader",
        line!(),
    );
    let mut frames = FrameArena::<3>::chained(16 * 1024);
    let (to_render, rendered) = std::sync::mpsc::channel::<FrameReader<[u64]>>();
    let render = std::thread::spawn(move || {
        // The render thread reads each frame's commands while the game builds the next.
        rendered
            .iter()
            .map(|cmds| cmds.iter().sum::<u64>())
            .sum::<u64>()
    });
    for _ in 0..10 {
        let frame = frames.begin_frame();
        let number = frame.number();
        let commands = frame.alloc_slice_fill_with(100, |_| number);
        to_render
            .send(frame.publish(&*commands).expect("data of this frame"))
            .expect("render thread alive");
    }
    drop(to_render);
    let total = render.join().expect("render thread");
    s.say("10 frames, 100 draw commands each holding the frame number, three buffers in turn");
    for i in 0..frames.buffer_count() {
        let st = frames.buffer(i).stats();
        s.say(format!(
            "  buffer {i}: used {} bytes, high water {}",
            st.used, st.high_water
        ));
    }
    s.say(format!(
        "check: the render thread summed {total} = 100 * (0 + 1 + ... + 9)"
    ));
    s.say("a buffer is reused only once its readers are dropped; writing to published data");
    s.say("does not compile (tests/ui/arena-frame-write-after-publish.rs)");
    s
}

// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
struct Bullet {
    x: f32,
    speed: f32,
}

fn pool_handles() -> Stop {
    let mut s = Stop::new(
        "bullets in a pool: Pool<Bullet> and Handle<Bullet>",
        line!(),
    );
    let mut bullets: Pool<Bullet> = Pool::with_capacity(4);
    let first = bullets.insert(Bullet { x: 0.0, speed: 5.0 });
    let second = bullets.insert(Bullet { x: 0.0, speed: 9.0 });
    s.say(format!("first:  {first:?}"));
    s.say(format!("second: {second:?}"));
    let gone = bullets.remove(first);
    s.say(format!("remove(first) = {gone:?}"));
    let third = bullets.insert(Bullet { x: 1.0, speed: 7.0 });
    s.say(format!(
        "third:  {third:?}  (first's slot, a newer generation)"
    ));
    s.say(format!(
        "check: get(first) = {:?}, a stale handle, never the third bullet",
        bullets.get(first)
    ));
    s.say(format!("       get(third) = {:?}", bullets.get(third)));
    let full = (0..3).map(|_| bullets.try_insert(Bullet { x: 0.0, speed: 1.0 }));
    let refused = full.filter(Result::is_err).count();
    s.say(format!(
        "a full pool hands the value back: 3 more try_insert into 4 slots, {refused} refused"
    ));
    s.say(
        "a Handle<Bullet> on a Pool<Enemy> does not compile (tests/ui/pool-handle-wrong-type.rs)",
    );
    s
}

// ---------------------------------------------------------------------------------------------

fn block(size: usize) -> AllocLayout {
    AllocLayout::from_size_align(size, 16).expect("a valid layout")
}

/// Used and free bytes, free blocks, the largest of them.
fn summary(heap: &FreeListHeap<'_>) -> String {
    let st = heap.stats();
    format!(
        "used {:>5}, free {:>5} in {} block(s), largest free {:>5}",
        st.used, st.free, st.free_blocks, st.largest_free
    )
}

fn free_list_heap() -> Stop {
    let mut s = Stop::new("loading and unloading a level: FreeListHeap", line!());
    let mut heap = FreeListHeap::with_capacity(64 * 1024);
    // Level 1: six 8 KiB assets, and a save-game buffer allocated after the third stays.
    let mut assets = Vec::new();
    let mut save = None;
    for i in 0..6 {
        assets.push(heap.alloc(block(8 * 1024)));
        if i == 2 {
            save = Some(heap.alloc(block(256)));
        }
    }
    s.say(format!("level 1 loaded:   {}", summary(&heap)));
    for a in assets {
        heap.free(a).expect("a live block of this heap");
    }
    let st = heap.stats();
    s.say(format!("level 1 unloaded: {}", summary(&heap)));
    s.say(format!("layout: {heap}"));
    s.say(format!(
        "check: {} bytes free, but the save buffer splits them: the largest block is {}",
        st.free, st.largest_free
    ));
    let svg = heap.memory_map().rows(4).to_string();
    s.say(support::write_output("tour-heap-map.svg", &svg));
    heap.free(save.expect("allocated")).expect("live");
    s.say(format!(
        "after the save buffer goes too: {} free block(s)",
        heap.stats().free_blocks
    ));
    s
}

// ---------------------------------------------------------------------------------------------

/// The game's subsystems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryTag {
    Physics,
    Textures,
    AI,
}

impl Tag for MemoryTag {
    fn name(&self) -> &'static str {
        match self {
            MemoryTag::Physics => "Physics",
            MemoryTag::Textures => "Textures",
            MemoryTag::AI => "AI",
        }
    }
}

/// Plays `frames` frames of three tracked allocators; returns the last report, the chart of
/// every frame and how many path requests the AI budget refused.
fn play(frames: usize) -> (Report<MemoryTag>, String, usize) {
    use MemoryTag::*;
    let mut bodies = Tracked::new(Pool::with_capacity(128), "rigid bodies", Physics);
    let mut textures = Tracked::new(FreeListHeap::with_capacity(1 << 20), "textures", Textures);
    let mut paths = Tracked::new(Arena::with_capacity(16 * 1024), "pathfinding", AI)
        .with_budget(Budget::fail(8 * 1024));
    let mut registry = Registry::new();
    let (mut live, mut refused, mut last) = (Vec::new(), 0, None);
    for f in 0..frames {
        // Bodies come and go; a texture streams in every frame until 512 KiB are resident.
        if f % 10 < 6 {
            live.push(bodies.insert([0f32; 16]));
        } else if let Some(h) = live.pop() {
            bodies.remove(h);
        }
        if textures.stats().used < 512 * 1024 {
            textures.alloc(block(16 * 1024));
        }
        // Path requests of 4 KiB each in a per-frame arena; its 8 KiB budget refuses the third.
        paths.reset();
        for _ in 0..3 {
            if paths.try_alloc([0u8; 4096]).is_err() {
                refused += 1;
            }
        }
        last = registry.end_frame(&[&bodies, &textures, &paths]).ok();
    }
    bodies.set_forgive_leaks(true);
    textures.set_forgive_leaks(true);
    let chart = registry.history().to_svg_with(720, 300, ChartScale::Auto);
    (last.expect("no budget is a warning"), chart, refused)
}

fn tags_and_budgets() -> Stop {
    let mut s = Stop::new(
        "who owns every byte: Tracked allocators, tags, budgets, the report",
        line!(),
    );
    let (report, _, refused) = play(40);
    s.say_all(&report.to_string());
    s.say("");
    s.say("bytes per tag:");
    s.say_all(&report.totals().to_string());
    let physics = report
        .tags()
        .iter()
        .find(|row| row.tag == MemoryTag::Physics)
        .map_or(0, |row| row.usage.current);
    s.say(format!(
        "check: Physics = {physics} bytes = 8 bodies of 64 (6 in, 4 out every 10 frames, 40 frames);"
    ));
    s.say(format!(
        "       the 8 KiB budget refused {refused} path requests of 4 KiB, the third of each frame"
    ));
    s
}

// ---------------------------------------------------------------------------------------------

fn pictures() -> Stop {
    let mut s = Stop::new("the pictures: usage chart and heap map", line!());
    // Stop 9's game for 120 frames, charted: Textures grow to 512 KiB, AI holds 8 KiB.
    let (_, chart, _) = play(120);
    let panels = chart.contains("one axis per tag");
    s.say(support::write_output("tour-memory-chart.svg", &chart));
    s.say("each tag in its own colour-blind-safe (Okabe-Ito) colour: tag_colour(its path)");
    s.say(format!(
        "check: 512 KiB / 8 KiB = 64 >= PER_TAG_RATIO ({PER_TAG_RATIO}), so ChartScale::Auto"
    ));
    s.say(format!("       draws one panel per tag: {panels}"));
    s.say("stop 8's heap map (tour-heap-map.svg) labels every block at least 40 px wide;");
    s.say("scripts/render-pictures.sh renders the examples' pictures to docs/*.png");
    s
}

// ---------------------------------------------------------------------------------------------

/// The tour's text: every stop with its heading.
pub fn run() -> Vec<String> {
    let mut out = Vec::new();
    for (i, stop) in STOPS.iter().enumerate() {
        let s = stop();
        out.push(format!(
            "== {}/{}: {}  (examples/tour.rs:{})",
            i + 1,
            STOPS.len(),
            s.title,
            s.line
        ));
        out.extend(s.lines);
        out.push(String::new());
    }
    out
}

fn main() {
    for line in run() {
        println!("{line}");
    }
}
