//! `SoaPool` against a `HashMap<Handle, value>` over random operation sequences, fixed and
//! growable: inserts, removes (live and stale), writes, `retain`, partial `drain`, `clear` and
//! `get_disjoint_mut`. After each step the pool holds exactly the model's values, densely.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;
use crate::support;

use std::collections::HashMap;

use arena_kit_core::pool::Handle;
use arena_kit_core::soa::SoaPool;
use proptest::prelude::*;
use soa_rows::Enemy;
use support::{miri_or, proptest_config};

#[derive(Debug, Clone)]
enum Op {
    Insert(i32),
    InsertWith,
    Remove(usize),
    RemoveStale(usize),
    Write(usize, i32),
    Retain(u8),
    Drain(usize),
    Clear,
    Swap(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<i32>().prop_map(Op::Insert),
        1 => Just(Op::InsertWith),
        4 => (0usize..64).prop_map(Op::Remove),
        1 => (0usize..64).prop_map(Op::RemoveStale),
        2 => ((0usize..64), any::<i32>()).prop_map(|(i, v)| Op::Write(i, v)),
        1 => any::<u8>().prop_map(Op::Retain),
        1 => (0usize..4).prop_map(Op::Drain),
        1 => Just(Op::Clear),
        1 => ((0usize..64), (0usize..64)).prop_map(|(a, b)| Op::Swap(a, b)),
    ]
}

fn enemy(id: i32) -> Enemy {
    Enemy {
        x: id as f32,
        y: 1.0,
        health: 2.0,
        id,
    }
}

fn run(mut pool: SoaPool<Enemy>, cap: Option<usize>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut model: HashMap<Handle<Enemy>, i32> = HashMap::new();
    let mut live: Vec<Handle<Enemy>> = Vec::new();
    let mut dead: Vec<Handle<Enemy>> = Vec::new();
    for op in ops {
        match op {
            Op::Insert(v) => match pool.try_insert(enemy(v)) {
                Ok(h) => {
                    prop_assert!(model.insert(h, v).is_none(), "a fresh handle");
                    prop_assert!(!dead.contains(&h), "never a dead handle again");
                    live.push(h);
                }
                Err(full) => {
                    prop_assert_eq!(Some(model.len()), cap);
                    prop_assert_eq!(full.into_inner().id, v);
                }
            },
            Op::InsertWith => {
                if let Some(h) = pool.try_insert_with(|me| enemy(me.index() as i32)) {
                    model.insert(h, h.index() as i32);
                    live.push(h);
                } else {
                    prop_assert_eq!(Some(model.len()), cap);
                }
            }
            Op::Remove(i) if !live.is_empty() => {
                let h = live.swap_remove(i % live.len());
                prop_assert_eq!(pool.remove(h).map(|e| e.id), model.remove(&h));
                dead.push(h);
            }
            Op::RemoveStale(i) if !dead.is_empty() => {
                let h = dead[i % dead.len()];
                prop_assert!(pool.remove(h).is_none());
                prop_assert!(pool.get(h).is_none() && !pool.contains(h));
            }
            Op::Write(i, v) if !live.is_empty() => {
                let h = live[i % live.len()];
                *pool.get_mut(h).unwrap().id = v;
                model.insert(h, v);
            }
            Op::Retain(mask) => {
                pool.retain(|h, row| {
                    let keep = (h.index() as u8 ^ mask) & 1 == 0;
                    *row.health += 1.0;
                    keep
                });
                let gone: Vec<_> = live
                    .iter()
                    .copied()
                    .filter(|h| (h.index() as u8 ^ mask) & 1 != 0)
                    .collect();
                for h in gone {
                    model.remove(&h);
                    dead.push(h);
                }
                live.retain(|h| model.contains_key(h));
            }
            Op::Drain(n) => {
                let taken: Vec<_> = pool.drain().take(n).collect();
                prop_assert!(pool.is_empty(), "dropping the drain removes the rest");
                for (h, e) in taken {
                    prop_assert_eq!(model.get(&h), Some(&e.id));
                }
                dead.append(&mut live);
                model.clear();
            }
            Op::Clear => {
                pool.clear();
                dead.append(&mut live);
                model.clear();
            }
            Op::Swap(a, b) if !live.is_empty() => {
                let (ha, hb) = (live[a % live.len()], live[b % live.len()]);
                match pool.get_disjoint_mut([ha, hb]) {
                    Some([ra, rb]) => {
                        prop_assert!(ha != hb);
                        core::mem::swap(ra.id, rb.id);
                        let (va, vb) = (model[&ha], model[&hb]);
                        model.insert(ha, vb);
                        model.insert(hb, va);
                    }
                    None => prop_assert_eq!(ha, hb),
                }
            }
            _ => {}
        }
        prop_assert_eq!(pool.len(), model.len());
        prop_assert_eq!(pool.slices().id.len(), model.len(), "dense columns");
        prop_assert_eq!(pool.stats().len, model.len());
        for (h, row) in pool.iter() {
            prop_assert_eq!(Some(row.id), model.get(&h));
        }
        for (h, v) in &model {
            prop_assert_eq!(pool.get(*h).map(|r| *r.id), Some(*v));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn fixed_soa_pool_behaves_like_a_hash_map(ops in proptest::collection::vec(op(), 0..miri_or(120, 25))) {
        run(SoaPool::with_capacity(7), Some(7), ops)?;
    }

    #[test]
    fn growable_soa_pool_behaves_like_a_hash_map(ops in proptest::collection::vec(op(), 0..miri_or(120, 25))) {
        run(SoaPool::growable(2), None, ops)?;
    }

    #[test]
    fn retiring_soa_pool_behaves_like_a_hash_map(ops in proptest::collection::vec(op(), 0..miri_or(120, 25))) {
        // Slots retire after two values: the pool shrinks its usable capacity as it goes.
        run(SoaPool::with_capacity_and_generation_budget(64, 2), None, ops)?;
    }
}
