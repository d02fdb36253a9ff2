//! Handles used where they do not belong: a handle from another `Pool`/`SoaPool` of the same type
//! (debug builds panic, naming both pools, in every lookup, and change nothing), stale handles
//! after every way a value can leave (remove, clear, drain, retain, into_iter), and handles whose
//! generation lies past the retirement limit.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;

use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::poison::ENABLED as TAGGED;
#[cfg(feature = "serde")]
use arena_kit_core::pool::Handle;
use arena_kit_core::pool::Pool;
use arena_kit_core::soa::SoaPool;
#[cfg(feature = "serde")]
use soa_rows::Enemy;
use soa_rows::enemy;

fn caught(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

#[test]
fn soa_pool_rejects_a_handle_from_another_soa_pool_in_every_lookup() {
    if !TAGGED {
        return; // release builds without `debug-checks` cannot tell pools apart
    }
    let mut a = SoaPool::with_capacity(2);
    let mut b = SoaPool::with_capacity(2);
    let ha = a.insert(enemy(1));
    let hb = b.insert(enemy(2));
    assert_eq!(ha.index(), hb.index(), "same slot, same type");
    assert!(
        caught(|| {
            let _ = b.get(ha);
        }),
        "get returned the other pool's value"
    );
    assert!(caught(|| {
        let _ = b.get_mut(ha);
    }));
    assert!(caught(|| {
        let _ = b.contains(ha);
    }));
    assert!(caught(|| {
        let _ = b.remove(ha);
    }));
    let msg = catch_unwind(AssertUnwindSafe(|| {
        let _ = b.get(ha);
    }))
    .unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("different pool"), "{msg}");
    assert_eq!((a.len(), b.len()), (1, 1), "nothing changed");
    assert_eq!(*b.get(hb).unwrap().id, 2);
    assert_eq!(*a.get(ha).unwrap().id, 1);
}

#[test]
fn pool_rejects_a_handle_from_another_pool_even_out_of_range() {
    if !TAGGED {
        return;
    }
    let mut small = Pool::with_capacity(1);
    let mut big = Pool::with_capacity(8);
    small.insert(0);
    let far = (0..8).map(|i| big.insert(i)).last().unwrap();
    assert!(caught(|| {
        let _ = small.get(far);
    }));
    assert!(caught(|| {
        let _ = small.remove(far);
    }));
    let mut soa_small = SoaPool::with_capacity(1);
    let mut soa_big = SoaPool::with_capacity(8);
    soa_small.insert(enemy(0));
    let far = (0..8).map(|i| soa_big.insert(enemy(i))).last().unwrap();
    assert!(caught(|| {
        let _ = soa_small.get(far);
    }));
    assert_eq!(small.len() + soa_small.len(), 2);
}

#[test]
fn stale_pool_handles_stay_stale_after_every_kind_of_removal() {
    let fill = |p: &mut Pool<String>| (0..4).map(|i| p.insert(i.to_string())).collect::<Vec<_>>();
    let mut p = Pool::with_capacity(4);
    let hs = fill(&mut p);
    p.remove(hs[1]);
    p.retain(|_, v| v != "2");
    assert!(p.get(hs[1]).is_none() && p.get(hs[2]).is_none());
    assert_eq!(p.drain().count(), 2);
    assert!(hs.iter().all(|&h| p.get(h).is_none() && !p.contains(h)));
    let again = fill(&mut p);
    assert!(
        hs.iter().all(|h| !again.contains(h)),
        "a reused slot has a new generation"
    );
    assert!(
        hs.iter()
            .all(|&h| p.get(h).is_none() && p.remove(h).is_none())
    );
    p.clear();
    assert!(again.iter().all(|&h| p.get_mut(h).is_none()));
    let hs = fill(&mut p);
    let by_value: Vec<_> = p.into_iter().map(|(h, _)| h).collect();
    assert_eq!(by_value.len(), hs.len());
}

#[test]
fn stale_soa_pool_handles_stay_stale_after_removal_and_reuse() {
    let mut p = SoaPool::with_capacity(3);
    let hs: Vec<_> = (0..3).map(|i| p.insert(enemy(i))).collect();
    for &h in &hs {
        assert!(p.remove(h).is_some());
        assert!(p.remove(h).is_none(), "a double remove is None");
    }
    let again: Vec<_> = (0..3).map(|i| p.insert(enemy(10 + i))).collect();
    for &h in &hs {
        assert!(p.get(h).is_none() && !p.contains(h) && p.get_mut(h).is_none());
    }
    for (i, &h) in again.iter().enumerate() {
        assert_eq!(*p.get(h).unwrap().id, 10 + i as i32);
    }
}

/// A handle as it would come from a save file: `(index, generation)`.
#[cfg(feature = "serde")]
fn forged<T>(index: u32, generation: u32) -> Option<Handle<T>> {
    serde_json::from_value(serde_json::json!([index, generation])).ok()
}

#[test]
#[cfg(feature = "serde")]
fn handles_past_the_retirement_limit_find_nothing() {
    let mut p = Pool::with_capacity_and_generation_budget(2, 1);
    let h = p.insert(1u8);
    p.remove(h); // retires slot 0
    assert_eq!(p.stats().retired, 1);
    let live = p.insert(2u8);
    // Every odd generation of this pool's scheme, at and past the end of its counter.
    let tag = h.generation().get() & 0xFF00_0000;
    let counter_max = if TAGGED { 0x00FF_FFFF } else { 0x7FFF_FFFF };
    for g in [
        h.generation().get(),
        tag | counter_max,
        tag | (counter_max - 2),
        tag | 1,
    ] {
        let fake: Handle<u8> = forged(0, g).unwrap();
        assert!(p.get(fake).is_none(), "retired slot 0 answered {fake:?}");
        assert!(p.remove(fake).is_none());
    }
    // Other pools' tags (debug) or a tagged handle shown to an untagged pool (release) panic;
    // the pool is unchanged either way.
    let foreign: Handle<u8> = forged(1, 0xFFFF_FFFF).unwrap();
    if foreign.generation() != live.generation() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let _ = p.get(foreign);
        }));
    }
    assert_eq!(p.get(live), Some(&2));
    assert!(
        forged::<u8>(0, 2).is_none(),
        "even generations are never valid handles"
    );
    assert!(forged::<u8>(0, 0).is_none());
}

#[test]
#[cfg(feature = "serde")]
fn soa_pool_handles_with_forged_generations_find_nothing_else() {
    let mut p = SoaPool::with_capacity(2);
    let h = p.insert(enemy(1));
    let tag = h.generation().get() & 0xFF00_0000;
    let counter_max = if TAGGED { 0x00FF_FFFF } else { 0x7FFF_FFFF };
    for g in [
        tag | counter_max,
        tag | (counter_max - 2),
        h.generation().get() + 2,
        0xFFFF_FFFF,
    ] {
        let fake: Handle<Enemy> = forged(h.index(), g).unwrap();
        if fake == h {
            continue;
        }
        // A miss, or (another pool's tag) a panic: never this pool's value.
        let found = catch_unwind(AssertUnwindSafe(|| p.get(fake).is_some()));
        assert!(!found.unwrap_or(false), "{fake:?} found {h:?}'s value");
        let removed = catch_unwind(AssertUnwindSafe(|| p.remove(fake).is_some()));
        assert!(!removed.unwrap_or(false));
    }
    assert_eq!(*p.get(h).unwrap().id, 1);
}
