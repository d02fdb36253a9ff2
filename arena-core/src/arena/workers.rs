//! Per-thread arenas for a job system: one [`Arena`] per rayon worker, reset together at frame
//! end.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use std::thread::{self, ThreadId};

use super::{Arena, ArenaStats};

/// One arena per worker of the current rayon pool. A job gets its worker's arena with
/// [`current`](WorkerArenas::current) and allocates without any synchronisation; values live
/// until [`reset_all`](WorkerArenas::reset_all), which needs `&mut self`, so no job can still hold
/// them.
///
/// ```
/// use arena_kit::arena::WorkerArenas;
/// use rayon::prelude::*;
///
/// let mut arenas = WorkerArenas::new(4096);
/// for _frame in 0..3 {
///     let sums: Vec<u64> = (0..64u64)
///         .into_par_iter()
///         .map(|i| {
///             let arena = arenas.current().expect("runs on a rayon worker");
///             let tmp = arena.alloc_slice_fill_with(16, |j| i + j as u64);
///             tmp.iter().sum()
///         })
///         .collect();
///     assert_eq!(sums[0], 120);
///     arenas.reset_all(); // frame end
/// }
/// ```
///
/// # Variance
///
/// No parameters.
pub struct WorkerArenas {
    slots: Box<[Slot]>,
}

struct Slot {
    /// The worker thread this slot belongs to, recorded when the arenas were made; only it
    /// touches `arena` through `&self`.
    owner: ThreadId,
    arena: Arena,
}

// SAFETY: through `&WorkerArenas`, a slot's arena is only reached by the one thread whose id was
// recorded for that slot when the arenas were made (checked in `current`; thread ids are unique
// and never reused, so a worker of another pool, or of a later pool, never matches). The
// arena's cells are thus never accessed from two threads at once, and never from a thread other
// than the slot's owner while `&WorkerArenas` is shared. Everything else (`reset_all`,
// `iter_mut`, `total_stats`, dropping) needs `&mut self` or ownership, and `Arena` is `Send`, so
// handing the whole set to another thread is sound.
unsafe impl Sync for WorkerArenas {}

/// [`WorkerArenas::current`] was called off the pool the arenas were made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAWorker;

impl fmt::Display for NotAWorker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "not on a worker of the rayon pool these arenas were made for; call current() from \
             inside that pool (e.g. in par_iter or rayon::scope)",
        )
    }
}

impl core::error::Error for NotAWorker {}

impl WorkerArenas {
    /// One chained arena (pages of `page_bytes`) per thread of the current rayon pool: the
    /// pool this is called in (inside `ThreadPool::install` or a job), or the global pool.
    /// Runs a short job on every worker of that pool to learn which threads they are, so it
    /// blocks until each worker is free for a moment.
    pub fn new(page_bytes: usize) -> WorkerArenas {
        let mut owners: Vec<(usize, ThreadId)> =
            rayon::broadcast(|ctx| (ctx.index(), thread::current().id()));
        owners.sort_unstable_by_key(|&(index, _)| index);
        WorkerArenas {
            slots: owners
                .into_iter()
                .enumerate()
                .map(|(i, (index, owner))| {
                    debug_assert_eq!(i, index, "one broadcast job per worker index");
                    Slot {
                        owner,
                        arena: Arena::chained(page_bytes),
                    }
                })
                .collect(),
        }
    }

    /// The calling worker's arena.
    ///
    /// # Errors
    ///
    /// [`NotAWorker`] off the pool, or on a different pool than the one the arenas were made for.
    pub fn current(&self) -> Result<&Arena, NotAWorker> {
        let slot = rayon::current_thread_index()
            .and_then(|i| self.slots.get(i))
            .ok_or(NotAWorker)?;
        if slot.owner == thread::current().id() {
            Ok(&slot.arena)
        } else {
            Err(NotAWorker)
        }
    }

    /// Resets every worker's arena (frame end), dropping their pending values. Pages are kept.
    pub fn reset_all(&mut self) {
        for slot in self.slots.iter_mut() {
            slot.arena.reset();
        }
    }

    /// The arenas, one per worker.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Arena> {
        self.slots.iter_mut().map(|s| &mut s.arena)
    }

    /// The sum of every worker arena's statistics (`high_water` is the sum of the high waters).
    pub fn total_stats(&mut self) -> ArenaStats {
        self.iter_mut()
            .map(|a| a.stats())
            .fold(ArenaStats::default(), |t, s| ArenaStats {
                used: t.used + s.used,
                remaining: t.remaining + s.remaining,
                capacity: t.capacity + s.capacity,
                high_water: t.high_water + s.high_water,
                pages: t.pages + s.pages,
                allocations: t.allocations + s.allocations,
                system_bytes: t.system_bytes + s.system_bytes,
            })
    }

    /// Number of worker arenas.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no worker arenas (a pool with no threads).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

impl fmt::Debug for WorkerArenas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerArenas")
            .field("workers", &self.slots.len())
            .finish()
    }
}
