//! `SoaTiles<T, N>` against `Vec<T>`: the storage is tile-major (checked on raw addresses), a
//! model-based property test over every method for a power-of-two and an odd tile size, nested
//! and zero-sized rows, panics in `Drop`, `Clone` and closures, and arena tiles.

#![allow(missing_docs)] // test-only row types

use crate::support::{DropCounter, miri_or, proptest_config};

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::Arena;
use arena_kit_core::soa::{SoaTiles, tile_layout};
use arena_kit_derive::Soa;
use proptest::prelude::*;

/// A particle of seven `f32`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Soa)]
#[soa(crate = arena_kit_core, tiled)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub vx: f32,
    pub vy: f32,
    pub vz: f32,
    pub life: f32,
}

fn particle(i: usize) -> Particle {
    let f = i as f32;
    Particle {
        x: f,
        y: 2.0 * f,
        z: 3.0 * f,
        vx: 1.0,
        vy: -1.0,
        vz: 0.5,
        life: 100.0 + f,
    }
}

/// Mixed sizes and alignments, drop glue and a zero-sized field.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
pub struct Mixed {
    pub tag: u8,
    pub name: String,
    pub unit: (),
    pub wide: u64,
    pub half: u16,
}

fn mixed(k: u8) -> Mixed {
    Mixed {
        tag: k,
        name: format!("n{}", k % 7),
        unit: (),
        wide: u64::from(k) << 40,
        half: u16::from(k) * 3,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
pub struct Body {
    #[soa(nested)]
    pub pos: Vec3,
    #[soa(nested)]
    pub vel: Vec3,
    pub mass: f32,
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
pub struct Nothing {
    pub a: (),
    pub b: core::marker::PhantomData<String>,
}

fn addr<F>(r: &F) -> usize {
    (r as *const F).addr()
}

#[test]
fn rows_are_stored_tile_major_with_each_lane_array_aligned() {
    let ps: SoaTiles<Particle, 8> = (0..20).map(particle).collect();
    // Seven lane arrays of 8 f32 (32 bytes, on 32-byte boundaries): a tile is 224 bytes.
    let tile = tile_layout::<Particle, 8>();
    assert_eq!((tile.size(), tile.align()), (224, 32));
    let base = addr(ps.get(0).unwrap().x);
    assert_eq!(base % 32, 0, "the block starts on the lane alignment");
    for i in 0..ps.len() {
        let r = ps.get(i).unwrap();
        let (t, lane) = (i / 8, i % 8);
        let row = base + t * 224 + lane * 4;
        let fields = [r.x, r.y, r.z, r.vx, r.vy, r.vz, r.life];
        for (f, v) in fields.into_iter().enumerate() {
            assert_eq!(addr(v), row + f * 32, "row {i}, field {f}");
        }
        // A whole row: 7 fields 32 bytes apart, 196 bytes from first to last: 4 cache lines
        // (a `SoaVec` row touches 7, one per column).
        let mut lines: Vec<usize> = fields.iter().map(|v| addr(*v) / 64).collect();
        lines.dedup();
        assert_eq!(lines.len(), 4, "row {i}");
    }
    // The same arrays through the tile views: tile 1's x right after tile 0's life.
    let tiles: Vec<_> = ps.tiles().collect();
    assert_eq!(tiles.len(), 2);
    assert_eq!(addr(tiles[0].y), addr(tiles[0].x) + 32);
    assert_eq!(addr(tiles[1].x), addr(tiles[0].life) + 32);
    assert_eq!(tiles[1].x, &[8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]);
    // The partial last tile: rows 16..20, at the start of tile 2's lanes.
    let tail = ps.tail();
    assert_eq!(tail.x, &[16.0, 17.0, 18.0, 19.0]);
    assert_eq!(addr(&tail.x[0]), base + 2 * 224);
    assert_eq!(addr(&tail.life[0]), base + 2 * 224 + 6 * 32);
}

#[test]
fn lane_arrays_align_to_their_size_between_32_and_64_bytes() {
    // 16 f32 = 64 bytes: on 64-byte boundaries. 16 u8 = 16 bytes: still on 32.
    #[derive(Soa)]
    #[soa(crate = arena_kit_core, tiled)]
    struct Two {
        a: f32,
        b: u8,
        c: f64,
    }
    let t: SoaTiles<Two, 16> = (0..40)
        .map(|i| Two {
            a: i as f32,
            b: i as u8,
            c: 0.0,
        })
        .collect();
    // a: 0..64, b: 64..80, c (128 bytes, capped at 64): 128..256.
    assert_eq!(tile_layout::<Two, 16>().size(), 256);
    assert_eq!(tile_layout::<Two, 16>().align(), 64);
    for tile in t.tiles() {
        assert_eq!(addr(tile.a) % 64, 0);
        assert_eq!(addr(tile.b), addr(tile.a) + 64);
        assert_eq!(addr(tile.c), addr(tile.a) + 128);
    }
    assert_eq!(*t.get(33).unwrap().b, 33);
}

#[test]
fn tiles_and_tail_cover_every_row_once_in_order() {
    for len in [0, 1, 7, 8, 9, 16, 23] {
        let mut ps: SoaTiles<Particle, 8> = (0..len).map(particle).collect();
        assert_eq!(ps.full_tiles(), len / 8);
        assert_eq!(ps.tail_len(), len % 8);
        let mut xs: Vec<f32> = ps.tiles().flat_map(|t| t.x.iter().copied()).collect();
        xs.extend_from_slice(ps.tail().x);
        assert_eq!(xs, (0..len).map(|i| i as f32).collect::<Vec<_>>());
        // The x += vx * dt pass: full tiles as arrays, then the tail as slices.
        for ParticleTileMut { x, vx, .. } in ps.tiles_mut() {
            for k in 0..8 {
                x[k] += vx[k] * 0.5;
            }
        }
        let ParticleSlicesMut { x, vx, .. } = ps.tail_mut();
        x.iter_mut()
            .zip(vx.iter())
            .for_each(|(x, vx)| *x += vx * 0.5);
        for (i, r) in ps.iter().enumerate() {
            assert_eq!(*r.x, i as f32 + 0.5);
            assert_eq!(*r.life, 100.0 + i as f32, "other fields are left alone");
        }
        assert_eq!(ps.tiles().rev().count(), len / 8);
    }
}

#[test]
fn nested_fields_are_tiled_as_lane_arrays_of_their_own() {
    let mut bodies: SoaTiles<Body, 4> = (0..6)
        .map(|i| {
            let f = i as f32;
            Body {
                pos: Vec3 {
                    x: f,
                    y: 0.0,
                    z: 0.0,
                },
                vel: Vec3 {
                    x: 1.0,
                    y: f,
                    z: 0.0,
                },
                mass: 2.0,
            }
        })
        .collect();
    for BodyTileMut { pos, vel, .. } in bodies.tiles_mut() {
        for k in 0..4 {
            pos.x[k] += vel.x[k];
            pos.y[k] += vel.y[k];
        }
    }
    let t0 = bodies.tiles().next().unwrap();
    assert_eq!(t0.pos.x, &[1.0, 2.0, 3.0, 4.0]);
    // pos.x, pos.y, pos.z, vel.x, ... each 16 bytes on a 32-byte boundary.
    assert_eq!(addr(t0.pos.y), addr(t0.pos.x) + 32);
    assert_eq!(addr(t0.vel.x), addr(t0.pos.x) + 96);
    assert_eq!(addr(t0.mass), addr(t0.pos.x) + 192);
    let b = bodies.get(5).unwrap();
    assert_eq!((*b.pos.x, *b.vel.y), (5.0, 5.0), "the tail was not moved");
    assert_eq!(
        bodies.swap_remove(0),
        Body {
            pos: Vec3 {
                x: 1.0,
                y: 0.0,
                z: 0.0
            },
            vel: Vec3 {
                x: 1.0,
                y: 0.0,
                z: 0.0
            },
            mass: 2.0
        }
    );
    assert_eq!(*bodies.get(0).unwrap().pos.x, 5.0);
}

#[test]
fn zero_sized_rows_never_allocate() {
    let mut t: SoaTiles<Nothing, 8> = SoaTiles::new();
    assert_eq!(t.capacity(), usize::MAX);
    for _ in 0..20 {
        t.push(Nothing {
            a: (),
            b: core::marker::PhantomData,
        });
    }
    assert_eq!(t.len(), 20);
    assert_eq!(t.tiles().count(), 2);
    assert_eq!(t.tail().a.len(), 4);
    assert!(t.pop().is_some());
    t.retain(|_| false);
    assert!(t.is_empty());
}

#[test]
fn with_capacity_rounds_up_to_whole_tiles_and_shrink_keeps_the_rows() {
    let mut t: SoaTiles<Mixed, 4> = SoaTiles::with_capacity(5);
    assert_eq!(t.capacity(), 8);
    t.extend((0..5).map(mixed));
    t.reserve(100);
    assert!(t.capacity() >= 105);
    t.shrink_to_fit();
    assert_eq!(t.capacity(), 8);
    assert_eq!(t.into_vec(), (0..5).map(mixed).collect::<Vec<_>>());
}

#[test]
fn a_huge_reservation_is_refused_with_an_error_that_says_so() {
    let mut t: SoaTiles<Particle, 8> = SoaTiles::new();
    let e = t.try_reserve(usize::MAX / 4).unwrap_err();
    assert!(e.to_string().contains("ask for fewer rows"), "{e}");
    assert_eq!(t.capacity(), 0);
    t.push(particle(1));
    assert!(t.try_reserve(usize::MAX).is_err());
    assert_eq!(*t.get(0).unwrap().x, 1.0);
}

#[test]
#[should_panic(expected = "swap_remove index 3 out of bounds (len 3)")]
fn swap_remove_past_the_end_panics_with_the_index() {
    let mut t: SoaTiles<Particle, 8> = (0..3).map(particle).collect();
    t.swap_remove(3);
}

// ---- model-based test ----

#[derive(Debug, Clone)]
enum Op {
    Push(u8),
    Pop,
    SwapRemove(usize),
    Insert(usize, u8),
    Remove(usize),
    Swap(usize, usize),
    Truncate(usize),
    Clear,
    SetMut(usize, u8),
    Retain(u8),
    RetainMut(u8),
    Extend(Vec<u8>),
    Reserve(usize),
    ShrinkToFit,
    CloneEq,
    RoundTripVec,
    TilesMutBump,
    IterMutBump,
}

fn op() -> impl Strategy<Value = Op> {
    let i = 0usize..24;
    prop_oneof![
        5 => any::<u8>().prop_map(Op::Push),
        1 => Just(Op::Pop),
        2 => i.clone().prop_map(Op::SwapRemove),
        1 => (i.clone(), any::<u8>()).prop_map(|(i, k)| Op::Insert(i, k)),
        1 => i.clone().prop_map(Op::Remove),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Swap(a, b)),
        1 => i.clone().prop_map(Op::Truncate),
        1 => Just(Op::Clear),
        1 => (i.clone(), any::<u8>()).prop_map(|(i, k)| Op::SetMut(i, k)),
        1 => (1u8..5).prop_map(Op::Retain),
        1 => (1u8..5).prop_map(Op::RetainMut),
        2 => proptest::collection::vec(any::<u8>(), 0..10).prop_map(Op::Extend),
        1 => (0usize..20).prop_map(Op::Reserve),
        1 => Just(Op::ShrinkToFit),
        1 => Just(Op::CloneEq),
        1 => Just(Op::RoundTripVec),
        1 => Just(Op::TilesMutBump),
        1 => Just(Op::IterMutBump),
    ]
}

fn snapshot<const N: usize>(v: &SoaTiles<Mixed, N>) -> Vec<Mixed> {
    v.iter()
        .map(|r| Mixed {
            tag: *r.tag,
            name: r.name.clone(),
            unit: *r.unit,
            wide: *r.wide,
            half: *r.half,
        })
        .collect()
}

fn apply<const N: usize>(v: &mut SoaTiles<Mixed, N>, m: &mut Vec<Mixed>, op: Op) {
    match op {
        Op::Push(k) => {
            v.push(mixed(k));
            m.push(mixed(k));
        }
        Op::Pop => assert_eq!(v.pop(), m.pop()),
        Op::SwapRemove(i) if i < m.len() => assert_eq!(v.swap_remove(i), m.swap_remove(i)),
        Op::Insert(i, k) if i <= m.len() => {
            v.insert(i, mixed(k));
            m.insert(i, mixed(k));
        }
        Op::Remove(i) if i < m.len() => assert_eq!(v.remove(i), m.remove(i)),
        Op::Swap(a, b) if a < m.len() && b < m.len() => {
            v.swap(a, b);
            m.swap(a, b);
        }
        Op::Truncate(n) => {
            v.truncate(n);
            m.truncate(n);
        }
        Op::Clear => {
            v.clear();
            m.clear();
        }
        Op::SetMut(i, k) => match v.get_mut(i) {
            Some(r) => {
                *r.name = format!("set{k}");
                *r.wide = u64::from(k);
                m[i].name = format!("set{k}");
                m[i].wide = u64::from(k);
            }
            None => assert!(i >= m.len()),
        },
        Op::Retain(d) => {
            v.retain(|r| *r.tag % d != 0);
            m.retain(|r| r.tag % d != 0);
        }
        Op::RetainMut(d) => {
            v.retain_mut(|r| {
                *r.half = r.half.wrapping_add(1);
                *r.tag % d == 0
            });
            m.retain_mut(|r| {
                r.half = r.half.wrapping_add(1);
                r.tag % d == 0
            });
        }
        Op::Extend(ks) => {
            v.extend(ks.iter().map(|&k| mixed(k)));
            m.extend(ks.iter().map(|&k| mixed(k)));
        }
        Op::Reserve(n) => {
            v.reserve(n);
            assert!(v.capacity() >= v.len() + n);
        }
        Op::ShrinkToFit => {
            v.shrink_to_fit();
            assert!(v.capacity() < v.len() + N);
        }
        Op::CloneEq => {
            let c = v.clone();
            assert_eq!(snapshot(&c), *m);
        }
        Op::RoundTripVec => {
            let taken = core::mem::take(v).into_vec();
            assert_eq!(taken, *m);
            *v = taken.into();
        }
        Op::TilesMutBump => {
            for t in v.tiles_mut() {
                for k in 0..N {
                    t.wide[k] += 1;
                }
            }
            v.tail_mut().wide.iter_mut().for_each(|w| *w += 1);
            m.iter_mut().for_each(|r| r.wide += 1);
        }
        Op::IterMutBump => {
            for r in v.iter_mut() {
                r.name.push('!');
            }
            m.iter_mut().for_each(|r| r.name.push('!'));
        }
        _ => {}
    }
}

fn check_model<const N: usize>(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut v: SoaTiles<Mixed, N> = SoaTiles::new();
    let mut m = Vec::new();
    for op in ops {
        apply(&mut v, &mut m, op);
        prop_assert_eq!(v.len(), m.len());
        prop_assert!(v.capacity() >= v.len());
        prop_assert_eq!(v.capacity() % N, 0);
        prop_assert_eq!(snapshot(&v), m.clone());
        // The tiles and the tail hold the same rows, in order.
        let mut tags: Vec<u8> = v.tiles().flat_map(|t| t.tag.iter().copied()).collect();
        tags.extend_from_slice(v.tail().tag);
        prop_assert_eq!(tags, m.iter().map(|r| r.tag).collect::<Vec<_>>());
    }
    let back: Vec<u8> = v.iter().rev().map(|r| *r.tag).collect();
    prop_assert_eq!(back, m.iter().rev().map(|r| r.tag).collect::<Vec<_>>());
    prop_assert_eq!(v.last().map(|r| *r.tag), m.last().map(|r| r.tag));
    let shown = format!("{v:?}");
    prop_assert!(shown.starts_with('['));
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn soa_tiles_of_four_behave_like_vec(ops in proptest::collection::vec(op(), 0..miri_or(60, 20))) {
        check_model::<4>(ops)?;
    }

    #[test]
    fn soa_tiles_of_three_behave_like_vec(ops in proptest::collection::vec(op(), 0..miri_or(60, 20))) {
        check_model::<3>(ops)?;
    }
}

// ---- panics in user code ----

/// Panics in `Drop` (on the value with id `drop_bomb`) or `Clone` (on `clone_bomb`).
#[derive(Debug)]
struct Bomb {
    counter: DropCounter,
    drop_bomb: bool,
    clone_bomb: bool,
}

impl Clone for Bomb {
    fn clone(&self) -> Self {
        assert!(!self.clone_bomb, "clone bomb");
        Bomb {
            counter: DropCounter::new(self.counter.id, &self.counter_drops()),
            drop_bomb: false,
            clone_bomb: false,
        }
    }
}

impl Bomb {
    fn counter_drops(&self) -> Rc<Cell<usize>> {
        // Each test makes its values from one counter.
        DROPS.with(Rc::clone)
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.drop_bomb && !std::thread::panicking() {
            panic!("drop bomb");
        }
    }
}

thread_local! {
    static DROPS: Rc<Cell<usize>> = Rc::new(Cell::new(0));
}

#[derive(Debug, Clone, Soa)]
#[soa(crate = arena_kit_core, tiled, plain)]
struct Armed {
    id: u32,
    bomb: Bomb,
}

fn armed(n: usize, drop_bomb: usize, clone_bomb: usize) -> SoaTiles<Armed, 4> {
    let drops = DROPS.with(Rc::clone);
    drops.set(0);
    (0..n)
        .map(|i| Armed {
            id: i as u32,
            bomb: Bomb {
                counter: DropCounter::new(i as u64, &drops),
                drop_bomb: i == drop_bomb,
                clone_bomb: i == clone_bomb,
            },
        })
        .collect()
}

fn drops() -> usize {
    DROPS.with(|d| d.get())
}

#[test]
fn a_drop_panicking_in_the_containers_drop_still_drops_every_other_row_once() {
    let t = armed(11, 2, usize::MAX);
    let r = catch_unwind(AssertUnwindSafe(|| drop(t)));
    assert!(r.is_err());
    assert_eq!(
        drops(),
        11,
        "each of the 11 rows dropped once, across three tiles"
    );
}

#[test]
fn a_drop_panicking_in_truncate_drops_the_rest_and_keeps_the_prefix() {
    let mut t = armed(11, 6, usize::MAX);
    let r = catch_unwind(AssertUnwindSafe(|| t.truncate(3)));
    assert!(r.is_err());
    assert_eq!(drops(), 8, "rows 3..11 dropped once each");
    assert_eq!(t.len(), 3);
    assert_eq!(t.iter().map(|r| *r.id).collect::<Vec<_>>(), [0, 1, 2]);
    t.push(armed_row(99));
    drop(t);
    assert_eq!(drops(), 12);
}

fn armed_row(id: u32) -> Armed {
    Armed {
        id,
        bomb: Bomb {
            counter: DropCounter::new(u64::from(id), &DROPS.with(Rc::clone)),
            drop_bomb: false,
            clone_bomb: false,
        },
    }
}

#[test]
fn a_clone_panicking_mid_clone_drops_what_was_cloned_and_keeps_the_original() {
    let t = armed(9, usize::MAX, 5);
    let r = catch_unwind(AssertUnwindSafe(|| t.clone()));
    assert!(r.is_err());
    assert_eq!(
        drops(),
        5,
        "the five clones made before the panic were dropped"
    );
    assert_eq!(t.len(), 9);
    assert_eq!(*t.get(8).unwrap().id, 8);
    drop(t);
    assert_eq!(drops(), 14);
}

#[test]
fn a_retain_predicate_panicking_keeps_the_unvisited_rows_and_drops_nothing_twice() {
    let mut t = armed(10, usize::MAX, usize::MAX);
    let r = catch_unwind(AssertUnwindSafe(|| {
        t.retain(|r| {
            assert!(*r.id != 7, "predicate panics at row 7");
            *r.id % 2 == 0
        })
    }));
    assert!(r.is_err());
    assert_eq!(
        drops(),
        3,
        "only the odd rows visited (1, 3, 5) were dropped"
    );
    // Kept: 0, 2, 4, 6 (visited), then 7, 8, 9 (not yet visited).
    assert_eq!(
        t.iter().map(|r| *r.id).collect::<Vec<_>>(),
        [0, 2, 4, 6, 7, 8, 9]
    );
    drop(t);
    assert_eq!(drops(), 10);
}

#[test]
fn a_drop_panicking_in_retain_closes_the_gap() {
    let mut t = armed(10, 3, usize::MAX);
    let r = catch_unwind(AssertUnwindSafe(|| t.retain(|r| *r.id % 3 != 0)));
    assert!(r.is_err());
    // Rows 0 and 3 were dropped (3's drop panicked after dropping its fields).
    assert_eq!(drops(), 2);
    assert_eq!(
        t.iter().map(|r| *r.id).collect::<Vec<_>>(),
        [1, 2, 4, 5, 6, 7, 8, 9]
    );
    drop(t);
    assert_eq!(drops(), 10);
}

#[test]
fn into_vec_moves_every_row_out_once() {
    let t = armed(6, usize::MAX, usize::MAX);
    let v = t.into_vec();
    assert_eq!(drops(), 0);
    assert_eq!(
        v.iter().map(|r| r.id).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    drop(v);
    assert_eq!(drops(), 6);
}

// ---- arena tiles ----

#[test]
fn arena_tiles_of_no_rows_that_need_dropping_take_nothing_and_are_not_counted() {
    // no drop record for no rows, as for an empty slice of values that need dropping
    let arena = Arena::with_capacity(1024);
    arena.alloc_layout(core::alloc::Layout::from_size_align(3, 1).unwrap());
    let before = super::arena_footprint(&arena);
    let t = arena.alloc_tiles::<Mixed, 4, _>(0, |_| unreachable!("no rows"));
    assert_eq!(t.len(), 0);
    assert_eq!(super::arena_footprint(&arena), before);
}

#[test]
fn arena_tiles_of_no_rows_take_nothing_and_are_not_counted() {
    let arena = Arena::with_capacity(1024);
    arena.alloc_layout(core::alloc::Layout::from_size_align(3, 1).unwrap());
    let before = (arena.used(), arena.allocation_count());
    let t = arena.alloc_tiles::<Particle, 4, _>(0, |_| Particle::default());
    assert_eq!(t.len(), 0);
    assert_eq!((arena.used(), arena.allocation_count()), before);
}

#[test]
fn arena_tiles_are_dropped_once_when_the_arena_resets() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::with_capacity(miri_or(1 << 16, 4096));
    {
        let mut t = arena.alloc_tiles::<Mixed, 4, _>(10, |i| mixed(i as u8));
        assert_eq!(t.len(), 10);
        assert_eq!(t.tiles().count(), 2);
        for tile in t.tiles_mut() {
            tile.wide.iter_mut().for_each(|w| *w = 7);
        }
        assert_eq!(*t.get(7).unwrap().wide, 7);
        assert_eq!(t.tail().tag, &[8, 9]);
        assert_eq!(t.iter().count(), 10);
        let counted = arena.alloc_tiles::<Counted, 4, _>(5, |i| Counted {
            id: i as u64,
            c: SendCounter(Arc::clone(&drops)),
        });
        assert_eq!(*counted.get(4).unwrap().id, 4);
    }
    arena.reset();
    assert_eq!(drops.load(Ordering::Relaxed), 5);
}

/// Counts its drops in a shared atomic (arena values must be `Send`).
#[derive(Debug)]
struct SendCounter(Arc<AtomicUsize>);

impl Drop for SendCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(Debug, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Counted {
    id: u64,
    c: SendCounter,
}

#[test]
fn arena_tiles_whose_init_panics_are_dropped_with_the_arena() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::with_capacity(4096);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_tiles::<Counted, 4, _>(9, |i| {
            assert!(i != 6, "init panics at row 6");
            Counted {
                id: i as u64,
                c: SendCounter(Arc::clone(&drops)),
            }
        });
    }));
    assert!(r.is_err());
    arena.reset();
    assert_eq!(drops.load(Ordering::Relaxed), 6, "rows 0..6 dropped once");
}

#[test]
fn a_full_arena_refuses_tiles_without_calling_init() {
    let arena = Arena::with_capacity(256);
    let r = arena.try_alloc_tiles::<Particle, 8, _>(1000, |_| unreachable!());
    assert!(r.is_err());
}

#[test]
fn a_panic_inside_a_tracked_tiles_call_leaves_what_it_reached_marked() {
    use arena_kit_core::soa::TrackedSoaTiles;
    // 140 rows: blocks 0..64, 64..128, 128..140. Row 100's drop panics.
    let mut t: TrackedSoaTiles<Armed, 4> = armed(140, 100, usize::MAX).into();
    let seen = t.tick();
    let r = catch_unwind(AssertUnwindSafe(|| t.truncate(90)));
    assert!(r.is_err());
    assert_eq!(t.len(), 90);
    // Marked before the drops ran: blocks 1 and 2 (rows 64..140), cut at the new length.
    let changed: Vec<_> = t.changed_since(seen).map(|c| (c.field, c.rows)).collect();
    assert_eq!(changed, [(0, 64..90), (1, 64..90)]);
    // A retain predicate that panics through `inner_mut`: every block was marked first.
    let seen = t.tick();
    let r = catch_unwind(AssertUnwindSafe(|| {
        t.inner_mut().retain(|r| {
            assert!(*r.id != 5, "predicate panics at row 5");
            true
        })
    }));
    assert!(r.is_err());
    let changed: Vec<_> = t.changed_since(seen).map(|c| (c.field, c.rows)).collect();
    assert_eq!(changed, [(0, 0..90), (1, 0..90)]);
    assert_eq!(t.len(), 90);
    drop(t);
    assert_eq!(drops(), 140, "every row dropped once");
}
