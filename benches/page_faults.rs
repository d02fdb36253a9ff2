//! Time and minor page faults of filling pools with fresh memory, and of making and dropping
//! pools in a loop (BENCHMARKS.md, "A never-used slot is written without being read").
//!
//! ```sh
//! cargo bench -p arena-kit-benches --bench page_faults
//! # the same with chunks from the global allocator instead of a reserved range (a finite
//! # `ulimit -v` turns ranges off); the path is the one cargo prints for this bench:
//! (ulimit -v 16000000; target/release/deps/page_faults-<hash>)
//! ```
//!
//! Each line is the best of five rounds.

use std::hint::black_box;
use std::time::{Duration, Instant};

use arena_kit::pool::Pool;

/// Minor page faults of this thread so far (0 where `getrusage` has no per-thread count).
fn minor_faults() -> i64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `rusage` is plain integers, for which all-zero bytes are valid.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is a valid, writable `rusage` for the call to fill.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } == 0 {
            return usage.ru_minflt;
        }
    }
    0
}

/// Runs `work` five times; the shortest time and the faults of that round.
fn best_of_five(mut work: impl FnMut()) -> (Duration, i64) {
    (0..5)
        .map(|_| {
            let faults = minor_faults();
            let start = Instant::now();
            work();
            (start.elapsed(), minor_faults() - faults)
        })
        .min()
        .expect("five rounds")
}

fn report(what: &str, (time, faults): (Duration, i64)) {
    println!(
        "{what:<64} {:>8.1} ms {faults:>8} faults",
        time.as_secs_f64() * 1e3
    );
}

fn main() {
    type Value = [u64; 8];
    /// A layout's name, and how it is made for a number of values.
    type Layout = (&'static str, fn(usize) -> Pool<Value>);
    let layouts: [Layout; 2] = [
        ("growable", |_| Pool::new()),
        ("fixed", Pool::with_capacity),
    ];
    for (layout, new) in layouts {
        report(
            &format!("{layout}: 1,000,000 inserts into a new pool, and its drop"),
            best_of_five(|| {
                let mut pool = new(1_000_000);
                for i in 0..1_000_000u64 {
                    black_box(pool.insert([i; 8]));
                }
                black_box(&pool);
            }),
        );
        report(
            &format!("{layout}: 100 x (new pool, 10,000 inserts, drop)"),
            best_of_five(|| {
                for round in 0..100u64 {
                    let mut pool = new(10_000);
                    for i in 0..10_000u64 {
                        black_box(pool.insert([i ^ round; 8]));
                    }
                    black_box(&pool);
                }
            }),
        );
    }
}
