//! `Pool::new` (allocates nothing until the first insert), `reserve` / `try_reserve` and
//! `shrink_to_fit`: what they allocate and free, that failures change nothing, and that a slot's
//! generation survives shrinking and growing again.

use crate::support::{self, DropCounter};

use std::cell::Cell;
use std::rc::Rc;

use arena_kit_core::pool::{MAX_CAPACITY, Pool, PoolReserveError, PoolStats};

#[test]
fn new_pool_allocates_nothing_until_the_first_insert() {
    let mut pool: Pool<u64> = Pool::new();
    assert_eq!(
        (pool.len(), pool.capacity(), pool.stats().blocks),
        (0, 0, 0)
    );
    assert!(pool.is_growable() && pool.is_empty());
    assert_eq!(pool.iter().count(), 0);
    let a = pool.insert(7);
    assert_eq!((pool.capacity(), pool.stats().blocks), (256, 1));
    assert_eq!(pool[a], 7);
    let default: Pool<u64> = Pool::default();
    assert_eq!(default.capacity(), 0);
}

#[test]
fn new_pool_chunk_size_follows_the_value_size() {
    fn first_chunk<T>(value: T) -> usize {
        let mut pool = Pool::new();
        pool.insert(value);
        pool.capacity()
    }
    assert_eq!(first_chunk(()), 512); // the smallest slot: 8 bytes
    assert_eq!(first_chunk(0u8), 512);
    assert_eq!(first_chunk(0u64), 256);
    assert_eq!(first_chunk([0u64; 8]), 32); // 72-byte slots: 56 fit, rounded down
    assert_eq!(first_chunk([0u8; 1000]), 16); // at least 16
}

/// A new pool grows chunk by chunk past its first and serves every value from the right slot.
#[test]
fn new_pool_grows_past_its_first_chunk() {
    let n = support::miri_or(2000, 300);
    let mut pool = Pool::new();
    let handles: Vec<_> = (0..n).map(|i| pool.insert([i; 8])).collect();
    assert_eq!(pool.len(), n);
    assert_eq!(pool.capacity(), n.div_ceil(32) * 32);
    for (i, &h) in handles.iter().enumerate() {
        assert_eq!(pool[h], [i; 8]);
    }
    for &h in handles.iter().step_by(3) {
        assert!(pool.remove(h).is_some());
    }
    assert_eq!(pool.len(), n - n.div_ceil(3));
}

#[test]
fn reserve_adds_whole_chunks_and_counts_free_slots() {
    let mut pool: Pool<u64> = Pool::new();
    pool.reserve(0);
    assert_eq!(pool.capacity(), 0);
    pool.reserve(300);
    assert_eq!((pool.capacity(), pool.stats().blocks), (512, 2));
    let handles: Vec<_> = (0..300).map(|i| pool.insert(i)).collect();
    assert_eq!(
        pool.capacity(),
        512,
        "the reserved inserts allocated nothing"
    );
    pool.reserve(212);
    assert_eq!(pool.capacity(), 512, "212 free slots were there already");
    for &h in &handles[..100] {
        pool.remove(h);
    }
    pool.reserve(312);
    assert_eq!(pool.capacity(), 512, "freed slots count as room");
    pool.reserve(313);
    assert_eq!(pool.capacity(), 768);
}

#[test]
fn try_reserve_on_a_fixed_pool_uses_its_free_slots_only() {
    let mut pool = Pool::with_capacity(4);
    let a = pool.insert('a');
    assert_eq!(pool.try_reserve(3), Ok(()));
    let err = pool.try_reserve(4).unwrap_err();
    assert_eq!(
        err,
        PoolReserveError::NotGrowable {
            additional: 4,
            available: 3
        }
    );
    assert!(err.to_string().contains("growable pool"), "{err}");
    assert_eq!((pool.capacity(), pool[a]), (4, 'a'));
}

/// Retired slots are in use for good: they are not room.
#[test]
fn retired_slots_are_not_room() {
    let mut pool = Pool::with_capacity_and_generation_budget(2, 1);
    let a = pool.insert(1);
    pool.remove(a);
    assert_eq!(pool.stats().retired, 1);
    assert_eq!(
        pool.try_reserve(2),
        Err(PoolReserveError::NotGrowable {
            additional: 2,
            available: 1
        })
    );
}

#[test]
fn try_reserve_past_the_index_space_changes_nothing() {
    let mut pool: Pool<u8> = Pool::new();
    let a = pool.insert(1);
    let before = pool.stats();
    for additional in [MAX_CAPACITY, usize::MAX] {
        let err = pool.try_reserve(additional).unwrap_err();
        assert!(
            matches!(err, PoolReserveError::TooManySlots { in_use: 1, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("at most"), "{err}");
    }
    assert_eq!(pool.stats(), before);
    assert_eq!(pool[a], 1);
}

#[test]
#[should_panic(
    expected = "Pool::reserve: room for 9 more values was asked of a fixed-capacity pool"
)]
fn reserve_panics_with_the_error_text() {
    let mut pool: Pool<u8> = Pool::with_capacity(8);
    pool.reserve(9);
}

#[test]
fn shrink_to_fit_frees_only_chunks_no_value_was_in() {
    let mut pool: Pool<u64> = Pool::new();
    pool.reserve(1000);
    assert_eq!(pool.capacity(), 1024);
    assert_eq!(pool.shrink_to_fit(), 1024, "nothing was ever inserted");
    assert_eq!((pool.capacity(), pool.stats().blocks), (0, 0));

    let handles: Vec<_> = (0..300).map(|i| pool.insert(i)).collect();
    pool.reserve(1000);
    assert_eq!(pool.capacity(), 1536);
    assert_eq!(pool.shrink_to_fit(), 1024);
    assert_eq!(
        pool.capacity(),
        512,
        "slots 0..300 were used: two chunks stay"
    );
    for h in handles {
        pool.remove(h);
    }
    assert_eq!(
        pool.shrink_to_fit(),
        0,
        "emptied slots keep their generations"
    );
    assert_eq!(pool.capacity(), 512);

    let mut fixed: Pool<u64> = Pool::with_capacity(8);
    assert_eq!(fixed.shrink_to_fit(), 0);
    assert_eq!(fixed.capacity(), 8);
    let mut growable: Pool<u64> = Pool::growable(4);
    assert_eq!(
        growable.shrink_to_fit(),
        4,
        "its first chunk was never used"
    );
    let h = growable.insert(5);
    assert_eq!((growable.capacity(), growable[h]), (4, 5));
}

/// The stale-handle guarantee across shrinking: remove values, shrink, then insert until a slot
/// of each old handle is reused; every old handle is still rejected.
#[test]
fn stale_handles_stay_stale_across_shrink_and_regrow() {
    for mut pool in [Pool::new(), Pool::growable(4), Pool::with_capacity(40)] {
        let old: Vec<_> = (0..40u32).map(|i| pool.insert(i)).collect();
        let _ = pool.try_reserve(100); // refused by the fixed pool
        for &h in &old {
            assert!(pool.remove(h).is_some());
        }
        pool.shrink_to_fit();
        let mut reused = 0;
        let mut fresh = Vec::new();
        while reused < old.len() {
            let h = pool.insert(1000);
            if old.iter().any(|o| o.index() == h.index()) {
                reused += 1;
            }
            fresh.push(h);
        }
        for &h in &old {
            assert!(pool.get(h).is_none() && pool.remove(h).is_none(), "{h:?}");
        }
        for &h in &fresh {
            assert_eq!(pool[h], 1000);
        }
        // Shrinking again with everything live frees nothing that holds a value.
        pool.shrink_to_fit();
        assert!(fresh.iter().all(|&h| pool.contains(h)));
    }
}

#[test]
fn clone_and_drop_of_an_unallocated_pool() {
    let pool: Pool<String> = Pool::new();
    let mut copy = pool.clone();
    assert_eq!(copy.stats(), PoolStats::default());
    let h = copy.insert("x".to_string());
    let copy2 = copy.clone();
    drop((pool, copy));
    assert_eq!(copy2[h], "x");
    let drops = Rc::new(Cell::new(0));
    let mut counted = Pool::new();
    counted.insert(DropCounter::new(1, &drops));
    drop(counted);
    assert_eq!(drops.get(), 1);
}

/// A clone lays its slots out afresh, so its block 0 can differ from the original's: here the
/// original grew in place in a reserved range, and the clone is made while the process holds as
/// many ranges as it may (1,024), so it gets chunks from the global allocator. A value removed
/// past the copy's first chunk and inserted again must go back to its slot (the copy's inline
/// insert once took the original's block-0 length as its own and wrote past its first chunk).
#[test]
fn a_clone_made_when_no_range_is_left_reuses_its_slots() {
    let mut pool: Pool<u64> = Pool::growable(4);
    let hs: Vec<_> = (0..64).map(|i| pool.insert(i)).collect();
    let held: Vec<Pool<u8>> = (0..support::miri_or(1100, 2))
        .map(|_| Pool::growable(1))
        .collect();
    let mut copy = pool.clone();
    drop(held);
    for &i in &[40, 13, 63] {
        assert_eq!(copy.remove(hs[i]), Some(i as u64));
    }
    let again: Vec<_> = (0..3).map(|i| copy.insert(100 + i)).collect();
    let mut indexes: Vec<_> = again.iter().map(|h| h.index()).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, [13, 40, 63]);
    for (i, &h) in again.iter().enumerate() {
        assert_eq!(copy[h], 100 + i as u64);
    }
    assert_eq!(copy.len(), 64);
    assert_eq!(copy.iter().filter(|(_, v)| **v >= 100).count(), 3);
    assert_eq!(pool.len(), 64);
}

/// Minor page faults of this thread so far.
#[cfg(all(target_os = "linux", not(miri)))]
fn minor_faults() -> i64 {
    // SAFETY: `rusage` is plain integers, for which all-zero bytes are valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` for the call to fill.
    let status = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(status, 0, "getrusage(RUSAGE_THREAD)");
    usage.ru_minflt
}

/// Filling a pool's fresh memory faults each page in once. A never-used slot is written without
/// being read first: a read of a page fresh from the system maps the shared zero page, and the
/// write then faults a second time to replace it. Each insert form fills a pool with 65,536
/// values of 64 bytes (72-byte slots, 1,152 pages of 4 KiB), keeping the handles as a program
/// would: before the fix, `insert` took 2,305 faults where the memory came straight from the
/// system. (On Linux 5.14 and later a growing pool makes its new pages resident before any
/// insert touches them, so there the fixed pool's forms are the ones that would catch a read.)
/// Release builds only: debug builds read every never-used slot once to check its generation.
#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn filling_fresh_slots_faults_each_page_in_once() {
    use std::hint::black_box;

    type Value = [u64; 8];
    /// A way to insert: its name, how the pool is made, one insert.
    type Fill = (&'static str, fn() -> Pool<Value>, fn(&mut Pool<Value>, u64));
    const VALUES: usize = 1 << 16;
    let pages = (VALUES * 72).div_ceil(4096) as i64;
    let fills: [Fill; 5] = [
        ("growable, insert", Pool::new, |p, i| {
            black_box(p.insert([i; 8]));
        }),
        ("growable, try_insert", Pool::new, |p, i| {
            black_box(p.try_insert([i; 8]).unwrap());
        }),
        ("growable, insert_with", Pool::new, |p, i| {
            black_box(p.insert_with(|_| [i; 8]));
        }),
        (
            "fixed, insert",
            || Pool::with_capacity(VALUES),
            |p, i| {
                black_box(p.insert([i; 8]));
            },
        ),
        // The closure reads its handle, whose generation the claim knows without reading
        // the slot (it did read it, and faulted each page twice, until the review of 0b4b91d).
        (
            "fixed, insert_with",
            || Pool::with_capacity(VALUES),
            |p, i| {
                black_box(p.insert_with(|h| [i ^ black_box(h).to_bits(); 8]));
            },
        ),
    ];
    for (form, new, fill) in fills {
        let mut pool = new();
        let before = minor_faults();
        for i in 0..VALUES as u64 {
            fill(&mut pool, i);
        }
        let faults = minor_faults() - before;
        // Memory the allocator recycled faults less (or not at all); a quarter more pages is
        // room for a growable pool's chunk table and the kernel's own accounting.
        if !cfg!(debug_assertions) {
            assert!(
                faults <= pages + pages / 4,
                "{form}: {faults} page faults to fill {pages} pages"
            );
        }
        assert_eq!(pool.len(), VALUES);
    }
}

/// Reserving room in a growable pool commits its pages but makes none of them resident: only a
/// pool growing for an insert, which writes the pages next, has them faulted in at once.
/// 400,000 slots of 72 bytes are 7,032 pages; a `Handle32` pool's first generation is 0 in
/// every build, so growing writes no slot itself.
#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn reserving_a_growable_pool_makes_no_page_resident() {
    use arena_kit_core::pool::Handle32;

    let mut pool: Pool<[u64; 8], Handle32<[u64; 8]>> = Pool::growable_with_key(32);
    let before = minor_faults();
    pool.reserve(400_000);
    let faults = minor_faults() - before;
    assert!(pool.capacity() >= 400_000);
    assert!(faults < 100, "reserving took {faults} page faults");
}
