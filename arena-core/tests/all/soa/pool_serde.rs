//! `SoaPool` serialization (feature `serde`): a round trip keeps every handle, the free-list
//! order (so the next inserts return the same handles) and the row order; hostile input is
//! refused with the same checks as `Pool`'s, plus rows that do not match the live values, and
//! nothing is allocated for a declared capacity over the limit.
#![cfg(feature = "serde")]

use arena_kit_core::pool::Handle;
use arena_kit_core::soa::{Col, Soa, SoaPool};
use serde::{Deserialize, Deserializer};

/// A row type whose views serialize as tuples (what `#[soa(derive(Serialize))]` gives users).
#[derive(Debug, Clone, PartialEq)]
struct Unit {
    x: f32,
    id: u32,
}

// SAFETY: a test row: every field value is a valid row, and its clone is its fields' clones.
unsafe impl arena_kit_core::soa::PlainRow for Unit {}

impl Soa for Unit {
    type Columns = (Col<f32>, (Col<u32>, ()));
    type Ref<'a> = (&'a f32, (&'a u32, ()));
    type Mut<'a> = (&'a mut f32, (&'a mut u32, ()));
    type Slices<'a> = (&'a [f32], (&'a [u32], ()));
    type SlicesMut<'a> = (&'a mut [f32], (&'a mut [u32], ()));
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> (f32, (u32, ())) {
        (self.x, (self.id, ()))
    }
    fn from_columns(
        (x, (id, ())): (f32, (u32, ())),
        _: arena_kit_core::soa::RowConversion<Self>,
    ) -> Self {
        Unit { x, id }
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

impl serde::Serialize for Unit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.x, (self.id, ())).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Unit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (x, (id, ())) = <(f32, (u32, ()))>::deserialize(d)?;
        Ok(Unit { x, id })
    }
}

fn unit(id: u32) -> Unit {
    Unit { x: id as f32, id }
}

fn churned() -> (SoaPool<Unit>, Vec<Handle<Unit>>) {
    let mut pool = SoaPool::with_capacity_and_generation_budget(8, 2);
    let hs: Vec<_> = (0..6).map(|i| pool.insert(unit(i))).collect();
    for i in [3, 0, 4] {
        pool.remove(hs[i]);
    }
    let again = pool.insert(unit(40));
    pool.remove(again); // its slot's last generation: retired
    (pool, hs)
}

fn replay(pool: &mut SoaPool<Unit>) -> Vec<Handle<Unit>> {
    let mut out = Vec::new();
    for i in 0..5 {
        out.push(pool.insert(unit(100 + i)));
        if i % 2 == 1 {
            pool.remove(out[i as usize - 1]);
        }
    }
    out
}

#[test]
fn round_trip_keeps_handles_free_list_and_row_order() {
    let (mut original, hs) = churned();
    let json = serde_json::to_string(&original).unwrap();
    let mut restored: SoaPool<Unit> = serde_json::from_str(&json).unwrap();
    assert_eq!(restored.len(), original.len());
    assert_eq!(restored.stats(), original.stats());
    for &h in &hs {
        assert_eq!(
            restored.get(h).map(|r| *r.1.0),
            original.get(h).map(|r| *r.1.0)
        );
    }
    assert_eq!(
        restored.slices().1.0,
        original.slices().1.0,
        "same row order"
    );
    assert_eq!(
        replay(&mut restored),
        replay(&mut original),
        "same next handles"
    );
    assert_eq!(restored.slices().1.0, original.slices().1.0);
    assert_eq!(
        serde_json::to_string(&restored).unwrap(),
        serde_json::to_string(&original).unwrap()
    );
}

#[test]
fn a_growable_pool_round_trips_growable() {
    let mut pool = SoaPool::growable(2);
    let hs: Vec<_> = (0..5).map(|i| pool.insert(unit(i))).collect();
    pool.remove(hs[1]);
    let json = serde_json::to_string(&pool).unwrap();
    let mut back: SoaPool<Unit> = serde_json::from_str(&json).unwrap();
    assert!(back.is_growable());
    assert_eq!(back.capacity(), pool.capacity());
    assert_eq!(back.insert(unit(9)), pool.insert(unit(9)));
    assert_eq!(
        back.insert(unit(10)),
        pool.insert(unit(10)),
        "grows the same way"
    );
}

fn refused(json: &str) -> String {
    serde_json::from_str::<SoaPool<Unit>>(json)
        .unwrap_err()
        .to_string()
}

/// One live value in slot 0 (row 0), slot 1 free.
fn doc(slots: &str, free: &str, capacity: u32) -> String {
    let (tag, first) = {
        let pool: SoaPool<Unit> = SoaPool::with_capacity(1);
        let v: serde_json::Value = serde_json::to_value(&pool).unwrap();
        (
            v["generation_tag"].as_u64().unwrap(),
            v["first_generation"].as_u64().unwrap(),
        )
    };
    let g = |n: u64| first + n;
    let slots = slots
        .replace("G1", &g(1).to_string())
        .replace("G2", &g(2).to_string());
    format!(
        r#"{{"generation_tag":{tag},"first_generation":{first},"chunk":null,"capacity":{capacity},"slots":{slots},"free_list":{free},"peak_live":2,"inserts":2}}"#
    )
}

#[test]
fn the_handcrafted_document_loads() {
    let pool: SoaPool<Unit> =
        serde_json::from_str(&doc(r#"[[G1,[0,[1.0,[7,null]]]],[G2,null]]"#, "[1]", 4)).unwrap();
    assert_eq!((pool.len(), pool.slices().1.0), (1, &[7][..]));
}

#[test]
fn rows_must_be_the_live_values_each_once() {
    let two_live = r#"[[G1,[0,[1.0,[7,null]]]],[G1,[0,[2.0,[8,null]]]]]"#;
    assert!(
        refused(&doc(two_live, "[]", 4)).contains("row 0"),
        "a repeated row"
    );
    let past = r#"[[G1,[5,[1.0,[7,null]]]],[G2,null]]"#;
    assert!(
        refused(&doc(past, "[1]", 4)).contains("row 5"),
        "a row past the live values"
    );
}

#[test]
fn a_tampered_free_list_is_refused_as_in_pool() {
    let slots = r#"[[G1,[0,[1.0,[7,null]]]],[G2,null]]"#;
    assert!(refused(&doc(slots, "[0]", 4)).contains("occupied"));
    assert!(refused(&doc(slots, "[1,1]", 4)).contains("twice"));
    assert!(refused(&doc(slots, "[]", 4)).contains("not on the free"));
}

#[test]
fn a_huge_declared_capacity_is_refused_before_allocating() {
    let slots = r#"[[G1,[0,[1.0,[7,null]]]],[G2,null]]"#;
    let text = refused(&doc(slots, "[1]", u32::MAX - 1));
    assert!(text.contains("over the limit"), "{text}");
}

/// A hand-written `Soa` impl without `FIELD_NAMES` has no named column format: both directions
/// say so, instead of writing or reading unnamed columns.
#[test]
fn a_type_without_field_names_refuses_the_named_format() {
    use arena_kit_core::soa::SoaVec;
    use arena_kit_core::soa::serde::named_columns;
    let v: SoaVec<Unit> = [Unit { x: 1.0, id: 2 }].into();
    let err = named_columns::serialize(&v, serde_json::value::Serializer).unwrap_err();
    assert!(
        err.to_string().contains("does not name its fields"),
        "{err}"
    );
    let err = named_columns::deserialize::<Unit, _>(serde_json::json!({ "x": [1.0], "id": [2] }))
        .unwrap_err();
    assert!(err.to_string().contains("FIELD_NAMES"), "{err}");
}

/// A handle `insert_with` gave a closure that panicked names nothing, before and after a save
/// and load: the never-used slot's next generation is saved with the pool, so the next insert
/// gets the same handle in both.
#[test]
fn a_spent_never_used_slot_stays_spent_across_a_save_and_load() {
    use std::cell::Cell;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let mut pool = SoaPool::with_capacity(4);
    let seen = Cell::new(None);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.insert_with(|h| -> Unit {
            seen.set(Some(h));
            panic!("no row")
        });
    }));
    assert!(r.is_err());
    let spent = seen.get().unwrap();
    let json = serde_json::to_string(&pool).unwrap();
    let mut loaded: SoaPool<Unit> = serde_json::from_str(&json).unwrap();
    let (a, b) = (pool.insert(unit(1)), loaded.insert(unit(1)));
    assert_eq!(a, b);
    assert_eq!(a.index(), spent.index());
    assert_ne!(a, spent);
    assert!(pool.get(spent).is_none() && loaded.get(spent).is_none());
}
