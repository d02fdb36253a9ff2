//! Pool behaviour: the worked examples, handles, generations, full pools, disjoint borrows,
//! iteration and drop.

use crate::support;

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

use arena_kit_core::pool::{Handle, Pool, PoolStats};
use support::DropCounter;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Bullet {
    x: f32,
    y: f32,
    z: f32,
    speed: f32,
}

fn bullet(n: u8) -> Bullet {
    Bullet {
        x: f32::from(n),
        y: 0.0,
        z: 0.0,
        speed: 1.0,
    }
}

/// The textbook pool walk-through: a pool of 4; allocate 3, free the middle one, the next
/// allocation reuses its slot; one more fills the pool; the next allocation fails (here: hands the
/// value back).
#[test]
fn pool_trace_reuses_slots_with_new_generations() {
    let mut bullets = Pool::with_capacity(4);
    let b0 = bullets.insert(bullet(0));
    let b1 = bullets.insert(bullet(1));
    let b2 = bullets.insert(bullet(2));
    assert_eq!((bullets.len(), bullets.capacity()), (3, 4));

    assert_eq!(bullets.remove(b1), Some(bullet(1))); // b1 hit something
    let b3 = bullets.insert(bullet(3));
    assert_eq!(b3.index(), b1.index(), "b3 reuses b1's slot");
    assert_ne!(b3, b1, "but b1 stays dead: its generation is old");
    assert_eq!(bullets.get(b1), None);

    let b4 = bullets.insert(bullet(4)); // the last free slot
    assert_eq!(bullets.len(), 4);
    let full = bullets.try_insert(bullet(5)).unwrap_err(); // C++: b5 == nullptr
    assert_eq!(full.capacity(), 4);
    assert_eq!(full.into_inner(), bullet(5));
    for (h, n) in [(b0, 0), (b2, 2), (b3, 3), (b4, 4)] {
        assert_eq!(bullets[h], bullet(n));
    }
}

/// The classic C++ pool bug: free the same block twice, then allocate three times. In C++ the
/// free list becomes a cycle and c, d, e are all slot 0. Here the second free is `None`, and the
/// three allocations are three distinct live values.
#[test]
fn double_free_is_harmless() {
    let mut bullets = Pool::with_capacity(4);
    let a = bullets.insert(bullet(0));
    let b = bullets.insert(bullet(1));
    assert_eq!(bullets.remove(a), Some(bullet(0)));
    assert_eq!(bullets.remove(a), None); // a double free: a no-op here

    let c = bullets.insert(bullet(2));
    let d = bullets.insert(bullet(3));
    let e = bullets.insert(bullet(4));
    let slots: HashSet<u32> = [b, c, d, e].iter().map(|h| h.index()).collect();
    assert_eq!(slots.len(), 4, "four live values in four distinct slots");
    assert_eq!(bullets.len(), 4);
    for (h, n) in [(b, 1), (c, 2), (d, 3), (e, 4)] {
        assert_eq!(bullets[h], bullet(n));
    }
    assert_eq!(bullets.iter().count(), 4);
    assert!(
        bullets.try_insert(bullet(5)).is_err(),
        "the pool is exactly full, nothing lost"
    );
}

/// An `Enemy` pool of 4: allocate s0, s1, free s0, s2 reuses s0's slot.
#[test]
fn enemy_pool_reuses_slot() {
    #[derive(Debug, PartialEq)]
    struct Enemy {
        x: f32,
        y: f32,
        z: f32,
        health: i32,
    }
    assert_eq!(size_of::<Enemy>(), 16);
    let mut pool = Pool::with_capacity(4);
    let s0 = pool.insert(Enemy {
        x: 0.0,
        y: 0.0,
        z: 0.0,
        health: 100,
    });
    let s1 = pool.insert(Enemy {
        x: 1.0,
        y: 0.0,
        z: 0.0,
        health: 50,
    });
    let addr0 = std::ptr::from_ref(&pool[s0]) as usize;
    pool.remove(s0);
    let s2 = pool.insert(Enemy {
        x: 2.0,
        y: 0.0,
        z: 0.0,
        health: 75,
    });
    assert_eq!(s2.index(), s0.index());
    assert_eq!(
        std::ptr::from_ref(&pool[s2]) as usize,
        addr0,
        "same address as s0"
    );
    assert_eq!(pool[s1].health, 50);
    assert!(!pool.contains(s0));
}

#[test]
fn handle_is_eight_bytes_with_a_niche() {
    assert_eq!(size_of::<Handle<Bullet>>(), 8);
    assert_eq!(size_of::<Option<Handle<Bullet>>>(), 8);
    assert_eq!(size_of::<Handle<[u8; 1000]>>(), 8);
}

#[test]
fn handle_traits() {
    let mut pool = Pool::with_capacity(4);
    let a = pool.insert(1u8);
    let b = pool.insert(2u8);
    let a2 = a;
    assert_eq!(a, a2);
    assert!(a < b, "ordered by index");
    let set: HashSet<Handle<u8>> = [a, b, a2].into_iter().collect();
    assert_eq!(set.len(), 2);
    let text = format!("{a:?}");
    assert!(
        text.starts_with("Handle { index: 0, generation: 1"),
        "{text}"
    );
    assert_eq!(a.generation().get() & 1, 1);
}

#[test]
fn stale_handles_are_rejected_everywhere() {
    let mut pool = Pool::with_capacity(2);
    let old = pool.insert(String::from("old"));
    pool.remove(old);
    let new = pool.insert(String::from("new"));
    assert_eq!(new.index(), old.index());
    assert_eq!(pool.get(old), None);
    assert_eq!(pool.get_mut(old), None);
    assert!(!pool.contains(old));
    assert_eq!(pool.remove(old), None);
    assert!(pool.get_disjoint_mut([old]).is_none());
    assert_eq!(
        pool[new], "new",
        "the reused slot is untouched by stale accesses"
    );
}

#[test]
#[should_panic(expected = "is stale")]
fn index_with_stale_handle_panics() {
    let mut pool = Pool::with_capacity(2);
    let h = pool.insert(1);
    pool.remove(h);
    let _ = pool[h];
}

#[test]
#[should_panic(expected = "all 2 slots are in use")]
fn insert_into_full_pool_panics_naming_capacity() {
    let mut pool = Pool::with_capacity(2);
    pool.insert(1);
    pool.insert(2);
    pool.insert(3);
}

#[test]
fn insert_with_knows_its_handle() {
    struct Node {
        me: Handle<Node>,
    }
    let mut pool = Pool::with_capacity(3);
    let hs: Vec<_> = (0..3).map(|_| pool.insert_with(|me| Node { me })).collect();
    for h in hs {
        assert_eq!(pool[h].me, h);
    }
    assert!(pool.try_insert_with(|me| Node { me }).is_none());
}

#[test]
fn insert_with_panicking_builder_changes_nothing() {
    let mut pool = Pool::with_capacity(2);
    let a = pool.insert(1);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.insert_with(|_| -> i32 { panic!("builder failed") });
    }));
    assert!(result.is_err());
    assert_eq!(pool.len(), 1);
    let b = pool.insert(2);
    assert_eq!((pool[a], pool[b]), (1, 2));
    assert_eq!(pool.stats().inserts, 2);
}

/// Generations never wrap: a slot whose counter is exhausted retires, and every handle it ever
/// gave out stays stale (slotmap keys become valid again after 2^31 reuses).
#[test]
fn exhausted_generation_retires_the_slot() {
    let budget = 3;
    let mut pool = Pool::with_capacity_and_generation_budget(2, budget);
    let mut old = Vec::new();
    for round in 0..budget {
        let h = pool.insert(round);
        assert_eq!(h.index(), 0, "LIFO reuse keeps using slot 0");
        assert_eq!(pool.remove(h), Some(round));
        old.push(h);
    }
    assert_eq!(
        pool.stats().retired,
        1,
        "slot 0 retired after {budget} values"
    );
    let last = old.last().unwrap().generation().get();
    assert_eq!(
        last & 0x00FF_FFFF & 0xFF,
        0xFF,
        "the last generation is the top of the counter"
    );
    // Slot 0 is never handed out again: the next values go to slot 1, then the pool is full.
    let h = pool.insert(100);
    assert_eq!(h.index(), 1);
    assert!(pool.try_insert(101).is_err());
    for h in &old {
        assert_eq!(pool.get(*h), None, "{h:?} stays stale");
        assert_eq!(pool.remove(*h), None);
    }
    assert_eq!(pool.len(), 1);
    assert_eq!(pool.iter().count(), 1);
}

#[test]
fn retired_slots_survive_clear() {
    let mut pool = Pool::with_capacity_and_generation_budget(3, 1);
    let hs: Vec<_> = (0..3).map(|i| pool.insert(i)).collect();
    pool.clear();
    assert_eq!(pool.stats().retired, 3);
    assert!(pool.try_insert(9).is_err(), "all slots retired");
    assert!(hs.iter().all(|&h| pool.get(h).is_none()));
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "different pool")]
fn handle_from_another_pool_is_caught_in_debug_builds() {
    let mut enemies_a = Pool::with_capacity(4);
    let mut enemies_b = Pool::with_capacity(4);
    let _ = enemies_a.insert("a");
    let from_b = enemies_b.insert("b");
    // Same type, same index, same counter: slotmap would return "a" here.
    let _ = enemies_a.get(from_b);
}

#[test]
#[cfg(debug_assertions)]
fn foreign_handle_is_caught_by_every_lookup() {
    let mut a = Pool::with_capacity(2);
    let mut b = Pool::with_capacity(2);
    a.insert(1);
    let h = b.insert(2);
    let caught =
        |f: &mut dyn FnMut()| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err();
    assert!(caught(&mut || {
        let _ = a.get(h);
    }));
    assert!(caught(&mut || {
        let _ = a.get_mut(h);
    }));
    assert!(caught(&mut || {
        let _ = a.contains(h);
    }));
    assert!(caught(&mut || {
        let _ = a.remove(h);
    }));
    assert!(caught(&mut || {
        let _ = a.get_disjoint_mut([h]);
    }));
    assert_eq!((a.len(), b.len()), (1, 1), "nothing changed");
}

#[test]
fn get_disjoint_mut_checks_repeats_and_staleness() {
    let mut pool = Pool::with_capacity(8);
    let hs: Vec<_> = (0..5).map(|i| pool.insert(i * 10)).collect();
    let [a, b, c] = pool.get_disjoint_mut([hs[4], hs[0], hs[2]]).unwrap();
    std::mem::swap(a, b);
    *c += 1;
    assert_eq!((pool[hs[0]], pool[hs[2]], pool[hs[4]]), (40, 21, 0));

    assert!(
        pool.get_disjoint_mut([hs[1], hs[3], hs[1]]).is_none(),
        "repeat"
    );
    assert!(pool.get_disjoint_mut([hs[1], hs[1]]).is_none());
    pool.remove(hs[3]);
    assert!(pool.get_disjoint_mut([hs[1], hs[3]]).is_none(), "stale");
    // A failed call leaves every generation as it was.
    assert_eq!(pool[hs[1]], 10);
    let [x, y] = pool.get_disjoint_mut([hs[1], hs[2]]).unwrap();
    *x += *y;
    assert_eq!(pool[hs[1]], 31);
    let none: [&mut i32; 0] = pool.get_disjoint_mut([]).unwrap();
    assert!(none.is_empty());
}

#[test]
fn iteration_yields_live_values_with_their_handles() {
    let mut pool = Pool::with_capacity(10);
    let hs: Vec<_> = (0..10).map(|i| pool.insert(i)).collect();
    for h in hs.iter().step_by(3) {
        pool.remove(*h);
    }
    let live: Vec<_> = pool.iter().map(|(h, &v)| (h, v)).collect();
    assert_eq!(live.len(), 6);
    assert_eq!(pool.iter().len(), 6);
    for (h, v) in &live {
        assert_eq!(pool[*h], *v);
        assert!(v % 3 != 0);
    }
    for (_, v) in pool.iter_mut() {
        *v *= 2;
    }
    for (h, v) in &live {
        assert_eq!(pool[*h], v * 2);
    }
    assert_eq!(pool.values().sum::<i32>(), 2 * (1 + 2 + 4 + 5 + 7 + 8));
    let by_ref: usize = (&pool).into_iter().count();
    assert_eq!(by_ref, 6);
}

#[test]
fn retain_drain_and_clear() {
    let drops = Rc::new(Cell::new(0));
    let mut pool = Pool::with_capacity(8);
    let hs: Vec<_> = (0..8)
        .map(|i| pool.insert(DropCounter::new(i, &drops)))
        .collect();
    pool.retain(|_, v| v.id % 2 == 0);
    assert_eq!((pool.len(), drops.get()), (4, 4));
    assert!(
        hs.iter()
            .filter(|h| pool.contains(**h))
            .all(|h| pool[*h].id % 2 == 0)
    );

    let mut drain = pool.drain();
    let (h, first) = drain.next().unwrap();
    assert_eq!((h, first.id), (hs[0], 0));
    drop(first);
    drop(drain); // removes the other three
    assert_eq!((pool.len(), drops.get()), (0, 8));
    assert!(hs.iter().all(|h| !pool.contains(*h)));

    let again: Vec<_> = (0..3)
        .map(|i| pool.insert(DropCounter::new(i, &drops)))
        .collect();
    pool.clear();
    assert_eq!((pool.len(), drops.get()), (0, 11));
    assert!(again.iter().all(|h| !pool.contains(*h)));
    let stats = pool.stats();
    assert_eq!((stats.inserts, stats.removes, stats.peak_live), (11, 11, 8));
}

#[test]
fn into_iter_yields_and_drop_drops_the_rest() {
    let drops = Rc::new(Cell::new(0));
    let mut pool = Pool::with_capacity(4);
    for i in 0..4 {
        pool.insert(DropCounter::new(i, &drops));
    }
    let mut it = pool.into_iter();
    assert_eq!(it.len(), 4);
    let (_, v) = it.next().unwrap();
    assert_eq!(v.id, 0);
    drop(v);
    drop(it);
    assert_eq!(drops.get(), 4);
}

#[test]
fn dropping_the_pool_drops_live_values_and_reports() {
    thread_local! {
        static REPORTED: Cell<Option<PoolStats>> = const { Cell::new(None) };
    }
    let drops = Rc::new(Cell::new(0));
    {
        let mut pool = Pool::with_capacity(5);
        pool.set_drop_report(|stats| REPORTED.with(|r| r.set(Some(*stats))));
        let hs: Vec<_> = (0..5)
            .map(|i| pool.insert(DropCounter::new(i, &drops)))
            .collect();
        pool.remove(hs[1]);
        assert_eq!(drops.get(), 1);
    }
    assert_eq!(drops.get(), 5, "every value dropped exactly once");
    let stats = REPORTED.with(Cell::get).expect("report called on drop");
    assert_eq!((stats.len, stats.capacity, stats.peak_live), (4, 5, 5));
}

#[test]
fn addresses_are_stable_in_a_growable_pool() {
    let n = support::miri_or(1000, 40);
    let mut pool = Pool::growable(16);
    assert!(pool.is_growable());
    let first = pool.insert(0usize);
    let addr = std::ptr::from_ref(&pool[first]) as usize;
    let hs: Vec<_> = (1..n).map(|i| pool.insert(i)).collect();
    assert_eq!(
        std::ptr::from_ref(&pool[first]) as usize,
        addr,
        "never moved"
    );
    assert_eq!(pool.capacity() % 16, 0);
    assert!(pool.capacity() >= n);
    assert_eq!(pool.stats().blocks, pool.capacity() / 16);
    for (i, h) in hs.iter().enumerate() {
        assert_eq!(pool[*h], i + 1);
    }
    // Iteration and disjoint borrows across chunks.
    assert_eq!(pool.iter().count(), n);
    let [a, b] = pool.get_disjoint_mut([first, hs[n - 2]]).unwrap();
    std::mem::swap(a, b);
    assert_eq!(pool[first], n - 1);
    let mut seen: Vec<usize> = pool.iter_mut().map(|(_, v)| *v).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..n).collect::<Vec<_>>());
}

/// Growable pools of values aligned past a page, or of values with destructors, still grow, keep their addresses and alignment, and drop every
/// value once.
#[test]
fn growable_pools_of_odd_values_grow_and_keep_their_alignment() {
    #[repr(align(8192))]
    struct Paged(u8);
    let mut paged = Pool::growable(2);
    let hs: Vec<_> = (0..9u8).map(|i| paged.insert(Paged(i))).collect();
    for (i, h) in hs.iter().enumerate() {
        assert_eq!(std::ptr::from_ref(&paged[*h]).addr() % 8192, 0);
        assert_eq!(paged[*h].0, i as u8);
    }
    assert_eq!(paged.stats().blocks, 5);

    let drops = std::rc::Rc::new(std::cell::Cell::new(0));
    struct Counted(std::rc::Rc<std::cell::Cell<usize>>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }
    let mut units = Pool::growable(4);
    let n = support::miri_or(100, 20);
    let hs: Vec<_> = (0..n)
        .map(|_| units.insert(Counted(drops.clone())))
        .collect();
    units.remove(hs[3]);
    assert_eq!(drops.get(), 1);
    drop(units);
    assert_eq!(drops.get(), n);
}

#[test]
fn fixed_pool_never_reallocates() {
    let mut pool = Pool::with_capacity(64);
    let h = pool.insert([7u8; 64]);
    let addr = std::ptr::from_ref(&pool[h]) as usize;
    for _ in 0..63 {
        pool.insert([1u8; 64]);
    }
    assert_eq!(std::ptr::from_ref(&pool[h]) as usize, addr);
    assert_eq!(pool.capacity(), 64);
}

#[test]
fn capacity_errors_are_typed() {
    use arena_kit_core::pool::{MAX_CAPACITY, PoolCapacityError};
    let err = Pool::<u8>::try_with_capacity(MAX_CAPACITY + 1).unwrap_err();
    assert_eq!(
        err,
        PoolCapacityError::TooManySlots {
            requested: MAX_CAPACITY + 1,
            max: MAX_CAPACITY
        }
    );
    assert!(err.to_string().contains("u32"));
    let empty = Pool::<u8>::with_capacity(0);
    assert_eq!(empty.capacity(), 0);
    assert!(empty.iter().next().is_none());
}

#[test]
fn zero_sized_values() {
    let mut pool = Pool::with_capacity(3);
    let a = pool.insert(());
    let b = pool.insert(());
    assert_ne!(a, b);
    assert_eq!(pool.remove(a), Some(()));
    assert_eq!(pool.remove(a), None);
    assert_eq!(pool.iter().count(), 1);
}

#[test]
fn debug_prints_live_values() {
    let mut pool = Pool::with_capacity(3);
    let a = pool.insert("x");
    let text = format!("{pool:?}");
    assert!(text.contains("\"x\""), "{text}");
    assert!(text.contains(&format!("{a:?}")));
}

#[test]
fn pool_and_handles_cross_threads() {
    fn send_sync<X: Send + Sync>() {}
    send_sync::<Pool<u64>>();
    send_sync::<Handle<std::rc::Rc<u8>>>(); // a handle is plain data whatever T is
}

#[test]
fn clone_is_a_snapshot_with_the_same_future() {
    let drops = Rc::new(Cell::new(0));
    let mut pool = Pool::growable(2);
    let hs: Vec<_> = (0..5)
        .map(|i| pool.insert(Rc::new(DropCounter::new(i, &drops))))
        .collect();
    pool.remove(hs[3]);
    pool.remove(hs[1]);
    let mut snapshot = pool.clone();
    assert_eq!(snapshot.stats(), pool.stats());
    for h in &hs {
        assert_eq!(snapshot.get(*h).map(|v| v.id), pool.get(*h).map(|v| v.id));
    }
    for i in 10..14 {
        let v = Rc::new(DropCounter::new(i, &drops));
        assert_eq!(snapshot.insert(Rc::clone(&v)), pool.insert(v));
    }
    drop(snapshot);
    drop(pool);
    assert_eq!(
        drops.get(),
        9,
        "shared values dropped once, when both pools are gone"
    );
}
