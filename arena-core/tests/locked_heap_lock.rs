//! The lock behind `LockedHeap`, in both of its builds: with `std` it tells threads apart by a
//! thread-local token; without (`cargo test -p arena-kit-core --no-default-features --features
//! alloc --test locked_heap_lock`, as CI runs it) it only knows whether a heap operation or a
//! `with` closure holds it. Either way: concurrent operations never share a block, re-entry from
//! a `with` closure gets null or `HeapError::InUse` at once, and nothing hangs. Where the two
//! differ (another thread meeting a `with` closure: it waits with `std`; without, it is refused at
//! once, and a free it makes is skipped, so that block leaks), each build's test says so.
use arena_kit_core::heap::{HeapError, LockedHeap};
use core::alloc::{GlobalAlloc, Layout};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, mpsc};
use std::time::Duration;

/// Runs `f` on another thread and says whether it finished within a few seconds (a deadlock or
/// an endless spin would not; the stuck thread is left behind and dies with the test process).
fn finishes(f: impl FnOnce() + Send + 'static) -> bool {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(if cfg!(miri) { 600 } else { 20 }))
        .is_ok()
}

fn rounds() -> usize {
    if cfg!(miri) { 20 } else { 2000 }
}

#[test]
fn threads_allocating_at_once_never_share_a_block() {
    static HEAP: LockedHeap<{ 1 << 18 }> = LockedHeap::new();
    let done = finishes(|| {
        std::thread::scope(|s| {
            for t in 0..4u8 {
                s.spawn(move || {
                    for round in 0..rounds() {
                        let size = 16 + (round * 7 + usize::from(t) * 13) % 200;
                        let layout = Layout::from_size_align(size, 8).unwrap();
                        // SAFETY: non-zero size; the block is written within `size` bytes and
                        // freed with the same layout.
                        unsafe {
                            let p = HEAP.alloc(layout);
                            assert!(!p.is_null(), "thread {t} round {round}: {size} bytes");
                            p.write_bytes(t, size);
                            std::thread::yield_now();
                            let bytes = core::slice::from_raw_parts(p, size);
                            assert!(bytes.iter().all(|&b| b == t), "another thread wrote here");
                            HEAP.dealloc(p, layout);
                        }
                    }
                });
            }
        });
    });
    assert!(done, "the threads finished");
    HEAP.check().unwrap();
    let stats = HEAP.stats().unwrap();
    assert_eq!(stats.live_blocks, 0, "{stats}");
    assert_eq!(stats.allocations, 4 * rounds() as u64, "{stats}");
}

#[test]
fn a_with_closure_using_its_own_heap_gets_null_and_in_use_at_once() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let layout = Layout::from_size_align(64, 8).unwrap();
    let done = finishes(move || {
        // SAFETY: non-zero size; freed below with the same layout.
        let outside = unsafe { HEAP.alloc(layout) };
        assert!(!outside.is_null());
        HEAP.with(|heap| {
            // SAFETY: non-zero size; nothing is returned to free.
            assert!(unsafe { HEAP.alloc(layout) }.is_null(), "alloc inside with");
            // SAFETY: `outside` is a live block of HEAP with this layout; refused, so the block
            // stays as it is.
            let grown = unsafe { HEAP.realloc(outside, layout, 128) };
            assert!(grown.is_null(), "realloc inside with");
            // SAFETY: as above; skipped (the block stays live, as the closure sees it).
            unsafe { HEAP.dealloc(outside, layout) };
            assert!(matches!(HEAP.stats(), Err(HeapError::InUse)));
            assert!(matches!(HEAP.check(), Err(HeapError::InUse)));
            assert!(matches!(HEAP.with(|_| ()), Err(HeapError::InUse)));
            // HEAP is not this binary's global allocator, so formatting may allocate here.
            let text = format!("{HEAP:?}");
            assert!(text.contains("<in use by"), "{text}");
            assert_eq!(
                heap.stats().live_blocks,
                1,
                "the skipped free left the block live"
            );
        })
        .unwrap();
        assert_eq!(HEAP.stats().unwrap().live_blocks, 1);
        // SAFETY: still live (the free inside `with` was skipped); same layout.
        unsafe { HEAP.dealloc(outside, layout) };
    });
    assert!(done, "re-entry returned at once");
    assert_eq!(HEAP.stats().unwrap().live_blocks, 0);
    HEAP.check().unwrap();
}

#[test]
fn a_panicking_with_closure_releases_the_lock() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        HEAP.with(|_| panic!("inside with")).unwrap();
    }));
    assert!(caught.is_err());
    let layout = Layout::from_size_align(32, 8).unwrap();
    // SAFETY: non-zero size; freed with the same layout.
    unsafe {
        let p = HEAP.alloc(layout);
        assert!(!p.is_null(), "the lock was released by the unwinding");
        HEAP.dealloc(p, layout);
    }
    HEAP.check().unwrap();
}

/// Holds `HEAP.with` on one thread until the other has tried its allocation, and returns what
/// that allocation got (null or not) and how `stats` answered meanwhile.
fn another_thread_during_with(heap: &'static LockedHeap<{ 1 << 16 }>) -> (bool, bool) {
    let layout = Layout::from_size_align(48, 8).unwrap();
    let inside = Barrier::new(2);
    let tried = AtomicBool::new(false);
    let (got_memory, stats_in_use) = std::thread::scope(|s| {
        s.spawn(|| {
            heap.with(|_| {
                inside.wait();
                // With std the other thread waits for this closure, so give up after a while.
                for _ in 0..200 {
                    if tried.load(Ordering::Acquire) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .unwrap();
        });
        inside.wait();
        let stats_in_use = matches!(heap.stats(), Err(HeapError::InUse));
        // SAFETY: non-zero size; freed below with the same layout.
        let p = unsafe { heap.alloc(layout) };
        tried.store(true, Ordering::Release);
        if !p.is_null() {
            // SAFETY: just allocated with `layout`.
            unsafe { heap.dealloc(p, layout) };
        }
        (!p.is_null(), stats_in_use)
    });
    heap.check().unwrap();
    assert_eq!(heap.stats().unwrap().live_blocks, 0);
    (got_memory, stats_in_use)
}

#[cfg(feature = "std")]
#[test]
fn with_std_another_thread_waits_for_a_with_closure() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let (got_memory, stats_in_use) = another_thread_during_with(&HEAP);
    assert!(
        got_memory,
        "the allocation waited for the closure, then succeeded"
    );
    assert!(!stats_in_use, "stats waited too");
}

#[cfg(not(feature = "std"))]
#[test]
fn without_std_every_thread_is_refused_while_a_with_closure_runs() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let (got_memory, stats_in_use) = another_thread_during_with(&HEAP);
    assert!(
        !got_memory,
        "the lock cannot tell the other thread from the closure, so it refuses rather than spin"
    );
    assert!(stats_in_use);
}

#[test]
fn operations_racing_with_closures_finish_and_leave_the_heap_whole() {
    static HEAP: LockedHeap<{ 1 << 18 }> = LockedHeap::new();
    let done = finishes(|| {
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let live = HEAP.with(|heap| heap.stats().live_blocks).unwrap();
                    // Without std a free that meets a `with` closure is skipped: the block leaks.
                    assert!(live <= 3 || cfg!(not(feature = "std")), "{live}");
                }
            });
            let workers: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let layout = Layout::from_size_align(40, 8).unwrap();
                        let mut got = 0;
                        for _ in 0..rounds() {
                            // SAFETY: non-zero size; freed at once with the same layout.
                            unsafe {
                                let p = HEAP.alloc(layout);
                                if !p.is_null() {
                                    got += 1;
                                    HEAP.dealloc(p, layout);
                                }
                            }
                        }
                        got
                    })
                })
                .collect();
            let got: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
            stop.store(true, Ordering::Relaxed);
            // Without std a `with` in progress refuses; with std every allocation succeeds.
            if cfg!(feature = "std") {
                assert_eq!(got, 3 * rounds());
            }
        });
    });
    assert!(done, "nobody spun forever");
    HEAP.check().unwrap();
    let live = HEAP.stats().unwrap().live_blocks;
    if cfg!(feature = "std") {
        assert_eq!(live, 0);
    } else {
        assert!(live <= 3 * rounds(), "at most every block leaked, {live}");
    }
}
