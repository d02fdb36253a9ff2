//! Attacks on the indirect sorts (`soa/indirect.rs`): comparators that are no order at all or
//! re-enter the rows they compare, keys whose destructors count, rows of zero-sized fields, index
//! lists at the edges of `u32`, and permutations applied to a part of the rows.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows::Nothing;
use crate::support::{self, DropCounter, Rng};

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use arena_kit_core::soa::{PermutationError, SoaVec};
use arena_kit_derive::Soa;

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core)]
pub struct Keyed {
    pub key: u32,
    pub id: u64,
}

fn keyed(n: usize) -> SoaVec<Keyed> {
    (0..n as u64)
        .map(|id| Keyed {
            key: (id * 7919 % 13) as u32,
            id,
        })
        .collect()
}

fn is_permutation(order: &[u32], n: usize) -> bool {
    let mut seen = vec![false; n];
    order.len() == n
        && order
            .iter()
            .all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true))
}

/// A comparator that answers at random (no order at all) still gets back a permutation of the
/// rows, or a panic from the standard sort; either way nothing moved, and the indices it returns
/// apply.
#[test]
fn a_comparator_that_is_no_order_still_yields_a_permutation() {
    let n = support::miri_or(300, 20);
    let mut v = keyed(n);
    let mut rng = Rng(7);
    for _ in 0..support::miri_or(20, 2) {
        let r = catch_unwind(AssertUnwindSafe(|| {
            v.sort_indices_by(|_, _| match rng.below(3) {
                0 => std::cmp::Ordering::Less,
                1 => std::cmp::Ordering::Equal,
                _ => std::cmp::Ordering::Greater,
            })
        }));
        let ids: Vec<u64> = v.slices().id.to_vec();
        assert_eq!(ids, (0..n as u64).collect::<Vec<_>>(), "nothing moved");
        if let Ok(order) = r {
            assert!(is_permutation(&order, n));
            v.apply_permutation(&order).unwrap();
            let mut moved: Vec<u64> = v.slices().id.to_vec();
            moved.sort_unstable();
            assert_eq!(moved, (0..n as u64).collect::<Vec<_>>());
            v = keyed(n);
        }
    }
}

/// The comparator and the key function read the same rows again (a nested indirect sort of the
/// vector being sorted, its slices, its length): all shared reads, and the outer sort's result is
/// still right.
#[test]
fn comparators_that_reenter_the_rows_they_sort() {
    let n = support::miri_or(64, 10);
    let v = keyed(n);
    let nested = Cell::new(0usize);
    let order = v.sort_indices_by(|a, b| {
        if nested.get() < 3 {
            nested.set(nested.get() + 1);
            let inner = v.sort_indices_by_key(|r| std::cmp::Reverse(*r.key));
            assert!(is_permutation(&inner, n));
        }
        assert_eq!(v.len(), n);
        assert!(v.slices().key.contains(a.key));
        a.key.cmp(b.key)
    });
    let mut expected: Vec<u32> = (0..n as u32).collect();
    expected.sort_by_key(|&i| v.slices().key[i as usize]);
    assert_eq!(order, expected);
    let by_key = v.as_soa_slice().sort_indices_by_key(|r| {
        let again = v.as_soa_slice().sort_indices_by(|x, y| x.id.cmp(y.id));
        assert_eq!(again.len(), n);
        *r.key
    });
    assert_eq!(by_key, expected);
}

/// Keys with destructors: every key is dropped exactly once, also when the key function panics
/// partway (the keys made so far) or a key's `Ord` panics during the sort.
#[test]
fn keys_with_destructors_are_dropped_once_whatever_panics() {
    struct Key(
        u32,
        #[allow(dead_code, reason = "counts its drop")] DropCounter,
    );
    impl PartialEq for Key {
        fn eq(&self, o: &Self) -> bool {
            self.0 == o.0
        }
    }
    impl Eq for Key {}
    impl PartialOrd for Key {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Key {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            assert!(self.0 != 999 && o.0 != 999, "a key that refuses to compare");
            self.0.cmp(&o.0)
        }
    }
    let n = support::miri_or(50, 10);
    let v = keyed(n);
    let drops = Rc::new(Cell::new(0));
    // The key function panics on the row with id 5: the five keys made before it are dropped.
    let r = catch_unwind(AssertUnwindSafe(|| {
        v.sort_indices_by_key(|r| {
            assert!(*r.id != 5, "no key for 5");
            Key(*r.key, DropCounter::new(*r.id, &drops))
        })
    }));
    assert!(r.is_err());
    assert_eq!(drops.get(), 5);
    // A key's `cmp` panics during the sort: every key made is dropped.
    drops.set(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        v.sort_indices_by_key(|r| {
            let k = if *r.id == 3 { 999 } else { *r.key };
            Key(k, DropCounter::new(*r.id, &drops))
        })
    }));
    assert!(r.is_err());
    assert_eq!(drops.get(), n);
    // And all of them once on success.
    drops.set(0);
    let order = v.sort_indices_by_key(|r| Key(*r.key, DropCounter::new(*r.id, &drops)));
    assert!(is_permutation(&order, n));
    assert_eq!(drops.get(), n);
}

/// Rows whose every field is zero-sized: the vector has no block and an unbounded capacity; the
/// indirect sorts, applying a permutation, sorting and shrinking all work without one.
#[test]
fn rows_of_zero_sized_fields_sort_and_permute() {
    let n = support::miri_or(1000, 20);
    let mut v: SoaVec<Nothing> = (0..n)
        .map(|_| Nothing {
            a: (),
            b: core::marker::PhantomData,
        })
        .collect();
    let order = v.sort_indices_by(|_, _| std::cmp::Ordering::Equal);
    assert_eq!(order, (0..n as u32).collect::<Vec<_>>());
    let reversed: Vec<u32> = (0..n as u32).rev().collect();
    v.apply_permutation(&reversed).unwrap();
    v.as_soa_slice_mut().apply_permutation(&order).unwrap();
    v.sort_by(|_, _| std::cmp::Ordering::Greater);
    v.sort_by_key(|_| 0u8);
    v.shrink_to_fit();
    assert_eq!(v.len(), n);
    assert_eq!(v.capacity(), usize::MAX);
}

/// Index lists at the edges: `u32::MAX` names no row, an empty list fits no rows only, a list
/// one short or one long is refused, and a permutation of a part of the rows (a sub-slice) moves
/// only that part.
#[test]
fn index_lists_at_the_edges_and_on_part_of_the_rows() {
    let mut v = keyed(10);
    assert_eq!(
        v.apply_permutation(&[u32::MAX, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
        Err(PermutationError::OutOfRange {
            position: 0,
            index: u32::MAX,
            rows: 10
        })
    );
    assert!(matches!(
        v.apply_permutation(&[]),
        Err(PermutationError::Length { .. })
    ));
    let long: Vec<u32> = (0..11).collect();
    assert!(matches!(
        v.apply_permutation(&long),
        Err(PermutationError::Length { .. })
    ));
    assert_eq!(v.slices().id, (0..10).collect::<Vec<u64>>().as_slice());
    // Rows 3..7 reversed through a sub-slice; the rest stay.
    let mut part = v.slice_mut(3..7);
    let inner = part.as_soa_slice().sort_indices_by(|a, b| b.id.cmp(a.id));
    assert_eq!(inner, [3, 2, 1, 0]);
    part.apply_permutation(&inner).unwrap();
    assert_eq!(v.slices().id, &[0, 1, 2, 6, 5, 4, 3, 7, 8, 9]);
    // An empty vector takes exactly the empty list.
    let mut empty: SoaVec<Keyed> = SoaVec::new();
    assert_eq!(empty.apply_permutation(&[]), Ok(()));
    assert!(empty.apply_permutation(&[0]).is_err());
}
