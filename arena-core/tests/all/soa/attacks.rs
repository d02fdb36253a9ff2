//! Attacks from safe code on the SoA containers: drop/clone panics, zero-sized and over-aligned
//! rows, huge capacities, panicking callbacks, lying iterators, iterator edges, hostile serde
//! input, arena SoA slices with drop. Every value is counted: each created value must be dropped
//! exactly once (a double drop or a drop of an unknown value is recorded as an error).
#![allow(missing_docs)]

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::arena::Arena;
use arena_kit_core::soa::{SoaAllocError, SoaPool, SoaTiles, SoaVec, TrackedSoaVec};
use arena_kit_derive::Soa;

use crate::support::panics::planned_panic;

const SMALL: bool = cfg!(miri);

fn n(native: usize, miri: usize) -> usize {
    if SMALL { miri } else { native }
}

// ---------------------------------------------------------------------------------------------
// Counting values.

thread_local! {
    static LIVE: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
    static NEXT: Cell<u64> = const { Cell::new(1) };
    static BAD: Cell<usize> = const { Cell::new(0) };
    static PANIC_DROP: Cell<u64> = const { Cell::new(0) };
    static PANIC_CLONE_AFTER: Cell<usize> = const { Cell::new(usize::MAX) };
    static ZD_LIVE: Cell<isize> = const { Cell::new(0) };
}

/// A counted value: registered on creation, checked and unregistered on drop.
#[derive(Debug)]
struct D {
    id: u64,
}

impl D {
    fn new() -> Self {
        let id = NEXT.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        LIVE.with(|l| l.borrow_mut().insert(id));
        D { id }
    }
}

impl Clone for D {
    fn clone(&self) -> Self {
        let left = PANIC_CLONE_AFTER.with(|c| c.get());
        if left == 0 {
            PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));
            planned_panic("clone panics");
        }
        if left != usize::MAX {
            PANIC_CLONE_AFTER.with(|c| c.set(left - 1));
        }
        assert!(
            LIVE.with(|l| l.borrow().contains(&self.id)),
            "clone of a dead value {}",
            self.id
        );
        D::new()
    }
}

impl PartialEq for D {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Drop for D {
    fn drop(&mut self) {
        let known = LIVE.with(|l| l.borrow_mut().remove(&self.id));
        if !known {
            BAD.with(|b| b.set(b.get() + 1));
        }
        if PANIC_DROP.with(|p| p.get()) == self.id {
            PANIC_DROP.with(|p| p.set(0));
            planned_panic("drop panics");
        }
    }
}

fn live() -> usize {
    LIVE.with(|l| l.borrow().len())
}

#[track_caller]
fn assert_clean(ctx: impl std::fmt::Display) {
    assert_eq!(BAD.with(|b| b.get()), 0, "{ctx}: a value was dropped twice");
    assert_eq!(live(), 0, "{ctx}: values leaked");
    assert_eq!(
        ZD_LIVE.with(|z| z.get()),
        0,
        "{ctx}: zero-sized values leaked or dropped twice"
    );
}

/// A zero-sized counted value.
#[derive(Debug, PartialEq)]
struct ZD;

impl ZD {
    fn new() -> Self {
        ZD_LIVE.with(|z| z.set(z.get() + 1));
        ZD
    }
}

impl Clone for ZD {
    fn clone(&self) -> Self {
        ZD::new()
    }
}

impl Drop for ZD {
    fn drop(&mut self) {
        ZD_LIVE.with(|z| z.set(z.get() - 1));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(align(4096))]
struct Page(u8);

#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(align(64))]
struct Line(u32);

#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(align(64))]
struct ZLine;

// ---------------------------------------------------------------------------------------------
// Row types (the real derive).

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, plain)]
struct DRow {
    a: D,
    k: u32,
    z: (),
    b: D,
}

fn drow(k: u32) -> DRow {
    DRow {
        a: D::new(),
        k,
        z: (),
        b: D::new(),
    }
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled, plain)]
struct TRow {
    a: D,
    k: u32,
}

fn trow(k: u32) -> TRow {
    TRow { a: D::new(), k }
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled, plain)]
struct ZRow {
    u: (),
    z: ZD,
    l: ZLine,
}

fn zrow() -> ZRow {
    ZRow {
        u: (),
        z: ZD::new(),
        l: ZLine,
    }
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Over {
    tag: u8,
    p: Page,
    l: Line,
    d: D,
    zl: ZLine,
}

fn over(k: u8) -> Over {
    Over {
        tag: k,
        p: Page(k),
        l: Line(u32::from(k) * 3),
        d: D::new(),
        zl: ZLine,
    }
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, align = 4096)]
struct Aligned4k {
    a: u8,
    b: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Soa)]
#[soa(crate = arena_kit_core, derive(PartialEq, Eq, PartialOrd, Ord))]
struct Key {
    // `pub`: `column_mut::<0>()` lends only a `pub` field's column.
    pub k: u32,
    pub id: u32,
}

/// A deterministic pseudo-random sequence.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn keys(v: &SoaVec<Key>) -> Vec<(u32, u32)> {
    v.iter().map(|r| (*r.k, *r.id)).collect()
}

// ---------------------------------------------------------------------------------------------
// Zero-sized rows.

#[test]
fn zst_rows_vec_every_operation_counts_once() {
    {
        let mut v: SoaVec<ZRow> = SoaVec::new();
        assert_eq!(v.capacity(), usize::MAX);
        for _ in 0..n(1000, 20) {
            v.push(zrow());
        }
        assert!(v.pop().is_some());
        drop(v.swap_remove(0));
        let last = v.len() - 1;
        drop(v.swap_remove(last));
        drop(v.remove(3));
        v.insert(2, zrow());
        v.retain(|_| true);
        let mut flip = false;
        v.retain(|_| {
            flip = !flip;
            flip
        });
        v.sort_by(|_, _| core::cmp::Ordering::Equal);
        v.sort_unstable_by(|_, _| core::cmp::Ordering::Less);
        let c = v.clone();
        assert_eq!(c.len(), v.len());
        let mut it = c.into_iter();
        drop(it.next());
        drop(it.next_back());
        drop(it);
        drop(v.drain(1..4));
        let tail = v.split_off(2);
        v.append(&mut tail.clone());
        drop(tail);
        v.shrink_to_fit();
        // Vec<ZST> keeps `usize::MAX`; a smaller capacity is not unsound, only surprising.
        let cap_after_shrink = v.capacity();
        v.push(zrow());
        assert!(v.capacity() >= v.len());
        assert!(
            cap_after_shrink >= v.len() - 1,
            "capacity {cap_after_shrink} below the length"
        );
        // Reserving past usize::MAX rows is an error, never a wrap.
        assert!(matches!(
            v.try_reserve(usize::MAX),
            Err(SoaAllocError::CapacityOverflow { .. })
        ));
        let mut w: SoaVec<ZRow> = SoaVec::with_capacity(usize::MAX);
        w.push(zrow());
        assert_eq!(w.chunks_exact::<3>().count(), 0);
        assert_eq!(v.chunks_exact::<3>().count(), v.len() / 3);
    }
    assert_clean("zst vec");
}

#[test]
fn zst_rows_shrink_to_fit_keeps_capacity_unbounded() {
    // `SoaVec::capacity` is documented (RawSoa::new) as unbounded when a row occupies no memory,
    // and `Vec<ZST>::shrink_to_fit` keeps `usize::MAX`.
    let mut v: SoaVec<ZRow> = SoaVec::new();
    v.push(zrow());
    v.shrink_to_fit();
    let cap = v.capacity();
    drop(v);
    assert_clean("zst shrink");
    assert_eq!(
        cap,
        usize::MAX,
        "shrink_to_fit made a zero-sized row's capacity finite"
    );
}

#[test]
fn zst_rows_tiles_pool_and_arena_count_once() {
    {
        let mut t: SoaTiles<ZRow, 4> = SoaTiles::new();
        assert_eq!(t.capacity(), usize::MAX);
        for _ in 0..n(300, 13) {
            t.push(zrow());
        }
        drop(t.swap_remove(0));
        drop(t.remove(1));
        t.insert(0, zrow());
        t.retain(|_| true);
        assert_eq!(t.tiles().count(), t.len() / 4);
        assert_eq!(t.tiles_mut().count(), t.len() / 4);
        let c = t.clone();
        drop(c.into_vec());
        t.truncate(5);
        t.shrink_to_fit();

        let mut p: SoaPool<ZRow> = SoaPool::growable(4);
        let hs: Vec<_> = (0..n(100, 10)).map(|_| p.insert(zrow())).collect();
        drop(p.remove(hs[3]));
        drop(p.remove(hs[0]));
        p.retain(|_, _| true);
        let q = p.clone();
        assert_eq!(q.len(), p.len());
        let mut d = p.drain();
        drop(d.next());
        drop(d);
        assert!(p.is_empty());

        let mut arena = Arena::with_capacity(4096);
        let s = arena.alloc_soa(n(10_000, 30), |_| zrow());
        assert_eq!(s.len(), n(10_000, 30));
        let tl = arena.alloc_tiles::<ZRow, 8, _>(n(1000, 17), |_| zrow());
        assert_eq!(tl.tiles().count(), n(1000, 17) / 8);
        arena.reset();
        assert_eq!(ZD_LIVE.with(|z| z.get()), (q.len() + t.len()) as isize);
    }
    assert_clean("zst tiles/pool/arena");
}

// ---------------------------------------------------------------------------------------------
// Over-aligned columns, through the realloc path too.

#[test]
fn over_aligned_columns_stay_aligned_and_intact_through_growth() {
    {
        let mut v: SoaVec<Over> = SoaVec::new();
        let rows = n(200, 12);
        for i in 0..rows {
            v.push(over(i as u8));
            let s = v.slices();
            assert_eq!(s.p.as_ptr() as usize % 4096, 0);
            assert_eq!(s.l.as_ptr() as usize % 64, 0);
            assert_eq!(s.zl.as_ptr() as usize % 64, 0);
            for (j, (t, (p, l))) in s.tag.iter().zip(s.p.iter().zip(s.l.iter())).enumerate() {
                assert_eq!(*t, j as u8);
                assert_eq!(p.0, j as u8);
                assert_eq!(l.0, j as u32 * 3);
            }
        }
        v.shrink_to_fit();
        assert_eq!(v.slices().p.as_ptr() as usize % 4096, 0);
        v.sort_by(|a, b| b.tag.cmp(a.tag));
        assert_eq!(*v.get(0).unwrap().tag, (rows - 1) as u8);
        assert_eq!(v.get(0).unwrap().l.0, (rows as u32 - 1) * 3);

        let mut big: SoaVec<Aligned4k> = SoaVec::new();
        for i in 0..n(300, 10) {
            big.push(Aligned4k {
                a: i as u8,
                b: i as u16,
            });
        }
        assert_eq!(big.slices().b.as_ptr() as usize % 4096, 0);
        assert!(
            big.slices()
                .b
                .iter()
                .enumerate()
                .all(|(i, &b)| b == i as u16)
        );

        let mut t: SoaTiles<Over, 4> = SoaTiles::new();
        for i in 0..n(40, 9) {
            t.push(over(i as u8));
        }
        for tile in t.tiles() {
            assert_eq!(tile.p.as_ptr() as usize % 4096, 0);
            assert_eq!(tile.l.as_ptr() as usize % 64, 0);
        }
        assert_eq!(t.tail().p.as_ptr() as usize % 4096, 0);
        drop(t.remove(0));
        t.shrink_to_fit();
        assert!(
            t.iter()
                .enumerate()
                .all(|(i, r)| *r.tag == i as u8 + 1 && r.p.0 == *r.tag)
        );

        let arena = Arena::with_capacity(1 << 20);
        arena.alloc([1u8; 3]);
        let s = arena.alloc_soa(5, |i| over(i as u8));
        assert_eq!(s.slices().p.as_ptr() as usize % 4096, 0);
        assert_eq!(s.slices().l[4].0, 12);
        let tl = arena.alloc_tiles::<Over, 2, _>(5, |i| over(i as u8));
        assert_eq!(tl.tail().p.as_ptr() as usize % 4096, 0);
        assert_eq!(tl.get(3).unwrap().l.0, 9);
        drop(arena);
    }
    assert_clean("over-aligned");
}

// ---------------------------------------------------------------------------------------------
// Huge capacities: errors, never UB.

#[test]
fn huge_capacities_are_errors() {
    assert!(matches!(
        SoaVec::<DRow>::try_with_capacity(usize::MAX),
        Err(SoaAllocError::CapacityOverflow { .. })
    ));
    assert!(SoaVec::<DRow>::try_with_capacity(isize::MAX as usize / 8).is_err());
    assert!(SoaVec::<Aligned4k>::try_with_capacity(isize::MAX as usize / 2).is_err());
    assert!(SoaTiles::<TRow, 8>::try_with_capacity(usize::MAX).is_err());
    assert!(SoaTiles::<Over, 3>::try_with_capacity(usize::MAX / 3).is_err());
    assert!(SoaPool::<DRow>::try_with_capacity(usize::MAX).is_err());
    let mut v: SoaVec<DRow> = SoaVec::new();
    v.push(drow(1));
    assert!(v.try_reserve(usize::MAX).is_err());
    assert!(v.try_reserve_exact(usize::MAX - 1).is_err());
    assert!(v.try_reserve(isize::MAX as usize).is_err());
    assert_eq!(v.len(), 1);
    assert_eq!(*v.get(0).unwrap().k, 1);
    assert!(catch_unwind(AssertUnwindSafe(|| v.reserve(usize::MAX))).is_err());
    let mut t: SoaTiles<TRow, 8> = SoaTiles::new();
    t.push(trow(1));
    assert!(t.try_reserve(usize::MAX).is_err());
    assert!(t.try_reserve(usize::MAX - 8).is_err());
    let arena = Arena::with_capacity(4096);
    let mut called = false;
    assert!(
        arena
            .try_alloc_soa(usize::MAX, |_| {
                called = true;
                drow(0)
            })
            .is_err()
    );
    assert!(
        arena
            .try_alloc_tiles::<TRow, 4, _>(usize::MAX, |_| {
                called = true;
                trow(0)
            })
            .is_err()
    );
    assert!(arena.try_alloc_soa(1 << 40, |_| drow(0)).is_err());
    assert!(!called);
    drop((v, t, arena));
    assert_clean("huge");
}

// ---------------------------------------------------------------------------------------------
// Panicking drops and clones.

fn vec_of(k: u32) -> SoaVec<DRow> {
    (0..k).map(drow).collect()
}

fn panic_drop_of(id: u64) {
    PANIC_DROP.with(|p| p.set(id));
}

#[test]
fn panicking_drop_in_every_dropping_vec_operation() {
    let rows = 6u32;
    type Op = fn(&mut SoaVec<DRow>);
    let ops: [(&str, Op); 9] = [
        ("truncate", |v| v.truncate(1)),
        ("clear", |v| v.clear()),
        ("retain", |v| v.retain(|r| *r.k % 2 == 0)),
        ("retain_mut", |v| v.retain_mut(|r| *r.k > 2)),
        ("drain", |v| drop(v.drain(1..4))),
        ("dedup", |v| v.dedup_by_key(|r| *r.k / 3)),
        ("resize", |v| v.resize_with(2, || unreachable!())),
        ("into_iter", |v| {
            let v = std::mem::take(v);
            let mut it = v.into_iter();
            drop(it.next());
            drop(it);
        }),
        ("drop", |v| drop(std::mem::take(v))),
    ];
    for (name, op) in ops {
        for victim in 0..rows as usize {
            for field in 0..2 {
                {
                    let mut v = vec_of(rows);
                    let id = if field == 0 {
                        v.get(victim).unwrap().a.id
                    } else {
                        v.get(victim).unwrap().b.id
                    };
                    panic_drop_of(id);
                    let _ = catch_unwind(AssertUnwindSafe(|| op(&mut v)));
                    PANIC_DROP.with(|p| p.set(0));
                    // Whatever is left must be intact.
                    for r in v.iter() {
                        assert!(
                            LIVE.with(|l| l.borrow().contains(&r.a.id)),
                            "{name}: dead row"
                        );
                        assert!(
                            LIVE.with(|l| l.borrow().contains(&r.b.id)),
                            "{name}: dead row"
                        );
                    }
                    assert_eq!(v.slices().k.len(), v.len());
                }
                assert_clean(format_args!("{name} victim {victim} field {field}"));
            }
        }
    }
}

#[test]
fn panicking_drop_in_tiles_pool_and_arena() {
    for victim in 0..7usize {
        {
            let mut t: SoaTiles<TRow, 3> = (0..7).map(trow).collect();
            panic_drop_of(t.get(victim).unwrap().a.id);
            let _ = catch_unwind(AssertUnwindSafe(|| t.retain(|r| *r.k % 2 == 1)));
            PANIC_DROP.with(|p| p.set(0));
            let left = t.len();
            assert!(
                t.iter()
                    .all(|r| LIVE.with(|l| l.borrow().contains(&r.a.id)))
            );
            panic_drop_of(t.get(victim % left.max(1)).map_or(0, |r| r.a.id));
            let _ = catch_unwind(AssertUnwindSafe(|| drop(t)));
            PANIC_DROP.with(|p| p.set(0));
        }
        assert_clean(format_args!("tiles victim {victim}"));
        {
            let mut p: SoaPool<DRow> = SoaPool::with_capacity(8);
            let hs: Vec<_> = (0..7).map(|k| p.insert(drow(k))).collect();
            panic_drop_of(p.get(hs[victim]).unwrap().b.id);
            let _ = catch_unwind(AssertUnwindSafe(|| p.retain(|_, r| *r.k % 2 == 0)));
            PANIC_DROP.with(|p| p.set(0));
            for (h, r) in p.iter() {
                assert!(p.contains(h));
                assert!(LIVE.with(|l| l.borrow().contains(&r.a.id)));
            }
            assert_eq!(p.iter().count(), p.len());
            let first = p.iter().next().map(|(h, _)| h);
            if let Some(h) = first {
                panic_drop_of(p.get(h).unwrap().a.id);
                let _ = catch_unwind(AssertUnwindSafe(|| drop(p.drain())));
                PANIC_DROP.with(|p| p.set(0));
                assert_eq!(p.iter().count(), p.len());
            }
        }
        assert_clean(format_args!("pool victim {victim}"));
        {
            let mut arena = Arena::with_capacity(4096);
            let s = arena.alloc_soa(7, |k| drow(k as u32));
            let id = s.get(victim).unwrap().a.id;
            panic_drop_of(id);
            let _ = catch_unwind(AssertUnwindSafe(|| arena.reset()));
            PANIC_DROP.with(|p| p.set(0));
            arena.reset();
        }
        assert_clean(format_args!("arena victim {victim}"));
    }
}

#[test]
fn panicking_clone_at_every_value() {
    for after in 0..12usize {
        {
            let v = vec_of(5);
            PANIC_CLONE_AFTER.with(|c| c.set(after));
            let r = catch_unwind(AssertUnwindSafe(|| v.clone()));
            PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));
            if let Ok(c) = r {
                assert_eq!(c.len(), 5);
            }
            let mut w = vec_of(2);
            PANIC_CLONE_AFTER.with(|c| c.set(after));
            let _ = catch_unwind(AssertUnwindSafe(|| w.extend_from_slice(v.slice(1..))));
            PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));
            assert!(
                w.iter()
                    .all(|r| LIVE.with(|l| l.borrow().contains(&r.b.id)))
            );
            assert!(w.len() >= 2 && w.len() <= 6);

            let t: SoaTiles<TRow, 2> = (0..5).map(trow).collect();
            PANIC_CLONE_AFTER.with(|c| c.set(after));
            let _ = catch_unwind(AssertUnwindSafe(|| t.clone()));
            PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));

            let mut p: SoaPool<DRow> = SoaPool::with_capacity(8);
            for k in 0..5 {
                p.insert(drow(k));
            }
            PANIC_CLONE_AFTER.with(|c| c.set(after));
            let _ = catch_unwind(AssertUnwindSafe(|| p.clone()));
            PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));

            use arena_kit_core::soa::ToValue;
            PANIC_CLONE_AFTER.with(|c| c.set(after % 2));
            let _ = catch_unwind(AssertUnwindSafe(|| v.get(1).unwrap().to_value()));
            PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));
        }
        assert_clean(format_args!("clone after {after}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Callbacks that panic, iterators that lie.

struct Liar<I> {
    inner: I,
    hint: (usize, Option<usize>),
    panic_at: Option<usize>,
    seen: usize,
}

impl<I: Iterator> Iterator for Liar<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if Some(self.seen) == self.panic_at {
            planned_panic("iterator panics");
        }
        self.seen += 1;
        self.inner.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.hint
    }
}

/// An exact-size iterator whose `len` is wrong.
struct WrongLen<I> {
    inner: I,
    len: usize,
}
impl<I: Iterator> Iterator for WrongLen<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.inner.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}
impl<I: Iterator> ExactSizeIterator for WrongLen<I> {}

#[test]
fn lying_and_panicking_iterators() {
    for hint in [
        (0, Some(0)),
        (usize::MAX, None),
        (usize::MAX / 2, Some(1)),
        (3, Some(3)),
    ] {
        for panic_at in [None, Some(0), Some(2), Some(5)] {
            {
                let mk = || Liar {
                    inner: (0..8).map(drow),
                    hint,
                    panic_at,
                    seen: 0,
                };
                let mut v: SoaVec<DRow> = SoaVec::new();
                let _ = catch_unwind(AssertUnwindSafe(|| v.extend(mk())));
                assert_eq!(v.len(), panic_at.unwrap_or(8));
                assert!(v.iter().enumerate().all(|(i, r)| *r.k == i as u32));
                let _ = catch_unwind(AssertUnwindSafe(|| mk().collect::<SoaVec<DRow>>()));
                let mut tv: TrackedSoaVec<DRow> = TrackedSoaVec::new();
                let _ = catch_unwind(AssertUnwindSafe(|| tv.extend(mk())));
                assert_eq!(tv.len(), panic_at.unwrap_or(8));
                let mut t: SoaTiles<TRow, 4> = SoaTiles::new();
                let _ = catch_unwind(AssertUnwindSafe(|| {
                    t.extend(Liar {
                        inner: (0..8).map(trow),
                        hint,
                        panic_at,
                        seen: 0,
                    })
                }));
                assert_eq!(t.len(), panic_at.unwrap_or(8));
                assert!(t.iter().enumerate().all(|(i, r)| *r.k == i as u32));
            }
            assert_clean(format_args!("extend {hint:?} {panic_at:?}"));
        }
    }
    for (len, real) in [(0usize, 5u32), (3, 8), (10, 3), (5, 5)] {
        {
            let arena = Arena::with_capacity(8192);
            let s = arena.alloc_soa_from_iter(WrongLen {
                inner: (0..real).map(drow),
                len,
            });
            assert_eq!(s.len(), len.min(real as usize));
            assert!(s.iter().enumerate().all(|(i, r)| *r.k == i as u32));
            drop(arena);
        }
        assert_clean(format_args!("arena from_iter len {len} real {real}"));
    }
}

#[test]
fn panicking_callbacks_at_every_call() {
    for at in 0..30usize {
        {
            let calls = Cell::new(0usize);
            let bump = || {
                let c = calls.get();
                calls.set(c + 1);
                if c == at {
                    planned_panic("callback panics");
                }
            };
            let mut v = vec_of(9);
            let _ = catch_unwind(AssertUnwindSafe(|| {
                v.retain(|r| {
                    bump();
                    *r.k % 3 != 0
                })
            }));
            let ks: Vec<u32> = v.slices().k.to_vec();
            assert!(
                ks.windows(2).all(|w| w[0] < w[1]),
                "retain broke the order: {ks:?}"
            );
            calls.set(0);
            let _ = catch_unwind(AssertUnwindSafe(|| {
                v.sort_unstable_by(|a, b| {
                    bump();
                    b.k.cmp(a.k)
                })
            }));
            let mut ks: Vec<u32> = v.slices().k.to_vec();
            ks.sort();
            ks.dedup();
            assert_eq!(ks.len(), v.len(), "sort_unstable lost a row");
            calls.set(0);
            let before = v.slices().k.to_vec();
            let r = catch_unwind(AssertUnwindSafe(|| {
                v.sort_by(|a, b| {
                    bump();
                    a.k.cmp(b.k)
                })
            }));
            if r.is_err() {
                assert_eq!(
                    v.slices().k,
                    &before[..],
                    "a panicking stable sort moved rows"
                );
            }
            calls.set(0);
            let _ = catch_unwind(AssertUnwindSafe(|| {
                v.resize_with(12, || {
                    bump();
                    drow(100)
                })
            }));
            calls.set(0);
            let mut p: SoaPool<DRow> = SoaPool::growable(2);
            let _ = catch_unwind(AssertUnwindSafe(|| {
                for k in 0..5 {
                    p.insert_with(|_| {
                        bump();
                        drow(k)
                    });
                }
            }));
            assert_eq!(p.iter().count(), p.len());
            let _ = catch_unwind(AssertUnwindSafe(|| {
                p.retain(|_, _| {
                    bump();
                    true
                })
            }));
            calls.set(0);
            let arena = Arena::with_capacity(8192);
            let _ = catch_unwind(AssertUnwindSafe(|| {
                arena.alloc_soa(6, |k| {
                    bump();
                    drow(k as u32)
                });
            }));
            calls.set(0);
            let _ = catch_unwind(AssertUnwindSafe(|| {
                arena.alloc_tiles::<TRow, 4, _>(6, |k| {
                    bump();
                    trow(k as u32)
                });
            }));
            let mut t: SoaTiles<TRow, 3> = (0..8).map(trow).collect();
            calls.set(0);
            let _ = catch_unwind(AssertUnwindSafe(|| {
                t.retain_mut(|r| {
                    bump();
                    *r.k % 2 == 0
                })
            }));
            let ks: Vec<u32> = t.iter().map(|r| *r.k).collect();
            assert!(
                ks.windows(2).all(|w| w[0] < w[1]),
                "tiles retain broke order: {ks:?}"
            );
            drop(arena);
        }
        assert_clean(format_args!("callbacks at {at}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Sorting: results.

#[test]
fn sort_unstable_matches_std_and_survives_inconsistent_comparators() {
    let mut rng = Lcg(7);
    // Under Miri a Fibonacci sample of the small-sort lengths, and one past them.
    let lens: Vec<usize> = if SMALL {
        vec![0, 1, 2, 3, 5, 8, 13, 21, 34, 60]
    } else {
        (0..200).chain([1000]).collect()
    };
    for len in lens {
        for spread in [1u64, 3, 1000] {
            let mut v: SoaVec<Key> = (0..len as u32)
                .map(|id| Key {
                    k: (rng.next() % spread) as u32,
                    id,
                })
                .collect();
            let mut model = keys(&v);
            let mut w = v.clone();
            v.sort_unstable();
            model.sort();
            assert_eq!(keys(&v), model, "sort_unstable len {len} spread {spread}");
            w.sort_unstable_by_key(|r| core::cmp::Reverse(*r.k));
            let ks: Vec<u32> = w.slices().k.to_vec();
            assert!(
                ks.windows(2).all(|p| p[0] >= p[1]),
                "by_key reverse, len {len}"
            );
            // Stable sort: equal keys keep their order.
            let mut s = w.clone();
            let mut sm = keys(&s);
            s.sort_by(|a, b| a.k.cmp(b.k));
            sm.sort_by_key(|&(k, _)| k);
            assert_eq!(keys(&s), sm, "sort_by stable, len {len}");
            // Random answers: still a permutation.
            let mut r = s.clone();
            let mut rr = Lcg(len as u64);
            r.sort_unstable_by(|_, _| match rr.next() % 3 {
                0 => core::cmp::Ordering::Less,
                1 => core::cmp::Ordering::Equal,
                _ => core::cmp::Ordering::Greater,
            });
            let mut a = keys(&r);
            let mut b = keys(&s);
            a.sort();
            b.sort();
            assert_eq!(a, b, "random comparator lost rows, len {len}");
            // std's stable sort may panic on a comparator that is no order: no row moved then.
            let before = keys(&r);
            let res = catch_unwind(AssertUnwindSafe(|| {
                r.sort_by(|_, _| match rr.next() % 3 {
                    0 => core::cmp::Ordering::Less,
                    _ => core::cmp::Ordering::Greater,
                })
            }));
            if res.is_err() {
                assert_eq!(keys(&r), before);
            }
            let mut a = keys(&r);
            a.sort();
            assert_eq!(a, b);
            // Indirect sort + permutation.
            let idx = s.sort_indices_by(|a, b| b.id.cmp(a.id));
            let mut q = s.clone();
            q.apply_permutation(&idx).unwrap();
            let ids: Vec<u32> = q.slices().id.to_vec();
            assert!(ids.windows(2).all(|p| p[0] > p[1]));
        }
    }
}

#[test]
fn apply_permutation_refuses_non_permutations() {
    let mut v: SoaVec<Key> = (0..5).map(|id| Key { k: id, id }).collect();
    assert!(v.apply_permutation(&[0, 1, 2, 3]).is_err());
    assert!(v.apply_permutation(&[0, 1, 2, 3, 5]).is_err());
    assert!(v.apply_permutation(&[0, 1, 2, 3, 3]).is_err());
    assert!(v.apply_permutation(&[0, 1, 2, 3, u32::MAX]).is_err());
    assert!(
        v.as_soa_slice_mut()
            .apply_permutation(&[4, 4, 4, 4, 4])
            .is_err()
    );
    assert_eq!(v.slices().id, &[0, 1, 2, 3, 4]);
    v.apply_permutation(&[4, 3, 2, 1, 0]).unwrap();
    assert_eq!(v.slices().id, &[4, 3, 2, 1, 0]);
}

// ---------------------------------------------------------------------------------------------
// Iterator and index edges.

#[test]
fn double_ended_iterators_meet_in_the_middle() {
    for len in 0..9u32 {
        {
            let mut v = vec_of(len);
            let mut it = v.iter();
            let mut seen = Vec::new();
            let mut front = true;
            while let Some(r) = if front { it.next() } else { it.next_back() } {
                seen.push(*r.k);
                front = !front;
                assert_eq!(it.len(), len as usize - seen.len());
            }
            assert!(it.next().is_none() && it.next_back().is_none());
            seen.sort();
            assert_eq!(seen, (0..len).collect::<Vec<_>>());
            let mut it = v.iter_mut();
            let mut count = 0;
            while let (Some(_), b) = (it.next(), it.next_back()) {
                count += 1 + usize::from(b.is_some());
            }
            assert_eq!(count, len as usize);
            assert!(v.iter().nth(len as usize).is_none());
            assert!(v.iter().nth(usize::MAX).is_none());

            let mut seen = Vec::new();
            let mut d = v.drain(..);
            loop {
                match (d.next(), d.next_back()) {
                    (Some(a), Some(b)) => {
                        seen.push(a.k);
                        seen.push(b.k);
                    }
                    (Some(a), None) => seen.push(a.k),
                    (None, _) => break,
                }
            }
            drop(d);
            seen.sort();
            assert_eq!(seen, (0..len).collect::<Vec<_>>());
            assert!(v.is_empty());

            let w = vec_of(len);
            let mut it = w.into_iter();
            let mut c = 0;
            while it.next_back().is_some() {
                c += 1;
                if it.next().is_some() {
                    c += 1;
                }
            }
            assert_eq!(c, len as usize);

            let t: SoaTiles<TRow, 3> = (0..len).map(trow).collect();
            let mut it = t.iter();
            let mut c = 0;
            while it.next().is_some() {
                c += 1;
                if it.next_back().is_some() {
                    c += 1;
                }
            }
            assert_eq!(c, len as usize);
            let mut tiles = t.tiles();
            let mut c = 0;
            while tiles.next_back().is_some() {
                c += 1;
                if tiles.next().is_some() {
                    c += 1;
                }
            }
            assert_eq!(c, len as usize / 3);
            assert_eq!(t.tail().k.len(), len as usize % 3);
        }
        assert_clean(format_args!("double ended len {len}"));
    }
}

#[test]
fn get_disjoint_mut_refuses_equal_and_out_of_range() {
    {
        let mut v = vec_of(4);
        assert!(v.get_disjoint_mut([1, 1]).is_none());
        assert!(v.get_disjoint_mut([0, 4]).is_none());
        assert!(v.get_disjoint_mut([usize::MAX, 0]).is_none());
        assert!(v.get_disjoint_mut([0, 1, 2, 0]).is_none());
        assert!(v.get_disjoint_mut::<0>([]).is_some());
        let [a, b] = v.get_disjoint_mut([3, 0]).unwrap();
        std::mem::swap(a.a, b.a);
        assert_eq!(*v.get(0).unwrap().k, 0);
        let mut tv: TrackedSoaVec<DRow> = vec_of(3).into();
        assert!(tv.get_disjoint_mut([2, 2]).is_none());
        assert!(tv.get_disjoint_mut([0, 3]).is_none());
        let mut p: SoaPool<DRow> = SoaPool::with_capacity(4);
        let h0 = p.insert(drow(0));
        let h1 = p.insert(drow(1));
        assert!(p.get_disjoint_mut([h0, h0]).is_none());
        drop(p.remove(h1));
        assert!(p.get_disjoint_mut([h0, h1]).is_none());
        let h2 = p.insert(drow(2));
        let [x, y] = p.get_disjoint_mut([h2, h0]).unwrap();
        assert_eq!((*x.k, *y.k), (2, 0));
    }
    assert_clean("disjoint");
}

#[test]
fn chunks_exact_every_length() {
    for len in 0..13u32 {
        let mut v: SoaVec<Key> = (0..len).map(|id| Key { k: id, id }).collect();
        let c = v.chunks_exact::<4>();
        assert_eq!(c.len(), len as usize / 4);
        assert_eq!(c.remainder().k.len(), len as usize % 4);
        let mut seen: Vec<u32> = v.chunks_exact::<4>().flat_map(|c| c.k.to_vec()).collect();
        seen.extend_from_slice(v.chunks_exact::<4>().remainder().k);
        assert_eq!(seen, (0..len).collect::<Vec<_>>());
        for c in v.chunks_exact_mut::<3>() {
            for k in c.k.iter_mut() {
                *k += 100;
            }
        }
        let rem = v.chunks_exact_mut::<3>().into_remainder();
        assert_eq!(rem.k.len(), len as usize % 3);
        for k in rem.k {
            *k += 100;
        }
        assert!(v.slices().k.iter().all(|&k| k >= 100));
        assert_eq!(v.chunks_exact::<1>().count(), len as usize);
        assert_eq!(v.chunks_exact::<64>().count(), 0);
        let s = v.as_soa_slice();
        if len > 2 {
            let sub = s.slice(1..len as usize - 1);
            assert_eq!(sub.chunks_exact::<2>().count(), (len as usize - 2) / 2);
        }
    }
}

#[test]
fn removing_the_last_row() {
    {
        let mut v = vec_of(3);
        assert_eq!(v.swap_remove(2).k, 2);
        assert_eq!(v.remove(1).k, 1);
        assert_eq!(v.swap_remove(0).k, 0);
        assert!(v.is_empty());
        assert!(catch_unwind(AssertUnwindSafe(|| v.swap_remove(0))).is_err());
        assert!(catch_unwind(AssertUnwindSafe(|| v.remove(0))).is_err());
        let mut t: SoaTiles<TRow, 2> = (0..3).map(trow).collect();
        assert_eq!(t.swap_remove(2).k, 2);
        assert_eq!(t.remove(1).k, 1);
        assert_eq!(t.swap_remove(0).k, 0);
        assert!(catch_unwind(AssertUnwindSafe(|| t.swap_remove(0))).is_err());
        let mut p: SoaPool<DRow> = SoaPool::with_capacity(2);
        let a = p.insert(drow(0));
        let b = p.insert(drow(1));
        assert_eq!(p.remove(b).unwrap().k, 1);
        assert_eq!(p.remove(a).unwrap().k, 0);
        assert!(p.remove(a).is_none());
        let c = p.insert(drow(2));
        assert_eq!(*p.get(c).unwrap().k, 2);
        assert!(p.get(a).is_none() && p.get(b).is_none());
    }
    assert_clean("last row");
}

// ---------------------------------------------------------------------------------------------
// Arena SoA slices: rewinds, resets, scopes.

#[test]
fn arena_soa_rows_drop_once_on_rewind_reset_and_scope() {
    {
        let mut arena = Arena::with_capacity(1 << 20);
        let m = arena.mark();
        {
            let mut s = arena.alloc_soa(5, |k| drow(k as u32));
            *s.get_mut(1).unwrap().k = 9;
            let t = arena.alloc_tiles::<TRow, 4, _>(6, |k| trow(k as u32));
            assert_eq!(t.tail().k, &[4, 5]);
        }
        assert_eq!(live(), 16);
        arena.rewind(m).unwrap();
        assert_eq!(live(), 0);
        {
            let mut sc = arena.scope();
            let s = sc.alloc_soa(3, |k| drow(k as u32));
            assert_eq!(s.len(), 3);
            sc.clear();
            let s = sc.alloc_soa(2, |k| drow(k as u32));
            assert_eq!(*s.get(1).unwrap().k, 1);
        }
        assert_eq!(live(), 0);
        // Many small blocks across pages.
        for _ in 0..n(50, 5) {
            arena.alloc_soa(20, |k| drow(k as u32));
        }
        assert_eq!(live(), n(50, 5) * 40);
        arena.reset();
        assert_eq!(live(), 0);
        let s = arena.alloc_soa(0, |_| drow(0));
        assert!(s.is_empty());
        drop(arena);
    }
    assert_clean("arena");
}

// ---------------------------------------------------------------------------------------------
// Change tracking results.

#[test]
fn tracked_vec_reports_every_written_block() {
    let mut v: TrackedSoaVec<Key> = (0..300).map(|id| Key { k: id, id }).collect();
    let check =
        |v: &mut TrackedSoaVec<Key>, op: &dyn Fn(&mut TrackedSoaVec<Key>), must: &[usize]| {
            let seen = v.tick();
            let before: Vec<(u32, u32)> = v.iter().map(|r| (*r.k, *r.id)).collect();
            op(v);
            let after: Vec<(u32, u32)> = v.iter().map(|r| (*r.k, *r.id)).collect();
            for (row, now) in after.iter().enumerate() {
                if before.get(row) != Some(now) {
                    assert!(
                        v.is_changed_since(0, row, seen),
                        "row {row} changed unreported"
                    );
                }
            }
            for &row in must {
                assert!(
                    v.is_changed_since(1, row, seen),
                    "row {row} must be reported"
                );
            }
        };
    check(
        &mut v,
        &|v| v.insert(10, Key { k: 1, id: 1 }),
        &[10, 200, 300],
    );
    check(
        &mut v,
        &|v| {
            v.remove(70);
        },
        &[70, 299],
    );
    check(
        &mut v,
        &|v| {
            v.swap_remove(5);
        },
        &[5],
    );
    check(&mut v, &|v| v.swap(1, 290), &[1, 290]);
    check(&mut v, &|v| *v.get_mut(150).unwrap().k = 0, &[150]);
    check(
        &mut v,
        &|v| v.slice_mut(120..130).slices_mut().k[0] = 7,
        &[120],
    );
    check(&mut v, &|v| v.column_mut::<0>()[250] = 3, &[]);
    check(&mut v, &|v| v.inner_mut().sort_unstable(), &[0, 298]);
    check(&mut v, &|v| v.push(Key { k: 5, id: 5 }), &[]);
    let seen = v.tick();
    assert!(v.changed_since(seen).next().is_none());
    let total: usize = v.changed_since(0).map(|c| c.rows.len()).sum();
    assert_eq!(total, 2 * v.len());
}

// ---------------------------------------------------------------------------------------------
// Serde: hostile input.

#[cfg(feature = "serde")]
mod hostile_serde {
    use super::*;
    use arena_kit_core::soa::serde::{columns, named_columns};
    use arena_kit_core::soa::{Col, Soa};
    use serde::Deserialize;
    use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Soa)]
    #[soa(crate = arena_kit_core, plain)]
    struct Row {
        a: u32,
        s: String,
        z: (),
    }

    impl<'de> Deserialize<'de> for Row {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let (a, s, z) = <(u32, String, ())>::deserialize(d)?;
            Ok(Row { a, s, z })
        }
    }

    #[test]
    fn columns_of_unequal_length_are_errors() {
        assert!(columns::deserialize::<Row, _>(json!([[1, 2], ["x"], [null, null]])).is_err());
        assert!(columns::deserialize::<Row, _>(json!([[1], ["x"], [null, null]])).is_err());
        assert!(columns::deserialize::<Row, _>(json!([[1], ["x"]])).is_err());
        assert!(columns::deserialize::<Row, _>(json!([[1], ["x"], [null], [4]])).is_err());
        assert!(columns::deserialize::<Row, _>(json!({"a": [1]})).is_err());
        let ok = columns::deserialize::<Row, _>(json!([[1, 2], ["x", "y"], [null, null]])).unwrap();
        assert_eq!(ok.len(), 2);
        assert!(named_columns::deserialize::<Row, _>(json!({"a": [1], "s": ["x"]})).is_err());
        assert!(
            named_columns::deserialize::<Row, _>(json!({"a": [1], "s": ["x"], "z": [null, null]}))
                .is_err()
        );
        assert!(
            named_columns::deserialize::<Row, _>(
                json!({"a": [1], "s": ["x"], "z": [null], "q": []})
            )
            .is_err()
        );
        let text = r#"{"a":[1],"s":["x"],"z":[null],"a":[2]}"#;
        let mut de = serde_json::Deserializer::from_str(text);
        assert!(named_columns::deserialize::<Row, _>(&mut de).is_err());
        let good = named_columns::deserialize::<Row, _>(
            json!({"z": [null, null], "s": ["x", "y"], "a": [1, 2]}),
        )
        .unwrap();
        assert_eq!(good.slices().s, &["x".to_string(), "y".to_string()]);
        let rows: SoaVec<Row> = serde_json::from_value(json!([[1, "x", null]])).unwrap();
        assert_eq!(rows.len(), 1);
        assert!(serde_json::from_value::<SoaVec<Row>>(json!([[1]])).is_err());
    }

    /// A sequence that claims `usize::MAX` elements and ends after `real`.
    struct Claims {
        real: usize,
        given: usize,
    }
    impl<'de> SeqAccess<'de> for Claims {
        type Error = serde::de::value::Error;
        fn next_element_seed<T: DeserializeSeed<'de>>(
            &mut self,
            seed: T,
        ) -> Result<Option<T::Value>, Self::Error> {
            if self.given == self.real {
                return Ok(None);
            }
            self.given += 1;
            seed.deserialize(serde::de::value::U32Deserializer::new(7))
                .map(Some)
        }
        fn size_hint(&self) -> Option<usize> {
            Some(usize::MAX)
        }
    }
    struct ClaimsDe(usize);
    impl<'de> Deserializer<'de> for ClaimsDe {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            v.visit_seq(Claims {
                real: self.0,
                given: 0,
            })
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map struct enum identifier ignored_any
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    struct Big {
        a: [u64; 64],
    }
    impl<'de> Deserialize<'de> for Big {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let x = u32::deserialize(d)?;
            Ok(Big {
                a: [u64::from(x); 64],
            })
        }
    }

    #[test]
    fn a_declared_huge_length_allocates_little() {
        let v: SoaVec<Big> = Deserialize::deserialize(ClaimsDe(3)).unwrap();
        assert_eq!(v.len(), 3);
        assert!(v.capacity() <= 4096, "trusted {} rows", v.capacity());
        assert!(
            v.capacity() * 512 <= 2 << 20,
            "trusted {} rows of 512 bytes",
            v.capacity()
        );
    }

    /// A hand-written row whose views serialize as tuples.
    #[derive(Debug, Clone, PartialEq)]
    struct PRow {
        a: u32,
        b: String,
    }
    impl Soa for PRow {
        type Columns = (Col<u32>, (Col<String>, ()));
        type Ref<'a> = (&'a u32, (&'a String, ()));
        type Mut<'a> = (&'a mut u32, (&'a mut String, ()));
        type Slices<'a> = (&'a [u32], (&'a [String], ()));
        type SlicesMut<'a> = (&'a mut [u32], (&'a mut [String], ()));
        fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> (u32, (String, ())) {
            (self.a, (self.b, ()))
        }
        fn from_columns(
            (a, (b, ())): (u32, (String, ())),
            _: arena_kit_core::soa::RowConversion<Self>,
        ) -> Self {
            PRow { a, b }
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
    impl<'de> Deserialize<'de> for PRow {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let (a, (b, ())) = <(u32, (String, ()))>::deserialize(d)?;
            Ok(PRow { a, b })
        }
    }

    #[test]
    fn tampered_pool_rows_are_refused() {
        let mut p: SoaPool<PRow> = SoaPool::with_capacity(4);
        let hs: Vec<_> = (0..3)
            .map(|a| {
                p.insert(PRow {
                    a,
                    b: a.to_string(),
                })
            })
            .collect();
        p.remove(hs[0]);
        let good = serde_json::to_value(&p).unwrap();
        let back: SoaPool<PRow> = serde_json::from_value(good.clone()).unwrap();
        assert_eq!(*back.get(hs[2]).unwrap().0, 2);
        let text = good.to_string();
        // Every small edit of a digit must decode to a consistent pool or be refused.
        let bytes = text.as_bytes();
        let mut accepted = 0;
        for (i, &c) in bytes.iter().enumerate() {
            if !c.is_ascii_digit() {
                continue;
            }
            // Under Miri: a valid row or slot index (0, 1) and one past them all (9).
            let digits: &[u8] = if SMALL { b"019" } else { b"01239" };
            for &d in digits {
                let mut t = bytes.to_vec();
                t[i] = d;
                let t = String::from_utf8(t).unwrap();
                if let Ok(mut q) = serde_json::from_str::<SoaPool<PRow>>(&t) {
                    accepted += 1;
                    assert_eq!(q.iter().count(), q.len());
                    let hs: Vec<_> = q.iter().map(|(h, _)| h).collect();
                    for (h, r) in q.iter() {
                        assert_eq!(*q.get(h).unwrap().0, *r.0);
                    }
                    assert_eq!(q.slices().0.len(), q.len());
                    for h in hs {
                        assert!(q.remove(h).is_some());
                    }
                    while q
                        .try_insert(PRow {
                            a: 0,
                            b: String::new(),
                        })
                        .is_ok()
                    {}
                }
            }
        }
        assert!(accepted > 0);
    }
}

// ---------------------------------------------------------------------------------------------
// A hand-written row type asking for the largest alignments a layout can have.

mod huge_align {
    use arena_kit_core::arena::{Arena, ArenaError};
    use arena_kit_core::soa::{Col, Soa, SoaAllocError, SoaPool, SoaVec, block_layout};

    /// One `u32` column aligned to `1 << SHIFT` (hand-written: the derive's `align` is a
    /// literal).
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Wide<const SHIFT: u32>(u32);

    impl<const SHIFT: u32> Soa for Wide<SHIFT> {
        type Columns = (Col<u32>, ());
        type Ref<'a> = (&'a u32, ());
        type Mut<'a> = (&'a mut u32, ());
        type Slices<'a> = (&'a [u32], ());
        type SlicesMut<'a> = (&'a mut [u32], ());
        const ALIGN: usize = 1 << SHIFT;
        fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> (u32, ()) {
            (self.0, ())
        }
        fn from_columns((a, ()): (u32, ()), _: arena_kit_core::soa::RowConversion<Self>) -> Self {
            Wide(a)
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

    /// Alignments no allocation can have (`1 << 63`: a layout's size rounded up to it passes
    /// `isize::MAX`; `1 << 62` and `1 << 40`: more than the address space holds in practice) are
    /// refused with an error by every `try_` constructor and carve; nothing panics or hands out
    /// memory, and an empty vector of such rows works (it allocates nothing).
    fn refused_everywhere<const SHIFT: u32>() {
        let align = 1usize << SHIFT;
        assert!(block_layout::<Wide<SHIFT>>(1).is_err() || SHIFT < 63);
        let e = SoaVec::<Wide<SHIFT>>::try_with_capacity(1).unwrap_err();
        assert!(
            matches!(
                e,
                SoaAllocError::CapacityOverflow { .. } | SoaAllocError::OutOfMemory { .. }
            ),
            "align {align:#x}: {e:?}"
        );
        let mut v = SoaVec::<Wide<SHIFT>>::new();
        assert!(v.try_push(Wide(1)).is_err(), "align {align:#x}");
        assert!(v.try_reserve(1).is_err());
        assert_eq!((v.len(), v.iter().count()), (0, 0));
        assert!(SoaPool::<Wide<SHIFT>>::try_with_capacity(1).is_err());
        let arena = Arena::with_capacity(4096);
        let before = arena.used();
        let carved = arena.try_alloc_soa(1, |i| Wide::<SHIFT>(i as u32));
        assert!(
            matches!(
                carved,
                Err(ArenaError::SizeOverflow { .. } | ArenaError::Full { .. })
            ),
            "align {align:#x}: {:?}",
            carved.map(|s| s.len())
        );
        assert_eq!(arena.used(), before);
    }

    #[test]
    fn alignments_no_allocation_can_have_are_refused_by_every_try_form() {
        refused_everywhere::<63>();
        // Miri does not run an allocation request aligned past 2^29 (unsupported, not
        // undefined); these two reach the global allocator, which refuses them natively.
        if !cfg!(miri) {
            refused_everywhere::<62>();
            refused_everywhere::<40>();
        }
    }
}
