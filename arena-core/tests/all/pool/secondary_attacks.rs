//! Side tables (`SecondaryPool`, `SparseSecondaryPool`) against inputs safe code can build:
//! handles rebuilt from bits whose counter no debug-build (tagged) generation holds, stored
//! before the table is bound to a pool; leaked drains; hostile serialized data whose values
//! panic or fail while being read. After each, the table's lookups must agree with each other
//! and with its length, and every value must be dropped exactly once.

use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::pool::{Handle, Pool, SecondaryPool, SparseSecondaryPool};

/// An untagged handle (as `Handle::from_bits` rebuilds one from a network message, say) for
/// slot `index`, with a counter of 2^24 + 1: more than a tagged generation's 24 counter bits.
fn untaggable(index: u32) -> Handle<u8> {
    Handle::from_bits((0x0100_0001u64 << 32) | u64::from(index)).expect("odd, non-zero")
}

/// Whether this build tags handles with their pool (debug builds, or `debug-checks`).
const TAGS: bool = cfg!(any(debug_assertions, feature = "debug-checks"));

macro_rules! side_table_attacks {
    ($module:ident, $Table:ident) => {
        mod $module {
            use super::*;

            /// A table first given an untagged handle whose counter cannot take a pool tag (no
            /// debug-build pool makes it: a release-build pool's), then given a debug-build
            /// pool's own handle: two pools' handles in one table. In builds with pool tags
            /// the second insert panics as a foreign handle and the table is unchanged (before,
            /// it bound to the pool and kept the first value under a generation that `get`
            /// found and `get_mut`, `remove` and `entry` did not); without tags both are
            /// stored. Either way every lookup agrees with `get`, and the length counts what
            /// iteration yields.
            #[test]
            fn a_debug_pool_handle_after_an_untaggable_one_is_refused_and_lookups_agree() {
                let mut pool = Pool::with_capacity(2);
                let a = pool.insert(1u8);
                let big = untaggable(5);
                let mut table = $Table::new();
                assert_eq!(table.insert(big, "big"), None);
                let second = catch_unwind(AssertUnwindSafe(|| table.insert(a, "a")));
                assert_eq!(
                    second.is_err(),
                    TAGS,
                    "the second pool's handle panics with tags"
                );
                assert_eq!(table.len(), if TAGS { 1 } else { 2 });
                assert_eq!(table.len(), table.iter().count());
                assert_eq!(table.get(big), Some(&"big"));
                assert!(table.contains(big));
                assert_eq!(table.get_mut(big).map(|v| *v), Some("big"));
                assert!(table.entry(big).is_some());
                if !TAGS {
                    assert_eq!(table.get(a), Some(&"a"));
                }
                assert_eq!(table.remove(big), Some("big"));
                assert_eq!(table.get(big), None);
                assert_eq!(table.len(), table.iter().count());
            }

            /// What a table holding an untaggable handle writes, it reads back, also after a
            /// debug-build pool's handle was refused.
            #[cfg(feature = "serde")]
            #[test]
            fn a_table_holding_an_untaggable_handle_reads_back_what_it_writes() {
                let mut pool = Pool::with_capacity(2);
                let a = pool.insert(1u8);
                let mut table = $Table::new();
                table.insert(untaggable(5), 5u32);
                let _ = catch_unwind(AssertUnwindSafe(|| table.insert(a, 0u32)));
                let json = serde_json::to_string(&table).unwrap();
                let back: Result<$Table<u8, u32>, _> = serde_json::from_str(&json);
                let back = back.unwrap_or_else(|e| panic!("{json} is refused: {e}"));
                assert_eq!(back.len(), table.len());
                for (h, v) in table.iter() {
                    assert_eq!(back.get(h), Some(v), "{h:?}");
                }
            }

            /// A drain leaked after one value: whatever the table keeps (the dense one keeps
            /// the values not yielded; the sparse one, like `HashMap`, is emptied and leaks
            /// them) is counted exactly, reachable, and iterated exactly (the iterators are
            /// `ExactSizeIterator`).
            #[test]
            #[cfg_attr(miri, ignore = "the sparse table leaks on purpose, which Miri reports")]
            fn a_leaked_drain_leaves_the_table_counting_what_it_holds() {
                let mut pool = Pool::with_capacity(4);
                let hs: Vec<_> = (0..4u8).map(|i| pool.insert(i)).collect();
                let mut table = $Table::new();
                for &h in &hs {
                    table.insert(h, String::from("v"));
                }
                let mut drain = table.drain();
                assert!(drain.next().is_some());
                std::mem::forget(drain);
                let len = table.len();
                assert!(len <= 3, "{len}");
                assert_eq!(table.iter().len(), len);
                assert_eq!(table.iter().count(), len);
                assert_eq!(table.values_mut().len(), len);
                assert_eq!(hs.iter().filter(|&&h| table.contains(h)).count(), len);
                if stringify!($Table) == "SecondaryPool" {
                    assert_eq!(len, 3, "the dense table documents that the rest stay");
                }
            }
        }
    };
}

side_table_attacks!(dense, SecondaryPool);
side_table_attacks!(sparse, SparseSecondaryPool);

#[cfg(feature = "serde")]
mod hostile_values {
    use super::*;
    use serde::de::{Deserialize, Deserializer, Error};
    use std::cell::Cell;

    thread_local! {
        static MADE: Cell<usize> = const { Cell::new(0) };
        static DROPPED: Cell<usize> = const { Cell::new(0) };
    }

    /// A value that counts its constructions and drops; reading the number 13 panics, the
    /// number 99 is a deserialization error.
    #[derive(Debug, PartialEq, Eq)]
    struct Touchy(u32);

    impl<'de> Deserialize<'de> for Touchy {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            match u32::deserialize(d)? {
                13 => panic!("a value's Deserialize panicked"),
                99 => Err(D::Error::custom("a value's Deserialize failed")),
                n => {
                    MADE.with(|m| m.set(m.get() + 1));
                    Ok(Touchy(n))
                }
            }
        }
    }

    impl Drop for Touchy {
        fn drop(&mut self) {
            DROPPED.with(|d| d.set(d.get() + 1));
        }
    }

    fn reset() {
        MADE.with(|m| m.set(0));
        DROPPED.with(|d| d.set(0));
    }

    fn balanced() -> (usize, usize) {
        (MADE.with(Cell::get), DROPPED.with(Cell::get))
    }

    /// `[(handle, value), ...]` for slots 0..n of one pool, with the given values.
    fn input(values: &[u32]) -> String {
        let mut pool = Pool::with_capacity(values.len());
        let mut table = SecondaryPool::new();
        for &v in values {
            table.insert(pool.insert(0u8), v);
        }
        serde_json::to_string(&table).unwrap()
    }

    #[test]
    fn a_value_that_panics_or_fails_while_read_drops_the_values_read_before_it_once() {
        for bad in [13, 99] {
            let json = input(&[1, 2, 3, bad, 5]);
            reset();
            let dense = catch_unwind(|| serde_json::from_str::<SecondaryPool<u8, Touchy>>(&json));
            assert!(matches!(dense, Err(_) | Ok(Err(_))), "{bad}: refused");
            assert_eq!(balanced(), (3, 3), "{bad}: dense, made and dropped");
            reset();
            let sparse = catch_unwind(AssertUnwindSafe(|| {
                serde_json::from_str::<SparseSecondaryPool<u8, Touchy>>(&json)
            }));
            assert!(matches!(sparse, Err(_) | Ok(Err(_))), "{bad}: refused");
            assert_eq!(balanced(), (3, 3), "{bad}: sparse, made and dropped");
        }
    }

    /// An entry refused after its value was read (a repeated slot) drops that value too.
    #[test]
    fn a_refused_entry_drops_its_own_value_and_the_ones_before() {
        let json = input(&[1, 2]);
        // The second entry names the first one's slot.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let first = v[0].clone();
        let twice = serde_json::Value::Array(vec![first.clone(), first]).to_string();
        reset();
        assert!(serde_json::from_str::<SecondaryPool<u8, Touchy>>(&twice).is_err());
        assert_eq!(balanced(), (2, 2));
        reset();
        assert!(serde_json::from_str::<SparseSecondaryPool<u8, Touchy>>(&twice).is_err());
        assert_eq!(balanced(), (2, 2));
    }
}

/// A sparse table's hasher is the caller's: one that panics part-way (while the map grows and
/// rehashes, or on a lookup) may cost the map some values, as `HashMap` allows, but the table
/// must stay consistent (its length is what it iterates and finds) and drop each value at
/// most once, and exactly once over its life for those it still holds.
#[test]
fn a_panicking_hasher_leaves_a_sparse_table_consistent_and_drops_each_value_at_most_once() {
    use std::cell::Cell;
    use std::hash::{BuildHasher, Hasher};
    use std::rc::Rc;

    thread_local! {
        static HASHES: Cell<usize> = const { Cell::new(0) };
        static FUSE: Cell<usize> = const { Cell::new(usize::MAX) };
    }

    #[derive(Default, Clone)]
    struct Fused;
    struct FusedHasher(u64);
    impl BuildHasher for Fused {
        type Hasher = FusedHasher;
        fn build_hasher(&self) -> FusedHasher {
            FusedHasher(0)
        }
    }
    impl Hasher for FusedHasher {
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = self.0.wrapping_mul(31).wrapping_add(u64::from(b));
            }
        }
        fn finish(&self) -> u64 {
            let n = HASHES.with(|h| {
                h.set(h.get() + 1);
                h.get()
            });
            if FUSE.with(Cell::get) == n {
                FUSE.with(|f| f.set(usize::MAX));
                panic!("the hasher panicked at hash {n}");
            }
            self.0
        }
    }

    /// Counts its drops per value.
    struct Value(Rc<Vec<Cell<u32>>>, usize);
    impl Drop for Value {
        fn drop(&mut self) {
            let n = &self.0[self.1];
            n.set(n.get() + 1);
        }
    }

    let rows = if cfg!(miri) { 12 } else { 200 };
    let drops: Rc<Vec<Cell<u32>>> = Rc::new((0..rows).map(|_| Cell::new(0)).collect());
    let mut pool = Pool::with_capacity(rows);
    let handles: Vec<_> = (0..rows).map(|i| pool.insert(i)).collect();
    for every in [3, 7, 13] {
        for d in drops.iter() {
            d.set(0);
        }
        let mut table: SparseSecondaryPool<usize, Value, Fused> = SparseSecondaryPool::default();
        for (i, &h) in handles.iter().enumerate() {
            FUSE.with(|f| f.set(HASHES.with(Cell::get) + every));
            let r = catch_unwind(AssertUnwindSafe(|| {
                table.insert(h, Value(Rc::clone(&drops), i));
                let _ = table.get(h);
            }));
            FUSE.with(|f| f.set(usize::MAX));
            let _ = r;
            assert_eq!(table.iter().count(), table.len(), "every {every}, row {i}");
            for (k, v) in table.iter() {
                assert_eq!(drops[v.1].get(), 0, "a value reachable after its drop");
                assert_eq!(handles[v.1], k);
                assert!(table.contains(k));
            }
        }
        let held: Vec<usize> = table.values().map(|v| v.1).collect();
        drop(table);
        for (i, d) in drops.iter().enumerate() {
            assert!(
                d.get() <= 1,
                "every {every}: value {i} dropped {} times",
                d.get()
            );
            if held.contains(&i) {
                assert_eq!(d.get(), 1, "every {every}: value {i} held but not dropped");
            }
        }
    }
}
