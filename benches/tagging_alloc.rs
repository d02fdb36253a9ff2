//! The cost of `TaggingAllocator<System>` against `System` itself: building and dropping a
//! `BTreeMap<String, Vec<u32>>` of 10,000 entries (interleaved best-of-N rounds), and with an
//! argument, a loop of malloc/free pairs to count instructions under callgrind. See BENCHMARKS.md
//! for the figures and the commands.
//!
//! Run: `cargo bench -p arena-kit-benches --bench tagging_alloc`
//!
//! The binary's global allocator is a switch between the two, set only between rounds (a round
//! frees everything it allocates): so both contenders run in one process, interleaved, and both
//! pay the switch's one relaxed load and branch per call.

#[path = "support/interleaved.rs"]
mod interleaved;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

use arena_kit::tags::{TaggingAllocator, global_rows, tag_scope};
use interleaved::Interleaved;

const ENTRIES: usize = 10_000;

static TAGGED: AtomicBool = AtomicBool::new(true);
static TAGGING: TaggingAllocator = TaggingAllocator::new(System);

/// `TaggingAllocator<System>` while `TAGGED` is set, `System` otherwise.
struct Switch;

// SAFETY: each call goes to one of two allocators, and `TAGGED` changes only between rounds
// that free everything they allocate, so a block is always freed (or grown) by the allocator
// that allocated it; the rest of the program allocates only while `TAGGED` is set.
unsafe impl GlobalAlloc for Switch {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's contract.
        unsafe {
            if TAGGED.load(Ordering::Relaxed) {
                TAGGING.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }
    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded; the block came from the same side (see the impl's comment).
        unsafe {
            if TAGGED.load(Ordering::Relaxed) {
                TAGGING.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`.
        unsafe {
            if TAGGED.load(Ordering::Relaxed) {
                TAGGING.realloc(ptr, layout, new_size)
            } else {
                System.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[global_allocator]
static GLOBAL: Switch = Switch;

/// Builds and drops the map; everything it allocates is freed before it returns.
#[inline(never)]
fn btree_round() -> usize {
    let mut map: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for i in 0..ENTRIES {
        let n = i as u32;
        map.insert(
            format!("entity {:08}", n.wrapping_mul(2_654_435_761)),
            vec![n; i % 16],
        );
    }
    let len = map.len();
    drop(black_box(map));
    len
}

/// `n` malloc/free pairs of 64 bytes straight through `alloc` (the callgrind loop).
#[inline(never)]
fn pairs<A: GlobalAlloc>(alloc: &A, n: usize) {
    let layout = Layout::from_size_align(64, 8).unwrap();
    for _ in 0..n {
        // SAFETY: a non-zero layout; the block is freed with the same layout.
        unsafe {
            let p = alloc.alloc(black_box(layout));
            black_box(p).write(1);
            alloc.dealloc(p, layout);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `tagging_alloc pairs tagged|system N`: the loop callgrind counts (no timing).
    if args.get(1).map(String::as_str) == Some("pairs") {
        let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(100_000);
        let _scope = tag_scope("Bench");
        match args.get(2).map(String::as_str) {
            Some("system") => pairs(&System, n),
            _ => pairs(&TaggingAllocator::new(System), n),
        }
        return;
    }
    // `tagging_alloc btree tagged|system`: one round on one side (no timing), for callgrind.
    if args.get(1).map(String::as_str) == Some("btree") {
        let system = args.get(2).map(String::as_str) == Some("system");
        let _scope = tag_scope("Bench");
        TAGGED.store(!system, Ordering::SeqCst);
        assert_eq!(btree_round(), ENTRIES);
        TAGGED.store(true, Ordering::SeqCst);
        return;
    }
    let rounds = 200;
    let names: &'static [&'static str] = &["System", "TaggingAllocator<System>"];
    let mut t = Interleaved::new(names);
    let mut sum = 0;
    for _ in 0..rounds {
        TAGGED.store(false, Ordering::SeqCst);
        t.time(0, || sum += btree_round());
        TAGGED.store(true, Ordering::SeqCst);
        let _scope = tag_scope("Bench");
        t.time(1, || sum += btree_round());
    }
    assert_eq!(sum, 2 * rounds * ENTRIES);
    t.print(&format!(
        "build and drop BTreeMap<String, Vec<u32>> of {ENTRIES} entries, best of {rounds}"
    ));
    Interleaved::print_ratio("TaggingAllocator / System", t.ratio(1, 0));
    let rows = global_rows("Untracked");
    let bench = rows.iter().find(|r| r.tag == "Bench").map(|r| r.usage);
    println!("  rows after the rounds: Bench {bench:?}");
}
