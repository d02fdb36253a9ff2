//! The slot map shared by `Pool` and `SoaPool`: a 64-byte value takes a 72-byte slot, handles are
//! 8 bytes with a niche, and both containers follow the same handle rules (LIFO reuse of freed
//! slots, stale handles rejected after reuse, the next handle after a clone the same).
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;

use arena_kit_core::pool::{Handle, Pool};
use arena_kit_core::soa::SoaPool;
use arena_kit_core::tags::MemoryUsage;
use soa_rows::Enemy;

#[test]
fn a_64_byte_value_takes_a_72_byte_slot() {
    let pool: Pool<[u64; 8]> = Pool::with_capacity(10);
    assert_eq!(pool.usage().reserved, 720);
    assert_eq!(size_of::<Option<Handle<[u64; 8]>>>(), 8);
}

fn enemy(id: i32) -> Enemy {
    Enemy {
        x: 0.0,
        y: 0.0,
        health: 1.0,
        id,
    }
}

#[test]
fn pool_and_soa_pool_hand_out_the_same_handle_sequence() {
    let mut pool: Pool<i32> = Pool::with_capacity(8);
    let mut soa: SoaPool<Enemy> = SoaPool::with_capacity(8);
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for step in 0..40i32 {
        if step % 3 == 2 && !ours.is_empty() {
            let at = (step as usize * 7) % ours.len();
            let (p, s): (Handle<i32>, Handle<Enemy>) = (ours.remove(at), theirs.remove(at));
            assert_eq!(pool.remove(p), soa.remove(s).map(|e| e.id));
        } else if let (Ok(p), Ok(s)) = (pool.try_insert(step), soa.try_insert(enemy(step))) {
            assert_eq!(
                (p.index(), p.generation().get() & 0xFF_FFFF),
                (s.index(), s.generation().get() & 0xFF_FFFF)
            );
            ours.push(p);
            theirs.push(s);
        }
    }
    assert_eq!(pool.stats().inserts, soa.stats().inserts);
    assert_eq!(pool.stats().removes, soa.stats().removes);
    assert_eq!(pool.stats().peak_live, soa.stats().peak_live);
}

#[test]
fn a_stale_handle_stays_stale_after_its_slot_is_reused() {
    let mut soa: SoaPool<Enemy> = SoaPool::with_capacity(1);
    let a = soa.insert(enemy(1));
    soa.remove(a);
    let b = soa.insert(enemy(2));
    assert_eq!(a.index(), b.index());
    assert!(soa.get(a).is_none() && soa.remove(a).is_none());
    assert_eq!(*soa.get(b).unwrap().id, 2);
}
