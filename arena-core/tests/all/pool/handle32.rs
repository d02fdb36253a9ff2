//! Pools of 4-byte handles (`Pool<T, Handle32<T>>`): the size, the bit form, retirement after
//! 2048 lives, the slot limit of 2^20 - 1 for fixed and growable pools, handles from another
//! pool, and serialized data that does not fit the handle.

use std::collections::HashSet;

use arena_kit_core::pool::{
    Handle, Handle32, Pool, PoolCapacityError, PoolHandle, PoolReserveError,
};

type Small<T> = Pool<T, Handle32<T>>;

#[test]
fn a_handle32_and_its_option_are_four_bytes() {
    assert_eq!(size_of::<Handle32<[u64; 8]>>(), 4);
    assert_eq!(size_of::<Option<Handle32<[u64; 8]>>>(), 4);
    assert_eq!(size_of::<Option<Handle<[u64; 8]>>>(), 8);
    // The constants the page documents.
    assert_eq!(Handle32::<u8>::MAX_CAPACITY, (1 << 20) - 1);
    assert_eq!(Handle32::<u8>::LIVES_PER_SLOT, 1 << 11);
}

#[test]
fn the_bit_form_round_trips_and_refuses_patterns_no_handle_has() {
    let mut pool: Small<u32> = Pool::with_capacity_and_key(4);
    let handles: Vec<_> = (0..4).map(|i| pool.insert(i)).collect();
    pool.remove(handles[1]);
    let reused = pool.insert(10);
    assert_eq!((reused.index(), reused.generation().get()), (1, 3));
    assert_eq!(reused.to_bits(), 1 << 12 | 3);
    for h in handles.iter().chain([&reused]) {
        let back = Handle32::<u32>::from_bits(h.to_bits()).unwrap();
        assert_eq!(back, *h);
        assert_eq!(pool.get(back), pool.get(*h));
    }
    // Every even generation, for a few indices.
    for index in [0u32, 1, 4095, (1 << 20) - 2] {
        for generation in (0..4096).step_by(if cfg!(miri) { 682 } else { 2 }) {
            assert!(Handle32::<u32>::from_bits(index << 12 | generation).is_none());
        }
    }
    let null = Handle32::<u32>::null();
    assert!(null.is_null() && null == Handle32::default());
    assert_eq!(null.to_bits(), 0xFFFF_F001);
    assert!(
        Handle32::<u32>::from_bits(null.to_bits())
            .unwrap()
            .is_null()
    );
    assert!(
        Handle32::<u32>::from_bits(0xFFFF_F003).is_none(),
        "the null index, another generation"
    );
    assert!(pool.get(null).is_none() && !pool.contains(null));
    assert!(pool.remove(null).is_none());
}

#[test]
fn handles_order_hash_and_print_by_index_then_generation() {
    let mut pool: Small<char> = Pool::with_key();
    let a = pool.insert('a');
    let b = pool.insert('b');
    pool.remove(a);
    let c = pool.insert('c'); // slot 0 again, generation 3
    assert!(
        a < c && c < b,
        "slot 0 before slot 1; within a slot by generation"
    );
    let set: HashSet<_> = [a, b, c, a].into_iter().collect();
    assert_eq!(set.len(), 3);
    assert_eq!(format!("{c:?}"), "Handle32 { index: 0, generation: 3 }");
    assert_eq!(
        format!("{pool:?}"),
        "{Handle32 { index: 0, generation: 3 }: 'c', Handle32 { index: 1, generation: 1 }: 'b'}"
    );
}

#[test]
fn a_slot_retires_after_2048_lives_and_no_stale_handle_ever_matches() {
    let mut pool: Small<u32> = Pool::with_capacity_and_key(1);
    let first = pool.insert(0);
    let mut last = first;
    for life in 1..Handle32::<u32>::LIVES_PER_SLOT {
        assert_eq!(pool.remove(last), Some(life - 1));
        assert!(pool.get(first).is_none() || life == 0);
        let next = pool.insert(life);
        // One slot, so a handle never handed out twice is a generation that only rises.
        assert_eq!(next.index(), 0);
        assert!(
            next.generation() > last.generation(),
            "a handle is never handed out twice"
        );
        last = next;
    }
    assert_eq!(
        last.generation().get(),
        4095,
        "the last odd 12-bit generation"
    );
    assert_eq!(pool.remove(last), Some(2047));
    let stats = pool.stats();
    assert_eq!((stats.retired, stats.inserts), (1, 2048));
    // The only slot retired: the fixed pool is full for good, and every old handle misses.
    assert_eq!(pool.try_insert(7).unwrap_err().into_inner(), 7);
    assert!(pool.get(first).is_none() && pool.get(last).is_none());
    assert!(pool.is_empty());
}

#[test]
fn a_growable_pool_replaces_retired_slots_with_new_ones() {
    let mut pool: Small<u8> = Pool::growable_with_key(2);
    let mut h = pool.insert(1);
    // One slot churned through its 2048 lives; the next insert takes another.
    for _ in 1..Handle32::<u8>::LIVES_PER_SLOT {
        pool.remove(h);
        h = pool.insert(1);
        assert_eq!(h.index(), 0);
    }
    pool.remove(h);
    let next = pool.insert(2);
    assert_eq!(next.index(), 1);
    assert_eq!(pool.stats().retired, 1);
}

#[test]
fn fixed_pools_refuse_more_slots_than_twenty_bits_index() {
    let err = Small::<u8>::try_with_capacity_and_key(1 << 20).unwrap_err();
    assert_eq!(
        err,
        PoolCapacityError::TooManySlots {
            requested: 1 << 20,
            max: (1 << 20) - 1
        }
    );
    assert!(err.to_string().contains("1048575"), "{err}");
    let too_big = std::panic::catch_unwind(|| Small::<u8>::with_capacity_and_key(usize::MAX));
    assert!(too_big.is_err());
    // A `Handle` pool takes the same request (checked without allocating: over its range too).
    assert!(Pool::<u8>::try_with_capacity(usize::MAX).is_err());
}

#[test]
fn reserve_refuses_past_the_handle_range_and_changes_nothing() {
    let mut pool: Small<u8> = Pool::growable_with_key(16);
    let h = pool.insert(3);
    let err = pool.try_reserve(1 << 20).unwrap_err();
    assert!(
        matches!(
            err,
            PoolReserveError::TooManySlots {
                max: 1_048_575,
                in_use: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!((pool.capacity(), pool[h]), (16, 3));
    pool.reserve(100);
    assert!(pool.capacity() >= 101);
}

/// Fills a growable `Handle32` pool to its last slot: the chunk that reaches index 2^20 - 1
/// (the null handle's) is allocated, but that slot is never handed out.
#[test]
#[cfg_attr(
    miri,
    ignore = "a million inserts; Miri would take hours, and the code is the one the small pools run"
)]
fn a_growable_pool_stops_one_slot_short_of_two_to_the_twenty() {
    let mut pool: Small<u8> = Pool::growable_with_key(1 << 18);
    let max = Handle32::<u8>::MAX_CAPACITY;
    let mut last = Handle32::null();
    for i in 0..max {
        last = pool.insert(i as u8);
    }
    assert_eq!(last.index() as usize, max - 1);
    assert_eq!(
        pool.capacity(),
        max,
        "the capacity counts only indexable slots"
    );
    assert_eq!(pool.stats().blocks, 4);
    assert_eq!(pool.try_insert(9).unwrap_err().into_inner(), 9);
    assert!(pool.get(Handle32::null()).is_none());
    assert!(pool.try_reserve(1).is_err());
    // Freed slots are reused as usual.
    assert_eq!(pool.remove(last), Some((max - 1) as u8));
    let again = pool.insert(1);
    assert_eq!(
        (again.index() as usize, again.generation().get()),
        (max - 1, 3)
    );
}

/// What the page says about handles from another `Handle32` pool: no tag, so inside the other
/// pool's slots they are looked up as its own (here: found, or missed), never a panic and never
/// out of bounds; outside them they miss.
#[test]
fn another_pools_handle32_is_checked_by_index_and_generation_only() {
    let mut a: Small<&str> = Pool::with_capacity_and_key(4);
    let mut b: Small<&str> = Pool::with_capacity_and_key(2);
    let in_a = [a.insert("a0"), a.insert("a1"), a.insert("a2")];
    let b0 = b.insert("b0");
    assert_eq!(
        b.get(in_a[0]),
        Some(&"b0"),
        "same index and generation: b's value"
    );
    assert!(b.get(in_a[1]).is_none(), "b's slot 1 was never used");
    assert!(b.get(in_a[2]).is_none(), "past b's slots");
    assert!(b.remove(in_a[2]).is_none());
    assert_eq!(a.get(b0), Some(&"a0"));
}

#[test]
fn every_pool_operation_works_with_four_byte_handles() {
    let mut pool: Small<String> = ["x", "y", "z"].map(String::from).into_iter().collect();
    let keys: Vec<Handle32<String>> = pool.keys().collect();
    assert_eq!(keys.len(), 3);
    pool[keys[1]].push('!');
    let [x, z] = pool.get_disjoint_mut([keys[0], keys[2]]).unwrap();
    std::mem::swap(x, z);
    assert_eq!(pool.values().cloned().collect::<Vec<_>>(), ["z", "y!", "x"]);
    pool.retain(|h, _| h != keys[0]);
    let clone = pool.clone();
    assert_eq!(clone, pool);
    let drained: Vec<_> = pool.drain().rev().collect();
    assert_eq!(
        drained,
        [(keys[2], "x".to_string()), (keys[1], "y!".to_string())]
    );
    assert!(pool.is_empty() && pool.get(keys[1]).is_none());
    let h = pool.insert_with(|me| format!("{}", me.index()));
    assert_eq!(
        pool[h], "1",
        "LIFO reuse: the last slot drained (from the back: slot 1)"
    );
    assert_eq!(clone.into_values().count(), 2);
    let mut extended: Small<u8> = Pool::default();
    extended.extend([1, 2, 3]);
    assert_eq!(extended.iter().map(|(_, v)| *v).sum::<u8>(), 6);
}

/// Generic code over the handle type, as a user's would be.
#[test]
fn code_generic_over_the_handle_type_serves_both_pools() {
    fn total<H: PoolHandle<u32>>(pool: &Pool<u32, H>, handles: &[H]) -> u32 {
        handles.iter().filter_map(|&h| pool.get(h)).sum()
    }
    let mut wide: Pool<u32> = Pool::new();
    let mut small: Small<u32> = Pool::with_key();
    let w = [wide.insert(1), wide.insert(2)];
    let s = [small.insert(3), small.insert(4)];
    assert_eq!((total(&wide, &w), total(&small, &s)), (3, 7));
}

#[cfg(feature = "serde")]
mod serde {
    use super::*;
    use arena_kit_core::pool::PoolDecodeError;

    #[test]
    fn a_pool_of_handle32s_round_trips_with_its_handles() {
        let mut pool: Small<u16> = Pool::growable_with_key(4);
        let handles: Vec<_> = (0..6).map(|i| pool.insert(i)).collect();
        pool.remove(handles[2]);
        let json = serde_json::to_string(&(&pool, &handles)).unwrap();
        let (mut back, handles_back): (Small<u16>, Vec<Handle32<u16>>) =
            serde_json::from_str(&json).unwrap();
        assert_eq!(back, pool);
        assert_eq!(handles_back, handles);
        assert_eq!(back.insert(9), pool.insert(9), "the same next handle");
        // A handle is its 32 bits.
        assert_eq!(serde_json::to_string(&handles[1]).unwrap(), "4097");
        assert!(
            serde_json::from_str::<Handle32<u16>>("4098").is_err(),
            "an even generation"
        );
    }

    fn decode(json: &str) -> String {
        serde_json::from_str::<Small<u8>>(json)
            .map(|_| String::new())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn data_that_does_not_fit_the_handle_is_refused() {
        let base = |tag: u32, first: u32, chunk: &str, capacity: u32, slots: &str| {
            format!(
                r#"{{"generation_tag":{tag},"first_generation":{first},"chunk":{chunk},"capacity":{capacity},"slots":{slots},"free_list":[],"peak_live":1,"inserts":1}}"#
            )
        };
        // Accepted: a small pool in the Handle32 scheme.
        assert_eq!(decode(&base(0, 0, "null", 2, "[[1,7]]")), "");
        // A generation past 12 bits would overflow into a handle's index bits.
        let err = decode(&base(0, 0, "null", 2, "[[4097,7]]"));
        assert!(err.contains("generation"), "{err}");
        // A debug build's tagged scheme has no Handle32 equivalent.
        let err = decode(&base(
            0x8000_0000,
            0x8000_0000,
            "null",
            2,
            "[[2147483649,7]]",
        ));
        assert!(err.contains("not a generation scheme"), "{err}");
        // Capacity past the handle's range: refused before anything is allocated.
        let err = decode(&base(0, 0, "null", 1 << 20, "[[1,7]]"));
        assert!(err.contains("handle type indexes"), "{err}");
        let err = decode(&base(0, 0, "1024", 1 << 21, "[[1,7]]"));
        assert!(err.contains("handle type indexes"), "{err}");
        // A growable pool's last chunk may reach past the range (as the pool's own does); 8 MiB
        // of slots, too many for Miri.
        if !cfg!(miri) {
            let json = base(0, 0, "524288", 1 << 20, "[[1,7]]");
            let pool = serde_json::from_str::<Small<u8>>(&json).unwrap();
            assert_eq!(pool.capacity(), Handle32::<u8>::MAX_CAPACITY);
        }
        // The error says what to do.
        let err = PoolDecodeError::OverHandleRange {
            capacity: 1 << 20,
            max: (1 << 20) - 1,
        };
        assert!(err.to_string().contains("wider handle"), "{err}");
    }
}
