//! Helpers shared by arena-kit-core's integration tests.
#![allow(dead_code)]

use core::cell::{Cell, RefCell};
use proptest::test_runner::Config;
use std::rc::Rc;
use std::sync::Once;

pub mod panics;

/// Property-test settings: the normal case count natively, two cases under Miri (which is ~1000x
/// slower: the model tests are most of CI's Miri time, and Miri looks for undefined behaviour
/// along the paths a case takes, not for the semantics the native cases check), and no
/// failure-persistence files (Miri's isolation forbids file access).
pub fn proptest_config() -> Config {
    Config {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..Config::default()
    }
}

/// Picks the native size or a small one under Miri.
pub const fn miri_or(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// A drop counter that can cross threads (values that count into it are `Send`, so the
/// drop-registering paths take them).
pub fn counter() -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0))
}

/// The drops counted in `c` so far.
pub fn drops(c: &std::sync::Arc<std::sync::atomic::AtomicUsize>) -> usize {
    c.load(std::sync::atomic::Ordering::Relaxed)
}

/// A value that counts its drops in a shared counter, to prove nothing is dropped twice or lost.
#[derive(Debug)]
pub struct DropCounter {
    pub id: u64,
    drops: Rc<Cell<usize>>,
}

impl DropCounter {
    pub fn new(id: u64, drops: &Rc<Cell<usize>>) -> Self {
        DropCounter {
            id,
            drops: Rc::clone(drops),
        }
    }
}

/// Equal ids (the counter they share does not count).
impl PartialEq for DropCounter {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
    }
}

// A logger that keeps each thread's records, so parallel tests do not see each other's: one per
// test binary (a process has one logger).

thread_local! {
    static LOGGED: RefCell<Vec<(log::Level, String, String)>> = const { RefCell::new(Vec::new()) };
}

struct TestLogger;

impl log::Log for TestLogger {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        LOGGED.with(|l| {
            l.borrow_mut().push((
                record.level(),
                record.target().to_string(),
                record.args().to_string(),
            ))
        });
    }
    fn flush(&self) {}
}

/// Installs the logger (once per process) and returns what this thread logged during `f`.
pub fn logged<R>(f: impl FnOnce() -> R) -> (R, Vec<(log::Level, String, String)>) {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        log::set_logger(&TestLogger).unwrap();
        log::set_max_level(log::LevelFilter::Trace);
    });
    LOGGED.with(|l| l.borrow_mut().clear());
    let r = f();
    (r, LOGGED.with(|l| std::mem::take(&mut *l.borrow_mut())))
}

/// A small seeded generator (SplitMix64) for the tests that draw random operation sequences
/// by hand. Any seed works, 0 included.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`; 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}
