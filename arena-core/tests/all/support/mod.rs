//! Helpers shared by arena-core's integration tests.
#![allow(dead_code)]

use core::cell::Cell;
use proptest::test_runner::Config;
use std::rc::Rc;

/// Property-test settings: the normal case count natively, a handful under Miri (which is ~1000x
/// slower), and no failure-persistence files (Miri's isolation forbids file access).
pub fn proptest_config() -> Config {
    Config {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..Config::default()
    }
}

/// Picks the native size or a small one under Miri.
pub const fn miri_or(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
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

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
    }
}
