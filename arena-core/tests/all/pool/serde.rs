//! Serialization round trips (feature `serde`): every handle stays valid, the free list keeps its
//! order, so the same operations after a save and load give the same handles (slotmap#104).
#![cfg(feature = "serde")]

use arena_kit_core::pool::{Handle, Pool};

/// A pool after some churn: slots freed in a scrambled order, one retired.
fn churned() -> (Pool<String>, Vec<Handle<String>>) {
    let mut pool = Pool::with_capacity_and_generation_budget(8, 2);
    let hs: Vec<_> = (0..6).map(|i| pool.insert(format!("v{i}"))).collect();
    for i in [3, 0, 4] {
        pool.remove(hs[i]);
    }
    let again = pool.insert("again".to_string()); // slot 4, its second (last) generation
    pool.remove(again); // slot 4 retires
    (pool, hs)
}

/// The handles a sequence of inserts and removes returns.
fn replay(pool: &mut Pool<String>) -> Vec<Handle<String>> {
    let mut out = Vec::new();
    for i in 0..5 {
        let h = pool.insert(format!("r{i}"));
        out.push(h);
        if i % 2 == 1 {
            pool.remove(out[i - 1]);
        }
    }
    out
}

#[test]
fn round_trip_keeps_handles_and_free_list_order() {
    let (mut original, hs) = churned();
    let json = serde_json::to_string(&original).unwrap();
    let mut restored: Pool<String> = serde_json::from_str(&json).unwrap();

    assert_eq!(restored.len(), original.len());
    assert_eq!(restored.capacity(), original.capacity());
    assert_eq!(restored.stats(), original.stats());
    for h in &hs {
        assert_eq!(restored.get(*h), original.get(*h), "{h:?}");
    }
    let a: Vec<_> = original.iter().map(|(h, v)| (h, v.clone())).collect();
    let b: Vec<_> = restored.iter().map(|(h, v)| (h, v.clone())).collect();
    assert_eq!(a, b);
    assert_eq!(
        replay(&mut original),
        replay(&mut restored),
        "deterministic after a reload"
    );
    assert_eq!(
        serde_json::to_string(&original).unwrap(),
        serde_json::to_string(&restored).unwrap()
    );
}

#[test]
fn round_trip_of_a_growable_pool() {
    let mut pool = Pool::growable(2);
    let hs: Vec<_> = (0..7).map(|i| pool.insert(i)).collect();
    pool.remove(hs[5]);
    pool.remove(hs[1]);
    let json = serde_json::to_string(&pool).unwrap();
    let mut back: Pool<i32> = serde_json::from_str(&json).unwrap();
    assert!(back.is_growable());
    assert_eq!(back.capacity(), 8);
    assert_eq!(back.insert(10), pool.insert(10));
    assert_eq!(back.insert(11), pool.insert(11));
    assert_eq!(back.insert(12), pool.insert(12));
    assert_eq!(back.capacity(), pool.capacity());
}

#[test]
fn handles_round_trip_and_even_generations_are_refused() {
    let mut pool = Pool::with_capacity(2);
    let h = pool.insert(1u8);
    let json = serde_json::to_string(&h).unwrap();
    let back: Handle<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, h);
    assert!(serde_json::from_str::<Handle<u8>>("[0,2]").is_err());
    assert!(serde_json::from_str::<Handle<u8>>("[0,0]").is_err());
}

#[test]
fn tampered_data_is_refused() {
    let (pool, _) = churned();
    let json = serde_json::to_string(&pool).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();

    let tamper = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = value.clone();
        f(&mut v);
        serde_json::from_value::<Pool<String>>(v)
            .unwrap_err()
            .to_string()
    };
    let free = value["free_list"].as_array().unwrap().clone();
    let err = tamper(&|v| {
        let first = free[0].clone();
        v["free_list"].as_array_mut().unwrap().push(first);
    });
    assert!(err.contains("twice"), "{err}");
    let err = tamper(&|v| v["free_list"].as_array_mut().unwrap().push(1.into()));
    assert!(err.contains("not a used, vacant slot"), "{err}");
    let err = tamper(&|v| v["slots"][1][0] = (v["slots"][1][0].as_u64().unwrap() + 1).into());
    assert!(err.contains("parity"), "{err}");
    let err = tamper(&|v| v["capacity"] = 2.into());
    assert!(err.contains("capacity"), "{err}");
}

/// A `Pool::new` pool round-trips before its first insert (capacity 0, nothing allocated) and
/// after growing; the loaded one grows the same way.
#[test]
fn round_trip_of_a_new_pool_before_and_after_growth() {
    let mut pool: Pool<String> = Pool::new();
    let json = serde_json::to_string(&pool).unwrap();
    let mut empty: Pool<String> = serde_json::from_str(&json).unwrap();
    assert_eq!((empty.capacity(), empty.stats().blocks), (0, 0));
    let a = pool.insert("a".to_string());
    assert_eq!(empty.insert("a".to_string()), a);
    assert_eq!(empty.capacity(), pool.capacity());
    let json = serde_json::to_string(&pool).unwrap();
    let grown: Pool<String> = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (grown.capacity(), &grown[a]),
        (pool.capacity(), &"a".to_string())
    );
}
