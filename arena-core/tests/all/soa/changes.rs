//! Change tracking (`TrackedSoaVec`, `TrackedSoaTiles`, `TrackedSoaPool`) against a `Vec<T>` and a reference dirty
//! set over random operation sequences: after every step the rows equal the model's, the dirty
//! ranges equal the reference's for every tick closed so far, and every value that differs from
//! the snapshot taken when a tick closed lies in a reported range (nothing written goes unseen).
#![allow(missing_docs)] // test-only row types

use crate::panic_harness;
use crate::support::{miri_or, proptest_config};

use std::collections::HashSet;

use arena_kit_core::pool::Handle;
use arena_kit_core::soa::{
    BLOCK_ROWS, ChangedRows, TickTooOld, TrackedSoaPool, TrackedSoaTiles, TrackedSoaVec,
};
use arena_kit_derive::Soa;
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Item {
    // `pub`: `column_mut::<K>()` lends only a `pub` field's column.
    pub a: u32,
    pub b: u64,
    pub s: String,
}

const FIELDS: usize = 3;

fn item(v: u32) -> Item {
    Item {
        a: v,
        b: u64::from(v) * 3,
        s: v.to_string(),
    }
}

/// The field `f` of a row, comparable across fields.
fn field(row: &Item, f: usize) -> String {
    match f {
        0 => row.a.to_string(),
        1 => row.b.to_string(),
        _ => row.s.clone(),
    }
}

fn ranges(changed: impl Iterator<Item = ChangedRows>) -> Vec<(usize, std::ops::Range<usize>)> {
    changed.map(|c| (c.field, c.rows)).collect()
}

#[test]
fn rows_10_to_20_written_through_row_views_report_only_their_block() {
    let mut items: TrackedSoaVec<Item> = (0..300).map(item).collect();
    let seen = items.tick();
    for row in 10..20 {
        let view = items.get_mut(row).unwrap();
        *view.a += 1;
    }
    let changed: Vec<ChangedRows> = items.changed_since(seen).collect();
    let names = ["a", "b", "s"];
    let expected: Vec<ChangedRows> = (0..FIELDS)
        .map(|field| ChangedRows {
            field,
            name: Some(names[field]),
            rows: 0..BLOCK_ROWS,
        })
        .collect();
    assert_eq!(changed, expected);
    assert!(items.is_changed_since(2, 19, seen));
    assert!(!items.is_changed_since(0, 64, seen));
    // Closing the tick: nothing is reported after it.
    let later = items.tick();
    assert_eq!(items.changed_since(later).count(), 0);
    // Still reported against the older tick.
    assert_eq!(items.changed_since(seen).count(), FIELDS);
}

#[test]
fn one_column_marks_only_that_field_and_slices_mut_marks_all() {
    let mut items: TrackedSoaVec<Item> = (0..130).map(item).collect();
    let seen = items.tick();
    for b in items.column_mut::<1>() {
        *b += 1;
    }
    assert_eq!(ranges(items.changed_since(seen)), [(1, 0..130)]);
    let seen = items.tick();
    items.slices_mut().s[0].push('!');
    assert_eq!(
        ranges(items.changed_since(seen)),
        [(0, 0..130), (1, 0..130), (2, 0..130)]
    );
    let seen = items.tick();
    let _ = items.slice_mut(70..130);
    items.swap(0, 129);
    assert_eq!(
        ranges(items.changed_since(seen)),
        [(0, 0..130), (1, 0..130), (2, 0..130)]
    );
    let seen = items.tick();
    let _ = items.slice_mut(70..100);
    assert_eq!(
        ranges(items.changed_since(seen)),
        [(0, 64..128), (1, 64..128), (2, 64..128)]
    );
}

#[derive(Debug, Clone, Copy, PartialEq, Soa)]
#[soa(crate = arena_kit_core)]
struct Vec2 {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Soa)]
#[soa(crate = arena_kit_core)]
struct Body {
    pub id: u32,
    #[soa(nested)]
    pub pos: Vec2,
}

#[test]
fn a_nested_field_is_one_tracked_field() {
    let mut bodies: TrackedSoaVec<Body> = (0..3)
        .map(|i| Body {
            id: i,
            pos: Vec2 { x: 0.0, y: 0.0 },
        })
        .collect();
    let seen = bodies.tick();
    let pos = bodies.column_mut::<1>();
    pos.x[2] = 1.0;
    pos.y[2] = 2.0;
    let changed: Vec<ChangedRows> = bodies.changed_since(seen).collect();
    assert_eq!(
        changed,
        [ChangedRows {
            field: 1,
            name: Some("pos"),
            rows: 0..3
        }]
    );
    assert_eq!(bodies.slices().pos.y[2], 2.0);
}

#[test]
fn bypassing_marks_nothing_and_tick_zero_reports_everything() {
    let mut items: TrackedSoaVec<Item> = (0..10).map(item).collect();
    assert_eq!(items.changed_since(0).count(), FIELDS);
    let seen = items.tick();
    items.bypass_change_tracking().slices_mut().a[3] = 7;
    assert_eq!(items.changed_since(seen).count(), 0);
    assert_eq!(items.slices().a[3], 7);
    let empty: TrackedSoaVec<Item> = TrackedSoaVec::new();
    assert_eq!(empty.changed_since(0).count(), 0);
}

// ---- the model test ----

/// One step of the model test. The first group is what every indexed tracked container does;
/// the vector and the tiles each have a group of their own (a step the container under test
/// does not have is not generated for it).
#[derive(Debug, Clone)]
enum Op {
    Push(u32),
    TryPush(u32),
    PushMany(u8),
    Pop,
    Insert(usize, u32),
    Remove(usize),
    SwapRemove(usize),
    Swap(usize, usize),
    Truncate(usize),
    Clear,
    WriteRow(usize, u32),
    TouchRow(usize),
    RetainInner,
    Tick,
    // `TrackedSoaVec` only
    Disjoint(usize, usize),
    WriteRange(usize, usize),
    WriteColumn(usize, u32),
    SlicesMut,
    SortInner,
    // `TrackedSoaTiles` only
    TilesMut(u32),
    TailMut(u32),
    IterMut,
}

/// The steps every indexed tracked container has, with their weights.
fn common_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u32>().prop_map(Op::Push),
        1 => any::<u32>().prop_map(Op::TryPush),
        2 => any::<u8>().prop_map(Op::PushMany),
        1 => Just(Op::Pop),
        1 => (any::<usize>(), any::<u32>()).prop_map(|(i, v)| Op::Insert(i, v)),
        1 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::SwapRemove),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Swap(a, b)),
        1 => any::<usize>().prop_map(Op::Truncate),
        1 => Just(Op::Clear),
        3 => (any::<usize>(), any::<u32>()).prop_map(|(i, v)| Op::WriteRow(i, v)),
        1 => any::<usize>().prop_map(Op::TouchRow),
        1 => Just(Op::RetainInner),
        4 => Just(Op::Tick),
    ]
}

fn vec_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        22 => common_op(),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Disjoint(a, b)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::WriteRange(a, b)),
        2 => ((0usize..FIELDS), any::<u32>()).prop_map(|(f, v)| Op::WriteColumn(f, v)),
        1 => Just(Op::SlicesMut),
        1 => Just(Op::SortInner),
    ]
}

fn tile_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        22 => common_op(),
        1 => any::<u32>().prop_map(Op::TilesMut),
        2 => any::<u32>().prop_map(Op::TailMut),
        1 => Just(Op::IterMut),
    ]
}

/// The reference dirty set: a tick per field per block, marked by the rules the module docs
/// state, written out per operation.
struct Reference {
    now: u64,
    stamps: Vec<Vec<u64>>,
}

impl Reference {
    fn new() -> Self {
        Reference {
            now: 1,
            stamps: vec![Vec::new(); FIELDS],
        }
    }

    fn mark(&mut self, field: usize, block: usize) {
        let column = &mut self.stamps[field];
        if column.len() <= block {
            column.resize(block + 1, 0);
        }
        column[block] = self.now;
    }

    fn mark_rows(&mut self, rows: std::ops::Range<usize>) {
        for row in rows {
            for f in 0..FIELDS {
                self.mark(f, row / BLOCK_ROWS);
            }
        }
    }

    fn mark_field(&mut self, field: usize, len: usize) {
        for block in 0..len.div_ceil(BLOCK_ROWS) {
            self.mark(field, block);
        }
    }

    fn mark_all(&mut self, len: usize) {
        for f in 0..FIELDS {
            self.mark_field(f, len);
        }
    }

    fn changed_since(&self, since: u64, len: usize) -> Vec<(usize, std::ops::Range<usize>)> {
        let mut out = Vec::new();
        for f in 0..FIELDS {
            let mut run: Option<std::ops::Range<usize>> = None;
            for block in 0..len.div_ceil(BLOCK_ROWS) {
                let dirty = self.stamps[f].get(block).copied().unwrap_or(0) > since;
                let rows = block * BLOCK_ROWS..((block + 1) * BLOCK_ROWS).min(len);
                match (&mut run, dirty) {
                    (Some(r), true) => r.end = rows.end,
                    (None, true) => run = Some(rows),
                    (Some(_), false) => out.push((f, run.take().unwrap())),
                    (None, false) => {}
                }
            }
            if let Some(r) = run {
                out.push((f, r));
            }
        }
        out
    }
}

/// A row view, owned.
fn row_of(r: ItemRef<'_>) -> Item {
    Item {
        a: *r.a,
        b: *r.b,
        s: r.s.clone(),
    }
}

/// A tracked container under test: the calls every one has (the same names on both), and
/// `special` for the steps of its own group.
trait Subject {
    fn push(&mut self, v: Item);
    fn try_push(&mut self, v: Item) -> bool;
    fn extend_from(&mut self, rows: Vec<Item>);
    fn pop(&mut self) -> Option<Item>;
    fn insert(&mut self, i: usize, v: Item);
    fn remove(&mut self, i: usize) -> Item;
    fn swap_remove(&mut self, i: usize) -> Item;
    fn swap(&mut self, a: usize, b: usize);
    fn truncate(&mut self, n: usize);
    fn clear(&mut self);
    /// `get_mut(i)`, and if it is a row: `a = v`, a `'w'` pushed onto `s`.
    fn write_row(&mut self, i: usize, v: u32) -> bool;
    fn touch_row(&mut self, i: usize) -> bool;
    fn retain_inner(&mut self);
    fn tick(&mut self) -> u64;
    fn now(&self) -> u64;
    fn rows(&self) -> Vec<Item>;
    fn changed(&self, since: u64) -> Vec<(usize, std::ops::Range<usize>)>;
    fn is_changed(&self, field: usize, row: usize, since: u64) -> bool;
    /// A step of the container's own group, marking the reference and changing the model.
    fn special(
        &mut self,
        op: Op,
        model: &mut Vec<Item>,
        reference: &mut Reference,
    ) -> Result<(), TestCaseError>;
}

/// The common calls, forwarded to the wrapper's methods of the same names.
macro_rules! forward_subject {
    () => {
        fn push(&mut self, v: Item) {
            Self::push(self, v);
        }
        fn try_push(&mut self, v: Item) -> bool {
            Self::try_push(self, v).is_ok()
        }
        fn extend_from(&mut self, rows: Vec<Item>) {
            self.extend(rows);
        }
        fn pop(&mut self) -> Option<Item> {
            Self::pop(self)
        }
        fn insert(&mut self, i: usize, v: Item) {
            Self::insert(self, i, v);
        }
        fn remove(&mut self, i: usize) -> Item {
            Self::remove(self, i)
        }
        fn swap_remove(&mut self, i: usize) -> Item {
            Self::swap_remove(self, i)
        }
        fn swap(&mut self, a: usize, b: usize) {
            Self::swap(self, a, b);
        }
        fn truncate(&mut self, n: usize) {
            Self::truncate(self, n);
        }
        fn clear(&mut self) {
            Self::clear(self);
        }
        fn write_row(&mut self, i: usize, v: u32) -> bool {
            let Some(row) = self.get_mut(i) else {
                return false;
            };
            *row.a = v;
            row.s.push('w');
            true
        }
        fn touch_row(&mut self, i: usize) -> bool {
            self.get_mut(i).is_some()
        }
        fn retain_inner(&mut self) {
            self.inner_mut().retain(|r| *r.a % 3 != 0);
        }
        fn tick(&mut self) -> u64 {
            Self::tick(self)
        }
        fn now(&self) -> u64 {
            self.current_tick()
        }
        fn rows(&self) -> Vec<Item> {
            self.iter().map(row_of).collect()
        }
        fn changed(&self, since: u64) -> Vec<(usize, std::ops::Range<usize>)> {
            ranges(self.changed_since(since))
        }
        fn is_changed(&self, field: usize, row: usize, since: u64) -> bool {
            self.is_changed_since(field, row, since)
        }
    };
}

impl Subject for TrackedSoaVec<Item> {
    forward_subject!();

    fn special(
        &mut self,
        op: Op,
        model: &mut Vec<Item>,
        reference: &mut Reference,
    ) -> Result<(), TestCaseError> {
        let len = model.len();
        match op {
            Op::Disjoint(a, b) if len > 0 => {
                let (a, b) = (a % len, b % len);
                let got = self.get_disjoint_mut([a, b]);
                prop_assert_eq!(got.is_some(), a != b);
                if let Some([ra, rb]) = got {
                    *ra.b += 1;
                    *rb.b += 2;
                    model[a].b += 1;
                    model[b].b += 2;
                    reference.mark_rows(a..a + 1);
                    reference.mark_rows(b..b + 1);
                } else {
                    // Equal indices are refused before anything is lent: but the wrapper marks
                    // the rows it was asked for; the reference does the same.
                    reference.mark_rows(a..a + 1);
                }
            }
            Op::WriteRange(a, b) => {
                let (a, b) = (a % (len + 1), b % (len + 1));
                let (start, end) = (a.min(b), a.max(b));
                reference.mark_rows(start..end);
                let slice = self.slice_mut(start..end);
                for b in slice.into_slices_mut().b {
                    *b ^= 1;
                }
                for row in &mut model[start..end] {
                    row.b ^= 1;
                }
            }
            Op::WriteColumn(f, v) => {
                reference.mark_field(f, len);
                match f {
                    0 => self.column_mut::<0>().iter_mut().for_each(|a| *a = v),
                    1 => self
                        .column_mut::<1>()
                        .iter_mut()
                        .for_each(|b| *b = u64::from(v)),
                    _ => self
                        .column_mut::<2>()
                        .iter_mut()
                        .for_each(|s| *s = v.to_string()),
                }
                for row in model.iter_mut() {
                    match f {
                        0 => row.a = v,
                        1 => row.b = u64::from(v),
                        _ => row.s = v.to_string(),
                    }
                }
            }
            Op::SlicesMut => {
                reference.mark_all(len);
                if let Some(a) = self.slices_mut().a.first_mut() {
                    *a = a.wrapping_add(1);
                    model[0].a = model[0].a.wrapping_add(1);
                }
            }
            Op::SortInner => {
                reference.mark_all(len);
                self.inner_mut().sort_by_key(|r| *r.a);
                model.sort_by_key(|r| r.a);
            }
            _ => {}
        }
        Ok(())
    }
}

impl<const N: usize> Subject for TrackedSoaTiles<Item, N> {
    forward_subject!();

    fn special(
        &mut self,
        op: Op,
        model: &mut Vec<Item>,
        reference: &mut Reference,
    ) -> Result<(), TestCaseError> {
        let len = model.len();
        let tail = len - len % N;
        match op {
            Op::TilesMut(v) => {
                reference.mark_all(len);
                // Writes the first lane of every full tile.
                for (t, tile) in self.tiles_mut().enumerate() {
                    tile.b[0] = u64::from(v);
                    model[t * N].b = u64::from(v);
                }
            }
            Op::TailMut(v) => {
                reference.mark_rows(tail..len);
                for a in self.tail_mut().a.iter_mut() {
                    *a = v;
                }
                for row in &mut model[tail..] {
                    row.a = v;
                }
            }
            Op::IterMut => {
                reference.mark_all(len);
                if let Some(row) = self.iter_mut().last() {
                    row.s.push('i');
                    model[len - 1].s.push('i');
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Runs `ops` on `tracked`, a `Vec<Item>` and the reference, and after every step checks that
/// the rows are the model's, the tick is the reference's, the dirty ranges are the reference's
/// for every tick closed so far, and every value that differs from the snapshot taken when a
/// tick closed lies in a reported range (nothing written goes unseen).
fn run(mut tracked: impl Subject, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut model: Vec<Item> = Vec::new();
    let mut reference = Reference::new();
    // The rows as they were when each tick closed.
    let mut snapshots: Vec<(u64, Vec<Item>)> = vec![(0, Vec::new())];
    for op in ops {
        let len = model.len();
        match op {
            Op::Push(v) => {
                reference.mark_rows(len..len + 1);
                tracked.push(item(v));
                model.push(item(v));
            }
            Op::TryPush(v) => {
                reference.mark_rows(len..len + 1);
                prop_assert!(tracked.try_push(item(v)));
                model.push(item(v));
            }
            Op::PushMany(n) => {
                let n = usize::from(n);
                reference.mark_rows(len..len + n);
                let new: Vec<Item> = (0..n as u32).map(|v| item(v + 1000)).collect();
                tracked.extend_from(new.clone());
                model.extend(new);
            }
            Op::Pop => {
                if len > 0 {
                    reference.mark_rows(len - 1..len);
                }
                prop_assert_eq!(tracked.pop(), model.pop());
            }
            Op::Insert(i, v) => {
                let i = i % (len + 1);
                reference.mark_rows(i..len + 1);
                tracked.insert(i, item(v));
                model.insert(i, item(v));
            }
            Op::Remove(i) if len > 0 => {
                let i = i % len;
                reference.mark_rows(i..len);
                prop_assert_eq!(tracked.remove(i), model.remove(i));
            }
            Op::SwapRemove(i) if len > 0 => {
                let i = i % len;
                reference.mark_rows(i..i + 1);
                reference.mark_rows(len - 1..len);
                prop_assert_eq!(tracked.swap_remove(i), model.swap_remove(i));
            }
            Op::Swap(a, b) if len > 0 => {
                let (a, b) = (a % len, b % len);
                reference.mark_rows(a..a + 1);
                reference.mark_rows(b..b + 1);
                tracked.swap(a, b);
                model.swap(a, b);
            }
            Op::Truncate(n) => {
                let n = n % (len + 1);
                reference.mark_rows(n..len);
                tracked.truncate(n);
                model.truncate(n);
            }
            Op::Clear => {
                reference.mark_rows(0..len);
                tracked.clear();
                model.clear();
            }
            Op::WriteRow(i, v) if len > 0 => {
                let i = i % len;
                reference.mark_rows(i..i + 1);
                prop_assert!(tracked.write_row(i, v));
                model[i].a = v;
                model[i].s.push('w');
            }
            Op::TouchRow(i) => {
                // Out of range: `None`, nothing marked.
                let i = i % (len + 1);
                if i < len {
                    reference.mark_rows(i..i + 1);
                }
                prop_assert_eq!(tracked.touch_row(i), i < len);
            }
            Op::RetainInner => {
                reference.mark_all(len);
                tracked.retain_inner();
                model.retain(|r| r.a % 3 != 0);
            }
            Op::Tick => {
                let closed = tracked.tick();
                prop_assert_eq!(closed, reference.now);
                reference.now += 1;
                snapshots.push((closed, model.clone()));
            }
            op => tracked.special(op, &mut model, &mut reference)?,
        }
        prop_assert_eq!(&tracked.rows(), &model);
        prop_assert_eq!(tracked.now(), reference.now);
        for (since, before) in &snapshots {
            let got = tracked.changed(*since);
            prop_assert_eq!(
                &got,
                &reference.changed_since(*since, model.len()),
                "since {}",
                since
            );
            for (row, now) in model.iter().enumerate() {
                for f in 0..FIELDS {
                    let differs = before.get(row).is_none_or(|b| field(b, f) != field(now, f));
                    if differs {
                        prop_assert!(
                            got.iter().any(|(gf, r)| *gf == f && r.contains(&row)),
                            "field {} row {} changed since tick {} but is not reported",
                            f,
                            row,
                            since
                        );
                        prop_assert!(tracked.is_changed(f, row, *since));
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn tracked_soa_vec_reports_what_the_reference_dirty_set_says(
        ops in proptest::collection::vec(vec_op(), 0..miri_or(60, 8))
    ) {
        run(TrackedSoaVec::<Item>::new(), ops)?;
    }

    #[test]
    fn tracked_soa_tiles_of_8_report_what_the_reference_dirty_set_says(
        ops in proptest::collection::vec(tile_op(), 0..miri_or(60, 8))
    ) {
        run(TrackedSoaTiles::<Item, 8>::new(), ops)?;
    }

    /// Tiles of 3 straddle the 64-row blocks.
    #[test]
    fn tracked_soa_tiles_of_3_straddling_blocks_report_what_the_reference_says(
        ops in proptest::collection::vec(tile_op(), 0..miri_or(60, 8))
    ) {
        run(TrackedSoaTiles::<Item, 3>::new(), ops)?;
    }
}

#[test]
fn tiles_written_through_row_views_10_to_20_report_only_their_block() {
    let mut items: TrackedSoaTiles<Item, 8> = (0..300).map(item).collect();
    let seen = items.tick();
    for row in 10..20 {
        *items.get_mut(row).unwrap().a += 1;
    }
    assert_eq!(
        ranges(items.changed_since(seen)),
        [(0, 0..BLOCK_ROWS), (1, 0..BLOCK_ROWS), (2, 0..BLOCK_ROWS)]
    );
    // The partial last tile (rows 296..300) is in block 4.
    let seen = items.tick();
    items.tail_mut().a[0] = 0;
    assert_eq!(
        ranges(items.changed_since(seen)),
        [(0, 256..300), (1, 256..300), (2, 256..300)]
    );
    // Reading marks nothing; bypassing marks nothing.
    let seen = items.tick();
    assert_eq!(items.tiles().count(), 37);
    items.bypass_change_tracking().tail_mut().a[1] = 5;
    assert_eq!(items.changed_since(seen).count(), 0);
    assert_eq!(*items.get(297).unwrap().a, 5);
    // Tiles of 3: 65 rows end in a partial tile of rows 63 and 64, one in each block.
    let mut threes: TrackedSoaTiles<Item, 3> = (0..65).map(item).collect();
    let seen = threes.tick();
    assert_eq!(threes.tail_mut().a.len(), 2);
    assert_eq!(
        ranges(threes.changed_since(seen)),
        [(0, 0..65), (1, 0..65), (2, 0..65)]
    );
}

// ---- the pool: inserted and removed handles ----

#[test]
fn a_pool_keeps_inserted_and_removed_handles_for_two_ticks() {
    let mut pool: TrackedSoaPool<Item> = TrackedSoaPool::with_capacity(200);
    let first: Vec<Handle<Item>> = (0..100).map(|v| pool.insert(item(v))).collect();
    let t1 = pool.tick();
    assert_eq!(t1, 1);
    let late = pool.insert(item(500));
    assert_eq!(pool.remove(first[3]).unwrap().a, 3);
    assert!(pool.remove(first[3]).is_none()); // already gone: not recorded twice
    let t2 = pool.tick();
    pool.retain(|_, row| *row.a != 7);
    let list = |since| -> (Vec<Handle<Item>>, Vec<Handle<Item>>) {
        (
            pool.inserted_since(since).unwrap().collect(),
            pool.removed_since(since).unwrap().collect(),
        )
    };
    assert_eq!(list(t1), (vec![late], vec![first[3], first[7]]));
    assert_eq!(list(t2), (vec![], vec![first[7]]));
    assert_eq!(pool.inserted_since(t2).unwrap().count(), 0);
    // Tick 3 is open: ticks 2 and 3 are kept, so tick 1 is the oldest to ask about.
    assert_eq!(pool.current_tick(), 3);
    assert_eq!(
        pool.inserted_since(0).err(),
        Some(TickTooOld {
            asked: 0,
            oldest: 1
        })
    );
    let err = pool.removed_since(0).err().unwrap();
    let text = err.to_string();
    assert!(text.contains("tick 0 is too old"), "{text}");
    assert!(text.contains("ask about tick 1 or later"), "{text}");
    // A tick not yet closed has nothing after it.
    assert_eq!(pool.inserted_since(3).unwrap().count(), 0);
    // The rows moved by the removals are reported; the untouched block after them is not
    // (retain lent every row, so ask before it).
    pool.tick();
    let seen = pool.tick();
    let h = first[90];
    *pool.get_mut(h).unwrap().b = 0;
    let row = pool.iter().position(|(x, _)| x == h).unwrap();
    assert_eq!(
        ranges(pool.changed_since(seen)),
        (0..FIELDS)
            .map(|f| {
                let block = row / BLOCK_ROWS * BLOCK_ROWS;
                (f, block..(block + BLOCK_ROWS).min(pool.len()))
            })
            .collect::<Vec<_>>()
    );
    // Clearing records every live handle as removed.
    let live: Vec<Handle<Item>> = pool.iter().map(|(h, _)| h).collect();
    let seen = pool.tick();
    pool.clear();
    assert_eq!(pool.removed_since(seen).unwrap().collect::<Vec<_>>(), live);
}

#[derive(Debug, Clone)]
enum PoolOp {
    Insert(u32),
    Remove(usize),
    RemoveStale(usize),
    Write(usize, u32),
    WriteColumn(u32),
    Retain(u8),
    Clear,
    Tick,
}

fn pool_op() -> impl Strategy<Value = PoolOp> {
    prop_oneof![
        6 => any::<u32>().prop_map(PoolOp::Insert),
        3 => any::<usize>().prop_map(PoolOp::Remove),
        1 => any::<usize>().prop_map(PoolOp::RemoveStale),
        3 => (any::<usize>(), any::<u32>()).prop_map(|(i, v)| PoolOp::Write(i, v)),
        1 => any::<u32>().prop_map(PoolOp::WriteColumn),
        1 => any::<u8>().prop_map(PoolOp::Retain),
        1 => Just(PoolOp::Clear),
        3 => Just(PoolOp::Tick),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Event {
    Inserted,
    Removed,
}

/// The (handle, row, value) of every live value when a tick closed.
type PoolSnapshot = Vec<(Handle<Item>, usize, Item)>;

fn run_pool(ops: Vec<PoolOp>) -> Result<(), TestCaseError> {
    let mut pool: TrackedSoaPool<Item> = TrackedSoaPool::growable(16);
    // The model: live handles with their values, in no particular order.
    let mut live: Vec<(Handle<Item>, Item)> = Vec::new();
    let mut dead: Vec<Handle<Item>> = Vec::new();
    let mut events: Vec<(u64, Event, Handle<Item>)> = Vec::new();
    let mut now = 1;
    // Each closed tick with the (handle, row, value) of every live value then.
    let mut snapshots: Vec<(u64, PoolSnapshot)> = vec![(0, Vec::new())];
    for op in ops {
        match op {
            PoolOp::Insert(v) => {
                let h = pool.insert(item(v));
                live.push((h, item(v)));
                events.push((now, Event::Inserted, h));
            }
            PoolOp::Remove(i) if !live.is_empty() => {
                let (h, value) = live.swap_remove(i % live.len());
                prop_assert_eq!(pool.remove(h), Some(value));
                dead.push(h);
                events.push((now, Event::Removed, h));
            }
            PoolOp::RemoveStale(i) if !dead.is_empty() => {
                prop_assert_eq!(pool.remove(dead[i % dead.len()]), None);
            }
            PoolOp::Write(i, v) if !live.is_empty() => {
                let n = live.len();
                let (h, value) = &mut live[i % n];
                *pool.get_mut(*h).unwrap().a = v;
                value.a = v;
            }
            PoolOp::WriteColumn(v) => {
                for b in pool.column_mut::<1>() {
                    *b = u64::from(v);
                }
                for (_, value) in &mut live {
                    value.b = u64::from(v);
                }
            }
            PoolOp::Retain(m) => {
                let m = u32::from(m % 4) + 2;
                pool.retain(|_, row| *row.a % m != 0);
                for (h, value) in &live {
                    if value.a % m == 0 {
                        dead.push(*h);
                    }
                }
                // The pool visits rows in its own order: compare removed handles as a set.
                let gone: HashSet<Handle<Item>> = live
                    .iter()
                    .filter(|(_, value)| value.a % m == 0)
                    .map(|(h, _)| *h)
                    .collect();
                let recorded: HashSet<Handle<Item>> = pool
                    .removed_since(now - 1)
                    .unwrap()
                    .filter(|h| gone.contains(h))
                    .collect();
                prop_assert_eq!(&recorded, &gone);
                // Record them in the model in the pool's order.
                let mut order: Vec<Handle<Item>> = pool.removed_since(now - 1).unwrap().collect();
                order.retain(|h| gone.contains(h));
                events.extend(order.into_iter().map(|h| (now, Event::Removed, h)));
                live.retain(|(_, value)| value.a % m != 0);
            }
            PoolOp::Clear => {
                let order: Vec<Handle<Item>> = pool.iter().map(|(h, _)| h).collect();
                pool.clear();
                events.extend(order.iter().map(|&h| (now, Event::Removed, h)));
                dead.extend(live.drain(..).map(|(h, _)| h));
            }
            PoolOp::Tick => {
                let closed = pool.tick();
                prop_assert_eq!(closed, now);
                now += 1;
                let rows = pool
                    .iter()
                    .enumerate()
                    .map(|(row, (h, r))| {
                        (
                            h,
                            row,
                            Item {
                                a: *r.a,
                                b: *r.b,
                                s: r.s.clone(),
                            },
                        )
                    })
                    .collect();
                snapshots.push((closed, rows));
            }
            _ => {}
        }
        prop_assert_eq!(pool.len(), live.len());
        for (h, value) in &live {
            let r = pool.get(*h).unwrap();
            prop_assert_eq!(
                (*r.a, *r.b, r.s.as_str()),
                (value.a, value.b, value.s.as_str())
            );
        }
        for h in &dead {
            prop_assert!(!pool.contains(*h));
        }
        // The recorded handles for every tick still kept, and the error for older ones.
        for since in now.saturating_sub(4)..=now {
            for (kind, got) in [
                (
                    Event::Inserted,
                    pool.inserted_since(since).map(|i| i.collect::<Vec<_>>()),
                ),
                (
                    Event::Removed,
                    pool.removed_since(since).map(|i| i.collect::<Vec<_>>()),
                ),
            ] {
                if since + 2 < now {
                    prop_assert_eq!(
                        got,
                        Err(TickTooOld {
                            asked: since,
                            oldest: now - 2
                        })
                    );
                } else {
                    let expected: Vec<Handle<Item>> = events
                        .iter()
                        .filter(|(t, k, _)| *t > since && *k == kind)
                        .map(|&(_, _, h)| h)
                        .collect();
                    prop_assert_eq!(got, Ok(expected));
                }
            }
        }
        // Every value whose row or field differs from a snapshot is reported.
        let rows: Vec<(Handle<Item>, Item)> = pool
            .iter()
            .map(|(h, r)| {
                (
                    h,
                    Item {
                        a: *r.a,
                        b: *r.b,
                        s: r.s.clone(),
                    },
                )
            })
            .collect();
        for (since, before) in &snapshots {
            for (row, (h, now_value)) in rows.iter().enumerate() {
                let old = before.iter().find(|(bh, _, _)| bh == h);
                for f in 0..FIELDS {
                    let differs = match old {
                        Some((_, old_row, old_value)) => {
                            *old_row != row || field(old_value, f) != field(now_value, f)
                        }
                        None => true,
                    };
                    if differs {
                        prop_assert!(
                            pool.is_changed_since(f, row, *since),
                            "field {} row {} changed since tick {} but is not reported",
                            f,
                            row,
                            since
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn tracked_soa_pool_reports_inserted_removed_and_moved_rows(
        ops in proptest::collection::vec(pool_op(), 0..miri_or(80, 8))
    ) {
        run_pool(ops)?;
    }
}

// ---- panics in user code ----

mod panics {
    use super::*;
    use panic_harness::{Row, at_every_call, check_row, tick};

    const ROWS: u32 = if cfg!(miri) { 3 } else { 70 };

    type VecState = (TrackedSoaVec<Row>, u64, Vec<u32>);

    fn vec_setup() -> VecState {
        let mut v: TrackedSoaVec<Row> = (0..ROWS).map(Row::new).collect();
        let since = v.tick();
        let keys = v.slices().2.to_vec();
        (v, since, keys)
    }

    /// Consistent, and every row not where it was (or new) reported in every field.
    fn vec_check((v, since, keys): &VecState) {
        let mut ids = HashSet::new();
        for (row, r) in v.iter().enumerate() {
            let key = check_row(r);
            assert!(
                ids.insert(r.0.id()) && ids.insert(r.1.0.id()),
                "a value in two rows"
            );
            if keys.get(row) != Some(&key) {
                for f in 0..3 {
                    assert!(
                        v.is_changed_since(f, row, *since),
                        "row {row} moved unreported"
                    );
                }
            }
        }
    }

    fn vec_case(name: &str, op: impl Fn(&mut TrackedSoaVec<Row>)) {
        at_every_call(name, vec_setup, |(v, _, _)| op(v), vec_check);
    }

    #[test]
    fn tracked_soa_vec_stays_consistent_and_marked_after_a_panic_at_every_user_call() {
        let last = ROWS as usize - 1;
        vec_case("push", |v| v.push(Row::new(99)));
        vec_case("insert", |v| v.insert(1, Row::new(99)));
        vec_case("remove", |v| drop(v.remove(1)));
        vec_case("swap_remove", |v| drop(v.swap_remove(0)));
        vec_case("pop", |v| drop(v.pop()));
        vec_case("truncate", |v| v.truncate(2));
        vec_case("clear", |v| v.clear());
        vec_case("extend", |v| {
            v.extend((0..3).map(|k| {
                tick();
                Row::new(100 + k)
            }))
        });
        vec_case("write through get_mut", |v| {
            let row = v.get_mut(last).unwrap();
            *row.2 += 1000; // the key no longer matches the snapshot: must be reported
            *row.1.1 += 1000;
            tick();
        });
        vec_case("retain through inner_mut", |v| {
            v.inner_mut().retain(|r| {
                tick();
                *r.2 % 2 == 0
            })
        });
    }

    type PoolState = (TrackedSoaPool<Row>, u64, Vec<(Handle<Row>, usize, u32)>);

    fn pool_setup() -> PoolState {
        let mut p = TrackedSoaPool::with_capacity(ROWS as usize + 4);
        for k in 0..ROWS {
            p.insert(Row::new(k));
        }
        let since = p.tick();
        let before = p
            .iter()
            .enumerate()
            .map(|(row, (h, r))| (h, row, *r.2))
            .collect();
        (p, since, before)
    }

    /// Consistent; the recorded removals are exactly the handles gone; moved rows reported.
    fn pool_check((p, since, before): &PoolState) {
        let removed: HashSet<Handle<Row>> = p.removed_since(*since).unwrap().collect();
        for &(h, old_row, _) in before {
            assert_eq!(
                p.contains(h),
                !removed.contains(&h),
                "removal of {h:?} misrecorded"
            );
            if p.contains(h) {
                let row = p.iter().position(|(x, _)| x == h).unwrap();
                if row != old_row {
                    for f in 0..3 {
                        assert!(
                            p.is_changed_since(f, row, *since),
                            "row {row} moved unreported"
                        );
                    }
                }
            }
        }
        for (h, r) in p.iter() {
            check_row(r);
            assert!(p.contains(h));
        }
        let inserted: Vec<Handle<Row>> = p.inserted_since(*since).unwrap().collect();
        for h in inserted {
            assert!(p.contains(h) || removed.contains(&h));
        }
    }

    fn pool_case(name: &str, op: impl Fn(&mut PoolState)) {
        at_every_call(name, pool_setup, op, pool_check);
    }

    #[test]
    fn tracked_soa_pool_records_exactly_the_removals_after_a_panic_at_every_user_call() {
        pool_case("retain", |(p, _, _)| {
            p.retain(|_, r| {
                tick();
                *r.2 % 2 == 0
            })
        });
        pool_case("remove", |(p, _, before)| drop(p.remove(before[0].0)));
        pool_case("clear", |(p, _, _)| p.clear());
        pool_case("insert", |(p, _, _)| {
            p.insert(Row::new(99));
        });
        pool_case("insert_with", |(p, _, _)| {
            p.insert_with(|_| {
                tick();
                Row::new(98)
            });
        });
    }
}

// ---- out of range, huge indices ----

#[test]
fn out_of_range_calls_panic_or_miss_and_leave_the_versions_as_they_were() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let mut items: TrackedSoaVec<Item> = (0..100).map(item).collect();
    let seen = items.tick();
    assert!(items.get_mut(usize::MAX).is_none());
    assert!(items.get_mut(100).is_none());
    assert!(items.get_disjoint_mut([0, usize::MAX]).is_none());
    type Call = fn(&mut TrackedSoaVec<Item>);
    let calls: [Call; 6] = [
        |v| drop(v.remove(usize::MAX)),
        |v| drop(v.swap_remove(100)),
        |v| v.insert(usize::MAX, item(0)),
        |v| v.swap(0, usize::MAX),
        |v| {
            let _ = v.slice_mut(usize::MAX..);
        },
        |v| {
            let _ = v.slice_mut(90..usize::MAX);
        },
    ];
    for call in calls {
        assert!(catch_unwind(AssertUnwindSafe(|| call(&mut items))).is_err());
    }
    items.truncate(usize::MAX);
    assert_eq!(items.len(), 100);
    // A refused call marks nothing.
    assert_eq!(items.changed_since(seen).count(), 0);
    assert!(!items.is_changed_since(0, usize::MAX, 0));
    assert_eq!(items.changed_since(u64::MAX).count(), 0);
    let pool: TrackedSoaPool<Item> = TrackedSoaPool::with_capacity(4);
    assert_eq!(pool.inserted_since(u64::MAX).unwrap().count(), 0);
}
