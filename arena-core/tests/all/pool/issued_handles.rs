//! A handle `insert_with` hands its closure before the value exists must never name a value if
//! the insert does not finish: the closure can smuggle it out (into a `Cell`, a log, another
//! container) and panic. The pool is then unchanged but for the spent generation: the next
//! value in that slot gets another handle, in `Pool` and `SoaPool`, for a free-list slot and a
//! never-used one, and across a save and load. (slotmap's `try_insert_with_key` hands out a key
//! that the next insert into the slot gets again.)

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::pool::{Handle, Handle32, Pool};
use arena_kit_core::soa::SoaPool;

use crate::soa_rows::{Enemy, enemy};

/// Runs `insert_with` through `insert`, with a closure that stores its handle in a cell and
/// panics; returns the handle it was given.
fn smuggled<H: Copy, R>(insert: impl FnOnce(&dyn Fn(H)) -> R) -> H {
    let cell = Cell::new(None);
    let keep = |h: H| {
        cell.set(Some(h));
        panic!("the value could not be built");
    };
    let r = catch_unwind(AssertUnwindSafe(|| insert(&keep)));
    assert!(r.is_err(), "the closure panicked");
    cell.get().expect("the closure saw its handle")
}

/// What [`a_spent_handle_names_nothing`] does to one pool kind.
struct Ops<P, H> {
    /// Panics inside an `insert_with` and returns the handle the closure saw.
    spend: fn(&mut P) -> H,
    insert: fn(&mut P, i32) -> H,
    remove: fn(&mut P, H),
    /// Whether a handle names a value.
    live: fn(&P, H) -> bool,
    len: fn(&P) -> usize,
    index: fn(H) -> u32,
}

/// Spends the handle of a never-used slot and, twice, of a free-list slot: the pool keeps its
/// length, the next value takes the same slot under another handle, and no spent handle names
/// it.
fn a_spent_handle_names_nothing<P, H: PartialEq + std::fmt::Debug + Copy>(
    pool: &mut P,
    ops: Ops<P, H>,
) {
    let Ops {
        spend,
        insert,
        remove,
        live,
        len,
        index,
    } = ops;
    // A never-used slot (the free list is empty).
    let first = insert(pool, 1);
    let before = len(pool);
    let spent = spend(pool);
    assert_eq!(len(pool), before, "nothing was inserted");
    assert!(!live(pool, spent));
    let next = insert(pool, 2);
    assert_eq!(index(next), index(spent), "the same slot, no capacity lost");
    assert_ne!(next, spent, "another generation");
    assert!(!live(pool, spent) && live(pool, next) && live(pool, first));

    // A free-list slot, spent twice over.
    let removed = insert(pool, 3);
    remove(pool, removed);
    let a = spend(pool);
    let b = spend(pool);
    assert_ne!(a, b);
    let again = insert(pool, 4);
    assert_eq!(index(again), index(removed));
    for h in [removed, a, b] {
        assert_ne!(again, h);
        assert!(!live(pool, h));
    }
}

#[test]
fn a_handle_given_to_a_panicking_insert_with_never_names_a_value_in_a_pool() {
    for growable in [false, true] {
        let mut pool: Pool<i32> = if growable {
            Pool::growable(4)
        } else {
            Pool::with_capacity(8)
        };
        fn spend(p: &mut Pool<i32>) -> Handle<i32> {
            smuggled(|keep| {
                p.insert_with(|h| -> i32 {
                    keep(h);
                    0
                })
            })
        }
        // Through `try_insert_with` too.
        let try_spend = |p: &mut Pool<i32>| {
            smuggled(|keep| {
                p.try_insert_with(|h| -> i32 {
                    keep(h);
                    0
                })
            })
        };
        let inserts = pool.stats().inserts;
        let spent = spend(&mut pool);
        let spent_too = try_spend(&mut pool);
        assert_ne!(spent, spent_too);
        assert_eq!(pool.stats().inserts, inserts, "nothing counted");
        let h = pool.insert(7);
        assert!(pool.get(spent).is_none() && pool.get(spent_too).is_none());
        assert_eq!(pool[h], 7);
        pool.remove(h);
        a_spent_handle_names_nothing(
            &mut pool,
            Ops {
                spend,
                insert: |p, v| p.insert(v),
                remove: |p, h| {
                    p.remove(h);
                },
                live: |p, h| p.contains(h),
                len: Pool::len,
                index: |h| h.index(),
            },
        );
        // Every slot still takes a value: a fixed pool holds its capacity.
        if !growable {
            while pool.len() < pool.capacity() {
                pool.insert(0);
            }
            assert_eq!(pool.stats().retired, 0);
        }
    }
}

#[test]
fn a_handle_given_to_a_panicking_insert_with_never_names_a_value_in_a_soa_pool() {
    let mut pool = SoaPool::with_capacity(8);
    fn spend(p: &mut SoaPool<Enemy>) -> Handle<Enemy> {
        smuggled(|keep| {
            p.insert_with(|h| -> Enemy {
                keep(h);
                enemy(0)
            })
        })
    }
    let try_spend = |p: &mut SoaPool<Enemy>| {
        smuggled(|keep| {
            p.try_insert_with(|h| -> Enemy {
                keep(h);
                enemy(0)
            })
        })
    };
    let spent = try_spend(&mut pool);
    let h = pool.insert(enemy(9));
    assert_ne!(h, spent);
    assert!(pool.get(spent).is_none());
    assert_eq!(*pool.row_of(h).id, 9);
    a_spent_handle_names_nothing(
        &mut pool,
        Ops {
            spend,
            insert: |p, v| p.insert(enemy(v)),
            remove: |p, h| {
                p.remove(h);
            },
            live: |p, h| p.contains(h),
            len: SoaPool::len,
            index: |h| h.index(),
        },
    );
    while pool.len() < pool.capacity() {
        pool.insert(enemy(0));
    }
    assert_eq!(pool.stats().retired, 0);
}

/// With a generation budget, a spent handle uses up one of the slot's lives: the last one
/// retires the slot, as the remove of its last value would.
#[test]
fn a_spent_handle_uses_up_a_life_of_a_budgeted_slot() {
    // One life a slot: the never-used slot 0 retires at once.
    let mut pool: Pool<i32> = Pool::with_capacity_and_generation_budget(3, 1);
    let spent = smuggled(|keep| {
        pool.insert_with(|h| -> i32 {
            keep(h);
            0
        })
    });
    assert_eq!(spent.index(), 0);
    assert_eq!(pool.stats().retired, 1);
    let h = pool.insert(1);
    assert_eq!(h.index(), 1, "slot 0 is retired");
    assert!(pool.get(spent).is_none());

    // Two lives: one value, then a spent handle: the free-list slot retires, off the list.
    let mut pool: Pool<i32> = Pool::with_capacity_and_generation_budget(3, 2);
    let a = pool.insert(1);
    pool.remove(a);
    let spent = smuggled(|keep| {
        pool.insert_with(|h| -> i32 {
            keep(h);
            0
        })
    });
    assert_eq!(spent.index(), a.index());
    assert_eq!(pool.stats().retired, 1);
    let b = pool.insert(2);
    assert_ne!(
        b.index(),
        a.index(),
        "the retired slot is off the free list"
    );
    assert!(pool.get(spent).is_none() && pool.get(a).is_none());
    assert_eq!(pool.len(), 1);
}

/// `Handle32` slots have 2048 lives: a spent handle is a life like any other.
#[test]
fn a_spent_handle32_names_nothing() {
    let mut pool: Pool<u8, Handle32<u8>> = Pool::with_capacity_and_key(4);
    let spent = smuggled(|keep| {
        pool.insert_with(|h| -> u8 {
            keep(h);
            0
        })
    });
    let h = pool.insert(1);
    assert_eq!(h.index(), spent.index());
    assert_ne!(h.to_bits(), spent.to_bits());
    assert!(pool.get(spent).is_none());
}

#[cfg(feature = "serde")]
mod across_a_save_and_load {
    use super::*;

    /// After a spent never-used slot, a saved and loaded pool gives the next insert the same
    /// handle as the original, and the spent handle names nothing in either.
    #[test]
    fn a_spent_never_used_slot_stays_spent() {
        let mut pool: Pool<i32> = Pool::with_capacity(4);
        pool.insert(1);
        let spent = smuggled(|keep| {
            pool.insert_with(|h| -> i32 {
                keep(h);
                0
            })
        });
        let json = serde_json::to_string(&pool).unwrap();
        let mut loaded: Pool<i32> = serde_json::from_str(&json).unwrap();
        let (a, b) = (pool.insert(2), loaded.insert(2));
        assert_eq!(a, b);
        assert_ne!(a, spent);
        assert!(pool.get(spent).is_none() && loaded.get(spent).is_none());
    }

    /// Data without the field (written before it existed) reads as a pool whose never-used
    /// slots start at the first generation; data with one no vacant slot of the scheme can have
    /// is refused, naming it.
    #[test]
    fn the_fresh_generation_is_optional_and_checked() {
        let pool: Pool<i32> = Pool::with_capacity(2);
        let mut v: serde_json::Value = serde_json::to_value(&pool).unwrap();
        let first = v["first_generation"].as_u64().unwrap();
        assert_eq!(v["fresh_generation"].as_u64(), Some(first));
        v.as_object_mut().unwrap().remove("fresh_generation");
        let mut loaded: Pool<i32> = serde_json::from_value(v.clone()).unwrap();
        let h = loaded.insert(1);
        assert_eq!(u64::from(h.generation().get()), first | 1);
        for bad in [first | 1, first + 2 + 1, 1 << 31 | 2] {
            v["fresh_generation"] = serde_json::json!(bad);
            let e = serde_json::from_value::<Pool<i32>>(v.clone()).unwrap_err();
            assert!(e.to_string().contains("fresh_generation"), "{bad:#x}: {e}");
        }
        v["fresh_generation"] = serde_json::json!(first + 4);
        let mut loaded: Pool<i32> = serde_json::from_value(v).unwrap();
        assert_eq!(
            u64::from(loaded.insert(1).generation().get()),
            (first + 4) | 1
        );
    }
}
