//! Attacks from safe code that the SoA containers withstand: a hand-written `Soa` impl whose
//! view conversions panic in the middle of every operation that builds views, drains leaked
//! part-way and their vector used again, and blocks shrunk to nothing and grown again. Every
//! value is counted: each one made is dropped exactly once, or still held.
#![allow(missing_docs)]

use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::soa::{Col, Columns, RowConversion, Soa, SoaSliceMut, SoaTiles, SoaVec};
use arena_kit_derive::Soa;

const SMALL: bool = cfg!(miri);

thread_local! {
    /// Live counted values, by id: how many copies of each exist (must stay 0 or 1).
    static LIVE: std::cell::RefCell<BTreeMap<u32, i32>> = const {
        std::cell::RefCell::new(BTreeMap::new())
    };
    /// View conversions left before one panics (`usize::MAX`: never).
    static VIEWS_LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// A value whose copies are counted by id.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Counted(u32);

impl Counted {
    fn new(id: u32) -> Self {
        LIVE.with(|l| *l.borrow_mut().entry(id).or_insert(0) += 1);
        Counted(id)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.with(|l| {
            let mut l = l.borrow_mut();
            let n = l
                .get_mut(&self.0)
                .expect("a value dropped that was never made");
            *n -= 1;
            assert!(*n >= 0, "value {} dropped twice", self.0);
            if *n == 0 {
                l.remove(&self.0);
            }
        });
    }
}

/// The ids of the values alive now.
fn live() -> Vec<u32> {
    LIVE.with(|l| {
        let l = l.borrow();
        assert!(l.values().all(|&n| n == 1), "a value exists twice: {l:?}");
        l.keys().copied().collect()
    })
}

/// Counts one view conversion; panics when the budget set by `panic_after` runs out.
fn view_call() {
    let left = VIEWS_LEFT.get();
    if left == 0 {
        VIEWS_LEFT.set(usize::MAX);
        panic!("view conversion");
    }
    VIEWS_LEFT.set(left.saturating_sub(1));
}

fn panic_after(views: usize) {
    VIEWS_LEFT.set(views);
}

/// A hand-written row: a counted value and a key, viewed through conversions that may panic.
#[derive(Debug)]
struct Row {
    value: Counted,
    key: u32,
}

type RowCols = (Col<Counted>, (Col<u32>, ()));

impl Soa for Row {
    type Columns = RowCols;
    type Ref<'a> = (&'a Counted, &'a u32);
    type Mut<'a> = (&'a mut Counted, &'a mut u32);
    type Slices<'a> = (&'a [Counted], &'a [u32]);
    type SlicesMut<'a> = (&'a mut [Counted], &'a mut [u32]);
    fn into_columns(self, _: RowConversion<Self>) -> (Counted, (u32, ())) {
        (self.value, (self.key, ()))
    }
    fn from_columns((value, (key, ())): (Counted, (u32, ())), _: RowConversion<Self>) -> Self {
        Row { value, key }
    }
    fn view<'a>((v, (k, ())): <RowCols as Columns>::Ref<'a>) -> Self::Ref<'a> {
        view_call();
        (v, k)
    }
    fn view_mut<'a>((v, (k, ())): <RowCols as Columns>::Mut<'a>) -> Self::Mut<'a> {
        view_call();
        (v, k)
    }
    fn view_slices<'a>((v, (k, ())): <RowCols as Columns>::Slices<'a>) -> Self::Slices<'a> {
        view_call();
        (v, k)
    }
    fn view_slices_mut<'a>(
        (v, (k, ())): <RowCols as Columns>::SlicesMut<'a>,
    ) -> Self::SlicesMut<'a> {
        view_call();
        (v, k)
    }
}

fn row(id: u32) -> Row {
    Row {
        value: Counted::new(id),
        key: id.wrapping_mul(2_654_435_761) % 7,
    }
}

/// The rows of `v` as (id, key), read through the columns (no view conversion).
fn rows_of(v: &SoaVec<Row>) -> Vec<(u32, u32)> {
    panic_after(usize::MAX);
    let (values, keys) = v.slices();
    values
        .iter()
        .map(|c| c.0)
        .zip(keys.iter().copied())
        .collect()
}

/// Every operation that builds views, with the conversion panicking at its `k`th call for every
/// `k` it makes: the vector keeps whole rows, each id once, with its own key, and every value
/// made is either held or dropped once.
#[test]
fn panicking_view_conversions_leave_whole_rows_in_every_view_building_operation() {
    let rows: u32 = if SMALL { 5 } else { 40 };
    type Op = fn(&mut SoaVec<Row>);
    let ops: [(&str, Op); 12] = [
        ("retain", |v| v.retain(|r| *r.1 != 3)),
        ("retain_mut", |v| {
            v.retain_mut(|r| {
                *r.1 += 1;
                *r.1 % 3 != 0
            })
        }),
        ("dedup_by_key", |v| v.dedup_by_key(|r| *r.1 / 2)),
        ("sort_by", |v| v.sort_by(|a, b| a.1.cmp(b.1))),
        ("sort_by_key", |v| v.sort_by_key(|r| *r.1)),
        ("sort_unstable_by", |v| {
            v.sort_unstable_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)))
        }),
        ("sort_indices_by + apply_permutation", |v| {
            let order = v.sort_indices_by(|a, b| a.1.cmp(b.1));
            v.apply_permutation(&order).unwrap();
        }),
        ("get_disjoint_mut", |v| {
            if let Some([a, b, c]) = v.get_disjoint_mut([0, 2, 4]) {
                std::mem::swap(a.0, b.0);
                std::mem::swap(b.1, c.1);
            }
        }),
        ("iter_mut", |v| v.iter_mut().for_each(|r| *r.1 ^= 1)),
        ("iter().rev()", |v| {
            assert!(v.iter().rev().count() <= v.len())
        }),
        ("chunks_exact_mut", |v| {
            let mut chunks = v.chunks_exact_mut::<2>();
            for (values, keys) in &mut chunks {
                values.swap(0, 1);
                keys.swap(0, 1);
            }
            let _ = chunks.into_remainder();
        }),
        ("split_at_mut + slices_mut", |v| {
            let (mut a, mut b): (SoaSliceMut<'_, Row>, SoaSliceMut<'_, Row>) = v.split_at_mut(3);
            let (av, _) = a.slices_mut();
            let (bv, _) = b.slices_mut();
            if let (Some(x), Some(y)) = (av.first_mut(), bv.first_mut()) {
                std::mem::swap(x, y);
            }
        }),
    ];
    for (name, op) in ops {
        for k in 0.. {
            let mut v: SoaVec<Row> = (0..rows).map(row).collect();
            let before = rows_of(&v);
            panic_after(k);
            let panicked = catch_unwind(AssertUnwindSafe(|| op(&mut v))).is_err();
            panic_after(usize::MAX);
            let after = rows_of(&v);
            let mut ids: Vec<u32> = after.iter().map(|&(id, _)| id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(
                ids.len(),
                after.len(),
                "{name} at {k}: a row twice: {after:?}"
            );
            let held: Vec<u32> = live();
            assert_eq!(
                ids, held,
                "{name} at {k}: the values held are not the rows'"
            );
            if !matches!(
                name,
                "retain_mut" | "get_disjoint_mut" | "iter_mut" | "chunks_exact_mut"
            ) && !name.starts_with("split_at_mut")
            {
                // Operations that only move whole rows keep each id with its own key.
                for &(id, key) in &after {
                    let was = before.iter().find(|&&(i, _)| i == id).expect("an old row");
                    assert_eq!(was.1, key, "{name} at {k}: row {id} got another key");
                }
            }
            drop(v);
            assert!(
                live().is_empty(),
                "{name} at {k}: values left after the drop"
            );
            if !panicked {
                break;
            }
        }
    }
}

/// A derived row with a counted field, for the drain and growth attacks.
#[derive(Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Spark {
    value: Counted,
    #[soa(nested)]
    at: At,
}

#[derive(Soa)]
#[soa(crate = arena_kit_core, tiled, align = 64)]
struct At {
    x: f32,
    tag: u8,
}

fn spark(id: u32) -> Spark {
    Spark {
        value: Counted::new(id),
        at: At {
            x: id as f32,
            tag: id as u8,
        },
    }
}

/// A `Drain` leaked after taking rows from both ends leaves the vector holding the rows before
/// the range (the rest leak, as `Vec`'s do, and none is dropped twice); the vector then grows,
/// shrinks and drains again as if nothing had happened.
#[test]
fn a_leaked_drain_leaves_a_vector_that_keeps_working() {
    let rows: u32 = if SMALL { 12 } else { 300 };
    let mut v: SoaVec<Spark> = (0..rows).map(spark).collect();
    let mut d = v.drain(2..rows as usize - 3);
    let front = d.next().unwrap();
    let back = d.next_back().unwrap();
    assert_eq!((front.value.0, back.value.0), (2, rows - 4));
    std::mem::forget(d);
    drop((front, back));
    assert_eq!(v.len(), 2);
    assert_eq!(
        v.slices().value.iter().map(|c| c.0).collect::<Vec<_>>(),
        [0, 1]
    );
    // The leaked rows (3..rows - 4 and the tail) are still counted: nothing dropped them.
    assert_eq!(live().len(), rows as usize - 2);
    let leaked: Vec<u32> = live().into_iter().filter(|&id| id >= 2).collect();
    v.extend((1000..1000 + rows).map(spark));
    v.shrink_to_fit();
    let taken: Vec<u32> = v.drain(1..).map(|s| s.value.0).collect();
    assert_eq!(taken.len(), rows as usize + 1);
    assert_eq!(v.slices().at.x, &[0.0]);
    assert_eq!(v.slices().at.x.as_ptr().addr() % 64, 0);
    drop(v);
    assert_eq!(live(), leaked, "only the leaked rows are left");
    // The leaked values are lost for good; forget them in the count too.
    LIVE.with(|l| l.borrow_mut().clear());
}

/// Shrinking to no rows frees the block; pushing again allocates a new one. Through the remap
/// growth of large blocks and back, the rows, their alignment and their drops stay exact, for
/// the vector and the tiles alike.
#[test]
fn shrinking_to_nothing_and_growing_again_keeps_rows_aligned_and_counted() {
    let rows: u32 = if SMALL { 12 } else { 20_000 };
    let mut v: SoaVec<Spark> = SoaVec::new();
    let mut t: SoaTiles<Spark, 4> = SoaTiles::new();
    for round in 0..3u32 {
        for i in 0..rows {
            let id = round * 100_000 + i;
            v.push(spark(id));
            t.push(spark(id + 50_000));
        }
        v.insert(1, spark(round * 100_000 + 90_000));
        assert_eq!(v.remove(1).value.0, round * 100_000 + 90_000);
        assert_eq!(v.slices().at.x.as_ptr().addr() % 64, 0);
        assert_eq!(v.slices().at.tag.as_ptr().addr() % 64, 0);
        assert!(
            v.iter()
                .enumerate()
                .all(|(i, r)| r.value.0 == round * 100_000 + i as u32)
        );
        assert!(
            t.iter()
                .enumerate()
                .all(|(i, r)| r.value.0 == round * 100_000 + 50_000 + i as u32)
        );
        v.truncate(rows as usize / 2);
        v.shrink_to_fit();
        assert_eq!(v.capacity(), rows as usize / 2);
        v.clear();
        v.shrink_to_fit();
        assert_eq!(v.capacity(), 0);
        t.clear();
        t.shrink_to_fit();
        assert_eq!(t.capacity(), 0);
        assert!(t.tail_mut().value.is_empty());
        assert!(live().is_empty(), "round {round}: values left after clear");
    }
}
