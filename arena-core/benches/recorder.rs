//! The recorder's queries over 1,000,000 events: prints the best of several runs per query, in
//! ms of wall-clock time and of this thread's CPU time (the target is at most 50 ms each): the
//! first query of a full recorder, a query after one more event, and a query with nothing new.
//! See BENCHMARKS.md.
//!
//! Run: `cargo bench -p arena-kit-core --bench recorder`

use std::hint::black_box;
use std::panic::Location;
use std::time::{Duration, Instant};

use arena_kit::tags::Recorder;

const EVENTS: usize = 1_000_000;
const RUNS: usize = 7;

const POOLS: [&str; 4] = ["bodies", "meshes", "particles", "scratch"];
const TAGS: [&str; 4] = ["Physics", "Rendering", "Effects", "Frame"];

/// A game-like stream: per frame, 1,000 allocations over four allocators, most freed the next
/// frame, one in 17 kept (the leaks), the scratch arena discarded each frame. Addresses behave
/// like an allocator's: a freed slot is reused, a live one is never handed out twice; the scratch
/// arena bumps from its start again after each discard.
fn fill(recorder: &Recorder) -> u64 {
    fill_timed(recorder, EVENTS, &mut Vec::new())
}

/// [`fill`] with `events` events, with the time of each `end_frame` (which matches the frame's
/// events) in `ends`.
fn fill_timed(recorder: &Recorder, events: usize, ends: &mut Vec<Duration>) -> u64 {
    let sites: [&'static Location<'static>; 3] =
        [Location::caller(), Location::caller(), Location::caller()];
    let mut frame = 0u64;
    let mut pending: Vec<(usize, usize, usize)> = Vec::new();
    // Per pool: freed slots to reuse, and the next slot never used.
    let mut free_slots: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut next_slot = [0usize; 3];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut n = 0;
    while n < events {
        let mut scratch_top = 0x10_0000_0000usize;
        for k in 0..1_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = (x % 4) as usize;
            let size = 16 + (x >> 40) as usize % 512;
            let addr = if p == 3 {
                scratch_top += size;
                scratch_top - size
            } else {
                let slot = free_slots[p].pop().unwrap_or_else(|| {
                    next_slot[p] += 1;
                    next_slot[p] - 1
                });
                ((p + 1) << 32) + 1024 * slot
            };
            let site = x.is_multiple_of(5).then(|| sites[k % 3]);
            recorder.alloc(POOLS[p], TAGS[p], addr, size, site);
            n += 1;
            if p != 3 && !x.is_multiple_of(17) {
                pending.push((p, addr, size));
            }
        }
        // Free what this frame made (except the kept ones) early in the next frame.
        recorder.discard("scratch", "Frame");
        let t = Instant::now();
        recorder.end_frame(frame);
        ends.push(t.elapsed());
        for (p, addr, size) in pending.drain(..) {
            recorder.free(POOLS[p], TAGS[p], addr, size);
            free_slots[p].push((addr - ((p + 1) << 32)) / 1024);
            n += 1;
        }
        n += 2;
        frame += 1;
    }
    frame
}

/// This thread's time on a CPU, in ns (Linux: the first field of /proc/thread-self/schedstat),
/// which leaves out the time another process had the core: the figures stay comparable on a
/// shared machine. The kernel updates it at scheduler ticks, so it is good to a few ms.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The best of `RUNS` runs of `query`; each run after `before` (untimed).
fn best(name: &str, mut before: impl FnMut(), mut query: impl FnMut()) {
    let mut best = Duration::MAX;
    let mut best_cpu = u64::MAX;
    for _ in 0..RUNS {
        before();
        let cpu = cpu_ns();
        let t = Instant::now();
        query();
        best = best.min(t.elapsed());
        if let (Some(a), Some(b)) = (cpu, cpu_ns()) {
            best_cpu = best_cpu.min(b - a);
        }
    }
    let cpu = if best_cpu == u64::MAX {
        String::from("n/a")
    } else {
        format!("{:.2} ms", best_cpu as f64 / 1e6)
    };
    println!(
        "{name:<28} {:>8.2} ms wall, {cpu:>10} on CPU",
        best.as_secs_f64() * 1e3
    );
}

fn main() {
    let recorder = Recorder::new(EVENTS);
    let t = Instant::now();
    let mut ends = Vec::new();
    let frames = fill_timed(&recorder, EVENTS, &mut ends);
    let fill_time = t.elapsed();
    println!(
        "{} events held, {} dropped, {frames} frames; recording: {:.1} ns per event",
        recorder.len(),
        recorder.dropped(),
        fill_time.as_secs_f64() * 1e9 / (recorder.len() as u64 + recorder.dropped()) as f64
    );
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let print_ends = |what: &str, ends: &mut Vec<Duration>| {
        ends.sort();
        println!(
            "end_frame ({what}): median {:.0} us, 99th percentile {:.0} us, max {:.0} us",
            us(ends[ends.len() / 2]),
            us(ends[ends.len() * 99 / 100]),
            us(ends[ends.len() - 1])
        );
    };
    print_ends("matches the frame's events", &mut ends);
    {
        // Three rings' worth through one ring: the held allocations' records are moved to the
        // front of their table whenever the ones that left would leave no room.
        let recorder = Recorder::new(EVENTS);
        let mut ends = Vec::new();
        fill_timed(&recorder, 3 * EVENTS, &mut ends);
        print_ends("three rings' worth through the ring", &mut ends);
    }
    let mid = frames / 2;
    // First: the first query of a recorder just filled (a new one per run), which matches every
    // free. After a new event: one event recorded before each run (the ring moves on by one),
    // so the query matches that event and forgets the one that left. Again: nothing recorded
    // since the last query.
    {
        let first = |name: &str, query: &dyn Fn(&Recorder)| {
            let held = std::cell::RefCell::new(None);
            best(
                &format!("{name} first"),
                || {
                    held.replace(None);
                    let recorder = Recorder::new(EVENTS);
                    fill(&recorder);
                    held.replace(Some(recorder));
                },
                || query(held.borrow().as_ref().unwrap()),
            );
        };
        first("live_at(mid)", &|r| {
            black_box(r.live_at(black_box(mid)));
        });
        first("growth(first, last)", &|r| {
            black_box(r.growth(black_box(0), black_box(frames)));
        });
        first("outlived_frame()", &|r| {
            black_box(r.outlived_frame());
        });
        first("leak_candidates(10)", &|r| {
            black_box(r.leak_candidates(black_box(10)));
        });
    }
    for (label, cold) in [(" after a new event", true), (" again", false)] {
        let before = || {
            if cold {
                recorder.end_frame(frames);
            }
        };
        best(&format!("live_at(mid){label}"), before, || {
            black_box(recorder.live_at(black_box(mid)));
        });
        best(&format!("growth(first, last){label}"), before, || {
            black_box(recorder.growth(black_box(0), black_box(frames)));
        });
        best(&format!("outlived_frame(){label}"), before, || {
            black_box(recorder.outlived_frame());
        });
        best(&format!("leak_candidates(10){label}"), before, || {
            black_box(recorder.leak_candidates(black_box(10)));
        });
    }
    best(
        "to_trace_json() (export)",
        || {},
        || {
            black_box(recorder.to_trace_json());
        },
    );
    println!(
        "answers: {} live at mid, {} outlived their frame, {} leak groups",
        recorder.live_at(mid).value.len(),
        recorder.outlived_frame().value.len(),
        recorder.leak_candidates(10).value.len()
    );
    println!(
        "trace JSON: {} MB; ring: {} MB",
        recorder.to_trace_json().len() >> 20,
        recorder.memory_bytes() >> 20
    );
}
