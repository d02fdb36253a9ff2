//! Attacks on the per-thread scratch arenas at thread exit that `frame_scope_attacks.rs` leaves
//! out: a thread whose first use of scratch is from a thread-local destructor (the scratch stack
//! is made while the thread's destructors are already running), panics caught inside such a
//! destructor, and the depth and usage queries from destructors before and after the stack is
//! gone.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use arena_kit_core::arena::{ThreadScratch, scratch, scratch_depth};
use arena_kit_core::tags::MemoryUsage;

/// What the destructors below saw, per test (each test has its own statics).
#[derive(Debug, Default, Clone, PartialEq)]
struct Seen {
    /// `scratch_depth()` inside the outer and the inner call.
    depths: Vec<(usize, usize)>,
    /// Values dropped by the scratch resets.
    drops: usize,
    /// Sums the closures computed.
    sums: Vec<u64>,
    /// Panics caught inside the destructor.
    caught: usize,
}

static FIRST_TOUCH: Mutex<Option<Seen>> = Mutex::new(None);
static FIRST_TOUCH_DROPS: AtomicUsize = AtomicUsize::new(0);

/// A value whose destructor (run by a scratch reset) opens scratch once more.
struct Reenters(&'static AtomicUsize);
impl Drop for Reenters {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        let s = scratch(|a| a.alloc_slice_fill_with(4, |i| i as u64).iter().sum::<u64>());
        assert_eq!(s, 6);
    }
}

/// Uses scratch from its destructor: nested calls, a panic caught inside one, values that
/// re-enter scratch when dropped.
struct ExitWorker(&'static Mutex<Option<Seen>>, &'static AtomicUsize);
impl Drop for ExitWorker {
    fn drop(&mut self) {
        let mut seen = Seen::default();
        for round in 0..3u64 {
            let sum = scratch(|outer| {
                let outer_depth = scratch_depth();
                outer.alloc(Reenters(self.1));
                let xs = outer.alloc_slice_fill_with(32, |i| i as u64 + round);
                let inner = scratch(|inner| {
                    seen.depths.push((outer_depth, scratch_depth()));
                    inner.alloc(Reenters(self.1));
                    // The usage query is safe to make here, whatever state the stack is in.
                    let _ = ThreadScratch.usage();
                    inner.alloc_slice_copy(&[round; 8]).iter().sum::<u64>()
                });
                // A panic inside a nested call, caught here: the outer arena stays usable.
                let r = catch_unwind(AssertUnwindSafe(|| {
                    scratch(|a| {
                        a.alloc(Reenters(self.1));
                        a.alloc([7u8; 100]);
                        panic!("inside a thread-local destructor");
                    })
                }));
                if r.is_err() {
                    seen.caught += 1;
                }
                xs.iter().sum::<u64>() + inner
            });
            seen.sums.push(sum);
        }
        assert_eq!(scratch_depth(), 0);
        *self.0.lock().unwrap() = Some(seen);
    }
}

thread_local! {
    static WORKER: Cell<Option<ExitWorker>> = const { Cell::new(None) };
}

fn expected_sums() -> Vec<u64> {
    (0..3u64)
        .map(|round| (0..32u64).map(|i| i + round).sum::<u64>() + 8 * round)
        .collect()
}

/// Attack: a thread that never used scratch, whose thread-local destructor is the first to:
/// the scratch stack is created while the thread's destructors are running. Every call works
/// (on the stack, or on temporary arenas if the platform no longer keeps it), nested depths are
/// distinct, and every value is dropped exactly once.
#[test]
fn scratch_first_used_from_a_thread_local_destructor() {
    thread::spawn(|| {
        WORKER.with(|w| w.set(Some(ExitWorker(&FIRST_TOUCH, &FIRST_TOUCH_DROPS))));
    })
    .join()
    .unwrap();
    let seen = FIRST_TOUCH
        .lock()
        .unwrap()
        .take()
        .expect("the destructor ran");
    assert_eq!(seen.sums, expected_sums());
    assert_eq!(seen.caught, 3);
    for &(outer, inner) in &seen.depths {
        // On the stack: 1 and 2; on temporary arenas (stack gone): 0 and 0.
        assert!(
            (outer, inner) == (1, 2) || (outer, inner) == (0, 0),
            "{outer} {inner}"
        );
    }
    // Three `Reenters` per round (outer, inner, the panicking call), three rounds.
    assert_eq!(FIRST_TOUCH_DROPS.load(Ordering::SeqCst), 9);
}

static AFTER: Mutex<Option<Seen>> = Mutex::new(None);
static AFTER_DROPS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static EARLY_WORKER: Cell<Option<ExitWorker>> = const { Cell::new(None) };
}

/// Attack: the same destructor on a thread that used scratch after registering it, so the
/// scratch stack is destroyed first and every call gets a temporary arena (depth 0); the usage
/// query reads nothing then.
#[test]
fn scratch_from_a_destructor_after_the_stack_is_gone() {
    thread::spawn(|| {
        EARLY_WORKER.with(|w| w.set(Some(ExitWorker(&AFTER, &AFTER_DROPS))));
        scratch(|a| {
            a.alloc(Reenters(&AFTER_DROPS));
        });
        assert_eq!(AFTER_DROPS.load(Ordering::SeqCst), 1);
    })
    .join()
    .unwrap();
    let seen = AFTER.lock().unwrap().take().expect("the destructor ran");
    assert_eq!(seen.sums, expected_sums());
    assert_eq!(seen.caught, 3);
    assert_eq!(AFTER_DROPS.load(Ordering::SeqCst), 10);
}
