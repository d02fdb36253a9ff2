//! Property tests for the layout arithmetic: the suggested order reaches `min_size()`, and brute
//! force over every permutation finds nothing smaller.

use crate::support;

use arena_kit_core::layout::{FieldLayout, Repr, StructLayout, round_up};
use proptest::prelude::*;

/// A field as (size, align), laid out by the `repr(C)` rule (with an optional `packed` cap).
#[derive(Clone, Copy, Debug)]
struct Spec {
    size: usize,
    align: usize,
}

fn field() -> impl Strategy<Value = Spec> {
    (0u32..5, 0usize..4).prop_map(|(shift, k)| {
        let align = 1 << shift;
        Spec {
            size: align * k,
            align,
        }
    })
}

/// The `repr(C)` rule: each field at the next offset its alignment allows, the size rounded up
/// to the largest alignment. Returns the offsets and the size.
fn repr_c(fields: &[Spec], pack: Option<usize>) -> (Vec<usize>, usize, usize) {
    let mut offset = 0;
    let mut align = 1;
    let mut offsets = Vec::new();
    for f in fields {
        let a = pack.map_or(f.align, |p| p.min(f.align));
        offset = round_up(offset, a);
        offsets.push(offset);
        offset += f.size;
        align = align.max(a);
    }
    (offsets, round_up(offset, align), align)
}

/// Runs `f` on a `'static` slice made from `items`, then frees it (leaking it would fail Miri).
fn with_static<T: 'static, R>(items: Vec<T>, f: impl FnOnce(&'static [T]) -> R) -> R {
    let raw = Box::into_raw(items.into_boxed_slice());
    // SAFETY: `raw` comes from `Box::into_raw` and is freed only below, after `f` returned;
    // nothing `f` returns borrows the slice (`R` is an owned result in every caller).
    let result = f(unsafe { &*raw });
    // SAFETY: `raw` came from `Box::into_raw` and is no longer borrowed.
    drop(unsafe { Box::from_raw(raw) });
    result
}

fn with_layout<R>(fields: &[Spec], pack: Option<usize>, f: impl FnOnce(StructLayout) -> R) -> R {
    let (offsets, size, align) = repr_c(fields, pack);
    let names = ["a", "b", "c", "d", "e", "f", "g"];
    let list: Vec<FieldLayout> = fields
        .iter()
        .zip(&offsets)
        .enumerate()
        .map(|(i, (f, &o))| FieldLayout::new(names[i], "T", o, f.size, f.align))
        .collect();
    let repr = pack.map_or(Repr::C, |p| Repr::C.packed(p));
    with_static(list, |list| {
        f(StructLayout::new("S", repr, size, align, list))
    })
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

proptest! {
    #![proptest_config(support::proptest_config())]

    #[test]
    fn suggested_order_gives_min_size_and_nothing_beats_it(
        fields in proptest::collection::vec(field(), 0..=support::miri_or(6, 4)),
        pack in prop_oneof![Just(None), (0u32..3).prop_map(|s| Some(1usize << s))],
    ) {
        with_layout(&fields, pack, |layout| check_best_order(&fields, pack, layout))?;
    }

    #[test]
    fn memory_order_is_sorted_by_offset_and_report_mentions_every_field(
        fields in proptest::collection::vec(field(), 0..=support::miri_or(7, 3)),
    ) {
        with_layout(&fields, None, |layout| {
            let offsets: Vec<usize> = layout.memory_order().map(|f| f.offset).collect();
            prop_assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
            prop_assert_eq!(offsets.len(), fields.len());
            let report = layout.to_string();
            let rows = report.lines().filter(|l| l.ends_with("  T")).count();
            prop_assert_eq!(rows, fields.len());
            Ok(())
        })?;
    }
}

fn check_best_order(
    fields: &[Spec],
    pack: Option<usize>,
    layout: StructLayout,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        layout.padding(),
        layout.size() - fields.iter().map(|f| f.size).sum::<usize>()
    );

    let best: Vec<Spec> = layout
        .best_order()
        .map(|f| Spec {
            size: f.size,
            align: f.align,
        })
        .collect();
    prop_assert_eq!(best.len(), fields.len());
    prop_assert_eq!(repr_c(&best, pack).1, layout.min_size());

    for perm in permutations(fields.len()) {
        let reordered: Vec<Spec> = perm.iter().map(|&i| fields[i]).collect();
        prop_assert!(repr_c(&reordered, pack).1 >= layout.min_size());
    }
    prop_assert_eq!(layout.is_optimal(), layout.size() == layout.min_size());
    Ok(())
}

/// Hand-reordered `repr(C)` structs confirm the arithmetic against the compiler's `size_of`.
#[test]
fn compiler_agrees_with_the_repr_c_rule() {
    #[repr(C)]
    struct Bad(u8, f64, u8);
    #[repr(C)]
    struct Good(f64, u8, u8);
    #[repr(C)]
    struct Mixed(u16, u64, u8, u32);
    #[repr(C)]
    struct MixedBest(u64, u32, u16, u8);
    let spec = |s: &[(usize, usize)]| -> Vec<Spec> {
        s.iter()
            .map(|&(size, align)| Spec { size, align })
            .collect()
    };
    assert_eq!(
        repr_c(&spec(&[(1, 1), (8, 8), (1, 1)]), None).1,
        size_of::<Bad>()
    );
    assert_eq!(
        repr_c(&spec(&[(8, 8), (1, 1), (1, 1)]), None).1,
        size_of::<Good>()
    );
    with_layout(&spec(&[(2, 2), (8, 8), (1, 1), (4, 4)]), None, |mixed| {
        assert_eq!(mixed.size(), size_of::<Mixed>());
        assert_eq!(mixed.min_size(), size_of::<MixedBest>());
    });
}

/// A report longer than `Display`'s text window streams through in pieces without losing bytes.
#[test]
fn long_reports_stream_whole() {
    let fields: Vec<Spec> = (0..support::miri_or(60, 20))
        .map(|i| Spec {
            size: 1 << (i % 4),
            align: 1 << (i % 4),
        })
        .collect();
    let (offsets, size, align) = repr_c(&fields, None);
    let names: Vec<String> = (0..fields.len()).map(|i| format!("field_{i}_é")).collect();
    let report = with_static(names, |names| {
        let list: Vec<FieldLayout> = fields
            .iter()
            .zip(&offsets)
            .zip(names)
            .map(|((f, &o), name)| FieldLayout::new(String::as_str(name), "u8", o, f.size, f.align))
            .collect();
        with_static(list, |list| {
            StructLayout::new("Long", Repr::C, size, align, list).to_string()
        })
    });
    for i in 0..fields.len() {
        assert!(
            report.contains(&format!("field_{i}_é ")),
            "field {i} missing"
        );
    }
    assert!(report.ends_with("as an array of structs)"));
}
