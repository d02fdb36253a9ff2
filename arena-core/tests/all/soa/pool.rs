//! `SoaPool<T>` against a `HashMap<Handle<T>, T>` model, and the `damageAll` over a pool's
//! dense columns.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;
use crate::support;

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use arena_kit_core::pool::Handle;
use arena_kit_core::soa::{Col, Columns, Soa as SoaTrait, SoaPool};
use arena_kit_derive::Soa;
use proptest::prelude::*;
use soa_rows::{Enemy, Mixed};
use support::{DropCounter, miri_or, proptest_config};

#[test]
fn damage_all_over_live_enemies_only() {
    let mut es = SoaPool::with_capacity(4);
    let a = es.insert(Enemy {
        x: 0.0,
        y: 0.0,
        health: 100.0,
        id: 1,
    });
    let gone = es.insert(Enemy {
        x: 9.0,
        y: 9.0,
        health: 1.0,
        id: 9,
    });
    let b = es.insert(Enemy {
        x: 1.0,
        y: 1.0,
        health: 50.0,
        id: 2,
    });
    es.remove(gone);
    for h in es.slices_mut().health {
        *h -= 10.0;
    }
    assert_eq!(*es.get(a).unwrap().health, 90.0);
    assert_eq!(*es.get(b).unwrap().health, 40.0);
    assert_eq!(
        es.slices().health.len(),
        2,
        "the columns hold live values only"
    );
    assert!(es.get(gone).is_none());
}

#[test]
fn a_full_pool_gives_the_value_back() {
    let mut p = SoaPool::with_capacity(1);
    p.insert(Enemy {
        x: 0.0,
        y: 0.0,
        health: 1.0,
        id: 1,
    });
    let full = p
        .try_insert(Enemy {
            x: 0.0,
            y: 0.0,
            health: 2.0,
            id: 2,
        })
        .unwrap_err();
    assert_eq!(full.capacity(), 1);
    assert_eq!(full.into_inner().id, 2);
}

#[test]
fn values_are_dropped_once() {
    let drops = Rc::new(Cell::new(0));
    let mut p = SoaPool::with_capacity(8);
    let hs: Vec<_> = (0..6).map(|i| p.insert(counted_row(i, &drops))).collect();
    drop(p.remove(hs[1]));
    assert_eq!(drops.get(), 1);
    assert!(p.remove(hs[1]).is_none(), "a stale handle removes nothing");
    drop(p);
    assert_eq!(drops.get(), 6);
}

/// A row with a drop counter.
#[derive(Debug, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Counted {
    pub id: u64,
    pub c: DropCounter,
}

fn counted_row(id: u64, drops: &Rc<Cell<usize>>) -> Counted {
    Counted {
        id,
        c: DropCounter::new(id, drops),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u8),
    Remove(usize),
    RemoveStale(usize),
    Bump(usize, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u8>().prop_map(Op::Insert),
        2 => (0usize..64).prop_map(Op::Remove),
        1 => (0usize..64).prop_map(Op::RemoveStale),
        1 => ((0usize..64), any::<u8>()).prop_map(|(i, k)| Op::Bump(i, k)),
    ]
}

fn mixed(k: u8) -> Mixed {
    Mixed {
        tag: k,
        name: format!("m{k}"),
        unit: (),
        wide: u64::from(k) * 3,
        half: u16::from(k),
    }
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn soa_pool_behaves_like_a_hash_map(ops in proptest::collection::vec(op(), 0..miri_or(80, 25))) {
        let cap = 6;
        let mut pool: SoaPool<Mixed> = SoaPool::with_capacity(cap);
        let mut model: HashMap<Handle<Mixed>, Mixed> = HashMap::new();
        let mut live: Vec<Handle<Mixed>> = Vec::new();
        let mut dead: Vec<Handle<Mixed>> = Vec::new();
        for op in ops {
            match op {
                Op::Insert(k) => match pool.try_insert(mixed(k)) {
                    Ok(h) => {
                        prop_assert!(model.insert(h, mixed(k)).is_none(), "a fresh handle");
                        live.push(h);
                    }
                    Err(full) => {
                        prop_assert_eq!(model.len(), cap);
                        prop_assert_eq!(full.into_inner(), mixed(k));
                    }
                },
                Op::Remove(i) if !live.is_empty() => {
                    let h = live.swap_remove(i % live.len());
                    prop_assert_eq!(pool.remove(h), model.remove(&h));
                    dead.push(h);
                }
                Op::RemoveStale(i) if !dead.is_empty() => {
                    let h = dead[i % dead.len()];
                    prop_assert!(pool.remove(h).is_none());
                    prop_assert!(!pool.contains(h));
                    prop_assert!(pool.get(h).is_none());
                }
                Op::Bump(i, k) if !live.is_empty() => {
                    let h = live[i % live.len()];
                    let r = pool.get_mut(h).unwrap();
                    *r.tag = k;
                    r.name.push('+');
                    let m = model.get_mut(&h).unwrap();
                    m.tag = k;
                    m.name.push('+');
                }
                _ => {}
            }
            prop_assert_eq!(pool.len(), model.len());
            prop_assert_eq!(pool.slices().tag.len(), model.len());
            for (h, r) in pool.iter() {
                let m = &model[&h];
                prop_assert_eq!((*r.tag, r.name.as_str(), *r.wide), (m.tag, m.name.as_str(), m.wide));
            }
            for (h, m) in &model {
                prop_assert_eq!(pool.get(*h).map(|r| r.name.clone()), Some(m.name.clone()));
            }
        }
    }
}

/// A row with no bytes: its columns never run out, so the back links (one per row) are what
/// must grow. Every path that adds a row is taken past the links' first allocation (`insert`,
/// `try_insert`, `insert_with`, `try_insert_with`), with removes moving the last row around.
#[derive(Soa, Clone, Copy, Debug, PartialEq)]
#[soa(plain)]
struct Marker {
    none: (),
}

#[test]
fn zero_sized_rows_grow_their_back_links() {
    let n = miri_or(100, 40);
    for growable in [false, true] {
        let mut pool: SoaPool<Marker> = if growable {
            SoaPool::growable(4)
        } else {
            SoaPool::with_capacity(n)
        };
        let mut live = Vec::new();
        for i in 0..n {
            let h = match i % 4 {
                0 => pool.insert(Marker { none: () }),
                1 => pool.try_insert(Marker { none: () }).unwrap(),
                2 => pool.insert_with(|_| Marker { none: () }),
                _ => pool.try_insert_with(|_| Marker { none: () }).unwrap(),
            };
            live.push(h);
            if i % 3 == 2 {
                // Not the newest: the last row moves into the hole.
                let gone = live.remove(i % live.len().saturating_sub(1).max(1));
                assert_eq!(pool.remove(gone), Some(Marker { none: () }));
                assert!(!pool.contains(gone));
            }
        }
        assert_eq!(pool.len(), live.len());
        for &h in &live {
            assert!(pool.contains(h), "{h:?} stayed live");
        }
        let mut seen: Vec<_> = pool.iter().map(|(h, _)| h).collect();
        seen.sort_by_key(|h| h.index());
        live.sort_by_key(|h| h.index());
        assert_eq!(seen, live, "every live row names its own handle");
        let clone = pool.clone();
        assert_eq!(clone.iter().count(), live.len());
        assert_eq!(pool.drain().count(), live.len());
        assert!(pool.is_empty());
        pool.insert(Marker { none: () });
        assert_eq!(pool.len(), 1);
    }
}

/// Not zero-sized, but every column is (a hand-written `Soa` impl whose value is a constant):
/// the columns never run out, as for a zero-sized row, so the back links must grow by
/// themselves here too.
#[derive(Debug, Clone, PartialEq)]
struct Constant(u64);

// SAFETY: a test row: every value is a valid row, and its clone is its field's clone.
unsafe impl arena_kit_core::soa::PlainRow for Constant {}

impl SoaTrait for Constant {
    type Columns = (Col<()>, ());
    type Ref<'a> = <Self::Columns as Columns>::Ref<'a>;
    type Mut<'a> = <Self::Columns as Columns>::Mut<'a>;
    type Slices<'a> = <Self::Columns as Columns>::Slices<'a>;
    type SlicesMut<'a> = <Self::Columns as Columns>::SlicesMut<'a>;
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> ((), ()) {
        ((), ())
    }
    fn from_columns(_: ((), ()), _: arena_kit_core::soa::RowConversion<Self>) -> Self {
        Constant(7)
    }
    fn view<'a>(c: Self::Ref<'a>) -> Self::Ref<'a> {
        c
    }
    fn view_mut<'a>(c: Self::Mut<'a>) -> Self::Mut<'a> {
        c
    }
    fn view_slices<'a>(c: Self::Slices<'a>) -> Self::Slices<'a> {
        c
    }
    fn view_slices_mut<'a>(c: Self::SlicesMut<'a>) -> Self::SlicesMut<'a> {
        c
    }
}

#[test]
fn rows_of_zero_sized_columns_grow_their_back_links() {
    let mut fixed: SoaPool<Constant> = SoaPool::with_capacity(4);
    let h = fixed.insert(Constant(7));
    assert_eq!(fixed.remove(h), Some(Constant(7)));
    let mut grown: SoaPool<Constant> = SoaPool::growable(4);
    let hs: Vec<_> = (0..10).map(|_| grown.insert(Constant(7))).collect();
    assert_eq!(grown.len(), 10);
    assert_eq!(grown.clone().len(), 10);
    assert!(hs.iter().all(|&h| grown.contains(h)));
}
