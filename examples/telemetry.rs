//! Frame telemetry: one arena per instrumented thread records thousands of events a frame; at
//! frame end a consumer thread reads them, then the arenas reset. Here each producer owns a
//! double-buffered `FrameArena`, so it records frame N+1 while the consumer still reads frame N,
//! and a buffer is never reset under the consumer (`begin_frame` waits for its reader token).
//!
//! Run: `cargo run --release --example telemetry` (`ARENA_KIT_SMOKE=1` for a quick run).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::thread;
use std::time::Instant;

use allocator_api2::vec::Vec as ArenaVec;
use arena_kit::arena::{ArenaStats, FrameArena, FrameReader};

/// One profiler event, as a data capture records it.
#[derive(Debug, Clone, Copy)]
struct Event {
    name: &'static str,
    thread: u16,
    start_ns: u64,
    duration_ns: u32,
}

const ZONES: [&str; 4] = ["physics", "animation", "audio", "ai"];

struct Batch {
    thread: u16,
    frame: u64,
    events: FrameReader<[Event]>,
}

/// What each producer reports at the end.
struct ProducerReport {
    thread: u16,
    events: usize,
    stats: [ArenaStats; 2],
}

/// Runs the example (small sizes when `ARENA_KIT_SMOKE` is set).
pub fn run() {
    let smoke = std::env::var_os("ARENA_KIT_SMOKE").is_some();
    let (threads, frames, events_per_frame) = if smoke { (2, 4, 500) } else { (4, 120, 5_000) };
    let (send, recv) = mpsc::channel::<Batch>();

    let consumer = thread::spawn(move || {
        let mut per_zone: BTreeMap<&'static str, (usize, u64)> = BTreeMap::new();
        let mut batches = 0;
        for batch in recv {
            for e in batch.events.iter() {
                let entry = per_zone.entry(e.name).or_default();
                entry.0 += 1;
                entry.1 += u64::from(e.duration_ns);
            }
            debug_assert!(batch.events.iter().all(|e| e.thread == batch.thread));
            let _ = batch.frame;
            batches += 1;
        } // each reader token is dropped here, releasing its buffer for reuse
        (batches, per_zone)
    });

    let started = Instant::now();
    let producers: Vec<_> = (0..threads as u16)
        .map(|thread| {
            let send = send.clone();
            thread::spawn(move || {
                // one arena (pair) per instrumented thread, created on that thread
                let mut arenas = FrameArena::<2>::chained(64 * 1024);
                let mut total = 0;
                for _ in 0..frames {
                    let frame = arenas.begin_frame(); // waits if the consumer still reads this buffer
                    let mut events = ArenaVec::with_capacity_in(events_per_frame, frame.arena());
                    for i in 0..events_per_frame {
                        events.push(Event {
                            name: ZONES[i % ZONES.len()],
                            thread,
                            start_ns: (frame.number() * 16_666_667) + i as u64 * 100,
                            duration_ns: 50 + (i % 7) as u32 * 10,
                        });
                    }
                    total += events.len();
                    let events: &[Event] = events.leak();
                    let reader = frame
                        .publish(events)
                        .expect("the events live in this frame's buffer");
                    send.send(Batch {
                        thread,
                        frame: frame.number(),
                        events: reader,
                    })
                    .expect("consumer alive");
                }
                ProducerReport {
                    thread,
                    events: total,
                    stats: [arenas.buffer(0).stats(), arenas.buffer(1).stats()],
                }
            })
        })
        .collect();
    drop(send);

    let reports: Vec<ProducerReport> = producers
        .into_iter()
        .map(|p| p.join().expect("producer"))
        .collect();
    let (batches, per_zone) = consumer.join().expect("consumer");
    let elapsed = started.elapsed();

    let events: usize = reports.iter().map(|r| r.events).sum();
    println!(
        "telemetry: {threads} threads x {frames} frames x {events_per_frame} events = {events} events in {elapsed:.2?}"
    );
    println!("consumer read {batches} batches");
    for (zone, (count, ns)) in &per_zone {
        println!("  {zone:<10} {count:>8} events {:>10} ns", ns);
    }
    println!("per-thread arena statistics (buffer 0 | buffer 1):");
    for r in &reports {
        let [a, b] = r.stats;
        println!(
            "  thread {}: used {} | {} B, high water {} | {} B, pages {} | {}, system bytes {} | {}",
            r.thread,
            a.used,
            b.used,
            a.high_water,
            b.high_water,
            a.pages,
            b.pages,
            a.system_bytes,
            b.system_bytes
        );
    }
    assert_eq!(
        per_zone.values().map(|v| v.0).sum::<usize>(),
        events,
        "every event was read"
    );
}

fn main() {
    run()
}
