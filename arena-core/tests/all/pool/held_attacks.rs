//! Attacks on pools and their side tables from safe code: hostile save data whose layout would
//! make the next insert allocate past the reader's limit, callbacks that panic or reach other
//! pools in the middle of an operation, and views held across everything `&self` allows. Each
//! test says what must hold.

use arena_kit_core::pool::{Handle, Pool, SecondaryPool, SparseSecondaryPool};

#[cfg(feature = "serde")]
mod hostile_layout {
    use arena_kit_core::pool::{Pool, PoolSeed};
    use serde::de::DeserializeSeed;

    /// An empty growable pool's save data with chunks of `chunk` slots.
    fn empty_with_chunk(chunk: u64) -> String {
        format!(
            r#"{{"generation_tag":0,"first_generation":0,"chunk":{chunk},"capacity":0,
            "slots":[],"free_list":[],"peak_live":0,"inserts":0}}"#
        )
    }

    fn load(json: &str, max_bytes: usize) -> Result<Pool<u8>, String> {
        let mut de = serde_json::Deserializer::from_str(json);
        PoolSeed::<u8>::with_max_bytes(max_bytes)
            .deserialize(&mut de)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_empty_pool_whose_first_chunk_is_over_the_limit_is_refused() {
        // Loading it allocates nothing, but its first insert would allocate a whole chunk:
        // 4 Mi slots (32 MiB) against a 1 MiB limit, or 2^31 slots (16 GiB) against the
        // default. The limit bounds what the loaded pool allocates for its first value too.
        for (chunk, limit) in [(1u64 << 22, 1usize << 20), (1 << 31, 64 << 20)] {
            match load(&empty_with_chunk(chunk), limit) {
                Ok(pool) => panic!(
                    "accepted: its first insert would take {} slots, over {limit} bytes",
                    pool.stats().capacity.max(chunk as usize)
                ),
                Err(e) => assert!(e.contains("over the limit"), "{e}"),
            }
        }
    }

    #[test]
    fn an_empty_pool_whose_first_chunk_fits_still_loads_and_grows() {
        let mut pool = load(&empty_with_chunk(64), 1 << 20).expect("a small chunk loads");
        assert_eq!(pool.capacity(), 0);
        let h = pool.insert(7);
        assert_eq!((pool.capacity(), pool[h]), (64, 7));
    }

    thread_local! {
        static MADE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        static DROPPED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Counts its constructions and drops; reading 13 panics, reading 99 is an error.
    struct Touchy;

    impl<'de> serde::Deserialize<'de> for Touchy {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            match <u32 as serde::Deserialize>::deserialize(d)? {
                13 => panic!("a value's Deserialize panicked"),
                99 => Err(<D::Error as serde::de::Error>::custom(
                    "a value's Deserialize failed",
                )),
                _ => {
                    MADE.with(|m| m.set(m.get() + 1));
                    Ok(Touchy)
                }
            }
        }
    }

    impl Drop for Touchy {
        fn drop(&mut self) {
            DROPPED.with(|d| d.set(d.get() + 1));
        }
    }

    /// A pool's values that panic or fail while read, or that were all read before the data
    /// is refused (a repeated free-list entry, a layout over the limit), are each dropped once;
    /// none is dropped twice or kept.
    #[test]
    fn values_read_before_a_pool_is_refused_are_dropped_once() {
        let mut pool = Pool::with_capacity(6);
        let hs: Vec<_> = [1u32, 2, 3, 4, 5, 6].map(|v| pool.insert(v)).to_vec();
        pool.remove(hs[5]);
        let saved = serde_json::to_value(&pool).unwrap();
        let mut cases = Vec::new();
        for bad in [13, 99] {
            let mut v = saved.clone();
            v["slots"][3][1] = bad.into();
            cases.push((v, 3));
        }
        let mut repeated = saved.clone();
        repeated["free_list"] = serde_json::json!([5, 5]);
        cases.push((repeated, 5));
        let mut wide = saved.clone();
        wide["capacity"] = (1u32 << 30).into();
        cases.push((wide, 5));
        for (v, made) in cases {
            MADE.with(|m| m.set(0));
            DROPPED.with(|d| d.set(0));
            let json = v.to_string();
            let r = std::panic::catch_unwind(|| serde_json::from_str::<Pool<Touchy>>(&json));
            assert!(matches!(r, Err(_) | Ok(Err(_))), "{v}: refused");
            let counts = (MADE.with(|m| m.get()), DROPPED.with(|d| d.get()));
            assert_eq!(counts, (made, made), "{v}: made and dropped");
        }
    }

    #[test]
    fn a_saved_pool_shrunk_to_nothing_reads_back() {
        let mut pool: Pool<u8> = Pool::growable(16);
        pool.shrink_to_fit();
        let json = serde_json::to_string(&pool).unwrap();
        let back: Pool<u8> = serde_json::from_str(&json).unwrap();
        assert_eq!((back.capacity(), back.len()), (0, 0));
    }
}

/// A spent handle (its `insert_with` closure stored it in a side table, then panicked) stays
/// spent in the side table too: the value the pool puts in that slot next has a newer handle,
/// which the table treats as a vacancy, never as the smuggled entry's.
#[test]
fn a_side_table_entry_for_a_spent_handle_never_answers_for_the_next_value() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let mut pool: Pool<u32> = Pool::with_capacity(2);
    let mut side = SecondaryPool::new();
    let mut sparse = SparseSecondaryPool::new();
    let freed = pool.insert(0);
    pool.remove(freed);
    for _ in 0..2 {
        // Once for the free-list slot, once for the never-used one.
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.insert_with(|spent| {
                side.insert(spent, "smuggled");
                sparse.insert(spent, "smuggled");
                panic!("the value could not be built")
            })
        }));
        assert!(r.is_err());
    }
    let (a, b) = (pool.insert(1), pool.insert(2));
    for h in [a, b] {
        assert_eq!(side.get(h), None, "{h:?} found the spent handle's entry");
        assert_eq!(sparse.get(h), None, "{h:?} found the spent handle's entry");
        assert_eq!(
            side.insert(h, "new"),
            None,
            "the older entry is replaced, not returned"
        );
        assert_eq!(sparse.insert(h, "new"), None);
    }
    assert_eq!((side.len(), sparse.len(), pool.len()), (2, 2, 2));
    assert_eq!(pool.stats().inserts, 3);
}

/// An iterator over a pool stays valid across every call `&self` allows on the same pool,
/// including ones that allocate and copy the whole pool (`clone`, serialization) and nested
/// iteration from both ends; it then yields exactly the values it would have.
#[test]
fn an_iterator_held_across_every_shared_call_yields_what_it_would_have() {
    let n = if cfg!(miri) { 12 } else { 200 };
    let mut pool: Pool<String> = Pool::growable(4);
    let handles: Vec<_> = (0..n).map(|i| pool.insert(i.to_string())).collect();
    for h in handles.iter().step_by(3) {
        pool.remove(*h);
    }
    let expected: Vec<_> = pool.iter().map(|(h, v)| (h, v.clone())).collect();
    let mut it = pool.iter();
    let mut seen = Vec::new();
    let mut back = Vec::new();
    let mut step = 0;
    loop {
        step += 1;
        let item = if step % 3 == 0 {
            it.next_back()
        } else {
            it.next()
        };
        let Some((h, v)) = item else { break };
        let copy = pool.clone();
        assert_eq!(copy.get(h), Some(v));
        assert_eq!(pool.get(h), Some(v));
        assert!(pool.contains(h));
        assert_eq!(pool.iter().rev().count(), pool.len());
        assert_eq!(pool.stats().len, expected.len());
        #[cfg(feature = "serde")]
        assert!(serde_json::to_string(&pool).unwrap().contains(v.as_str()));
        drop(copy);
        assert_eq!(it.len(), expected.len() - seen.len() - back.len() - 1);
        if step % 3 == 0 {
            back.push((h, v.clone()));
        } else {
            seen.push((h, v.clone()));
        }
    }
    seen.extend(back.into_iter().rev());
    assert_eq!(seen, expected);
}

/// `get_disjoint_mut` marks each slot while it checks the handles: after every kind of refusal
/// (a repeat at any position, a stale handle after good ones, in debug builds another pool's
/// handle, which panics), every value is still found by its own handle and by no other.
#[test]
fn a_refused_get_disjoint_mut_leaves_every_slot_as_it_was() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let mut pool: Pool<u32> = Pool::growable(2);
    let hs: Vec<_> = (0..5).map(|i| pool.insert(i)).collect();
    let stale = hs[4];
    pool.remove(stale);
    let live = &hs[..4];
    let mut other: Pool<u32> = Pool::with_capacity(1);
    let foreign = other.insert(9);
    let refusals: [[Handle<u32>; 4]; 5] = [
        [live[0], live[1], live[2], live[0]],
        [live[3], live[3], live[1], live[2]],
        [live[0], live[1], live[2], stale],
        [live[2], live[1], stale, live[0]],
        [live[0], live[1], live[2], foreign],
    ];
    for handles in refusals {
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.get_disjoint_mut(handles).is_none()
        }));
        assert!(r.unwrap_or(true), "{handles:?} was accepted");
        for (i, &h) in live.iter().enumerate() {
            assert_eq!(pool.get(h), Some(&(i as u32)), "{h:?} after {handles:?}");
        }
        assert_eq!(pool.get(stale), None);
        assert_eq!(pool.iter().count(), 4);
    }
    let [a, b, c, d] = pool
        .get_disjoint_mut([live[3], live[2], live[1], live[0]])
        .unwrap();
    std::mem::swap(a, d);
    std::mem::swap(b, c);
    assert_eq!(pool.values().copied().collect::<Vec<_>>(), [3, 2, 1, 0]);
}

/// Values whose `Drop` fills and empties other pools, and a side table keyed by this pool's
/// handles, while this pool drains, clears, retains, shrinks or is dropped: each value is
/// dropped once and every count is exact afterwards.
#[test]
fn drops_that_work_other_pools_and_side_tables_leave_every_count_exact() {
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Another pool, and a side table keyed by `keys`' handles.
    type Others = Rc<RefCell<(Pool<Vec<u8>>, SecondaryPool<u64, u32>)>>;

    struct Busy {
        others: Others,
        me: Handle<u64>,
        drops: Rc<RefCell<u32>>,
    }
    impl Drop for Busy {
        fn drop(&mut self) {
            *self.drops.borrow_mut() += 1;
            let mut o = self.others.borrow_mut();
            let (pool, side) = &mut *o;
            let h = pool.insert(vec![1; 3]);
            pool.remove(h);
            pool.insert(vec![2; 5]);
            pool.shrink_to_fit();
            side.remove(self.me);
        }
    }
    let n = if cfg!(miri) { 6 } else { 40 };
    for op in 0..5 {
        let others = Rc::new(RefCell::new((Pool::growable(2), SecondaryPool::new())));
        let drops = Rc::new(RefCell::new(0));
        let mut keys: Pool<u64> = Pool::growable(4);
        let mut pool: Pool<Busy> = Pool::growable(4);
        let mut busy = Vec::new();
        for i in 0..n {
            let me = keys.insert(i);
            others.borrow_mut().1.insert(me, i as u32);
            busy.push(pool.insert(Busy {
                others: others.clone(),
                me,
                drops: drops.clone(),
            }));
        }
        let kept = match op {
            0 => {
                let mut d = pool.drain();
                let _ = (d.next(), d.next_back());
                0
            }
            1 => {
                pool.clear();
                0
            }
            2 => {
                pool.retain(|_, b| b.me.index() % 2 == 0);
                pool.len()
            }
            3 => {
                pool.shrink_to_fit();
                n as usize
            }
            _ => {
                drop(std::mem::replace(&mut pool, Pool::new()));
                0
            }
        };
        assert_eq!(pool.len(), kept, "op {op}");
        assert_eq!(*drops.borrow() as usize, n as usize - kept, "op {op}");
        let s = pool.stats();
        assert_eq!(
            (s.len as u64, s.removes),
            (kept as u64, s.inserts - kept as u64)
        );
        let o = others.borrow();
        assert_eq!(o.0.len(), n as usize - kept);
        assert_eq!(o.1.len(), kept);
        drop(o);
        drop(pool);
        assert_eq!(*drops.borrow() as usize, n as usize);
        assert_eq!(others.borrow().1.len(), 0);
    }
}

/// A dense side table that refuses an insert because it cannot grow to the handle's index
/// (the slots up to it would take over 200 TiB) changes nothing: not its values, and not the pool it
/// holds handles of, so a table left empty still takes another pool's handles.
#[cfg(feature = "serde")]
#[test]
#[cfg_attr(
    miri,
    ignore = "Miri stops at an allocation it cannot make instead of returning the failure"
)]
fn a_dense_table_refusing_to_grow_binds_no_pool() {
    type Big = [u8; 1 << 16];
    let mut first: Pool<()> = Pool::with_capacity(1);
    let mut second: Pool<()> = Pool::with_capacity(1);
    // `first`'s handle, moved to a far slot (through its serialized form, which keeps a debug
    // build's pool tag; `Handle::from_bits` makes an untagged one).
    let (_, generation): (u32, u32) =
        serde_json::from_str(&serde_json::to_string(&first.insert(())).unwrap()).unwrap();
    let far: Handle<()> = serde_json::from_str(&format!("[4000000000,{generation}]")).unwrap();
    let mut table: SecondaryPool<(), Big> = SecondaryPool::new();
    let refused = table.try_insert(far, [0; 1 << 16]).unwrap_err();
    assert!(refused.to_string().contains("memory"), "{refused}");
    assert!(table.is_empty());
    // The table still takes a handle of any pool, as a new one does.
    let near = second.insert(());
    assert_eq!(table.try_insert(near, [1; 1 << 16]).ok(), Some(None));
    assert_eq!(table.len(), 1);
}

/// A table holding a debug-build pool's handles refuses an untagged handle whose counter no
/// such pool reaches (it matches nothing) without growing to its slot, however far that is.
#[cfg(any(debug_assertions, feature = "debug-checks"))]
#[test]
fn a_dense_table_refuses_an_untaggable_handle_without_growing() {
    let mut pool: Pool<()> = Pool::with_capacity(1);
    let mut table = SecondaryPool::new();
    table.insert(pool.insert(()), 1u64);
    let capacity = table.capacity();
    let untaggable = Handle::<()>::from_bits((1u64 << 30 | 1) << 32 | 4_000_000_000).unwrap();
    let refused = table.try_insert(untaggable, 2).unwrap_err();
    assert_eq!((refused.into_inner(), table.len()), (2, 1));
    assert_eq!(
        table.capacity(),
        capacity,
        "the table grew for a refused handle"
    );
}

/// Untagged tables for the two tests below: each holds slot 0 at counter 3, written untagged
/// (`Handle::from_bits` in a debug build); `stale` is a debug-build pool's handle older than it,
/// `later` another debug-build pool's handle for slot 1.
#[cfg(any(debug_assertions, feature = "debug-checks"))]
struct UntaggedTables {
    dense: SecondaryPool<(), u8>,
    sparse: SparseSecondaryPool<(), u8>,
    untagged: Handle<()>,
    stale: Handle<()>,
    later: Handle<()>,
}

#[cfg(any(debug_assertions, feature = "debug-checks"))]
fn untagged_tables() -> UntaggedTables {
    let mut first: Pool<()> = Pool::with_capacity(2);
    let mut second: Pool<()> = Pool::with_capacity(2);
    let stale = first.insert(());
    first.remove(stale);
    let [_, later] = [second.insert(()), second.insert(())];
    let untagged = Handle::<()>::from_bits(3u64 << 32).unwrap();
    let mut dense = SecondaryPool::new();
    let mut sparse = SparseSecondaryPool::new();
    dense.insert(untagged, 1);
    sparse.insert(untagged, 1);
    UntaggedTables {
        dense,
        sparse,
        untagged,
        stale,
        later,
    }
}

/// A side table that holds only untagged handles (`Handle::from_bits` in a debug build) and
/// refuses a debug-build pool's handle as stale stays bound to no tagged pool: a handle of
/// another debug-build pool is still taken afterwards, as before the refusal, not refused as
/// foreign (a panic).
#[cfg(any(debug_assertions, feature = "debug-checks"))]
#[test]
fn a_stale_tagged_handle_refused_by_an_untagged_table_binds_no_pool() {
    let UntaggedTables {
        mut dense,
        mut sparse,
        untagged,
        stale,
        later,
    } = untagged_tables();
    let refused = dense.try_insert(stale, 2).unwrap_err();
    assert!(refused.to_string().contains("stale"), "{refused}");
    let refused = sparse.try_insert(stale, 2).unwrap_err();
    assert!(refused.to_string().contains("stale"), "{refused}");
    // Another debug-build pool's handle, as the table would have taken it before the refusals.
    let took = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (
            dense.try_insert(later, 3).ok(),
            sparse.try_insert(later, 3).ok(),
        )
    }));
    assert_eq!(
        took.ok(),
        Some((Some(None), Some(None))),
        "the refusal bound the table"
    );
    assert_eq!(
        (dense.get(untagged), sparse.get(untagged)),
        (Some(&1), Some(&1))
    );
}

/// As above, through `entry`: a stale handle's `None` binds the table to no pool either.
#[cfg(any(debug_assertions, feature = "debug-checks"))]
#[test]
fn a_stale_tagged_handle_refused_by_entry_binds_no_pool() {
    let UntaggedTables {
        mut dense,
        mut sparse,
        untagged,
        stale,
        later,
    } = untagged_tables();
    assert!(dense.entry(stale).is_none());
    assert!(sparse.entry(stale).is_none());
    let took = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (
            dense.entry(later).map(|e| *e.or_insert(3)),
            sparse.entry(later).map(|e| *e.or_insert(3)),
        )
    }));
    assert_eq!(
        took.ok(),
        Some((Some(3), Some(3))),
        "the refusal bound the table"
    );
    assert_eq!(
        (dense.get(untagged), sparse.get(untagged)),
        (Some(&1), Some(&1))
    );
}

/// A pool's `iter_mut` moves to another thread with values that are `Send` but not `Sync`
/// (`Cell`), as `slice::IterMut` does, and each value is written there exactly once.
#[test]
fn iter_mut_crosses_threads_with_send_values() {
    let mut pool: Pool<std::cell::Cell<u32>> = Pool::with_capacity(8);
    let handles: Vec<_> = (0..8)
        .map(|i| pool.insert(std::cell::Cell::new(i)))
        .collect();
    pool.remove(handles[3]);
    let iter = pool.iter_mut();
    let seen = std::thread::scope(|s| {
        s.spawn(move || {
            let mut seen = Vec::new();
            for (h, v) in iter {
                v.set(v.get() * 10);
                seen.push(h);
            }
            seen
        })
        .join()
        .unwrap()
    });
    assert_eq!(seen.len(), 7);
    for (i, h) in handles.iter().enumerate() {
        let want = (i != 3).then_some(i as u32 * 10);
        assert_eq!(pool.get(*h).map(|c| c.get()), want, "{h:?}");
    }
}
