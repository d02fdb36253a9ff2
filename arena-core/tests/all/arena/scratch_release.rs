//! `scratch_release`: the idle scratch arenas of a thread give their pages back, and the arenas
//! of the calls in progress keep theirs, from every place safe code can call it: outside any
//! call, inside one (the caller's own values stay readable), from a destructor that a scratch
//! reset runs, from a thread-local destructor while the thread exits, and across threads.

use std::cell::Cell;
use std::thread;

use arena_kit_core::arena::{Arena, ThreadScratch, scratch, scratch_depth, scratch_release};
use arena_kit_core::tags::MemoryUsage;

/// A temporary larger than a scratch page: the arena keeps a page that size after it.
const LARGE: usize = if cfg!(miri) { 96 * 1024 } else { 1 << 20 };

/// Takes [`LARGE`] bytes from `arena`, unwritten (writing them byte by byte is slow under Miri).
fn take_large(arena: &Arena) -> usize {
    let layout = core::alloc::Layout::from_size_align(LARGE, 8).unwrap();
    arena.alloc_layout(layout);
    LARGE
}

fn reserved() -> usize {
    ThreadScratch.usage().reserved
}

#[test]
fn outside_any_call_every_scratch_arena_gives_its_pages_back() {
    thread::spawn(|| {
        assert_eq!(scratch_release(), 0, "a thread that never used scratch");
        scratch(|a| {
            take_large(a);
            scratch(take_large);
        });
        let held = reserved();
        assert!(held >= 2 * LARGE, "{held}");
        // Pages and their headers; `reserved` counts the pages' room for values.
        let released = scratch_release();
        assert!(
            released >= held && released < held + 1024,
            "{released} for {held}"
        );
        assert_eq!(reserved(), 0);
        assert_eq!(scratch_release(), 0, "nothing left to release");
        // The next calls start new arenas, at both depths.
        let sum = scratch(|a| {
            let x = a.alloc(40u64);
            *x + scratch(|b| *b.alloc(2u64))
        });
        assert_eq!(sum, 42);
    })
    .join()
    .unwrap();
}

#[test]
fn inside_a_call_the_callers_arena_keeps_its_values_and_deeper_ones_are_released() {
    thread::spawn(|| {
        scratch(|outer| {
            let kept = outer.alloc_slice_fill_with(64, |i| i as u32);
            // A deeper call takes a large page for its arena, then returns.
            scratch(take_large);
            let before = reserved();
            let released = scratch_release();
            assert!(released >= LARGE, "{released}");
            let freed = before - reserved();
            assert!(freed >= LARGE && released >= freed, "{released}, {freed}");
            // The caller's values are untouched and its arena still serves.
            assert!(kept.iter().enumerate().all(|(i, &v)| v == i as u32));
            let more = outer.alloc_slice_copy(&[7u32; 16]);
            assert_eq!(more.iter().sum::<u32>(), 112);
            // And a deeper call works again on a new arena.
            assert_eq!(scratch(|inner| *inner.alloc(5u8)), 5);
            // Two levels down, the release leaves both callers' arenas alone.
            scratch(|middle| {
                let mid = middle.alloc([9u8; 32]);
                scratch_release();
                assert_eq!(mid.iter().map(|&b| b as u32).sum::<u32>(), 288);
                assert_eq!(scratch_depth(), 2);
            });
            assert_eq!(kept[63], 63);
        });
    })
    .join()
    .unwrap();
}

thread_local! {
    static RELEASED_IN_DROP: Cell<Option<usize>> = const { Cell::new(None) };
}

/// A value whose destructor, run by its scratch arena's reset, releases the idle arenas and
/// then opens scratch again.
struct ReleasesOnDrop(u64);

impl Drop for ReleasesOnDrop {
    fn drop(&mut self) {
        let depth = scratch_depth();
        let released = scratch_release();
        RELEASED_IN_DROP.with(|r| r.set(Some(released)));
        // The arena being reset is not released under it: a new call gets a deeper one.
        let sum: u64 = scratch(|a| {
            a.alloc_slice_fill_with(8, |i| i as u64 + self.0)
                .iter()
                .sum()
        });
        assert_eq!(sum, 28 + 8 * self.0);
        assert_eq!(scratch_depth(), depth);
    }
}

#[test]
fn a_destructor_run_by_a_scratch_reset_releases_only_the_idle_arenas() {
    thread::spawn(|| {
        // A deeper arena with a large page exists before the destructor runs.
        scratch(|a| {
            scratch(take_large);
            a.alloc(ReleasesOnDrop(1));
            a.alloc_slice_fill_copy(100, 4u8);
        });
        let released = RELEASED_IN_DROP
            .with(Cell::get)
            .expect("the destructor ran");
        assert!(released >= LARGE, "{released}");
        // The arena that ran the destructor finished its reset and is still the thread's.
        assert!(reserved() > 0);
        assert_eq!(scratch(|a| *a.alloc(11u16)), 11);
    })
    .join()
    .unwrap();
}

/// Releases the thread's scratch from its thread-local destructor, then uses scratch.
struct ReleasesAtExit(std::sync::mpsc::Sender<(usize, u64)>);

impl Drop for ReleasesAtExit {
    fn drop(&mut self) {
        let released = scratch_release();
        let sum = scratch(|a| a.alloc_slice_fill_with(4, |i| i as u64).iter().sum::<u64>());
        let _ = self.0.send((released, sum));
    }
}

thread_local! {
    static AT_EXIT: Cell<Option<ReleasesAtExit>> = const { Cell::new(None) };
}

#[test]
fn releasing_from_a_thread_local_destructor_at_thread_exit_is_harmless() {
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        // Registered before the scratch stack exists, so it is dropped after it (destructors
        // run in reverse order of registration on most platforms; either order must hold).
        AT_EXIT.with(|c| c.set(Some(ReleasesAtExit(tx))));
        scratch(take_large);
    })
    .join()
    .unwrap();
    let (released, sum) = rx.recv().unwrap();
    assert_eq!(sum, 6);
    // With the stack still there, its large page was released; once gone, there was nothing.
    assert!(released == 0 || released >= LARGE, "{released}");
}

#[test]
fn one_thread_releasing_leaves_another_threads_scratch_alone() {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let worker = thread::spawn(move || {
        scratch(|a| {
            let mine = a.alloc_slice_fill_with(256, |i| i as u16);
            ready_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            assert!(mine.iter().enumerate().all(|(i, &v)| v == i as u16));
        });
        reserved()
    });
    ready_rx.recv().unwrap();
    scratch(take_large);
    assert!(scratch_release() >= LARGE);
    go_tx.send(()).unwrap();
    assert!(
        worker.join().unwrap() > 0,
        "the worker's arena kept its page"
    );
}
