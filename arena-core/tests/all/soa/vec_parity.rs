//! `SoaVec` and the SoA slices against `Vec<T>` and `[T]` for what users switching from
//! `Vec`, soa_derive and soa-rs reach for: sub-slices by range, first/last, split_at, unchecked
//! access, drain, retain_mut, dedup_by_key, resize_with, append, split_off, extend_from_slice,
//! `From<[T; N]>`, the sorts, `to_value`, and lexicographic `PartialOrd`/`Ord`/`Hash`.
#![allow(missing_docs)] // test-only row types

use crate::support::DropCounter;

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use arena_kit_core::soa::{Soa, SoaVec, ToValue};
use arena_kit_derive::Soa;

#[derive(Debug, Clone, PartialEq, PartialOrd, Soa)]
#[soa(crate = arena_kit_core, derive(Clone, Copy, PartialEq, PartialOrd))]
pub struct Atom {
    pub name: String,
    pub mass: f32,
}

fn atom(name: &str, mass: f32) -> Atom {
    Atom {
        name: name.into(),
        mass,
    }
}

fn atoms() -> Vec<Atom> {
    vec![
        atom("Cl", 1.0),
        atom("Na", 2.0),
        atom("Br", 3.0),
        atom("Zn", 4.0),
    ]
}

/// The rows of any SoA view, rebuilt as values.
fn rows_of(s: arena_kit_core::soa::SoaSlice<'_, Atom>) -> Vec<Atom> {
    s.iter().map(|r| r.to_value()).collect()
}

#[test]
fn every_range_kind_slices_like_a_vec() {
    let model = atoms();
    let mut v: SoaVec<Atom> = model.clone().into();
    macro_rules! check {
        ($r:expr) => {{
            assert_eq!(rows_of(v.slice($r)), model[$r].to_vec());
            assert_eq!(rows_of(v.get_slice($r).unwrap()), model[$r].to_vec());
            assert_eq!(rows_of(v.slice_mut($r).as_soa_slice()), model[$r].to_vec());
            assert_eq!(
                rows_of(v.get_slice_mut($r).unwrap().as_soa_slice()),
                model[$r].to_vec()
            );
            let whole = v.as_soa_slice();
            assert_eq!(rows_of(whole.slice($r)), model[$r].to_vec());
        }};
    }
    check!(0..1);
    check!(..3);
    check!(1..);
    check!(..);
    check!(0..=1);
    check!(..=2);
    check!(4..4);
    check!(2..2);
    assert!(v.get_slice(0..5).is_none());
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = v.get_slice(3..2);
    assert!(reversed.is_none());
    assert!(v.get_slice(..=4).is_none());
    assert!(v.get_slice_mut(5..).is_none());
    assert!(v.as_soa_slice().get_slice(1..=usize::MAX).is_none());
    // A sub-slice of a sub-slice starts where its parent does.
    let inner = v.slice(1..).slice(1..2);
    assert_eq!(rows_of(inner), vec![atom("Br", 3.0)]);
    assert_eq!(inner.slices().mass, &[3.0]);
}

#[test]
fn bad_ranges_panic_and_change_nothing() {
    let v: SoaVec<Atom> = atoms().into();
    let err = catch_unwind(AssertUnwindSafe(|| v.slice(2..9).len())).unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.contains("out of bounds for 4 rows"), "{msg}");
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = catch_unwind(AssertUnwindSafe(|| v.slice(3..1).len()));
    assert!(reversed.is_err());
    let mut v = v;
    assert!(catch_unwind(AssertUnwindSafe(|| v.slice_mut(..5).len())).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| v.split_at(5).0.len())).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| v.split_at_mut(5).0.len())).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| v.drain(1..7).len())).is_err());
    assert_eq!(v.len(), 4, "a refused drain changes nothing");
}

#[test]
fn first_and_last_are_none_when_empty() {
    let mut v: SoaVec<Atom> = SoaVec::new();
    assert!(v.first().is_none() && v.last().is_none());
    assert!(v.first_mut().is_none() && v.last_mut().is_none());
    assert!(v.as_soa_slice().first().is_none());
    assert!(v.as_soa_slice_mut().last_mut().is_none());
    v.extend(atoms());
    assert_eq!(v.first().unwrap().name, "Cl");
    assert_eq!(v.last().unwrap().name, "Zn");
    *v.first_mut().unwrap().mass = 10.0;
    v.last_mut().unwrap().name.push('!');
    let s = v.as_soa_slice_mut();
    assert_eq!(
        (*s.first().unwrap().mass, s.last().unwrap().name.as_str()),
        (10.0, "Zn!")
    );
    let mut s = v.slice_mut(1..3);
    *s.first_mut().unwrap().mass = 20.0;
    *s.last_mut().unwrap().mass = 30.0;
    assert_eq!(v.slices().mass, &[10.0, 20.0, 30.0, 4.0]);
}

#[test]
fn split_at_gives_both_halves_and_split_at_mut_lets_both_be_written() {
    let model = atoms();
    let mut v: SoaVec<Atom> = model.clone().into();
    for mid in 0..=model.len() {
        let (a, b) = v.split_at(mid);
        let (ma, mb) = model.split_at(mid);
        assert_eq!((rows_of(a), rows_of(b)), (ma.to_vec(), mb.to_vec()));
        assert!(v.as_soa_slice().split_at_checked(mid).is_some());
    }
    assert!(v.as_soa_slice().split_at_checked(5).is_none());
    assert!(v.as_soa_slice_mut().split_at_mut_checked(5).is_none());
    let (mut left, mut right) = v.split_at_mut(1);
    std::mem::swap(
        &mut left.slices_mut().mass[0],
        &mut right.slices_mut().mass[2],
    );
    assert_eq!(v.slices().mass, &[4.0, 2.0, 3.0, 1.0]);
    // Splitting a sub-slice again.
    let mut all = v.as_soa_slice_mut();
    let mut tail = all.slice_mut(1..);
    let (x, y) = tail.split_at_mut(1);
    assert_eq!((x.len(), y.len()), (1, 2));
    assert_eq!(
        (x.slices().mass, y.slices().mass),
        (&[2.0][..], &[3.0, 1.0][..])
    );
}

#[test]
fn split_first_and_last_match_a_slice() {
    let model = atoms();
    let mut v: SoaVec<Atom> = model.clone().into();
    for n in 0..=model.len() {
        let s = v.slice(..n);
        let (f, rest) = match (s.split_first(), model[..n].split_first()) {
            (Some((f, rest)), Some((mf, mrest))) => {
                assert_eq!(f.to_value(), *mf);
                (f.to_value(), rows_of(rest) == mrest)
            }
            (None, None) => continue,
            _ => panic!("split_first disagrees at {n}"),
        };
        assert!(rest, "the rest after {f:?}");
        let (l, init) = s.split_last().unwrap();
        let (ml, minit) = model[..n].split_last().unwrap();
        assert_eq!((l.to_value(), rows_of(init)), (ml.clone(), minit.to_vec()));
    }
    let mut s = v.as_soa_slice_mut();
    let (first, mut rest) = s.split_first_mut().unwrap();
    *first.mass += *rest.first().unwrap().mass; // both at once
    rest.last_mut().unwrap().name.push('!');
    let (last, init) = s.split_last_mut().unwrap();
    *last.mass = init.len() as f32;
    assert_eq!(v.slices().mass, &[3.0, 2.0, 3.0, 3.0]);
    assert_eq!(v.slices().name[3], "Zn!");
    let mut empty: SoaVec<Atom> = SoaVec::new();
    assert!(empty.as_soa_slice_mut().split_first_mut().is_none());
    assert!(empty.as_soa_slice_mut().split_last_mut().is_none());
}

#[test]
fn unchecked_access_reads_and_writes_the_row() {
    let mut v: SoaVec<Atom> = atoms().into();
    // SAFETY: both indices are below the length, 4.
    unsafe {
        assert_eq!(v.get_unchecked(1).name, "Na");
        *v.get_unchecked_mut(3).mass = 40.0;
        assert_eq!(*v.as_soa_slice().get_unchecked(3).mass, 40.0);
        let mut s = v.slice_mut(2..);
        s.get_unchecked_mut(0).name.push('+');
        assert_eq!(s.get_unchecked(0).name, "Br+");
    }
}

#[test]
fn to_value_rebuilds_the_row_from_ref_and_mut_views() {
    let mut v: SoaVec<Atom> = atoms().into();
    assert_eq!(v.get(2).unwrap().to_value(), atom("Br", 3.0));
    let m = v.get_mut(0).unwrap();
    *m.mass = 9.0;
    assert_eq!(m.to_value(), atom("Cl", 9.0));
}

mod nested {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Key {
        pub major: u8,
        pub minor: u16,
    }

    /// Ordered by `id`, then `key` field by field: what the derives on `Item` compare.
    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Item {
        pub id: u8,
        #[soa(nested)]
        pub key: Key,
        pub label: String,
    }

    pub fn item(id: u8, major: u8, minor: u16) -> Item {
        Item {
            id,
            key: Key { major, minor },
            label: format!("{id}.{major}.{minor}"),
        }
    }

    #[test]
    fn to_value_rebuilds_a_nested_field_too() {
        let mut v: SoaVec<Item> = [item(1, 2, 3), item(4, 5, 6)].into();
        assert_eq!(v.get(1).unwrap().to_value(), item(4, 5, 6));
        assert_eq!(v.get_mut(0).unwrap().to_value(), item(1, 2, 3));
    }

    #[test]
    fn ord_is_lexicographic_like_vec_through_nested_fields() {
        let all = [
            item(1, 2, 3),
            item(1, 2, 4),
            item(1, 3, 0),
            item(0, 9, 9),
            item(1, 2, 3),
        ];
        // Every pair of sub-slices: 400 comparisons natively, 81 under Miri.
        let rows = &all[..if cfg!(miri) { 3 } else { 5 }];
        let cases: Vec<Vec<Item>> = (0..rows.len())
            .flat_map(|a| (a..=rows.len()).map(move |b| (a, b)))
            .map(|(a, b)| rows[a..b].to_vec())
            .collect();
        for l in &cases {
            for r in &cases {
                let (sl, sr): (SoaVec<Item>, SoaVec<Item>) = (l.clone().into(), r.clone().into());
                assert_eq!(sl.cmp(&sr), l.cmp(r), "{l:?} vs {r:?}");
                assert_eq!(sl.partial_cmp(&sr), l.partial_cmp(r));
                assert_eq!(sl == sr, l == r);
                assert_eq!(sl.as_soa_slice().cmp(&sr.as_soa_slice()), l.cmp(r));
            }
        }
    }

    #[test]
    fn equal_vectors_hash_equally_and_a_change_changes_the_hash() {
        fn hash(v: &SoaVec<Item>) -> u64 {
            let mut h = DefaultHasher::new();
            v.hash(&mut h);
            h.finish()
        }
        let a: SoaVec<Item> = [item(1, 2, 3), item(4, 5, 6)].into();
        let b = a.clone();
        assert_eq!(hash(&a), hash(&b));
        let mut c = a.clone();
        *c.get_mut(1).unwrap().key.minor = 7;
        assert_ne!(hash(&a), hash(&c));
        // A moved row boundary: same values, different split between rows.
        let d: SoaVec<Item> = [item(1, 2, 3)].into();
        assert_ne!(hash(&a), hash(&d));
        let set: std::collections::HashSet<SoaVec<Item>> = [a, b, c].into_iter().collect();
        assert_eq!(set.len(), 2);
    }
}

#[test]
fn partial_ord_matches_vec_including_nan_and_prefixes() {
    #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Soa)]
    #[soa(crate = arena_kit_core)]
    struct F(f32);
    let cases: [(&[F], &[F]); 7] = [
        (&[], &[]),
        (&[F(1.), F(2.), F(3.)], &[F(1.), F(2.), F(3.)]),
        (&[F(1.), F(2.), F(2.)], &[F(1.), F(2.), F(3.)]),
        (&[F(1.), F(2.), F(4.)], &[F(1.), F(2.), F(3.)]),
        (&[F(1.), F(2.), F(3.)], &[F(1.), F(2.), F(3.), F(0.)]),
        (&[F(1.), F(2.), F(3.), F(0.)], &[F(1.), F(2.), F(3.)]),
        (&[F(1.)], &[F(f32::NAN)]),
    ];
    for (l, r) in cases {
        let (sl, sr): (SoaVec<F>, SoaVec<F>) = (l.to_vec().into(), r.to_vec().into());
        assert_eq!(sl.partial_cmp(&sr), l.partial_cmp(r), "{l:?} vs {r:?}");
        assert_eq!(sl == sr, l == r);
    }
}

#[test]
fn from_an_array_keeps_the_order() {
    let v = SoaVec::from([atom("a", 1.0), atom("b", 2.0)]);
    assert_eq!(v.slices().name, &["a", "b"]);
    let empty: SoaVec<Atom> = SoaVec::from([]);
    assert!(empty.is_empty());
}

#[test]
fn append_moves_every_row_and_leaves_the_other_empty() {
    let mut a: SoaVec<Atom> = atoms()[..2].to_vec().into();
    let mut b: SoaVec<Atom> = atoms()[2..].to_vec().into();
    let cap = b.capacity();
    a.append(&mut b);
    assert_eq!(rows_of(a.as_soa_slice()), atoms());
    assert!(b.is_empty());
    assert_eq!(b.capacity(), cap);
    a.append(&mut b);
    assert_eq!(a.len(), 4);
    b.append(&mut a);
    assert_eq!(rows_of(b.as_soa_slice()), atoms());
}

#[test]
fn split_off_at_every_index_matches_vec() {
    for at in 0..=4 {
        let mut v: SoaVec<Atom> = atoms().into();
        let mut m = atoms();
        let tail = v.split_off(at);
        let mtail = m.split_off(at);
        assert_eq!(rows_of(v.as_soa_slice()), m);
        assert_eq!(rows_of(tail.as_soa_slice()), mtail);
        assert_eq!(tail.capacity(), 4 - at);
    }
    let mut v: SoaVec<Atom> = atoms().into();
    assert!(catch_unwind(AssertUnwindSafe(|| v.split_off(5).len())).is_err());
    assert_eq!(v.len(), 4);
}

#[test]
fn retain_mut_updates_and_culls_in_one_pass() {
    let mut v: SoaVec<Atom> = atoms().into();
    let mut m = atoms();
    v.retain_mut(|a| {
        a.name.make_ascii_uppercase();
        *a.mass != 2.0
    });
    m.retain_mut(|a| {
        a.name.make_ascii_uppercase();
        a.mass != 2.0
    });
    assert_eq!(rows_of(v.as_soa_slice()), m);
    assert_eq!(v.slices().name, &["CL", "BR", "ZN"]);
}

#[test]
fn dedup_by_key_keeps_the_first_of_each_run() {
    let keys = [1u8, 1, 2, 2, 2, 1, 3, 3];
    let mut v: SoaVec<Atom> = keys.iter().map(|&k| atom("x", f32::from(k))).collect();
    let mut m: Vec<Atom> = keys.iter().map(|&k| atom("x", f32::from(k))).collect();
    for (i, name) in v.slices_mut().name.iter_mut().enumerate() {
        *name = i.to_string();
    }
    for (i, a) in m.iter_mut().enumerate() {
        a.name = i.to_string();
    }
    v.dedup_by_key(|a| *a.mass as u8);
    m.dedup_by_key(|a| a.mass as u8);
    assert_eq!(rows_of(v.as_soa_slice()), m);
    assert_eq!(v.slices().name, &["0", "2", "5", "6"]);
    let mut empty: SoaVec<Atom> = SoaVec::new();
    empty.dedup_by_key(|_| unreachable!("no rows, no keys"));
}

#[test]
fn resize_with_grows_with_the_closure_and_shrinks_by_dropping() {
    let drops = Rc::new(Cell::new(0));
    #[derive(Soa)]
    #[soa(crate = arena_kit_core)]
    struct Counted {
        c: DropCounter,
        n: u64,
    }
    let mut v: SoaVec<Counted> = SoaVec::new();
    let mut next = 0;
    v.resize_with(5, || {
        next += 1;
        Counted {
            c: DropCounter::new(next, &drops),
            n: next,
        }
    });
    assert_eq!(v.slices().n, &[1, 2, 3, 4, 5]);
    v.resize_with(2, || unreachable!());
    assert_eq!(drops.get(), 3);
    assert_eq!(v.slices().n, &[1, 2]);
    v.resize_with(2, || unreachable!());
    drop(v);
    assert_eq!(drops.get(), 5);
}

#[test]
fn extend_from_slice_clones_rows_of_any_view() {
    let src: SoaVec<Atom> = atoms().into();
    let mut v: SoaVec<Atom> = SoaVec::new();
    v.extend_from_slice(src.slice(1..3));
    v.extend_from_slice(src.as_soa_slice());
    let mut m = atoms()[1..3].to_vec();
    m.extend_from_slice(&atoms());
    assert_eq!(rows_of(v.as_soa_slice()), m);
    // Its own rows, through a clone of them.
    let copy = v.clone();
    v.extend_from_slice(copy.slice(..1));
    assert_eq!(v.last().unwrap().name, "Na");
}

/// Drains `range` from both, takes `taken` rows from alternating ends, compares them, and drops
/// both drains (which close the gaps).
pub(super) fn drain_like_vec<T: Soa + PartialEq + std::fmt::Debug>(
    v: &mut SoaVec<T>,
    m: &mut Vec<T>,
    range: std::ops::Range<usize>,
    taken: usize,
) {
    let mut d = v.drain(range.clone());
    let mut md = m.drain(range);
    assert_eq!(d.len(), md.len());
    for k in 0..taken {
        if k % 2 == 0 {
            assert_eq!(d.next(), md.next());
        } else {
            assert_eq!(d.next_back(), md.next_back());
        }
    }
}

#[test]
fn drain_matches_vec_front_back_and_partly_consumed() {
    let n = if cfg!(miri) { 3 } else { 6 };
    for start in 0..=n {
        for end in start..=n {
            for taken in 0..=(end - start) {
                let make = || (0..n).map(|i| atom(&i.to_string(), i as f32));
                let mut v: SoaVec<Atom> = make().collect();
                let mut m: Vec<Atom> = make().collect();
                drain_like_vec(&mut v, &mut m, start..end, taken);
                assert_eq!(rows_of(v.as_soa_slice()), m);
            }
        }
    }
}

#[test]
fn drain_drops_the_rows_not_taken_once() {
    let drops = Rc::new(Cell::new(0));
    #[derive(Soa)]
    #[soa(crate = arena_kit_core)]
    struct Counted {
        c: DropCounter,
    }
    let mut v: SoaVec<Counted> = (0..6)
        .map(|i| Counted {
            c: DropCounter::new(i, &drops),
        })
        .collect();
    let mut d = v.drain(1..5);
    let first = d.next().unwrap();
    assert_eq!(first.c.id, 1);
    drop(d);
    assert_eq!(drops.get(), 3, "rows 2, 3 and 4 are dropped with the drain");
    drop(first);
    let ids: Vec<u64> = v.slices().c.iter().map(|c| c.id).collect();
    assert_eq!(ids, [0, 5]);
    drop(v);
    assert_eq!(drops.get(), 6);
}

#[test]
#[cfg_attr(miri, ignore = "leaks on purpose, which Miri reports")]
fn a_forgotten_drain_leaks_the_rest_but_never_drops_twice() {
    let drops = Rc::new(Cell::new(0));
    #[derive(Soa)]
    #[soa(crate = arena_kit_core)]
    struct Counted {
        c: DropCounter,
    }
    let mut v: SoaVec<Counted> = (0..5)
        .map(|i| Counted {
            c: DropCounter::new(i, &drops),
        })
        .collect();
    let mut d = v.drain(2..4);
    drop(d.next());
    std::mem::forget(d);
    assert_eq!(drops.get(), 1);
    assert_eq!(v.len(), 2, "only the rows before the range stay");
    v.push(Counted {
        c: DropCounter::new(9, &drops),
    });
    let ids: Vec<u64> = v.slices().c.iter().map(|c| c.id).collect();
    assert_eq!(ids, [0, 1, 9]);
    drop(v);
    assert_eq!(drops.get(), 4, "rows 3 and 4 leaked, nothing dropped twice");
}

#[test]
#[allow(clippy::unnecessary_sort_by)] // the comparator forms are what is tested
fn the_sorts_agree_with_vec() {
    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Soa)]
    #[soa(crate = arena_kit_core, derive(PartialEq, Eq, PartialOrd, Ord))]
    struct Pair {
        k: u8,
        tie: u16,
    }
    let n = if cfg!(miri) { 20 } else { 300 };
    let model: Vec<Pair> = (0..n)
        .map(|i: u16| Pair {
            k: (i.wrapping_mul(37) % 11) as u8,
            tie: i,
        })
        .collect();
    let run = |f: &dyn Fn(&mut SoaVec<Pair>), g: &dyn Fn(&mut Vec<Pair>)| {
        let mut v: SoaVec<Pair> = model.clone().into();
        let mut m = model.clone();
        f(&mut v);
        g(&mut m);
        let got: Vec<Pair> = v.into_vec();
        assert_eq!(got, m);
    };
    run(&|v| v.sort(), &|m| m.sort());
    run(&|v| v.sort_unstable(), &|m| m.sort_unstable());
    run(&|v| v.as_soa_slice_mut().sort(), &|m| m.sort());
    run(&|v| v.sort_by(|a, b| b.cmp(&a)), &|m| {
        m.sort_by(|a, b| b.cmp(a))
    });
    run(&|v| v.sort_unstable_by(|a, b| b.tie.cmp(a.tie)), &|m| {
        m.sort_unstable_by(|a, b| b.tie.cmp(&a.tie))
    });
    run(&|v| v.sort_unstable_by_key(|a| (*a.k, *a.tie)), &|m| {
        m.sort_unstable_by_key(|a| (a.k, a.tie))
    });
    run(
        &|v| v.slice_mut(3..).sort_unstable_by_key(|a| *a.tie),
        &|m| m[3..].sort_unstable_by_key(|a| a.tie),
    );
    // Unstable by key only: the keys come out sorted and the rows are a permutation.
    let mut v: SoaVec<Pair> = model.clone().into();
    v.sort_unstable_by_key(|a| *a.k);
    assert!(v.slices().k.is_sorted());
    let mut ties = v.slices().tie.to_vec();
    ties.sort_unstable();
    assert_eq!(ties, (0..n).collect::<Vec<u16>>());
}

/// The generic sort the issue asks for: both views have one lifetime, so `PartialOrd` on the
/// view type compares them.
fn sort_generic<T: Soa>(v: &mut SoaVec<T>)
where
    for<'a> T::Ref<'a>: PartialOrd,
{
    v.sort_by(|a, b| a.partial_cmp(&b).unwrap_or(Ordering::Equal));
}

fn sort_unstable_generic<T: Soa>(v: &mut SoaVec<T>)
where
    for<'a> T::Ref<'a>: PartialOrd,
{
    v.sort_unstable_by(|a, b| a.partial_cmp(&b).unwrap_or(Ordering::Equal));
}

#[test]
fn generic_code_sorts_by_the_views_partial_ord() {
    let mut m = vec![
        atom("Na3", 168.0),
        atom("Na", 56.0),
        atom("Na4", 224.0),
        atom("Na2", 112.0),
    ];
    let mut v: SoaVec<Atom> = m.clone().into();
    let mut u = v.clone();
    sort_generic(&mut v);
    sort_unstable_generic(&mut u);
    m.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(rows_of(v.as_soa_slice()), m);
    assert_eq!(rows_of(u.as_soa_slice()), m);
    v.as_soa_slice_mut()
        .sort_by(|a, b| b.partial_cmp(&a).unwrap());
    assert_eq!(v.first().unwrap().name, "Na4");
}

#[test]
fn a_panicking_clone_in_to_value_drops_the_fields_cloned_so_far() {
    let drops = Rc::new(Cell::new(0));
    #[derive(Debug)]
    struct Grenade;
    impl Clone for Grenade {
        fn clone(&self) -> Self {
            panic!("planned: this field refuses to be cloned")
        }
    }
    #[derive(Clone, Debug)]
    struct Counted(Rc<Cell<usize>>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }
    #[derive(Soa, Clone)]
    #[soa(crate = arena_kit_core, plain)]
    struct Pair {
        first: Counted,
        second: Grenade,
    }
    let v: SoaVec<Pair> = [Pair {
        first: Counted(Rc::clone(&drops)),
        second: Grenade,
    }]
    .into();
    let r = catch_unwind(AssertUnwindSafe(|| drop(v.get(0).unwrap().to_value())));
    assert!(r.is_err());
    assert_eq!(drops.get(), 1, "the clone of `first` was dropped");
    assert_eq!(v.len(), 1);
    drop(v);
    assert_eq!(drops.get(), 2);
}

#[test]
fn unstable_sort_handles_sorted_reversed_equal_and_sawtooth_inputs() {
    #[derive(Debug, Clone, Copy, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    struct K {
        k: u32,
        id: u32,
    }
    let lens: &[usize] = if cfg!(miri) {
        &[0, 1, 2, 3, 17, 40]
    } else {
        &[0, 1, 2, 3, 15, 16, 17, 33, 100, 1000, 5000]
    };
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for &n in lens {
        let n32 = n as u32;
        let patterns: Vec<Vec<u32>> = vec![
            (0..n32).collect(),
            (0..n32).rev().collect(),
            vec![7; n],
            (0..n32).map(|i| i % 5).collect(),
            (0..n32).map(|_| (rand() % 50) as u32).collect(),
        ];
        for keys in patterns {
            let mut v: SoaVec<K> = keys.iter().zip(0..).map(|(&k, id)| K { k, id }).collect();
            v.sort_unstable_by_key(|r| *r.k);
            let mut want = keys.clone();
            want.sort_unstable();
            assert_eq!(v.slices().k, &want[..], "n = {n}");
            let mut ids = v.slices().id.to_vec();
            ids.sort_unstable();
            assert_eq!(
                ids,
                (0..n32).collect::<Vec<_>>(),
                "a permutation of the rows"
            );
            // Each row kept its fields together.
            assert!(v.iter().all(|r| keys[*r.id as usize] == *r.k));
        }
        // An inconsistent comparator: terminates, stays in bounds, keeps a permutation.
        let mut v: SoaVec<K> = (0..n32).map(|i| K { k: i, id: i }).collect();
        v.sort_unstable_by(|_, _| match rand() % 3 {
            0 => Ordering::Less,
            1 => Ordering::Equal,
            _ => Ordering::Greater,
        });
        let mut ids = v.slices().id.to_vec();
        ids.sort_unstable();
        assert_eq!(ids, (0..n32).collect::<Vec<_>>());
        assert!(v.iter().all(|r| r.k == r.id));
    }
}
