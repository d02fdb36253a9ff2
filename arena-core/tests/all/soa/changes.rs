//! Change tracking (`TrackedSoaVec`, `TrackedSoaPool`) against a `Vec<T>` and a reference dirty
//! set over random operation sequences: after every step the rows equal the model's, the dirty
//! ranges equal the reference's for every tick closed so far, and every value that differs from
//! the snapshot taken when a tick closed lies in a reported range (nothing written goes unseen).
#![allow(missing_docs)] // test-only row types

use crate::panic_harness;
use crate::support::{miri_or, proptest_config};

use std::collections::HashSet;

use arena_kit_core::pool::Handle;
use arena_kit_core::soa::{BLOCK_ROWS, ChangedRows, TickTooOld, TrackedSoaPool, TrackedSoaVec};
use arena_kit_derive::Soa;
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core)]
struct Item {
    a: u32,
    b: u64,
    s: String,
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
    drop(items.slice_mut(70..200 - 70));
    items.swap(0, 129);
    assert_eq!(
        ranges(items.changed_since(seen)),
        [(0, 0..130), (1, 0..130), (2, 0..130)]
    );
    let seen = items.tick();
    drop(items.slice_mut(70..100));
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
    id: u32,
    #[soa(nested)]
    pos: Vec2,
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

#[derive(Debug, Clone)]
enum Op {
    Push(u32),
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
    Disjoint(usize, usize),
    WriteRange(usize, usize),
    WriteColumn(usize, u32),
    SlicesMut,
    SortInner,
    RetainInner,
    Tick,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u32>().prop_map(Op::Push),
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
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Disjoint(a, b)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::WriteRange(a, b)),
        2 => ((0usize..FIELDS), any::<u32>()).prop_map(|(f, v)| Op::WriteColumn(f, v)),
        1 => Just(Op::SlicesMut),
        1 => Just(Op::SortInner),
        1 => Just(Op::RetainInner),
        4 => Just(Op::Tick),
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

fn run_vec(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut tracked: TrackedSoaVec<Item> = TrackedSoaVec::new();
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
            Op::PushMany(n) => {
                let n = usize::from(n);
                reference.mark_rows(len..len + n);
                let new: Vec<Item> = (0..n as u32).map(|v| item(v + 1000)).collect();
                tracked.extend(new.iter().cloned());
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
                let row = tracked.get_mut(i).unwrap();
                *row.a = v;
                row.s.push('w');
                model[i].a = v;
                model[i].s.push('w');
            }
            Op::TouchRow(i) => {
                // Out of range: `None`, nothing marked.
                if i % (len + 1) < len {
                    reference.mark_rows(i % (len + 1)..i % (len + 1) + 1);
                }
                prop_assert_eq!(
                    tracked.get_mut(i % (len + 1)).is_some(),
                    i % (len + 1) < len
                );
            }
            Op::Disjoint(a, b) if len > 0 => {
                let (a, b) = (a % len, b % len);
                let got = tracked.get_disjoint_mut([a, b]);
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
                let slice = tracked.slice_mut(start..end);
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
                    0 => tracked.column_mut::<0>().iter_mut().for_each(|a| *a = v),
                    1 => tracked
                        .column_mut::<1>()
                        .iter_mut()
                        .for_each(|b| *b = u64::from(v)),
                    _ => tracked
                        .column_mut::<2>()
                        .iter_mut()
                        .for_each(|s| *s = v.to_string()),
                }
                for row in &mut model {
                    match f {
                        0 => row.a = v,
                        1 => row.b = u64::from(v),
                        _ => row.s = v.to_string(),
                    }
                }
            }
            Op::SlicesMut => {
                reference.mark_all(len);
                if let Some(a) = tracked.slices_mut().a.first_mut() {
                    *a = a.wrapping_add(1);
                    model[0].a = model[0].a.wrapping_add(1);
                }
            }
            Op::SortInner => {
                reference.mark_all(len);
                tracked.inner_mut().sort_by_key(|r| *r.a);
                model.sort_by_key(|r| r.a);
            }
            Op::RetainInner => {
                reference.mark_all(len);
                tracked.inner_mut().retain(|r| *r.a % 3 != 0);
                model.retain(|r| r.a % 3 != 0);
            }
            Op::Tick => {
                let closed = tracked.tick();
                prop_assert_eq!(closed, reference.now);
                reference.now += 1;
                snapshots.push((closed, model.clone()));
            }
            _ => {}
        }
        // The rows are the model's.
        let rows: Vec<Item> = tracked
            .iter()
            .map(|r| Item {
                a: *r.a,
                b: *r.b,
                s: r.s.clone(),
            })
            .collect();
        prop_assert_eq!(&rows, &model);
        prop_assert_eq!(tracked.current_tick(), reference.now);
        for (since, before) in &snapshots {
            let got = ranges(tracked.changed_since(*since));
            prop_assert_eq!(
                &got,
                &reference.changed_since(*since, model.len()),
                "since {}",
                since
            );
            // Every value that differs from the snapshot is in a reported range.
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
                        prop_assert!(tracked.is_changed_since(f, row, *since));
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
        ops in proptest::collection::vec(op(), 0..miri_or(60, 8))
    ) {
        run_vec(ops)?;
    }
}
