//! Indirect sorts on SoA data: `sort_indices_by(_key)` against the index sort of a `Vec<T>`,
//! `apply_permutation` against gathering a `Vec<T>`, refused index lists changing nothing, a
//! panicking comparator moving nothing, and every value dropped exactly once.
#![allow(missing_docs)] // test-only row types

use crate::support::{self, DropCounter, proptest_config};

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use arena_kit_core::soa::{PermutationError, SoaVec};
use arena_kit_derive::Soa;
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core)]
pub struct Sprite {
    pub depth: i8,
    pub name: String,
}

fn sprites(depths: &[i8]) -> (Vec<Sprite>, SoaVec<Sprite>) {
    let rows: Vec<Sprite> = depths
        .iter()
        .zip(0..)
        .map(|(&depth, i)| Sprite {
            depth,
            name: format!("s{i}"),
        })
        .collect();
    let soa = rows.iter().cloned().collect();
    (rows, soa)
}

proptest! {
    #![proptest_config(proptest_config())]

    /// The indices equal the stable index sort of a `Vec` by the same key, nothing moves, and
    /// applying them gives the `Vec` gathered in that order.
    #[test]
    fn indirect_sorts_match_vec(
        depths in prop::collection::vec(-3i8..3, 0..support::miri_or(40, 8)),
        descending in any::<bool>(),
    ) {
        let (rows, mut soa) = sprites(&depths);
        let mut expected: Vec<u32> = (0..rows.len() as u32).collect();
        expected.sort_by(|&a, &b| {
            let (a, b) = (rows[a as usize].depth, rows[b as usize].depth);
            if descending { b.cmp(&a) } else { a.cmp(&b) }
        });
        let by = soa.sort_indices_by(|a, b| if descending { b.depth.cmp(a.depth) } else { a.depth.cmp(b.depth) });
        prop_assert_eq!(&by, &expected);
        if !descending {
            prop_assert_eq!(&soa.sort_indices_by_key(|s| *s.depth), &expected);
            prop_assert_eq!(&soa.as_soa_slice().sort_indices_by_key(|s| *s.depth), &expected);
        }
        prop_assert_eq!(soa.slices().depth, &depths[..], "nothing moved");
        soa.apply_permutation(&by).unwrap();
        let gathered: Vec<Sprite> = by.iter().map(|&i| rows[i as usize].clone()).collect();
        prop_assert_eq!(soa.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
            gathered.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
        // The slice form does the same, undoing it with the inverse permutation.
        let mut inverse = vec![0u32; by.len()];
        for (k, &i) in by.iter().enumerate() {
            inverse[i as usize] = k as u32;
        }
        soa.as_soa_slice_mut().apply_permutation(&inverse).unwrap();
        prop_assert_eq!(soa.slices().depth, &depths[..], "the inverse restores the rows");
    }

    /// Any list that is not a permutation is refused with the first problem, and nothing moves.
    #[test]
    fn non_permutations_are_refused_and_change_nothing(
        depths in prop::collection::vec(-3i8..3, 1..support::miri_or(20, 6)),
        list in prop::collection::vec(0u32..24, 0..support::miri_or(24, 8)),
    ) {
        let (_, mut soa) = sprites(&depths);
        let len = depths.len();
        let mut seen = vec![false; len];
        let is_permutation = list.len() == len
            && list.iter().all(|&i| (i as usize) < len && !std::mem::replace(&mut seen[i as usize], true));
        for result in [soa.apply_permutation(&list), soa.as_soa_slice_mut().apply_permutation(&list)] {
            match result {
                Ok(()) => prop_assert!(is_permutation),
                Err(e) => {
                    prop_assert!(!is_permutation);
                    prop_assert!(e.to_string().contains("exactly once"), "{}", e);
                    prop_assert_eq!(soa.slices().depth, &depths[..]);
                }
            }
            if is_permutation {
                break;
            }
        }
    }
}

#[test]
fn the_errors_say_which_index_is_wrong() {
    let (_, mut soa) = sprites(&[1, 2, 3]);
    assert_eq!(
        soa.apply_permutation(&[0, 1]),
        Err(PermutationError::Length {
            rows: 3,
            indices: 2
        })
    );
    assert_eq!(
        soa.apply_permutation(&[0, 3, 1]),
        Err(PermutationError::OutOfRange {
            position: 1,
            index: 3,
            rows: 3
        })
    );
    assert_eq!(
        soa.apply_permutation(&[2, 0, 2]),
        Err(PermutationError::Repeated {
            position: 2,
            index: 2
        })
    );
    let empty: SoaVec<Sprite> = SoaVec::new();
    assert!(
        empty
            .sort_indices_by(|a, b| a.depth.cmp(b.depth))
            .is_empty()
    );
    assert_eq!(empty.try_sort_indices_by_key(|s| *s.depth), Ok(vec![]));
}

/// A comparator that panics midway: the rows have not moved (the indices are sorted, not the
/// rows), and the values are all still there, dropped once with the vector.
#[test]
fn a_panicking_comparator_moves_nothing() {
    #[derive(Soa)]
    #[soa(crate = arena_kit_core)]
    struct Tracked {
        key: u32,
        drop: DropCounter,
    }
    let drops = Rc::new(Cell::new(0));
    let n = support::miri_or(64, 12);
    let mut v: SoaVec<Tracked> = (0..n as u64)
        .map(|i| Tracked {
            key: (i * 7 % 5) as u32,
            drop: DropCounter::new(i, &drops),
        })
        .collect();
    let mut calls = 0;
    let r = catch_unwind(AssertUnwindSafe(|| {
        v.sort_indices_by(|a, b| {
            calls += 1;
            assert!(calls < 10, "comparator gave up");
            a.key.cmp(b.key)
        })
    }));
    assert!(r.is_err());
    let ids: Vec<u64> = v.iter().map(|t| t.drop.id).collect();
    assert_eq!(ids, (0..n as u64).collect::<Vec<_>>());
    // A permutation of droppable rows moves values, drops none.
    let reversed: Vec<u32> = (0..n as u32).rev().collect();
    v.apply_permutation(&reversed).unwrap();
    assert_eq!(drops.get(), 0);
    assert_eq!(
        v.as_soa_slice().get(0).map(|t| t.drop.id),
        Some(n as u64 - 1)
    );
    drop(v);
    assert_eq!(drops.get(), n);
}
