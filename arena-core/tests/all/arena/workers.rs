//! `WorkerArenas` belong to the rayon pool they were made in: workers of another pool (which
//! have the same thread indices) are refused and cannot lock the real workers out.
#![cfg(feature = "rayon")]

use std::sync::Mutex;

use arena_kit_core::arena::{NotAWorker, WorkerArenas};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// What `current` returns on every worker of `pool`, by worker index.
fn on_every_worker(pool: &rayon::ThreadPool, arenas: &WorkerArenas) -> Vec<(usize, bool)> {
    let seen = Mutex::new(Vec::new());
    pool.broadcast(|ctx| {
        let ok = match arenas.current() {
            Ok(arena) => {
                let v = arena.alloc(ctx.index() as u64);
                assert_eq!(*v, ctx.index() as u64);
                true
            }
            Err(NotAWorker) => false,
        };
        seen.lock().unwrap().push((ctx.index(), ok));
    });
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    seen
}

#[test]
fn workers_of_another_pool_are_refused_and_do_not_lock_out_the_owners() {
    let owner = pool(2);
    let other = pool(2);
    let arenas = owner.install(|| WorkerArenas::new(1024));
    assert_eq!(arenas.len(), 2);

    assert_eq!(
        on_every_worker(&other, &arenas),
        [(0, false), (1, false)],
        "workers of another pool must not get an arena"
    );
    assert_eq!(
        on_every_worker(&owner, &arenas),
        [(0, true), (1, true)],
        "the pool's own workers still get theirs"
    );
    assert!(arenas.current().is_err(), "the test thread is no worker");
}

#[test]
fn a_pool_made_later_with_the_same_size_is_refused() {
    let mut arenas = pool(3).install(|| WorkerArenas::new(1024));
    let later = pool(3);
    assert_eq!(
        on_every_worker(&later, &arenas),
        [(0, false), (1, false), (2, false)]
    );
    arenas.reset_all();
    assert_eq!(arenas.total_stats().used, 0);
}

#[test]
fn worker_arenas_made_outside_a_pool_belong_to_the_global_pool() {
    let mut arenas = WorkerArenas::new(1024);
    assert_eq!(arenas.len(), rayon::current_num_threads());
    let got: Vec<bool> = rayon::broadcast(|_| arenas.current().is_ok());
    assert!(got.iter().all(|&ok| ok));
    assert!(on_every_worker(&pool(1), &arenas).iter().all(|w| !w.1));
    arenas.reset_all();
}
