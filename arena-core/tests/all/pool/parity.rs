//! The APIs users switching from slotmap, thunderdome or Fyrox pools expect: iterators from both
//! ends (`iter`, `iter_mut`, `keys`, `values`, `values_mut`, `drain`, `into_iter`,
//! `into_values`), `FromIterator` / `Extend`, pool equality, and handles as 64 bits
//! (`to_bits` / `from_bits`, `Handle::null`), including that every pool accepts a handle rebuilt
//! from its bits and that `null` is found nowhere.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;
use crate::support::{self, DropCounter, proptest_config};

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use arena_kit_core::poison::ENABLED as TAGGED;
use arena_kit_core::pool::{Handle, MAX_CAPACITY, Pool};
use arena_kit_core::soa::SoaPool;
use proptest::prelude::*;
use soa_rows::Particle;

/// A growable pool of small chunks with holes: `0..n` inserted, every third removed.
fn holey(n: u32) -> (Pool<u32>, Vec<(Handle<u32>, u32)>) {
    let mut pool = Pool::growable(4);
    let handles: Vec<_> = (0..n).map(|i| pool.insert(i)).collect();
    let mut live = Vec::new();
    for (i, h) in handles.into_iter().enumerate() {
        if i % 3 == 1 {
            pool.remove(h);
        } else {
            live.push((h, i as u32));
        }
    }
    (pool, live)
}

#[test]
fn iter_from_the_back_is_slot_order_reversed() {
    let (pool, live) = holey(support::miri_or(100, 30) as u32);
    let back: Vec<_> = pool.iter().rev().map(|(h, &v)| (h, v)).collect();
    assert!(back.iter().eq(live.iter().rev()));
    let keys: Vec<_> = pool.keys().rev().collect();
    assert!(keys.iter().eq(live.iter().rev().map(|(h, _)| h)));
    assert!(pool.values().rev().eq(live.iter().rev().map(|(_, v)| v)));
}

/// Taking alternately from the front and the back meets in the middle: each value once.
#[test]
fn iter_from_both_ends_meets_in_the_middle() {
    let (mut pool, live) = holey(support::miri_or(100, 30) as u32);
    for take_front_every in 1..5 {
        let mut it = pool.iter();
        let (mut front, mut back) = (Vec::new(), Vec::new());
        for step in 0.. {
            assert_eq!(it.len(), live.len() - front.len() - back.len());
            let item = if step % take_front_every == 0 {
                it.next().map(|(h, &v)| front.push((h, v)))
            } else {
                it.next_back().map(|(h, &v)| back.push((h, v)))
            };
            if item.is_none() {
                break;
            }
        }
        back.reverse();
        front.extend(back);
        assert_eq!(front, live);
    }
    // iter_mut and values_mut too: each value is handed out once, so each is bumped once.
    let mut it = pool.iter_mut();
    while let (Some((_, a)), b) = (it.next(), it.next_back()) {
        *a += 1000;
        if let Some((_, b)) = b {
            *b += 1000;
        }
    }
    let mut values = pool.values_mut();
    while let Some(v) = values.next_back() {
        *v += 1000;
        if let Some(v) = values.next() {
            *v += 1000;
        }
    }
    assert!(
        pool.values().eq(live
            .iter()
            .map(|(_, v)| v + 2000)
            .collect::<Vec<_>>()
            .iter())
    );
}

#[test]
fn empty_and_unallocated_pools_iterate_nothing_from_either_end() {
    let mut lazy: Pool<u8> = Pool::new();
    assert!(lazy.iter().next_back().is_none() && lazy.iter_mut().next_back().is_none());
    assert!(lazy.keys().next_back().is_none() && lazy.drain().next_back().is_none());
    let mut emptied = Pool::with_capacity(3);
    let h = emptied.insert(1);
    emptied.remove(h);
    assert_eq!(emptied.iter().rev().count(), 0);
    assert_eq!(emptied.clone().into_values().next_back(), None);
}

#[test]
fn drain_and_into_iter_from_both_ends_drop_each_value_once() {
    let drops = Rc::new(Cell::new(0));
    let n = support::miri_or(50, 20) as u64;
    let fill = |pool: &mut Pool<DropCounter>| {
        for i in 0..n {
            pool.insert(DropCounter::new(i, &drops));
        }
    };
    let mut pool = Pool::growable(4);
    fill(&mut pool);
    let mut drain = pool.drain();
    assert_eq!(drain.next_back().map(|(_, v)| v.id), Some(n - 1));
    assert_eq!(drain.next().map(|(_, v)| v.id), Some(0));
    assert_eq!(drain.len(), n as usize - 2);
    drop(drain);
    assert_eq!((drops.get(), pool.len()), (n as usize, 0));

    let mut pool = Pool::growable(4); // a fresh one: the drained pool reuses slots LIFO
    fill(&mut pool);
    let mut values = pool.into_values();
    assert_eq!(values.next_back().map(|v| v.id), Some(n - 1));
    let mut ids: Vec<_> = values.by_ref().rev().take(3).map(|v| v.id).collect();
    ids.extend(values.next().map(|v| v.id));
    assert_eq!(ids, [n - 2, n - 3, n - 4, 0]);
    drop(values);
    assert_eq!(drops.get(), 2 * n as usize);
}

/// Keys, values and iter can be cloned (and the copy walks on independently) whatever `T` is.
#[test]
fn shared_iterators_clone_without_t_clone() {
    struct NoClone(u8);
    let mut pool = Pool::new();
    for i in 0..4 {
        pool.insert(NoClone(i));
    }
    let mut it = pool.iter();
    it.next_back();
    let copy = it.clone();
    assert_eq!(it.count(), 3);
    assert_eq!(copy.map(|(_, v)| v.0).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(pool.keys().clone().count(), 4);
    assert_eq!(pool.values().clone().map(|v| v.0).sum::<u8>(), 6);
}

#[test]
fn collect_and_extend_insert_in_order() {
    let mut pool: Pool<String> = ["a", "b"].map(String::from).into_iter().collect();
    assert_eq!((pool.len(), pool.is_growable()), (2, true));
    pool.extend(["c".to_string()]);
    assert_eq!(pool.values().map(String::as_str).collect::<String>(), "abc");
    assert_eq!(
        pool.keys().map(Handle::index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    let mut fixed = Pool::with_capacity(2);
    fixed.extend([1, 2]);
    let full = catch_unwind(AssertUnwindSafe(|| fixed.extend([3, 4])));
    assert!(full.is_err(), "a full fixed pool panics as insert does");
    assert_eq!(fixed.values().copied().collect::<Vec<_>>(), [1, 2]);
}

/// Equality: the same live handles with equal values; built in different orders, with different
/// capacities, layouts and free lists, and in debug builds with different pool tags.
#[test]
fn pools_built_differently_are_equal_with_the_same_live_handles() {
    let mut a = Pool::with_capacity(10);
    let mut b = Pool::new();
    let ha: Vec<_> = (0..6).map(|i| a.insert(i)).collect();
    let hb: Vec<_> = (0..6).map(|i| b.insert(i)).collect();
    // Removed in different orders: the free lists differ.
    for i in [1, 4, 2] {
        a.remove(ha[i]);
    }
    for i in [2, 1, 4] {
        b.remove(hb[i]);
    }
    assert_eq!(a, b);
    // Slot 0 retired in one and free in the other (same generation budget): still equal.
    let mut c = Pool::with_capacity_and_generation_budget(2, 2);
    let mut d = Pool::with_capacity_and_generation_budget(3, 2);
    let (c0, d0) = (c.insert('x'), d.insert('x'));
    c.insert('y');
    d.insert('y');
    c.remove(c0);
    d.remove(d0);
    let c0 = c.insert('w'); // slot 0's second and last generation
    c.remove(c0);
    assert_eq!((c.stats().retired, d.stats().retired), (1, 0));
    assert_eq!(c, d);
    // Same values but a different generation in one slot: not equal.
    let mut e = Pool::with_capacity(2);
    let e0 = e.insert('x');
    e.remove(e0);
    e.insert('x'); // slot 0, generation 3
    let mut f = Pool::with_capacity(2);
    f.insert('x'); // slot 0, generation 1
    assert_ne!(e, f);
    // Values differ, or one has an extra value.
    let mut g = f.clone();
    assert_eq!(f, g);
    *g.values_mut().next().unwrap() = 'z';
    assert_ne!(f, g);
    g.insert('y');
    assert_ne!(f, g);
}

#[test]
fn null_is_found_in_no_pool() {
    let null = Handle::<u32>::null();
    assert!(null.is_null() && Handle::<u32>::default().is_null());
    assert_eq!(null.index(), u32::MAX);
    let mut pools = [
        Pool::new(),
        Pool::with_capacity(4),
        Pool::growable(2),
        Pool::with_capacity_and_generation_budget(3, 1),
    ];
    for pool in &mut pools {
        for i in 0..3 {
            pool.insert(i);
        }
        assert!(pool.get(null).is_none() && pool.get_mut(null).is_none());
        assert!(!pool.contains(null) && pool.remove(null).is_none());
        assert!(pool.get_disjoint_mut([null]).is_none());
        assert!(pool.keys().all(|h| !h.is_null() && h != null));
        let removed = pool.keys().next().unwrap();
        pool.remove(removed);
        assert!(!removed.is_null(), "a stale handle does not become null");
    }
    let mut soa = SoaPool::with_capacity(2);
    soa.insert(particle(1.0));
    assert!(soa.get(Handle::null()).is_none() && soa.remove(Handle::null()).is_none());
    let oob = catch_unwind(|| Pool::<u32>::with_capacity(1)[null]);
    assert!(
        oob.is_err(),
        "indexing with null panics as with a stale handle"
    );
}

/// A particle whose `life` tells it apart.
fn particle(life: f32) -> Particle {
    Particle {
        life,
        ..Particle::default()
    }
}

#[test]
fn bits_layout_is_index_low_generation_high() {
    let mut pool = Pool::with_capacity(4);
    let a = pool.insert('a');
    pool.remove(a);
    let a2 = pool.insert('b'); // slot 0, generation 3
    let b = pool.insert('c'); // slot 1, generation 1
    assert_eq!(a.to_bits(), 1 << 32);
    assert_eq!(a2.to_bits(), 3 << 32);
    assert_eq!(b.to_bits(), 1 << 32 | 1);
    assert_eq!(
        Handle::<char>::null().to_bits(),
        1 << 32 | u64::from(u32::MAX)
    );
    let back = Handle::<char>::from_bits(a2.to_bits()).unwrap();
    assert_eq!((back.index(), back.generation().get()), (0, 3));
    assert_eq!(back, a2, "equality ignores a debug build's pool tag");
}

#[test]
fn from_bits_refuses_patterns_no_handle_has() {
    let refused = |bits: u64| Handle::<u8>::from_bits(bits).is_none();
    assert!(refused(0), "generation 0");
    assert!(refused(0xDEAD_BEEF), "generation 0 with an index");
    assert!(
        refused(2 << 32 | 5) && refused(u64::from(u32::MAX - 1) << 32),
        "even generations"
    );
    assert!(
        refused(0x8000_0001 << 32),
        "bit 31: a tagged (debug-build) generation"
    );
    assert!(refused(u64::MAX), "a tagged pattern at the null index");
    assert!(
        refused(3 << 32 | u64::from(u32::MAX)),
        "past the last slot, not null"
    );
    assert_eq!(u64::from(u32::MAX) as usize, MAX_CAPACITY);
    let last = Handle::<u8>::from_bits(0x7FFF_FFFF << 32 | (MAX_CAPACITY as u64 - 1)).unwrap();
    assert_eq!(last.index() as usize, MAX_CAPACITY - 1);
    assert!(
        Handle::<u8>::from_bits(Handle::<u8>::null().to_bits())
            .unwrap()
            .is_null()
    );
}

/// A handle back from its bits equals the original in every build profile (a debug build's
/// pool tag is not compared), hashes the same and sorts the same, so it finds the same entry in
/// a `HashMap` or `BTreeMap` keyed by handles.
#[test]
fn a_handle_from_bits_equals_hashes_and_orders_like_the_original() {
    use std::collections::{BTreeMap, HashMap};
    let mut pool = Pool::new();
    let hs: Vec<_> = (0..3).map(|i| pool.insert(i)).collect();
    let names: HashMap<_, _> = hs.iter().map(|&h| (h, pool[h])).collect();
    let order: BTreeMap<_, _> = hs.iter().map(|&h| (h, pool[h])).collect();
    for &h in &hs {
        let back = Handle::from_bits(h.to_bits()).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.cmp(&h), core::cmp::Ordering::Equal);
        assert_eq!(names.get(&back), Some(&pool[h]));
        assert_eq!(order.get(&back), Some(&pool[h]));
    }
}

/// A handle rebuilt from bits works in every operation of the pool (and the SoA pool) that
/// made the original, in every build profile; once the value is removed, it is stale like the
/// original.
#[test]
fn a_handle_from_bits_is_accepted_by_its_pool() {
    let mut pool = Pool::growable(2);
    let hs: Vec<_> = (0..5).map(|i| pool.insert(i)).collect(); // past the first chunk
    let rebuilt: Vec<_> = hs
        .iter()
        .map(|h| Handle::from_bits(h.to_bits()).unwrap())
        .collect();
    for (i, &h) in rebuilt.iter().enumerate() {
        assert_eq!(pool.get(h), Some(&i));
        *pool.get_mut(h).unwrap() += 10;
        assert_eq!(pool[h], i + 10);
    }
    let [x, y] = pool.get_disjoint_mut([rebuilt[0], rebuilt[4]]).unwrap();
    core::mem::swap(x, y);
    assert_eq!((pool[hs[0]], pool[hs[4]]), (14, 10));
    assert!(
        pool.get_disjoint_mut([rebuilt[1], hs[1]]).is_none(),
        "the same value twice"
    );
    assert_eq!(pool.remove(rebuilt[3]), Some(13));
    assert!(pool.get(hs[3]).is_none() && pool.get(rebuilt[3]).is_none());
    assert_eq!(pool.remove(rebuilt[3]), None);
    pool.insert(99); // slot 3 again, a new generation
    assert!(pool.get(rebuilt[3]).is_none(), "still stale after reuse");

    let mut soa = SoaPool::with_capacity(2);
    let h = soa.insert(particle(7.0));
    let back = Handle::from_bits(h.to_bits()).unwrap();
    assert_eq!(soa.get(back).map(|p| *p.life), Some(7.0));
    assert!(soa.remove(back).is_some() && soa.get(h).is_none());
}

/// The foreign-handle check still catches another pool's (tagged) handle; only untagged handles
/// are taken by index and generation.
#[test]
fn a_tagged_handle_of_another_pool_still_panics() {
    if !TAGGED {
        return; // release builds without `debug-checks` cannot tell pools apart
    }
    let mut a = Pool::with_capacity(2);
    let b = {
        let mut b = Pool::with_capacity(2);
        b.insert(0u8)
    };
    a.insert(1u8);
    assert!(catch_unwind(AssertUnwindSafe(|| a.get(b))).is_err());
    let untagged = Handle::from_bits(b.to_bits()).unwrap();
    assert_eq!(
        a.get(untagged),
        Some(&1),
        "bits name a slot and generation, not a pool"
    );
}

/// In debug builds a generation counter past what a tagged pool can count cannot be live there:
/// it just misses.
#[test]
fn a_generation_a_tagged_pool_cannot_reach_misses() {
    let mut pool = Pool::with_capacity(1);
    pool.insert(1u8);
    let far = Handle::from_bits(0x7FFF_FFFF << 32).unwrap();
    assert!(pool.get(far).is_none() && pool.remove(far).is_none());
    assert_eq!(pool.len(), 1);
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Every pattern `from_bits` accepts comes back from `to_bits` unchanged, and those are
    /// exactly the patterns with an odd generation below 2^31 and an index below the maximum,
    /// plus null's.
    #[test]
    fn bits_round_trip(bits in any::<u64>(), generation in 0u32..0x8000_0000, index in any::<u32>()) {
        for bits in [bits, u64::from(generation) << 32 | u64::from(index)] {
            let (index, generation) = (bits as u32, (bits >> 32) as u32);
            let valid = generation & 1 == 1
                && generation < 1 << 31
                && (index != u32::MAX || generation == 1);
            match Handle::<()>::from_bits(bits) {
                Some(h) => {
                    prop_assert!(valid);
                    prop_assert_eq!(h.to_bits(), bits);
                    prop_assert_eq!(h.index(), index);
                }
                None => prop_assert!(!valid),
            }
        }
    }

    /// The handles a pool hands out survive the trip through bits and find the same values.
    #[test]
    fn pool_handles_round_trip_through_bits(removes in prop::collection::vec(any::<bool>(), 1..40)) {
        let mut pool = Pool::growable(4);
        let mut live = Vec::new();
        for (i, remove) in removes.into_iter().enumerate() {
            let h = pool.insert(i);
            live.push(h);
            if remove {
                pool.remove(live.swap_remove(i % live.len()));
            }
        }
        for h in pool.keys() {
            let back = Handle::from_bits(h.to_bits()).unwrap();
            prop_assert_eq!(back.to_bits(), h.to_bits());
            prop_assert_eq!(pool.get(back), pool.get(h));
        }
    }
}
