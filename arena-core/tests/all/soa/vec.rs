//! `SoaVec<T>` against `Vec<T>`: the worked examples, a model-based property test over every
//! method, and the drop/panic cases Miri checks (growth with mixed alignments, a partly consumed
//! by-value iterator, a `Clone` panicking mid-clone).

#![allow(missing_docs)] // test-only row types

use crate::soa_rows;
use crate::support;

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use arena_kit_core::soa::{Col, Soa, SoaVec};
use arena_kit_derive::Soa;
use proptest::prelude::*;
use soa_rows::{Aligned, Enemy, Mixed, Nothing, Particle};
use support::{DropCounter, miri_or, proptest_config};

/// The `ParticleSystem::updatePositions`, over columns.
fn update_positions(ps: &mut SoaVec<Particle>, dt: f32) {
    let s = ps.slices_mut();
    for i in 0..s.x.len() {
        s.x[i] += s.vx[i] * dt;
        s.y[i] += s.vy[i] * dt;
        s.z[i] += s.vz[i] * dt;
    }
}

#[test]
fn update_positions_moves_each_particle_by_velocity_times_dt() {
    let mut ps = SoaVec::new();
    ps.push(Particle {
        x: 1.0,
        y: 2.0,
        z: 3.0,
        vx: 2.0,
        vy: -4.0,
        vz: 0.0,
        life: 5.0,
    });
    ps.push(Particle {
        x: 0.0,
        y: 0.0,
        z: 0.0,
        vx: 1.0,
        vy: 1.0,
        vz: 1.0,
        life: 1.0,
    });
    update_positions(&mut ps, 0.5);
    let s = ps.slices();
    assert_eq!(s.x, &[2.0, 0.5]);
    assert_eq!(s.y, &[0.0, 0.5]);
    assert_eq!(s.z, &[3.0, 0.5]);
    assert_eq!(
        s.life,
        &[5.0, 1.0],
        "a position pass leaves other columns alone"
    );
}

/// The `EnemySystem::damageAll`: health 100 and 50, minus 10, gives 90 and 40.
#[test]
fn damage_all_takes_ten_from_every_enemy() {
    let mut es: SoaVec<Enemy> = SoaVec::new();
    es.push(Enemy {
        x: 0.0,
        y: 0.0,
        health: 100.0,
        id: 1,
    });
    es.push(Enemy {
        x: 1.0,
        y: 1.0,
        health: 50.0,
        id: 2,
    });
    for h in es.slices_mut().health.iter_mut() {
        *h -= 10.0;
    }
    assert_eq!(es.slices().health, &[90.0, 40.0]);
    assert_eq!(*es.get(0).unwrap().health, 90.0);
    assert_eq!(*es.get(1).unwrap().health, 40.0);
    assert_eq!(es.slices().id, &[1, 2]);
}

#[test]
fn columns_live_in_one_block_each_on_its_alignment() {
    let mut v: SoaVec<Aligned> = SoaVec::with_capacity(3);
    for i in 0..3u8 {
        v.push(Aligned {
            a: i,
            b: u32::from(i) * 7,
            c: Box::new(u16::from(i)),
        });
    }
    let s = v.slices();
    let a = s.a.as_ptr() as usize;
    let b = s.b.as_ptr() as usize;
    let c = s.c.as_ptr() as usize;
    for p in [a, b, c] {
        assert_eq!(
            p % 64,
            0,
            "#[soa(align = 64)] puts every column on a 64-byte boundary"
        );
    }
    assert!(
        a < b && b < c && c - a < 256,
        "one allocation, columns in field order"
    );
    assert_eq!(s.b, &[0, 7, 14]);
}

#[test]
fn growth_keeps_every_column_aligned_and_intact() {
    // Grows through both paths: copying small blocks, reallocating and shifting large ones.
    let mut v: SoaVec<Aligned> = SoaVec::new();
    let n = miri_or(5000, 40);
    for i in 0..n {
        v.push(Aligned {
            a: i as u8,
            b: i as u32,
            c: Box::new(i as u16),
        });
        let s = v.slices();
        assert!(
            [
                s.a.as_ptr() as usize,
                s.b.as_ptr() as usize,
                s.c.as_ptr() as usize
            ]
            .iter()
            .all(|p| p % 64 == 0)
        );
    }
    let s = v.slices();
    assert!((0..n).all(|i| s.a[i] == i as u8 && s.b[i] == i as u32 && *s.c[i] == i as u16));
}

#[test]
fn zero_sized_rows_never_allocate() {
    let mut v: SoaVec<Nothing> = SoaVec::new();
    assert_eq!(v.capacity(), usize::MAX);
    for _ in 0..miri_or(1000, 10) {
        v.push(Nothing {
            a: (),
            b: core::marker::PhantomData,
        });
    }
    assert_eq!(v.len(), miri_or(1000, 10));
    assert!(v.pop().is_some());
    assert_eq!(v.iter().count(), miri_or(1000, 10) - 1);
}

#[test]
fn type_inference_from_push() {
    let mut v = SoaVec::new();
    v.push(Enemy {
        x: 0.0,
        y: 0.0,
        health: 1.0,
        id: 7,
    });
    assert_eq!(v.len(), 1);
    let back: Vec<Enemy> = v.into_vec();
    assert_eq!(back[0].id, 7);
}

#[test]
fn chunks_exact_covers_every_row_once() {
    let n = miri_or(1003, 21);
    let mut v: SoaVec<Particle> = (0..n)
        .map(|i| Particle {
            x: i as f32,
            vx: 1.0,
            ..Particle::default()
        })
        .collect();
    let mut chunks = v.chunks_exact_mut::<8>();
    assert_eq!(chunks.len(), n / 8);
    for c in &mut chunks {
        for i in 0..8 {
            c.x[i] += c.vx[i] * 2.0;
        }
    }
    let rest = chunks.into_remainder();
    assert_eq!(rest.x.len(), n % 8);
    for i in 0..rest.x.len() {
        rest.x[i] += rest.vx[i] * 2.0;
    }
    assert!(
        v.slices()
            .x
            .iter()
            .enumerate()
            .all(|(i, &x)| x == i as f32 + 2.0)
    );
    assert_eq!(
        v.chunks_exact::<4>().map(|c| c.x.len()).sum::<usize>(),
        n - n % 4
    );
}

/// `chunks_exact::<N>()` and `chunks_exact_mut::<N>()` of a vector, and of a sub-slice starting
/// at an odd row, against std's `chunks_exact(N)` of the same rows in a `Vec`: every chunk, the
/// length left after each step, and the remainder before, during and after the iteration.
fn chunks_match_std<const N: usize>(len: usize, skip: usize) {
    let rows = |i: usize| Mixed {
        tag: i as u8,
        name: format!("row {i}"),
        unit: (),
        wide: i as u64 * 3,
        half: i as u16,
    };
    let mut v: SoaVec<Mixed> = (0..len).map(rows).collect();
    let model: Vec<Mixed> = (0..len).map(rows).collect();
    let skip = skip.min(len);
    let model = &model[skip..];
    let slice = v.slice(skip..);
    let mut ours = slice.chunks_exact::<N>();
    let mut std = model.chunks_exact(N);
    assert_eq!(
        ours.remainder().name,
        std.remainder()
            .iter()
            .map(|m| m.name.clone())
            .collect::<Vec<_>>()
    );
    loop {
        assert_eq!(ours.len(), std.len());
        match (ours.next(), std.next()) {
            (Some(c), Some(m)) => {
                assert_eq!(c.name.len(), N);
                #[allow(clippy::needless_range_loop)] // one index into five columns and the model
                for k in 0..N {
                    assert_eq!(
                        (c.tag[k], &c.name[k], c.wide[k], c.half[k]),
                        (m[k].tag, &m[k].name, m[k].wide, m[k].half)
                    );
                }
            }
            (None, None) => break,
            (c, m) => panic!("ours yields {}, std {}", c.is_some(), m.is_some()),
        }
    }
    assert_eq!(ours.next().map(|c| c.tag.len()), None, "fused");
    assert_eq!(
        ours.remainder().wide,
        std.remainder().iter().map(|m| m.wide).collect::<Vec<_>>()
    );

    // The exclusive chunks: write through each, then read the rows back; the remainder after
    // taking only the first chunk is still the last `len % N` rows.
    let mut slice = v.slice_mut(skip..);
    let mut chunks = slice.chunks_exact_mut::<N>();
    assert_eq!(chunks.len(), model.len() / N);
    if let Some(first) = chunks.next() {
        for k in 0..N {
            first.wide[k] += 1;
        }
    }
    for c in &mut chunks {
        for k in 0..N {
            c.wide[k] += 1;
            c.name[k].push('!');
        }
    }
    let rest = chunks.into_remainder();
    assert_eq!(rest.wide.len(), model.len() % N);
    for w in rest.wide.iter_mut() {
        *w += 100;
    }
    let whole = model.len() - model.len() % N;
    for (i, m) in model.iter().enumerate() {
        let want = m.wide + if i < whole { 1 } else { 100 };
        assert_eq!(v.slices().wide[skip + i], want, "row {}", skip + i);
        let bang = i >= N && i < whole;
        assert_eq!(
            v.slices().name[skip + i].ends_with('!'),
            bang,
            "row {}",
            skip + i
        );
    }
    let mut partial = v.chunks_exact_mut::<N>();
    let _ = partial.next();
    assert_eq!(partial.into_remainder().tag.len(), len % N);
}

#[test]
fn chunk_iterators_match_std_chunks_exact() {
    for len in 0..miri_or(40, 12) {
        for skip in [0, 1, 5] {
            chunks_match_std::<1>(len, skip);
            chunks_match_std::<3>(len, skip);
            chunks_match_std::<8>(len, skip);
        }
    }
    // Zero-sized columns only: every chunk and the remainder still have the right lengths.
    let mut v: SoaVec<Nothing> = (0..miri_or(1003, 19))
        .map(|_| Nothing {
            a: (),
            b: core::marker::PhantomData,
        })
        .collect();
    let n = v.len();
    assert_eq!(
        v.chunks_exact::<8>().map(|c| c.a.len()).sum::<usize>(),
        n - n % 8
    );
    let mut chunks = v.chunks_exact_mut::<8>();
    assert_eq!(chunks.by_ref().count(), n / 8);
    assert_eq!(chunks.into_remainder().b.len(), n % 8);
}

#[test]
fn a_partly_consumed_into_iter_drops_the_rest_once() {
    let drops = Rc::new(Cell::new(0));
    let mut v = SoaVec::new();
    for i in 0..10 {
        v.push(Counted {
            id: i,
            c: DropCounter::new(i, &drops),
            pad: 0,
        });
    }
    let mut it = v.into_iter();
    let first = it.next().unwrap();
    let last = it.next_back().unwrap();
    assert_eq!((first.id, last.id), (0, 9));
    drop(it);
    assert_eq!(
        drops.get(),
        8,
        "the 8 rows not taken are dropped by the iterator"
    );
    drop((first, last));
    assert_eq!(drops.get(), 10);
}

/// Panics on the `panic_at`-th clone.
#[derive(Debug)]
pub struct Flaky {
    pub id: u64,
    clones: Rc<Cell<usize>>,
    panic_at: usize,
    drops: Rc<Cell<usize>>,
}

impl Clone for Flaky {
    fn clone(&self) -> Self {
        let n = self.clones.get() + 1;
        self.clones.set(n);
        if n == self.panic_at {
            panic!("clone number {n} fails");
        }
        Flaky {
            id: self.id,
            clones: self.clones.clone(),
            panic_at: self.panic_at,
            drops: self.drops.clone(),
        }
    }
}

impl Drop for Flaky {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
    }
}

/// A row with a fallible clone after an infallible one.
#[derive(Debug, Clone, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Row {
    pub name: String,
    pub flaky: Flaky,
}

/// A row with a drop counter.
#[derive(Debug, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Counted {
    pub id: u64,
    pub c: DropCounter,
    pub pad: u8,
}

#[test]
fn a_clone_panicking_mid_clone_drops_what_was_cloned_and_keeps_the_original() {
    let clones = Rc::new(Cell::new(0));
    let drops = Rc::new(Cell::new(0));
    let v: SoaVec<Row> = (0..5)
        .map(|id| Row {
            name: format!("row{id}"),
            flaky: Flaky {
                id,
                clones: clones.clone(),
                panic_at: 4,
                drops: drops.clone(),
            },
        })
        .collect();
    let r = catch_unwind(AssertUnwindSafe(|| v.clone()));
    assert!(r.is_err());
    assert_eq!(
        drops.get(),
        3,
        "the three finished clones are dropped, nothing else"
    );
    assert_eq!(v.len(), 5);
    assert_eq!(v.get(4).unwrap().name, "row4");
    drop(v);
    assert_eq!(drops.get(), 8);
}

#[test]
fn retain_survives_a_panicking_predicate() {
    let drops = Rc::new(Cell::new(0));
    let mut v = SoaVec::new();
    for i in 0..8 {
        v.push(Counted {
            id: i,
            c: DropCounter::new(i, &drops),
            pad: 1,
        });
    }
    let r = catch_unwind(AssertUnwindSafe(|| {
        v.retain(|r| {
            assert!(*r.id != 5, "predicate fails on 5");
            *r.id % 2 == 0
        })
    }));
    assert!(r.is_err());
    assert_eq!(
        drops.get(),
        2,
        "1 and 3 were dropped; 5 and later are kept as they were"
    );
    let ids: Vec<u64> = v.iter().map(|r| *r.id).collect();
    assert_eq!(ids, [0, 2, 4, 5, 6, 7]);
    drop(v);
    assert_eq!(drops.get(), 8);
}

/// A nested field: `Body { pos: Vec3, mass: f64 }` with `pos` split into columns.
mod nested {
    use super::*;
    use arena_kit_core::soa::Nested;

    /// A 3-vector.
    #[derive(Debug, Clone, Copy, PartialEq, Soa)]
    #[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
    pub struct Vec3 {
        pub x: f32,
        pub y: f32,
        pub z: f32,
    }

    /// `pos` stored as three columns of its own.
    #[derive(Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Body {
        #[soa(nested)]
        pub pos: Vec3,
        pub mass: f64,
    }

    /// The column types the derive writes: `pos` nested, `mass` a plain column.
    type BodyColumns = (Nested<Vec3>, (Col<f64>, ()));
    const _: fn(<Body as Soa>::Columns) -> BodyColumns = |c| c;

    #[test]
    fn nested_fields_become_columns_of_their_own() {
        let mut v = SoaVec::new();
        for i in 0..5 {
            let f = i as f32;
            v.push(Body {
                pos: Vec3 {
                    x: f,
                    y: 2.0 * f,
                    z: 3.0 * f,
                },
                mass: f64::from(i),
            });
        }
        let s = v.slices_mut();
        for y in s.pos.y.iter_mut() {
            *y += 1.0;
        }
        s.mass[0] = 0.5;
        assert_eq!(v.slices().pos.y, &[1.0, 3.0, 5.0, 7.0, 9.0]);
        assert_eq!(v.slices().mass, &[0.5, 1.0, 2.0, 3.0, 4.0]);
        let r = v.get(2).unwrap();
        assert_eq!((*r.pos.x, *r.pos.z, *r.mass), (2.0, 6.0, 2.0));
        let b = v.remove(1);
        assert_eq!(
            b.pos,
            Vec3 {
                x: 1.0,
                y: 3.0,
                z: 3.0
            }
        );
        assert_eq!(v.slices().pos.x, &[0.0, 2.0, 3.0, 4.0]);
    }

    /// A generic 2-vector: `Soa` for every `T`.
    #[derive(Debug, Clone, Copy, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Vec2<T> {
        pub x: T,
        pub y: T,
    }

    /// Nests whatever position type it is given: the derive bounds the impl and the views by
    /// `P: Soa`, so `Sprite<P>` is `Soa` exactly when `P` is.
    #[derive(Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Sprite<P> {
        #[soa(nested)]
        pub at: P,
        pub frame: u16,
    }

    #[test]
    fn a_nested_field_of_a_type_parameter_is_bounded_by_soa() {
        let mut v: SoaVec<Sprite<Vec2<i32>>> = SoaVec::new();
        for i in 0..4 {
            v.push(Sprite {
                at: Vec2 { x: i, y: -i },
                frame: i as u16,
            });
        }
        for y in v.slices_mut().at.y {
            *y *= 10;
        }
        assert_eq!(v.slices().at.x, &[0, 1, 2, 3]);
        assert_eq!(v.slices().at.y, &[0, -10, -20, -30]);
        let s = v.swap_remove(0);
        assert_eq!((s.at, s.frame), (Vec2 { x: 0, y: 0 }, 0));
        assert_eq!(v.slices().frame, &[3, 1, 2]);
    }

    /// A borrowed field named `'a`, so the views take another lifetime, beside a nested one.
    #[derive(Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Label<'a> {
        pub text: &'a str,
        #[soa(nested)]
        pub at: Vec2<f32>,
    }

    #[test]
    fn a_struct_with_its_own_lifetime_nests_a_field() {
        let names = [String::from("a"), String::from("b")];
        let mut v = SoaVec::new();
        for (i, n) in names.iter().enumerate() {
            v.push(Label {
                text: n,
                at: Vec2 {
                    x: i as f32,
                    y: 0.5,
                },
            });
        }
        assert_eq!(v.slices().text, &["a", "b"]);
        assert_eq!(v.slices().at.x, &[0.0, 1.0]);
        assert_eq!(*v.get(1).unwrap().at.y, 0.5);
    }
}

// ---------------------------------------------------------------------------------------------
// Model-based: every method against `Vec<Mixed>`.

#[derive(Debug, Clone)]
enum Op {
    Push(u8),
    Pop,
    Insert(usize, u8),
    Remove(usize),
    SwapRemove(usize),
    Truncate(usize),
    Clear,
    SetMut(usize, u8),
    Swap(usize, usize),
    SortByKey,
    SortBy,
    Retain(u8),
    Extend(Vec<u8>),
    Reserve(usize),
    ShrinkToFit,
    RoundTripVec,
    CloneEq,
    TakeSome(usize),
    IterMutBump,
    SlicesMutBump(u16),
    TryReserveHuge,
    Drain(usize, usize, usize),
    RetainMut(u8),
    DedupByKey(u8),
    ResizeWith(usize, u8),
    Append(Vec<u8>),
    SplitOffAppend(usize),
    ExtendFromSlice(usize, usize),
    SortUnstableBy,
    SortUnstableByKey,
    SliceMutBump(usize, usize),
    SplitAtMutSwap(usize),
    FirstLastMut(u8),
    CmpSlices(usize, usize),
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

fn op() -> impl Strategy<Value = Op> {
    let i = 0usize..24;
    prop_oneof![
        4 => any::<u8>().prop_map(Op::Push),
        1 => Just(Op::Pop),
        2 => (i.clone(), any::<u8>()).prop_map(|(i, k)| Op::Insert(i, k)),
        1 => i.clone().prop_map(Op::Remove),
        1 => i.clone().prop_map(Op::SwapRemove),
        1 => i.clone().prop_map(Op::Truncate),
        1 => Just(Op::Clear),
        1 => (i.clone(), any::<u8>()).prop_map(|(i, k)| Op::SetMut(i, k)),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Swap(a, b)),
        1 => Just(Op::SortByKey),
        1 => Just(Op::SortBy),
        1 => (1u8..5).prop_map(Op::Retain),
        1 => proptest::collection::vec(any::<u8>(), 0..6).prop_map(Op::Extend),
        1 => (0usize..20).prop_map(Op::Reserve),
        1 => Just(Op::ShrinkToFit),
        1 => Just(Op::RoundTripVec),
        1 => Just(Op::CloneEq),
        1 => (0usize..6).prop_map(Op::TakeSome),
        1 => Just(Op::IterMutBump),
        1 => any::<u16>().prop_map(Op::SlicesMutBump),
        1 => Just(Op::TryReserveHuge),
        2 => (i.clone(), i.clone(), 0usize..4).prop_map(|(a, b, t)| Op::Drain(a, b, t)),
        1 => (1u8..5).prop_map(Op::RetainMut),
        1 => (1u8..4).prop_map(Op::DedupByKey),
        1 => (i.clone(), any::<u8>()).prop_map(|(n, k)| Op::ResizeWith(n, k)),
        1 => proptest::collection::vec(any::<u8>(), 0..6).prop_map(Op::Append),
        1 => i.clone().prop_map(Op::SplitOffAppend),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::ExtendFromSlice(a, b)),
        1 => Just(Op::SortUnstableBy),
        1 => Just(Op::SortUnstableByKey),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::SliceMutBump(a, b)),
        1 => i.clone().prop_map(Op::SplitAtMutSwap),
        1 => any::<u8>().prop_map(Op::FirstLastMut),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::CmpSlices(a, b)),
    ]
}

fn snapshot(v: &SoaVec<Mixed>) -> Vec<Mixed> {
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

fn apply(v: &mut SoaVec<Mixed>, m: &mut Vec<Mixed>, op: Op) {
    match op {
        Op::Push(k) => {
            v.push(mixed(k));
            m.push(mixed(k));
        }
        Op::Pop => assert_eq!(v.pop(), m.pop()),
        Op::Insert(i, k) if i <= m.len() => {
            v.insert(i, mixed(k));
            m.insert(i, mixed(k));
        }
        Op::Remove(i) if i < m.len() => assert_eq!(v.remove(i), m.remove(i)),
        Op::SwapRemove(i) if i < m.len() => assert_eq!(v.swap_remove(i), m.swap_remove(i)),
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
                *r.tag = k;
                r.name.push('!');
                m[i].tag = k;
                m[i].name.push('!');
            }
            None => assert!(i >= m.len()),
        },
        Op::Swap(a, b) if a < m.len() && b < m.len() => {
            v.swap(a, b);
            m.swap(a, b);
        }
        Op::SortByKey => {
            v.sort_by_key(|r| *r.tag % 5);
            m.sort_by_key(|r| r.tag % 5);
        }
        Op::SortBy => {
            v.sort_by(|a, b| a.name.cmp(b.name).then(b.half.cmp(a.half)));
            m.sort_by(|a, b| a.name.cmp(&b.name).then(b.half.cmp(&a.half)));
        }
        Op::Retain(d) => {
            v.retain(|r| *r.tag % d == 0);
            m.retain(|r| r.tag % d == 0);
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
            assert_eq!(v.capacity(), v.len());
        }
        Op::RoundTripVec => {
            let taken = std::mem::take(v);
            let back: Vec<Mixed> = taken.into_vec();
            assert_eq!(&back, m);
            *v = SoaVec::from(back);
        }
        Op::CloneEq => {
            let c = v.clone();
            assert!(c == *v);
            assert_eq!(snapshot(&c), *m);
        }
        Op::TakeSome(n) => {
            let c = v.clone();
            let got: Vec<Mixed> = c.into_iter().rev().take(n).collect();
            let want: Vec<Mixed> = m.iter().rev().take(n).cloned().collect();
            assert_eq!(got, want);
        }
        Op::IterMutBump => {
            for r in v.iter_mut() {
                *r.wide += 1;
            }
            m.iter_mut().for_each(|r| r.wide += 1);
        }
        Op::SlicesMutBump(k) => {
            for h in v.slices_mut().half {
                *h ^= k;
            }
            m.iter_mut().for_each(|r| r.half ^= k);
        }
        Op::TryReserveHuge => {
            let cap = v.capacity();
            assert!(v.try_reserve(usize::MAX / 2).is_err());
            assert_eq!(v.capacity(), cap, "a failed reserve changes nothing");
        }
        Op::Drain(a, b, taken) if a <= b && b <= m.len() => {
            super::vec_parity::drain_like_vec(v, m, a..b, taken);
        }
        Op::RetainMut(d) => {
            v.retain_mut(|r| {
                *r.wide += 1;
                *r.tag % d == 0
            });
            m.retain_mut(|r| {
                r.wide += 1;
                r.tag % d == 0
            });
        }
        Op::DedupByKey(d) => {
            v.dedup_by_key(|r| *r.tag / d);
            m.dedup_by_key(|r| r.tag / d);
        }
        Op::ResizeWith(n, k) => {
            v.resize_with(n, || mixed(k));
            m.resize_with(n, || mixed(k));
        }
        Op::Append(ks) => {
            let mut other: SoaVec<Mixed> = ks.iter().map(|&k| mixed(k)).collect();
            let mut mother: Vec<Mixed> = ks.iter().map(|&k| mixed(k)).collect();
            v.append(&mut other);
            m.append(&mut mother);
            assert!(other.is_empty());
        }
        Op::SplitOffAppend(at) if at <= m.len() => {
            let mut tail = v.split_off(at);
            let mut mtail = m.split_off(at);
            assert_eq!(snapshot(&tail), mtail);
            assert_eq!(snapshot(v), *m);
            // Whole-row keys: equal keys are equal rows, so the unstable order is unique.
            tail.sort_unstable_by_key(|r| (*r.half, r.name.clone(), *r.tag, *r.wide));
            mtail.sort_by_key(|r| (r.half, r.name.clone(), r.tag, r.wide));
            v.append(&mut tail);
            m.append(&mut mtail);
        }
        Op::ExtendFromSlice(a, b) if a <= b && b <= m.len() => {
            let src = v.clone();
            v.extend_from_slice(src.slice(a..b));
            m.extend_from_within(a..b);
        }
        Op::SortUnstableBy => {
            // A total order on the whole row, so the unstable result is unique.
            v.sort_unstable_by(|a, b| {
                (a.half, a.name, a.tag, a.wide).cmp(&(b.half, b.name, b.tag, b.wide))
            });
            m.sort_unstable_by(|a, b| {
                (a.half, &a.name, a.tag, a.wide).cmp(&(b.half, &b.name, b.tag, b.wide))
            });
        }
        Op::SortUnstableByKey => {
            v.sort_unstable_by_key(|r| (*r.tag, r.name.clone(), *r.wide, *r.half));
            m.sort_unstable_by_key(|r| (r.tag, r.name.clone(), r.wide, r.half));
        }
        Op::SliceMutBump(a, b) => match v.get_slice_mut(a..b) {
            Some(mut s) => {
                for h in s.slices_mut().half {
                    *h = h.wrapping_add(1);
                }
                m[a..b]
                    .iter_mut()
                    .for_each(|r| r.half = r.half.wrapping_add(1));
            }
            None => assert!(a > b || b > m.len()),
        },
        Op::SplitAtMutSwap(mid) if mid <= m.len() => {
            let (mut l, mut r) = v.split_at_mut(mid);
            if let (Some(a), Some(b)) = (l.last_mut(), r.first_mut()) {
                std::mem::swap(a.name, b.name);
                let (x, y) = m.split_at_mut(mid);
                std::mem::swap(&mut x[mid - 1].name, &mut y[0].name);
            }
        }
        Op::FirstLastMut(k) => {
            if let Some(r) = v.first_mut() {
                *r.tag = k;
                m[0].tag = k;
            }
            if let Some(r) = v.last_mut() {
                *r.half = u16::from(k);
                m.last_mut().unwrap().half = u16::from(k);
            }
            assert_eq!(v.first().map(|r| *r.tag), m.first().map(|r| r.tag));
            assert_eq!(v.last().map(|r| *r.half), m.last().map(|r| r.half));
        }
        Op::CmpSlices(a, b) if a <= m.len() && b <= m.len() => {
            let key = |r: &Mixed| (r.tag, r.name.clone(), r.unit, r.wide, r.half);
            let want = m[..a].iter().map(key).cmp(m[b..].iter().map(key));
            let (x, y) = (v.slice(..a), v.slice(b..));
            assert_eq!(x.cmp(&y), want);
            assert_eq!(x.partial_cmp(&y), Some(want));
            assert_eq!(x == y, want.is_eq());
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn soa_vec_behaves_like_vec(ops in proptest::collection::vec(op(), 0..miri_or(60, 25))) {
        let mut v = SoaVec::new();
        let mut m = Vec::new();
        for op in ops {
            apply(&mut v, &mut m, op);
            prop_assert_eq!(v.len(), m.len());
            prop_assert!(v.capacity() >= v.len());
            prop_assert_eq!(snapshot(&v), m.clone());
            let s = v.slices();
            prop_assert!(s.tag.len() == m.len() && s.name.len() == m.len() && s.half.len() == m.len());
        }
        let iter_back: Vec<u8> = v.iter().rev().map(|r| *r.tag).collect();
        let model_back: Vec<u8> = m.iter().rev().map(|r| r.tag).collect();
        prop_assert_eq!(iter_back, model_back);
        let shown = format!("{:?}", v);
        prop_assert!(shown.starts_with('['));
    }
}
