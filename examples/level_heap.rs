//! Level load and unload in a `FreeListHeap`: load, unload, fragment, reload.
//!
//! Level 1 loads its assets; while it plays, a few long-lived objects (a save-game buffer, UI
//! atlases, an audio bank) are allocated between them. Unloading level 1 frees its assets but the
//! long-lived objects stay, pinning the free space into pieces: total free memory is large, the
//! largest block is not. Level 2 then loads into that space. The stats, the layout line and an SVG
//! memory map (`target/arena-kit-examples/heap-map.svg`) show it; the same run under each `Fit`
//! policy compares them.
//!
//! Run: `cargo run --example level_heap` (set `ARENA_KIT_SMOKE=1` for a quick, small run).
#![allow(dead_code)]

use arena_kit::heap::HeapStats;
use arena_kit::prelude::*;
use core::alloc::Layout;
use core::ptr::NonNull;

#[path = "support/mod.rs"]
mod support;

/// A tiny deterministic generator, so every run tells the same story.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() as usize) % (hi - lo)
    }
}

struct Scenario {
    capacity: usize,
    assets: usize,
    max_asset: usize,
}

fn scenario() -> Scenario {
    if std::env::var_os("ARENA_KIT_SMOKE").is_some() {
        Scenario {
            capacity: 64 * 1024,
            assets: 12,
            max_asset: 4096,
        }
    } else {
        Scenario {
            capacity: 1024 * 1024,
            assets: 24,
            max_asset: 64 * 1024,
        }
    }
}

/// Loads a level's assets, with a long-lived allocation after every sixth one.
fn load_level(
    heap: &mut FreeListHeap<'_>,
    rng: &mut Rng,
    s: &Scenario,
    persistent: &mut Vec<NonNull<u8>>,
) -> Vec<NonNull<u8>> {
    let mut assets = Vec::new();
    for i in 0..s.assets {
        let size = rng.range(256, s.max_asset);
        match heap.try_alloc(Layout::from_size_align(size, 16).unwrap()) {
            Ok(p) => assets.push(p),
            Err(e) => println!("  asset {i} ({size} bytes) did not load: {e}"),
        }
        if i % 6 == 5 {
            let size = rng.range(64, 512);
            persistent.push(
                heap.try_alloc(Layout::from_size_align(size, 16).unwrap())
                    .unwrap(),
            );
        }
    }
    assets
}

fn print_stats(label: &str, stats: &HeapStats) {
    println!(
        "{label:<22} used {:>8}  free {:>8} in {:>3} blocks  largest free {:>8}  fragmentation {:>5.1}%",
        stats.used,
        stats.free,
        stats.free_blocks,
        stats.largest_free,
        stats.fragmentation() * 100.0
    );
}

/// Runs the scenario under `fit`; returns the stats after level 2 loaded, the layout line after
/// level 1 unloaded, and the memory map with level 2 loaded.
fn play(fit: Fit, s: &Scenario, verbose: bool) -> (HeapStats, String, String) {
    let mut heap = FreeListHeap::with_capacity(s.capacity).with_fit(fit);
    let mut rng = Rng(0x5EED_1E7E1);
    let mut persistent = Vec::new();

    let level1 = load_level(&mut heap, &mut rng, s, &mut persistent);
    if verbose {
        print_stats("level 1 loaded", &heap.stats());
    }
    for p in level1 {
        heap.free(p).expect("level 1 assets are live");
    }
    let layout = heap.to_string();
    if verbose {
        print_stats("level 1 unloaded", &heap.stats());
    }
    let level2 = load_level(&mut heap, &mut rng, s, &mut persistent);
    let loaded = heap.stats();
    if verbose {
        print_stats("level 2 loaded", &loaded);
    }
    heap.check().expect("the heap's bookkeeping is intact");
    let svg = heap.memory_map().to_string();
    for p in level2.into_iter().chain(persistent) {
        heap.free(p).expect("live");
    }
    heap.check().expect("the heap's bookkeeping is intact");
    (loaded, layout, svg)
}

/// Runs the scenario and prints what it shows.
pub fn run() {
    let s = scenario();
    println!(
        "== level load / unload in a {} KiB FreeListHeap (segregated fit) ==",
        s.capacity / 1024
    );
    let (_, layout, svg) = play(Fit::Segregated, &s, true);
    println!("layout after unloading level 1 (live = long-lived objects left behind):");
    println!("  {layout}");

    println!(
        "memory map of level 2: {}",
        support::write_output("heap-map.svg", &svg)
    );

    println!("with level 2 loaded, by policy:");
    for fit in [Fit::Segregated, Fit::Best, Fit::First] {
        let (stats, _, _) = play(fit, &s, false);
        print_stats(&format!("  {fit:?}"), &stats);
    }
}

fn main() {
    run()
}
