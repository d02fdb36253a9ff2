//! Every allocator's whole API on its `Tracked` form: the methods a budget-checked wrapper used to
//! leave out (publishing a frame, mutable iteration, `retain`, column slices, scopes, markers, the
//! heap's map) are the allocator's own, reached through `Deref`/`DerefMut`, and the budget set on
//! the wrapper still holds after them.

use core::alloc::Layout;

use arena_kit_core::arena::{Arena, FrameArena};
use arena_kit_core::heap::FreeListHeap;
use arena_kit_core::pool::Pool;
use arena_kit_core::soa::{SoaPool, SoaVec};
use arena_kit_core::tags::{Budget, Tracked};

use crate::soa_rows::Enemy;

fn enemy(id: i32) -> Enemy {
    Enemy {
        x: id as f32,
        y: 0.0,
        health: 100.0,
        id,
    }
}

#[test]
fn a_tracked_frame_publishes_to_another_thread() {
    let mut frames = Tracked::new(FrameArena::<2>::chained(4096), "events", "Gameplay")
        .with_budget(Budget::fail(1024));
    let frame = frames.begin_frame();
    let events = frame.arena().alloc_slice_copy(&[1u32, 2, 3]);
    let reader = frame.publish(&*events).unwrap();
    let total = std::thread::spawn(move || reader.iter().sum::<u32>())
        .join()
        .unwrap();
    assert_eq!(total, 6);
    assert!(
        frame
            .try_alloc([0u8; 2048])
            .unwrap_err()
            .budget_exceeded()
            .is_some()
    );
}

#[test]
fn a_tracked_arena_scopes_marks_and_rewinds_within_its_budget() {
    let mut arena =
        Tracked::new(Arena::chained(4096), "scratch", "AI").with_budget(Budget::fail(256));
    {
        let scope = arena.scope();
        scope.alloc([0u8; 200]);
        assert!(
            scope.try_alloc([0u8; 100]).is_err(),
            "the budget holds inside a scope"
        );
    }
    let marker = arena.mark();
    arena.alloc([0u8; 128]);
    arena.rewind(marker).unwrap();
    assert_eq!(arena.used(), 0);
    assert!(
        arena
            .try_alloc([0u8; 300])
            .unwrap_err()
            .budget_exceeded()
            .is_some()
    );
}

#[test]
fn a_tracked_pool_iterates_mutably_retains_and_indexes() {
    let mut pool = Tracked::new(Pool::with_capacity(8), "bodies", "Physics")
        .with_budget(Budget::fail(4 * size_of::<u64>()));
    let handles: Vec<_> = (0..4u64).map(|i| pool.insert(i)).collect();
    for (_, v) in pool.iter_mut() {
        *v *= 10;
    }
    pool.retain(|_, v| *v >= 20);
    assert_eq!(pool.len(), 2);
    assert_eq!(pool[handles[3]], 30);
    assert!(pool.try_insert(7).is_ok());
    assert!(pool.try_insert(8).is_ok());
    assert!(pool.try_insert(9).unwrap_err().budget_exceeded().is_some());
    pool.clear();
}

#[test]
fn a_tracked_soa_vec_gives_its_columns_and_retains() {
    let mut enemies = Tracked::new(SoaVec::new(), "enemies", "Gameplay")
        .with_budget(Budget::fail(3 * size_of::<Enemy>()));
    for i in 0..3 {
        enemies.push(enemy(i));
    }
    for health in enemies.slices_mut().health.iter_mut() {
        *health -= 10.0;
    }
    assert_eq!(enemies.slices().health, &[90.0, 90.0, 90.0]);
    assert!(enemies.try_push(enemy(3)).is_err());
    enemies.retain(|e| *e.id != 1);
    assert_eq!(enemies.len(), 2);
    enemies.push(enemy(4));
}

#[test]
fn a_tracked_soa_pool_iterates_mutably_and_drains() {
    let mut pool = Tracked::new(SoaPool::with_capacity(8), "enemies", "Gameplay")
        .with_budget(Budget::fail(2 * size_of::<Enemy>()));
    let a = pool.insert(enemy(1));
    pool.insert(enemy(2));
    assert!(
        pool.try_insert(enemy(3))
            .unwrap_err()
            .budget_exceeded()
            .is_some()
    );
    for (_, e) in pool.iter_mut() {
        *e.health = 1.0;
    }
    assert_eq!(*pool.get(a).unwrap().health, 1.0);
    assert_eq!(pool.drain().count(), 2);
    assert!(pool.try_insert(enemy(3)).is_ok());
    pool.clear();
}

#[test]
fn a_tracked_heap_draws_its_map_and_reallocates_within_its_budget() {
    let mut heap = Tracked::new(FreeListHeap::with_capacity(4096), "assets", "Assets")
        .with_budget(Budget::fail(512));
    let p = heap
        .try_alloc(Layout::from_size_align(100, 8).unwrap())
        .unwrap();
    assert!(heap.to_string().contains("Allocated"));
    assert!(
        heap.try_alloc(Layout::from_size_align(1000, 8).unwrap())
            .unwrap_err()
            .budget_exceeded()
            .is_some()
    );
    let grown = heap.try_realloc(p, Layout::from_size_align(1000, 8).unwrap());
    assert!(grown.is_err(), "growing past the budget is refused too");
    heap.free(p).unwrap();
    assert!(heap.check().is_ok());
}
