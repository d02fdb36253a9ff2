//! Interleaved best-of-N timing for loaded machines: every contender runs once per round, in
//! turn, and the fastest round of each is kept, so load from other processes hits all of them
//! alike. Criterion's figures follow in the same run; on a shared machine they swing more.

// Each bench uses the part it needs.
#![allow(dead_code)]

use std::time::Instant;

/// The fastest round seen for each named contender.
pub struct Interleaved {
    names: &'static [&'static str],
    best: Vec<u128>,
}

impl Interleaved {
    /// A table for the contenders in `names`, indexed in that order.
    pub fn new(names: &'static [&'static str]) -> Self {
        Interleaved {
            names,
            best: vec![u128::MAX; names.len()],
        }
    }

    /// Runs contender `k`'s round once and keeps it if it is its fastest.
    pub fn time(&mut self, k: usize, round: impl FnOnce()) {
        let start = Instant::now();
        round();
        self.best[k] = self.best[k].min(start.elapsed().as_nanos());
    }

    /// The fastest round of contender `k`, in nanoseconds.
    pub fn best(&self, k: usize) -> u128 {
        self.best[k]
    }

    /// Contender `a`'s fastest round over contender `b`'s.
    pub fn ratio(&self, a: usize, b: usize) -> f64 {
        self.best[a] as f64 / self.best[b] as f64
    }

    /// Prints every contender's fastest round in microseconds under `heading`.
    pub fn print(&self, heading: &str) {
        println!("{heading}");
        for (name, ns) in self.names.iter().zip(&self.best) {
            println!("  {name:<30} {:>9.1} us", *ns as f64 / 1000.0);
        }
    }

    /// Prints one ratio line.
    pub fn print_ratio(label: &str, ratio: f64) {
        println!("  ratio {label:<32} {ratio:.3}");
    }
}
