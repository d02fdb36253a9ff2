//! A `LockedHeap` as this test binary's `#[global_allocator]`: std's start-up, the test harness,
//! threads, formatting (including `Debug` of the heap itself) and std collections all allocate
//! from it, and its bookkeeping is consistent afterwards.
//!
//! Not built under Miri: there the test harness itself, run on this allocator, is reported by
//! both Stacked and Tree Borrows before and after the test (std frees a `Box` argument that is
//! still protected, and any global allocator that writes into freed memory, free-list links or
//! poison, then trips the check: rust-lang/rust#138839, yvt/rlsf#20), even with the test
//! ignored. Miri's aliasing models cover this path through the `LockedHeap` doctest, a
//! single-threaded program with the heap as its global allocator.
#![cfg(not(miri))]
use arena_kit_core::heap::LockedHeap;
use std::collections::{BTreeMap, HashMap};

const BYTES: usize = 1 << 24;

#[global_allocator]
static HEAP: LockedHeap<BYTES> = LockedHeap::new();

fn workload(thread: usize, rounds: usize) -> usize {
    let mut checksum = 0;
    for round in 0..rounds {
        let mut numbers: Vec<u64> = Vec::new();
        for i in 0..(200 + 37 * thread) as u64 {
            numbers.push(i * round as u64);
        }
        numbers.truncate(10);
        numbers.shrink_to_fit();
        checksum += numbers.len();

        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!("{thread}:{round}:{i};"));
        }
        checksum += text.len();

        let mut map: HashMap<String, Vec<u8>> = HashMap::new();
        for i in 0..64 {
            map.insert(format!("key {i}"), vec![i as u8; i]);
        }
        map.retain(|_, v| v.len() % 3 == 0);
        map.shrink_to_fit();
        checksum += map.len();

        let mut tree = BTreeMap::new();
        for i in 0..300u32 {
            tree.insert(i.wrapping_mul(2_654_435_761), thread);
        }
        while tree.len() > 20 {
            tree.pop_first();
        }
        checksum += tree.len();

        let debug = format!("{HEAP:?}");
        assert!(debug.starts_with("LockedHeap"), "{debug}");
        println!("thread {thread} round {round}: {debug}");
    }
    checksum
}

#[path = "support/quiet_panics.rs"]
mod quiet_panics;
use quiet_panics::report_panics_without_backtrace;

#[test]
fn std_programs_run_on_the_locked_heap() {
    report_panics_without_backtrace();
    let before = HEAP.stats().unwrap();
    assert!(
        before.allocations > 0,
        "std and the test harness allocated before this test: {before}"
    );
    let rounds = 20;
    let sums: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| s.spawn(move || workload(t, rounds)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(sums.len(), 4);
    assert!(sums.iter().all(|&s| s > 0));
    HEAP.check().unwrap();
    let after = HEAP.stats().unwrap();
    assert!(
        after.allocations > before.allocations + 4 * rounds as u64 * 100,
        "{after}"
    );
    assert!(after.peak_used > before.used);
    // Everything the workload allocated came back, but for the harness's buffer of the
    // captured output and what std keeps per thread.
    assert!(
        after.live_blocks <= before.live_blocks + 8 && after.used <= before.used + 64 * 1024,
        "before: {before}\nafter: {after}"
    );
    println!("{HEAP:?}");
}
