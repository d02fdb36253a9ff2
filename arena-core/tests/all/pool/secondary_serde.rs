//! Serialization of the side tables (feature `serde`): the format (pairs in slot order, for both
//! tables, readable by either), and the refusals: even generations, repeated slots, mixed pool
//! tags, a dense index over the limit.
#![cfg(feature = "serde")]

use arena_kit_core::pool::{Handle, Pool, SecondaryPool, SecondaryPoolSeed, SparseSecondaryPool};
use serde::de::DeserializeSeed;
use serde_json::json;

/// A pool with reused slots, and a table with values for some current handles and one stale.
fn tables() -> (SecondaryPool<u8, String>, SparseSecondaryPool<u8, String>) {
    let mut pool = Pool::with_capacity(6);
    let hs: Vec<_> = (0..6).map(|i| pool.insert(i)).collect();
    pool.remove(hs[4]);
    pool.remove(hs[1]);
    let again = pool.insert(9); // slot 1, second generation
    let mut dense = SecondaryPool::new();
    let mut sparse = SparseSecondaryPool::new();
    for (h, name) in [
        (hs[5], "e"),
        (again, "b2"),
        (hs[4], "stale d"),
        (hs[0], "a"),
    ] {
        dense.insert(h, name.to_string());
        sparse.insert(h, name.to_string());
    }
    (dense, sparse)
}

#[test]
fn both_tables_write_the_same_pairs_in_slot_order_and_read_each_other() {
    let (dense, sparse) = tables();
    let d = serde_json::to_value(&dense).unwrap();
    let s = serde_json::to_value(&sparse).unwrap();
    assert_eq!(d, s);
    let indexes: Vec<_> = d
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[0][0].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [0, 1, 4, 5]);
    let back: SecondaryPool<u8, String> = serde_json::from_value(s.clone()).unwrap();
    assert_eq!(back, dense);
    let back: SparseSecondaryPool<u8, String> = serde_json::from_value(d).unwrap();
    assert_eq!(back, sparse);
    for (h, v) in dense.iter() {
        assert_eq!(back.get(h), Some(v), "every handle keeps its value");
    }
    let empty: SecondaryPool<u8, u8> = serde_json::from_str("[]").unwrap();
    assert!(empty.is_empty());
}

/// Both readers refuse `v` with a message containing `what`.
#[track_caller]
fn refused(v: serde_json::Value, what: &str) {
    let e = serde_json::from_value::<SecondaryPool<u8, u8>>(v.clone())
        .unwrap_err()
        .to_string();
    assert!(e.contains(what), "dense: {e}");
    let e = serde_json::from_value::<SparseSecondaryPool<u8, u8>>(v)
        .unwrap_err()
        .to_string();
    assert!(e.contains(what), "sparse: {e}");
}

#[test]
fn an_even_generation_is_refused() {
    refused(json!([[[0, 1], 1], [[1, 2], 1]]), "is even");
    refused(json!([[[0, 0], 1]]), "is even");
}

#[test]
fn two_entries_for_one_slot_are_refused() {
    refused(
        json!([[[3, 1], 1], [[3, 1], 2]]),
        "two entries for slot index 3",
    );
    refused(
        json!([[[3, 1], 1], [[3, 5], 2]]),
        "two entries for slot index 3",
    );
}

#[test]
fn generations_of_two_pools_are_refused() {
    let tagged = 0x8100_0001u32; // a debug-build pool's, tag 1
    refused(json!([[[0, 1], 1], [[1, tagged], 1]]), "pool tag differs");
    refused(
        json!([[[0, tagged], 1], [[1, 0x8200_0001u32], 1]]),
        "pool tag differs",
    );
    let ok: SecondaryPool<u8, u8> =
        serde_json::from_value(json!([[[0, tagged], 1], [[1, tagged + 2], 1]])).unwrap();
    assert_eq!(ok.len(), 2);
}

#[test]
fn a_dense_index_over_the_limit_is_refused_and_a_seed_raises_it() {
    let far = json!([[[100_000, 1], 1]]);
    let tight = SecondaryPoolSeed::<u8, u8>::with_max_bytes(4096);
    let e = tight.deserialize(far.clone()).unwrap_err().to_string();
    assert!(
        e.contains("slot index 100000") && e.contains("limit of 4096 bytes"),
        "{e}"
    );
    assert!(
        e.contains("SecondaryPoolSeed::with_max_bytes"),
        "says what to do: {e}"
    );
    let table = SecondaryPoolSeed::<u8, u8>::new()
        .deserialize(far.clone())
        .unwrap();
    assert_eq!(table.len(), 1);
    let sparse: SparseSecondaryPool<u8, u8> = serde_json::from_value(far).unwrap();
    assert_eq!(sparse.len(), 1);
    assert_eq!(SecondaryPoolSeed::<u8, u8>::default().limit(), 64 << 20);
}

#[test]
fn wrong_shapes_are_refused() {
    for v in [
        json!({}),
        json!([1]),
        json!([[[0, 1]]]),
        json!([[[0, 1], 1, 2]]),
        json!("x"),
    ] {
        assert!(
            serde_json::from_value::<SecondaryPool<u8, u8>>(v.clone()).is_err(),
            "{v}"
        );
        assert!(
            serde_json::from_value::<SparseSecondaryPool<u8, u8>>(v.clone()).is_err(),
            "{v}"
        );
    }
}

/// A handle for slot index `u32::MAX`, which no pool has (the null handle's index).
fn no_slot() -> Handle<u8> {
    serde_json::from_str("[4294967295, 1]").unwrap()
}

macro_rules! no_slot_test {
    ($name:ident, $Table:ident) => {
        #[test]
        fn $name() {
            let null = no_slot();
            let mut pool = Pool::with_capacity(1);
            let h = pool.insert(0u8);
            let mut table = $Table::new();
            assert_eq!(table.insert(null, 1), None, "binds no pool");
            table.insert(h, 1); // so a debug build's table is bound to a tagged pool now
            assert_eq!(table.insert(null, 2), None);
            let refused = table.try_insert(null, 3).unwrap_err();
            assert_eq!(refused.newer(), None);
            assert!(refused.to_string().contains("names no slot"), "{refused}");
            assert_eq!(refused.into_inner(), 3);
            assert!(table.entry(null).is_none());
            assert_eq!((table.get(null), table.contains(null)), (None, false));
            assert_eq!(table.remove(null), None);
            assert_eq!(table.get_disjoint_mut([h, null]), None);
            assert_eq!((table.len(), table[h]), (1, 1));
        }
    };
}

no_slot_test!(dense_never_stores_a_handle_with_no_slot, SecondaryPool);
no_slot_test!(
    sparse_never_stores_a_handle_with_no_slot,
    SparseSecondaryPool
);

#[test]
fn an_entry_with_no_slot_is_refused() {
    refused(json!([[[4294967295u32, 1], 1]]), "which no pool has");
}
