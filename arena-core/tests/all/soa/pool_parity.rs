//! `SoaPool` has what `Pool` has, on the same slot map: foreign-handle checks in every lookup
//! (debug builds), `retain`, `drain`, `clear`, row access by handle, stats, `get_disjoint_mut`,
//! growable mode and retirement of exhausted slots.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;

use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::poison::ENABLED as TAGGED;
use arena_kit_core::pool::Pool;
use arena_kit_core::soa::SoaPool;
use soa_rows::{Enemy, enemy};

fn caught(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

#[test]
fn a_foreign_handle_panics_in_every_soa_pool_lookup_as_in_pool() {
    if !TAGGED {
        return; // release builds without `debug-checks` cannot tell pools apart
    }
    let mut a = SoaPool::with_capacity(4);
    let mut b = SoaPool::with_capacity(4);
    let ha = a.insert(enemy(1));
    let hb = b.insert(enemy(2));
    assert_eq!(ha.index(), hb.index());
    assert!(caught(|| {
        let _ = b.row_of(ha);
    }));
    assert!(caught(|| {
        let _ = b.row_of_mut(ha);
    }));
    assert!(caught(|| {
        let _ = b.get_disjoint_mut([hb, ha]);
    }));
    // A handle of a `Pool` of the same type is foreign too, in both directions.
    let mut p: Pool<Enemy> = Pool::with_capacity(4);
    let hp = p.insert(enemy(3));
    assert!(caught(|| {
        let _ = b.get(hp);
    }));
    assert!(caught(|| {
        let _ = p.get(hb);
    }));
    assert_eq!((a.len(), b.len(), p.len()), (1, 1, 1), "nothing changed");
}

#[test]
fn retain_drain_clear_and_stats() {
    let mut pool = SoaPool::with_capacity(8);
    let hs: Vec<_> = (0..6).map(|i| pool.insert(enemy(i))).collect();
    let mut seen = Vec::new();
    pool.retain(|h, row| {
        seen.push(h);
        *row.health += 1.0;
        *row.id % 2 == 0
    });
    seen.sort();
    assert_eq!(seen, hs, "every value visited once");
    assert_eq!(pool.len(), 3);
    for (i, &h) in hs.iter().enumerate() {
        assert_eq!(pool.contains(h), i % 2 == 0);
        if let Some(row) = pool.get(h) {
            assert_eq!((*row.id, *row.health), (i as i32, 11.0));
        }
    }
    let stats = pool.stats();
    assert_eq!(
        (stats.len, stats.inserts, stats.removes, stats.peak_live),
        (3, 6, 3, 6)
    );

    let mut drained: Vec<_> = pool.drain().map(|(h, e)| (h, e.id)).collect();
    drained.sort();
    assert_eq!(drained, vec![(hs[0], 0), (hs[2], 2), (hs[4], 4)]);
    assert!(pool.is_empty());
    assert!(hs.iter().all(|&h| pool.get(h).is_none()));

    let again: Vec<_> = (0..4).map(|i| pool.insert(enemy(10 + i))).collect();
    assert!(
        again.iter().all(|h| !hs.contains(h)),
        "old handles stay stale"
    );
    {
        let mut partial = pool.drain();
        partial.next();
    } // dropping the drain removes the rest
    assert!(pool.is_empty());
    pool.insert(enemy(1));
    pool.clear();
    assert!(pool.is_empty() && pool.slices().id.is_empty());
    assert_eq!(pool.stats().removes, pool.stats().inserts);
}

#[test]
fn rows_by_handle_and_disjoint_borrows() {
    let mut pool = SoaPool::with_capacity(4);
    let (a, b, c) = (
        pool.insert(enemy(1)),
        pool.insert(enemy(2)),
        pool.insert(enemy(3)),
    );
    assert_eq!(*pool.row_of(b).id, 2);
    *pool.row_of_mut(c).health = 0.5;
    let [ra, rc] = pool.get_disjoint_mut([a, c]).unwrap();
    core::mem::swap(ra.id, rc.id);
    assert_eq!((*pool.row_of(a).id, *pool.row_of(c).id), (3, 1));
    assert!(pool.get_disjoint_mut([a, a]).is_none(), "a repeat");
    pool.remove(b);
    assert!(pool.get_disjoint_mut([a, b]).is_none(), "a stale handle");
    let msg = catch_unwind(AssertUnwindSafe(|| {
        let _ = pool.row_of(b);
    }))
    .unwrap_err();
    assert!(msg.downcast_ref::<String>().unwrap().contains("is stale"));
}

#[test]
fn growable_pools_grow_by_chunks_and_keep_handles() {
    let mut pool = SoaPool::growable(2);
    assert!(pool.is_growable());
    let hs: Vec<_> = (0..9).map(|i| pool.insert(enemy(i))).collect();
    assert_eq!(pool.capacity(), 10);
    assert_eq!(pool.stats().blocks, 5);
    for (i, &h) in hs.iter().enumerate() {
        assert_eq!(*pool.get(h).unwrap().id, i as i32);
    }
    assert_eq!(pool.slices().id.len(), 9, "the columns stay dense");
    pool.remove(hs[7]);
    let h = pool.insert(enemy(70));
    assert_eq!(h.index(), hs[7].index(), "the freed slot is reused first");
    assert!(pool.get(hs[7]).is_none());

    let mut fixed = SoaPool::with_capacity(1);
    fixed.insert(enemy(0));
    let full = fixed.try_insert(enemy(1)).unwrap_err();
    assert!(full.budget_exceeded().is_none());
    assert_eq!(full.into_inner().id, 1);
}

#[test]
fn exhausted_slots_retire_as_in_pool() {
    let mut pool = SoaPool::with_capacity_and_generation_budget(1, 2);
    let a = pool.insert(enemy(1));
    pool.remove(a);
    let b = pool.insert(enemy(2));
    pool.remove(b);
    assert!(pool.try_insert(enemy(3)).is_err());
    assert_eq!(pool.stats().retired, 1);
    assert!(pool.get(a).is_none() && pool.get(b).is_none());
}

#[test]
fn insert_with_sees_its_own_handle_and_a_panic_changes_nothing() {
    let mut pool = SoaPool::with_capacity(2);
    let h = pool.insert_with(|me| enemy(me.index() as i32 + 40));
    assert_eq!(*pool.row_of(h).id, 40);
    assert!(caught(|| {
        pool.insert_with(|_| panic!("no value"));
    }));
    assert_eq!(pool.len(), 1);
    let next = pool.insert(enemy(5));
    assert_eq!(
        next.index(),
        1,
        "the slot the panicking insert claimed is still free"
    );
    assert!(
        pool.try_insert_with(|_| enemy(6)).is_none(),
        "full: f is not called"
    );
}

#[test]
fn clone_iter_mut_and_drop_report() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static REPORTED_LIVE: AtomicUsize = AtomicUsize::new(usize::MAX);
    fn report(stats: &arena_kit_core::pool::PoolStats) {
        REPORTED_LIVE.store(stats.len, Ordering::Relaxed);
    }

    let mut pool = SoaPool::with_capacity(4);
    let hs: Vec<_> = (0..3).map(|i| pool.insert(enemy(i))).collect();
    pool.remove(hs[1]);
    for (h, row) in pool.iter_mut() {
        *row.id += 100 * h.index() as i32;
    }
    for row in pool.values_mut() {
        *row.health = 3.0;
    }
    let mut copy = pool.clone();
    assert_eq!(copy.capacity(), pool.capacity());
    assert_eq!(*copy.row_of(hs[2]).id, 202);
    assert!(copy.get(hs[1]).is_none());
    assert_eq!(
        copy.insert(enemy(7)),
        pool.insert(enemy(7)),
        "same next handle"
    );
    assert_eq!(copy.insert(enemy(8)), pool.insert(enemy(8)));
    assert!(copy.try_insert(enemy(9)).is_err() && pool.try_insert(enemy(9)).is_err());

    copy.set_drop_report(report);
    drop(copy);
    assert_eq!(REPORTED_LIVE.load(Ordering::Relaxed), 4);
}

/// As `Pool`'s clone (tests/all/pool/growth.rs): a growable `SoaPool` that grew in place in a
/// reserved range, cloned while the process holds every range it may (1,024), gets a copy whose
/// slots are in chunks; a row removed past the copy's first chunk and inserted again goes back to
/// its slot.
#[test]
fn a_soa_pool_clone_made_when_no_range_is_left_reuses_its_slots() {
    let mut pool = SoaPool::growable(4);
    let hs: Vec<_> = (0..64).map(|i| pool.insert(enemy(i))).collect();
    let held: Vec<Pool<u8>> = (0..crate::support::miri_or(1100, 2))
        .map(|_| Pool::growable(1))
        .collect();
    let mut copy = pool.clone();
    drop(held);
    for &i in &[40, 13, 63] {
        assert_eq!(copy.remove(hs[i]).map(|e| e.id), Some(i as i32));
    }
    let again: Vec<_> = (100..103).map(|i| copy.insert(enemy(i))).collect();
    let mut indexes: Vec<_> = again.iter().map(|h| h.index()).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, [13, 40, 63]);
    for (i, &h) in again.iter().enumerate() {
        assert_eq!(*copy.row_of(h).id, 100 + i as i32);
    }
    assert_eq!((copy.len(), pool.len()), (64, 64));
}
