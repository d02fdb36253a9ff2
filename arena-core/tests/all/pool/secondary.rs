//! Side tables (`SecondaryPool`, `SparseSecondaryPool`) with handles from a real `Pool`: the
//! generation rules (same, older and newer handles of a slot), the entry API, disjoint borrows,
//! iteration, draining, equality, panics on a missing value and on another pool's handle. Each
//! test runs for both tables.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::poison::ENABLED as TAGGED;
use arena_kit_core::pool::{Handle, Pool, SecondaryPool, SparseSecondaryPool};

/// A pool whose single slot held `old`, then `new`: two handles of one slot, `old` stale.
fn old_and_new() -> (Pool<u8>, Handle<u8>, Handle<u8>) {
    let mut pool = Pool::with_capacity(1);
    let old = pool.insert(1);
    pool.remove(old);
    let new = pool.insert(2);
    assert_eq!(old.index(), new.index());
    (pool, old, new)
}

fn panic_message(f: impl FnOnce()) -> String {
    let e = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

macro_rules! side_table_tests {
    ($module:ident, $Table:ident, $entries:ident) => {
        mod $module {
            use super::*;
            use arena_kit_core::pool::$entries::Entry;

            fn sorted<T, V: Ord>(
                it: impl IntoIterator<Item = (Handle<T>, V)>,
            ) -> Vec<(Handle<T>, V)> {
                let mut v: Vec<_> = it.into_iter().collect();
                v.sort();
                v
            }

            #[test]
            fn insert_with_the_same_handle_replaces_and_returns_the_old_value() {
                let mut pool = Pool::with_capacity(2);
                let k = pool.insert(4);
                let mut squares = $Table::new();
                assert!(squares.is_empty());
                assert_eq!(squares.insert(k, 0), None);
                assert_eq!(squares.insert(k, 4), Some(0));
                squares[k] *= squares[k];
                assert_eq!(squares[k], 16);
                assert_eq!(squares.len(), 1);
                assert!(squares.contains(k));
            }

            #[test]
            fn a_reused_slot_keeps_the_old_value_until_the_new_handle_inserts() {
                let mut pool = Pool::with_capacity(1);
                let mut table = $Table::new();
                let k = pool.insert(4);
                table.insert(k, 16);
                pool.remove(k);
                let new_k = pool.insert(2);
                assert!(!table.contains(new_k), "slot reuse is not handle equality");
                assert!(table.contains(k), "the old value stays until replaced");
                assert_eq!(
                    table.insert(new_k, 4),
                    None,
                    "an older handle's value is not returned"
                );
                assert!(!table.contains(k));
                assert_eq!(
                    table.get(k),
                    None,
                    "the stale handle never sees the new value"
                );
                assert_eq!(table[new_k], 4);
                assert_eq!(table.len(), 1);
            }

            #[test]
            fn an_older_handle_never_replaces_a_newer_ones_value() {
                let (_pool, old, new) = old_and_new();
                let mut table = $Table::new();
                table.insert(new, "new".to_string());
                assert_eq!(table.insert(old, "old".to_string()), None);
                let refused = table.try_insert(old, "old".to_string()).unwrap_err();
                assert_eq!(refused.handle(), old);
                assert_eq!(refused.newer(), Some(new));
                assert!(refused.to_string().contains("stale"), "{refused}");
                assert_eq!(refused.into_inner(), "old");
                assert!(table.entry(old).is_none(), "no entry for a stale handle");
                assert_eq!(table.remove(old), None);
                assert_eq!(table.get(old), None);
                assert_eq!(table[new], "new");
                assert_eq!(table.len(), 1);
            }

            #[test]
            fn after_remove_an_older_handle_may_be_stored_again_but_live_handles_miss_it() {
                let (_pool, old, new) = old_and_new();
                let mut table = $Table::new();
                table.insert(new, 2);
                assert_eq!(table.remove(new), Some(2));
                assert_eq!(table.insert(old, 1), None);
                assert_eq!(table.get(new), None);
                assert_eq!(table.get(old), Some(&1));
                assert_eq!(table.insert(new, 3), None, "the newer handle replaces it");
                assert_eq!(table.get(old), None);
            }

            #[test]
            fn get_get_mut_and_remove_miss_after_remove() {
                let mut pool = Pool::with_capacity(2);
                let key = pool.insert("foo");
                let mut table = $Table::new();
                table.insert(key, 3.5);
                if let Some(x) = table.get_mut(key) {
                    *x += 3.0;
                }
                assert_eq!(table[key], 6.5);
                assert_eq!(table.remove(key), Some(6.5));
                assert_eq!(table.get(key), None);
                assert_eq!(table.get_mut(key), None);
                assert_eq!(table.remove(key), None, "a second remove does nothing");
                assert!(table.is_empty());
            }

            #[test]
            fn retain_decides_by_handle_and_value() {
                let mut pool = Pool::with_capacity(4);
                let mut table = $Table::new();
                let k1 = pool.insert(0);
                let k2 = pool.insert(1);
                let k3 = pool.insert(2);
                table.insert(k1, 10);
                table.insert(k2, 11);
                table.insert(k3, 12);
                table.retain(|key, val| key == k1 || *val == 11);
                assert!(table.contains(k1) && table.contains(k2) && !table.contains(k3));
                assert_eq!(table.len(), 2);
            }

            #[test]
            fn drain_yields_every_pair_and_empties_even_if_dropped_early() {
                let mut pool = Pool::with_capacity(4);
                let hs: Vec<_> = (0..4).map(|i| pool.insert(i)).collect();
                let mut table: $Table<i32, i32> = hs.iter().map(|&h| (h, pool[h])).collect();
                let all = sorted(table.drain());
                assert_eq!(all, hs.iter().map(|&h| (h, pool[h])).collect::<Vec<_>>());
                assert!(table.is_empty());
                table.extend(hs.iter().map(|&h| (h, 1)));
                let mut drain = table.drain();
                assert_eq!(drain.len(), 4);
                drain.next();
                drop(drain);
                assert!(table.is_empty() && table.iter().next().is_none());
            }

            #[test]
            fn disjoint_borrows_over_every_pair_and_triple_after_churn() {
                let mut pool = Pool::with_capacity(20);
                let all: Vec<_> = (0..20usize).map(|i| pool.insert(i)).collect();
                pool.retain(|_, i| *i % 2 == 0);
                let mut table = $Table::new();
                let keys: Vec<_> = all.iter().copied().filter(|&h| pool.contains(h)).collect();
                for (i, &k) in keys.iter().enumerate() {
                    table.insert(k, i);
                }
                let n = if cfg!(miri) { 4 } else { keys.len() };
                for i in 0..n {
                    for j in 0..n {
                        match table.get_disjoint_mut([keys[i], keys[j]]) {
                            Some([r0, r1]) => {
                                *r0 ^= *r1;
                                *r1 = r1.wrapping_add(*r0);
                            }
                            None => assert_eq!(i, j),
                        }
                        for k in 0..n {
                            match table.get_disjoint_mut([keys[i], keys[j], keys[k]]) {
                                Some([r0, r1, r2]) => {
                                    *r0 ^= *r1;
                                    *r1 = r1.wrapping_add(*r2);
                                    *r2 ^= *r0;
                                }
                                None => assert!(i == j || j == k || i == k),
                            }
                        }
                    }
                }
            }

            #[test]
            fn get_disjoint_mut_refuses_missing_stale_and_repeated_handles() {
                let mut pool = Pool::with_capacity(4);
                let mut table = $Table::new();
                let ka = pool.insert(());
                let kb = pool.insert(());
                let kc = pool.insert(());
                table.insert(ka, "butter");
                table.insert(kb, "apples");
                table.insert(kc, "charlie");
                table.remove(kc);
                assert_eq!(table.get_disjoint_mut([ka, kb, kc]), None);
                assert_eq!(table.get_disjoint_mut([ka, ka]), None);
                let (_p, old, new) = old_and_new();
                let mut other = $Table::new();
                other.insert(new, 1);
                assert_eq!(other.get_disjoint_mut([old]), None, "stale");
                assert_eq!(
                    other.get_disjoint_mut([new, old]),
                    None,
                    "same slot, other generation"
                );
                assert!(other.get_disjoint_mut::<0>([]).is_some());
                let [a, b] = table.get_disjoint_mut([ka, kb]).unwrap();
                std::mem::swap(a, b);
                assert_eq!((table[ka], table[kb]), ("apples", "butter"));
            }

            #[test]
            fn iteration_yields_each_pair_once_and_mutates_in_place() {
                let mut pool = Pool::with_capacity(4);
                let mut table = $Table::new();
                let k0 = pool.insert(1);
                let k1 = pool.insert(2);
                let k2 = pool.insert(3);
                table.insert(k0, 10);
                table.insert(k1, 20);
                table.insert(k2, 30);
                for (k, v) in table.iter_mut() {
                    if k != k1 {
                        *v *= -1;
                    }
                }
                assert_eq!((table[k0], table[k1], table[k2]), (-10, 20, -30));
                let keys: HashSet<_> = table.keys().collect();
                assert_eq!(keys, HashSet::from([k0, k1, k2]));
                let values: HashSet<_> = table.values().copied().collect();
                assert_eq!(values, HashSet::from([-10, 20, -30]));
                assert_eq!(table.iter().len(), 3);
                table.values_mut().for_each(|n| *n *= 3);
                for (k, v) in &mut table {
                    assert!(k == k1 || *v < 0);
                }
                let values: HashSet<_> = table.into_iter().map(|(_, v)| v).collect();
                assert_eq!(values, HashSet::from([-30, 60, -90]));
            }

            #[test]
            fn iterators_clone_without_the_values_being_clone() {
                struct NoClone;
                let mut pool = Pool::with_capacity(1);
                let mut table = $Table::new();
                table.insert(pool.insert(0), NoClone);
                assert_eq!(table.keys().clone().count(), 1);
                assert_eq!(table.values().clone().count(), 1);
                assert_eq!(table.iter().clone().count(), 1);
            }

            #[test]
            fn entry_inserts_updates_and_removes() {
                let mut pool = Pool::with_capacity(4);
                let mut table = $Table::new();
                let k = pool.insert("pony");
                assert_eq!(*table.entry(k).unwrap().or_insert(10), 10);
                *table.entry(k).unwrap().or_insert(1) *= 2;
                assert_eq!(table[k], 20);
                table.entry(k).unwrap().and_modify(|x| *x += 1).or_insert(0);
                assert_eq!(table[k], 21);
                assert_eq!(table.entry(k).unwrap().key(), k);

                let k2 = pool.insert("horse");
                assert_eq!(*table.entry(k2).unwrap().or_insert_with(|| 7), 7);
                let k3 = pool.insert("mule");
                assert_eq!(*table.entry(k3).unwrap().or_default(), 0);
                let k4 = pool.insert("ass");
                table.entry(k4).unwrap().and_modify(|x| *x = 99);
                assert!(
                    !table.contains(k4),
                    "and_modify on a vacant entry inserts nothing"
                );

                match table.entry(k).unwrap() {
                    Entry::Occupied(mut o) => {
                        assert_eq!(o.key(), k);
                        assert_eq!(*o.get(), 21);
                        *o.get_mut() = 30;
                        assert_eq!(o.insert(40), 30);
                        assert_eq!(o.remove_entry(), (k, 40));
                    }
                    Entry::Vacant(_) => panic!("k has a value"),
                }
                assert!(!table.contains(k));
                match table.entry(k).unwrap() {
                    Entry::Vacant(v) => {
                        assert_eq!(v.key(), k);
                        assert_eq!(*v.insert(3), 3);
                    }
                    Entry::Occupied(_) => panic!("k was removed"),
                }
                let r = match table.entry(k).unwrap() {
                    Entry::Occupied(o) => o.into_mut(), // outlives the entry
                    Entry::Vacant(_) => unreachable!(),
                };
                *r = 5;
                assert_eq!(table[k], 5);
                if let Some(Entry::Occupied(o)) = table.entry(k) {
                    assert_eq!(o.remove(), 5);
                }
                assert_eq!(table.len(), 2);
            }

            #[test]
            fn a_newer_handles_vacant_entry_replaces_the_older_value_only_when_filled() {
                let (_pool, old, new) = old_and_new();
                let mut table = $Table::new();
                table.insert(old, 1);
                assert!(matches!(table.entry(new), Some(Entry::Vacant(_))));
                assert_eq!(
                    table.get(old),
                    Some(&1),
                    "looking at the entry changed nothing"
                );
                assert_eq!(table.len(), 1);
                *table.entry(new).unwrap().or_insert(2) += 1;
                assert_eq!((table.get(old), table.get(new)), (None, Some(&3)));
                assert_eq!(table.len(), 1);
            }

            #[test]
            fn index_panics_saying_the_handle_has_no_value() {
                let (_pool, old, new) = old_and_new();
                let mut table = $Table::new();
                table.insert(new, 1);
                let msg = panic_message(|| {
                    let _ = table[old];
                });
                assert!(msg.contains("has no value in this"), "{msg}");
                let msg = panic_message(|| table[old] = 2);
                assert!(msg.contains("has no value"), "{msg}");
                assert_eq!(table[new], 1);
            }

            #[test]
            fn equality_compares_handles_and_values_and_debug_prints_a_map() {
                let mut pool = Pool::with_capacity(4);
                let a = pool.insert(());
                let b = pool.insert(());
                let mut x = $Table::new();
                let mut y = $Table::default();
                x.insert(a, 1);
                x.insert(b, 2);
                y.insert(b, 2);
                assert_ne!(x, y);
                y.insert(a, 1);
                assert_eq!(x, y);
                y.insert(a, 5);
                assert_ne!(x, y);
                let c = x.clone();
                assert_eq!(c, x);
                let mut one = $Table::new();
                one.insert(a, 1);
                assert_eq!(format!("{one:?}"), format!("{{{a:?}: 1}}"));
            }

            #[test]
            fn from_iter_and_extend_insert_in_order() {
                let mut pool = Pool::with_capacity(4);
                let a = pool.insert(());
                let b = pool.insert(());
                let table: $Table<(), i32> = [(a, 1), (b, 2), (a, 3)].into_iter().collect();
                assert_eq!((table.len(), table[a], table[b]), (2, 3, 2));
                let mut copy = $Table::new();
                copy.extend(table.iter());
                assert_eq!(copy, table);
            }

            #[test]
            fn handles_of_a_soa_pool_work_too() {
                let mut rows =
                    arena_kit_core::soa::SoaPool::<crate::soa_rows::Enemy>::with_capacity(2);
                let h = rows.insert(crate::soa_rows::Enemy {
                    x: 0.0,
                    y: 0.0,
                    health: 1.0,
                    id: 1,
                });
                let mut names = $Table::new();
                names.insert(h, "first");
                assert_eq!(names[h], "first");
            }

            #[test]
            fn a_handle_rebuilt_from_its_bits_finds_the_value_as_in_the_pool() {
                let mut pool = Pool::with_capacity(2);
                let h = pool.insert(7u8);
                let u = Handle::<u8>::from_bits(h.to_bits()).unwrap();
                assert_eq!(pool.get(u), Some(&7));
                let mut table = $Table::new();
                table.insert(h, 1);
                assert_eq!(table.get(u), Some(&1));
                *table.get_mut(u).unwrap() += 1;
                assert_eq!(table.insert(u, 3), Some(2));
                assert!(table.contains(u));
                assert_eq!(
                    table.entry(u).unwrap().key(),
                    h,
                    "the entry has the pool's handle"
                );
                assert_eq!(table.get_disjoint_mut([u]).map(|[v]| *v), Some(3));
                assert_eq!(table.remove(u), Some(3));
                assert!(table.is_empty());
                if TAGGED {
                    // A counter no debug pool reaches: it matches nothing and is never stored.
                    let big = Handle::<u8>::from_bits(0x0100_0001 << 32 | u64::from(h.index()));
                    let big = big.unwrap();
                    table.insert(h, 1);
                    assert_eq!(table.get(big), None);
                    assert_eq!(table.remove(big), None);
                    assert!(table.entry(big).is_none());
                    let refused = table.try_insert(big, 2).unwrap_err();
                    assert!(refused.to_string().contains("names no slot"), "{refused}");
                    assert_eq!((table.len(), table[h]), (1, 1));
                }
            }

            /// A table first filled from handles rebuilt from their bits (a network message,
            /// say) then given the pool's own handles: in a debug build the first tagged handle
            /// binds the table to its pool, and what was stored takes the pool's tag, so both
            /// forms find every value (the table used to panic, calling its own pool foreign).
            #[test]
            fn handles_from_bits_first_then_the_pools_own_find_the_same_values() {
                let mut pool = Pool::with_capacity(3);
                let [a, b, c] = [10u8, 20, 30].map(|v| pool.insert(v));
                let bits = |h: Handle<u8>| Handle::<u8>::from_bits(h.to_bits()).unwrap();
                let mut table = $Table::new();
                table.insert(bits(a), "a");
                table.insert(bits(b), "b");
                // Looked up with the pool's handle before it binds anything (`&self`).
                assert_eq!(table.get(a), Some(&"a"));
                assert_eq!(
                    table.insert(c, "c"),
                    None,
                    "the pool's handle is not foreign"
                );
                for (h, name) in [(a, "a"), (b, "b"), (c, "c")] {
                    assert_eq!(table.get(h), Some(&name));
                    assert_eq!(table.get(bits(h)), Some(&name));
                }
                assert_eq!(
                    sorted(table.iter().map(|(h, v)| (h, *v))),
                    [(a, "a"), (b, "b"), (c, "c")]
                );
                assert!(
                    table.iter().all(|(h, _)| pool.contains(h)),
                    "iteration gives handles the pool takes"
                );
                if TAGGED {
                    // Now bound: another pool's handle is caught.
                    let mut other = Pool::with_capacity(1);
                    let f = other.insert(0u8);
                    let msg = panic_message(|| {
                        table.insert(f, "f");
                    });
                    assert!(
                        msg.contains("different pool") || msg.contains("was made by"),
                        "{msg}"
                    );
                    assert_eq!(table.len(), 3);
                }
            }

            #[test]
            fn another_pools_handle_panics_in_every_operation_and_changes_nothing() {
                if !TAGGED {
                    return; // release builds without `debug-checks` cannot tell pools apart
                }
                let mut mine = Pool::with_capacity(2);
                let mut theirs = Pool::with_capacity(2);
                let h = mine.insert(0);
                let f = theirs.insert(0);
                assert_eq!(h.index(), f.index());
                let mut table = $Table::new();
                table.insert(h, 1);
                let msg = panic_message(|| {
                    table.insert(f, 2);
                });
                assert!(
                    msg.contains("a side table holds the handles of one pool"),
                    "{msg}"
                );
                assert!(catch_unwind(AssertUnwindSafe(|| table.get(f))).is_err());
                assert!(catch_unwind(AssertUnwindSafe(|| table.remove(f))).is_err());
                assert!(catch_unwind(AssertUnwindSafe(|| table.entry(f).is_some())).is_err());
                assert!(
                    catch_unwind(AssertUnwindSafe(|| table.get_disjoint_mut([f]).is_some()))
                        .is_err()
                );
                assert_eq!((table.len(), table[h]), (1, 1));
            }
        }
    };
}

side_table_tests!(dense, SecondaryPool, secondary);
side_table_tests!(sparse, SparseSecondaryPool, sparse_secondary);

#[test]
fn a_dense_table_grows_to_the_highest_index_and_keeps_capacity_after_clear() {
    let mut pool = Pool::with_capacity(64);
    let hs: Vec<_> = (0..64).map(|i| pool.insert(i)).collect();
    let mut table = SecondaryPool::with_capacity(8);
    assert!(table.capacity() >= 8);
    table.insert(hs[63], 'z');
    assert!(table.capacity() >= 64);
    assert_eq!(table.len(), 1);
    assert_eq!(table.iter().len(), 1);
    let cap = table.capacity();
    table.clear();
    assert!(table.is_empty());
    assert_eq!(table.capacity(), cap);
    assert!(SecondaryPool::<u8, u8>::try_with_capacity(usize::MAX).is_err());
}

#[test]
fn a_dense_table_iterates_in_slot_order() {
    let mut pool = Pool::with_capacity(8);
    let hs: Vec<_> = (0..8).map(|i| pool.insert(i)).collect();
    let mut table = SecondaryPool::new();
    for &h in hs.iter().rev() {
        table.insert(h, h.index());
    }
    let order: Vec<_> = table.values().copied().collect();
    assert_eq!(order, (0..8).collect::<Vec<_>>());
}

#[test]
fn a_sparse_table_takes_a_custom_hasher() {
    type Fast<V> =
        SparseSecondaryPool<u8, V, std::hash::BuildHasherDefault<std::hash::DefaultHasher>>;
    let mut pool = Pool::with_capacity(2);
    let k = pool.insert(42);
    let mut table = Fast::default();
    table.insert(k, 1234);
    assert_eq!((table[k], table.len()), (1234, 1));
    let copy: Fast<i32> = table.iter().map(|(k, &v)| (k, v)).collect();
    assert_eq!(copy, table);
    let _ = table.hasher();
}

#[test]
fn a_sparse_table_with_one_entry_at_a_high_index_stays_small() {
    let mut pool = Pool::growable(1 << 12);
    let hs: Vec<_> = (0..crate::support::miri_or(1 << 12, 64))
        .map(|i| pool.insert(i))
        .collect();
    let last = *hs.last().unwrap();
    let mut table = SparseSecondaryPool::new();
    table.insert(last, ());
    assert!(table.capacity() < 16);
}
