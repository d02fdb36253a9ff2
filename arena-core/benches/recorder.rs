//! The recorder's queries over 1,000,000 events: prints the best of several runs, in ms, per
//! query (the target is at most 50 ms each). See BENCHMARKS.md.
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

/// A game-like stream: per frame, 1,000 allocations over four allocators, most freed within a
/// few frames, some kept (the leaks), the scratch arena discarded each frame.
fn fill(recorder: &Recorder) -> u64 {
    let sites: [&'static Location<'static>; 3] =
        [Location::caller(), Location::caller(), Location::caller()];
    let mut frame = 0u64;
    let mut pending: Vec<(usize, usize, usize)> = Vec::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut n = 0;
    while n < EVENTS {
        for k in 0..1_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = (x % 4) as usize;
            let addr = 0x1000 + 64 * ((x >> 8) as usize % 50_000);
            let size = 16 + (x >> 40) as usize % 512;
            let site = x.is_multiple_of(5).then(|| sites[k % 3]);
            recorder.alloc(POOLS[p], TAGS[p], addr, size, site);
            n += 1;
            if p != 3 && !x.is_multiple_of(17) {
                pending.push((p, addr, size));
            }
        }
        // Free what the previous frame made (except the kept ones).
        for (p, addr, size) in pending.drain(..) {
            recorder.free(POOLS[p], TAGS[p], addr, size);
            n += 1;
        }
        recorder.discard("scratch", "Frame");
        recorder.end_frame(frame);
        n += 2;
        frame += 1;
    }
    frame
}

fn best(name: &str, mut query: impl FnMut()) {
    let mut best = Duration::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        query();
        best = best.min(t.elapsed());
    }
    println!("{name:<28} {:>8.2} ms", best.as_secs_f64() * 1e3);
}

fn main() {
    let recorder = Recorder::new(EVENTS);
    let t = Instant::now();
    let frames = fill(&recorder);
    let fill_time = t.elapsed();
    println!(
        "{} events held, {} dropped, {frames} frames; recording: {:.1} ns per event",
        recorder.len(),
        recorder.dropped(),
        fill_time.as_secs_f64() * 1e9 / (recorder.len() as u64 + recorder.dropped()) as f64
    );
    let mid = frames / 2;
    best("live_at(mid)", || {
        black_box(recorder.live_at(black_box(mid)));
    });
    best("growth(first, last)", || {
        black_box(recorder.growth(black_box(0), black_box(frames)));
    });
    best("outlived_frame()", || {
        black_box(recorder.outlived_frame());
    });
    best("leak_candidates(10)", || {
        black_box(recorder.leak_candidates(black_box(10)));
    });
    best("to_trace_json() (export)", || {
        black_box(recorder.to_trace_json());
    });
    println!(
        "trace JSON: {} MB; ring: {} MB",
        recorder.to_trace_json().len() >> 20,
        recorder.memory_bytes() >> 20
    );
}
