//! Tampered save data is refused with a message saying what is wrong, never turned into a pool
//! that could revive a stale handle or hand out one slot twice.
#![cfg(feature = "serde")]

use arena_kit_core::pool::{Handle, Pool};
use serde_json::{Value, json};

/// A pool's save data and a handle whose value was removed from it.
fn saved_after_a_removal() -> (Value, Handle<u8>, Pool<u8>) {
    let mut pool = Pool::with_capacity(4);
    let stale = pool.insert(1u8);
    pool.insert(2u8);
    pool.remove(stale);
    (serde_json::to_value(&pool).unwrap(), stale, pool)
}

fn load(v: &Value) -> Result<Pool<u8>, String> {
    serde_json::from_value(v.clone()).map_err(|e| e.to_string())
}

#[track_caller]
fn refused(v: &Value, needle: &str) {
    match load(v) {
        Ok(p) => panic!("tampered data was accepted: {} live", p.len()),
        Err(e) => assert!(e.contains(needle), "message {e:?} does not say {needle:?}"),
    }
}

#[test]
fn a_retired_slot_put_back_on_the_free_list_is_refused() {
    let (mut v, stale, _) = saved_after_a_removal();
    // Slot 0 was freed once; mark it retired (its generation becomes the retired marker, which
    // for a full budget is also the generation of a never-used slot) but keep it on the free
    // list: the next insert would reuse the stale handle's generation.
    let retired = v["generation_tag"].as_u64().unwrap();
    v["slots"][0][0] = json!(retired);
    if let Ok(mut p) = load(&v) {
        let h = p.insert(9);
        assert_ne!(h, stale, "the stale handle came back to life");
        assert!(p.get(stale).is_none());
        panic!("a retired slot on the free list was accepted");
    }
    refused(&v, "retired");
}

#[test]
fn a_free_slot_with_an_earlier_generation_is_refused() {
    let (mut v, _, _) = saved_after_a_removal();
    let first = v["first_generation"].as_u64().unwrap();
    // Back to the first generation: the next insert would reissue the first handle ever made.
    v["slots"][0][0] = json!(first);
    refused(&v, "generation");
}

#[test]
fn free_list_entries_must_be_vacant_in_range_and_unique() {
    let (v, _, _) = saved_after_a_removal();
    for (list, needle) in [
        (json!([0, 0]), "twice"),
        (json!([1]), "occupied"),
        (json!([7]), "no slot"),
        (json!([u32::MAX]), "no slot"),
    ] {
        let mut t = v.clone();
        t["free_list"] = list;
        refused(&t, needle);
    }
    // A vacant, used slot left off the free list must carry the retired marker.
    let mut t = v.clone();
    t["free_list"] = json!([]);
    refused(&t, "retired");
}

#[test]
fn generations_must_match_vacancy_and_the_scheme() {
    let (v, _, _) = saved_after_a_removal();
    let g1 = v["slots"][1][0].as_u64().unwrap();
    for (slot, value, needle) in [
        (1, json!([g1 + 1, 2]), "odd"), // an even generation with a value
        (0, json!([g1, null]), "even"), // an odd generation without one
        // Bit 31 marks a tagged generation: flipped, the generation is no longer of this pool's
        // scheme, whichever build made the save (a debug build tags, a release build does not).
        (1, json!([g1 ^ 0x8000_0000, 2]), "tag"),
    ] {
        let mut t = v.clone();
        t["slots"][slot] = value;
        refused(&t, needle);
    }
    if g1 & 0x8000_0000 != 0 {
        // A tagged save (a debug build's): another tag is another pool's generation.
        let mut t = v.clone();
        t["slots"][1] = json!([g1 ^ 0x4000_0000, 2]);
        refused(&t, "tag");
    }
    let mut t = v.clone();
    t["inserts"] = json!(0);
    refused(&t, "inserts");
    let mut t = v.clone();
    t["capacity"] = json!(1);
    refused(&t, "capacity");
    let mut t = v.clone();
    t["chunk"] = json!(3);
    refused(&t, "chunk");
}

#[test]
fn counters_that_would_overflow_on_the_next_insert_are_refused() {
    let (v, _, _) = saved_after_a_removal();
    let mut t = v.clone();
    t["inserts"] = json!(u64::MAX);
    match load(&t) {
        // Before: accepted, and the next insert overflowed the counter.
        Ok(mut p) => {
            p.insert(1);
            panic!("inserts = u64::MAX was accepted");
        }
        Err(e) => assert!(e.contains("overflow"), "{e}"),
    }
    let mut t = v.clone();
    t["peak_live"] = json!(u32::MAX);
    refused(&t, "peak_live");
}

#[test]
fn untampered_data_still_loads_with_every_handle() {
    let (v, stale, original) = saved_after_a_removal();
    let mut p = load(&v).unwrap();
    assert!(p.get(stale).is_none());
    assert_eq!(p.stats(), original.stats());
    let h = p.insert(5);
    assert_ne!(h, stale);
    assert!(p.get(stale).is_none());
}

/// A save can understate its peak; after loading, the live and free slots count toward it, so
/// inserts that refill the free slots can never carry the live count past the peak reported.
#[test]
fn a_loaded_peak_covers_the_free_slots() {
    let mut pool = Pool::with_capacity(4);
    let handles: Vec<_> = (0..3u8).map(|i| pool.insert(i)).collect();
    pool.remove(handles[0]);
    pool.remove(handles[2]);
    let mut v = serde_json::to_value(&pool).unwrap();
    v["peak_live"] = json!(0);
    let mut loaded = load(&v).unwrap();
    assert_eq!(loaded.stats().peak_live, 3, "one live and two free slots");
    loaded.insert(7);
    loaded.insert(8);
    let stats = loaded.stats();
    assert_eq!((stats.len, stats.peak_live), (3, 3));
    loaded.insert(9);
    assert_eq!(loaded.stats().peak_live, 4, "a never-used slot raises it");
}

/// A debug build's save (a tagged generation scheme, tag 5, with one value per slot left) loaded
/// by any build, release without `debug-checks` included: removing slot 0's last value retires
/// the slot, it is not handed out again under the next tag's generation, and the pool's own save
/// loads again. (A remove path that told retirement by an `i32` overflow, right for release
/// builds' untagged generations, missed it here: a tagged generation has bit 31 set.)
#[test]
fn a_tagged_pool_from_a_debug_build_retires_its_last_generation_in_every_build() {
    let tag: u32 = 0x8500_0000;
    let last = tag | 0x00FF_FFFF;
    let v = json!({
        "generation_tag": tag, "first_generation": last - 1, "chunk": null, "capacity": 2,
        "slots": [[last, 7]], "free_list": [], "peak_live": 1, "inserts": 1
    });
    let mut pool: Pool<u8> = serde_json::from_value(v).unwrap();
    let h: Handle<u8> = serde_json::from_value(json!([0, last])).unwrap();
    assert_eq!(pool.remove(h), Some(7));
    let h2 = pool.insert(8);
    let saved = serde_json::to_value(&pool).unwrap();
    assert_ne!(
        h2.index(),
        0,
        "slot 0 had held its last value and must have retired; saved now: {saved}"
    );
    assert_eq!(pool.stats().retired, 1);
    load(&saved).expect("the pool's own save loads again");
}
