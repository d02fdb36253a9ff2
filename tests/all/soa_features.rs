//! `SoaVec` with the `serde` and `rayon` features:
//! `cargo test --features serde,rayon --test soa_features`.
#![cfg(all(feature = "serde", feature = "rayon"))]

use arena_kit::prelude::*;
use rayon::prelude::*;

/// A row that serializes both ways.
#[derive(Soa, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
#[soa(derive(Debug, serde::Serialize))]
pub struct Enemy {
    /// Position.
    pub x: f32,
    /// Hit points.
    pub health: f32,
    /// Name.
    pub name: String,
}

fn enemies() -> SoaVec<Enemy> {
    vec![
        Enemy {
            x: 0.0,
            health: 100.0,
            name: "orc".into(),
        },
        Enemy {
            x: 1.0,
            health: 50.0,
            name: "imp".into(),
        },
    ]
    .into()
}

#[test]
fn row_format_matches_a_vec_of_rows() {
    let v = enemies();
    let json = serde_json::to_string(&v).unwrap();
    let as_vec = serde_json::to_string(&v.clone().into_vec()).unwrap();
    assert_eq!(json, as_vec);
    let back: SoaVec<Enemy> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, v);
}

/// The column format through `#[serde(with)]`.
#[derive(serde::Serialize, serde::Deserialize)]
struct Level {
    #[serde(with = "arena_kit::soa::serde::columns")]
    enemies: SoaVec<Enemy>,
}

#[test]
fn column_format_round_trips() {
    let level = Level { enemies: enemies() };
    let json = serde_json::to_string(&level).unwrap();
    assert_eq!(
        json,
        r#"{"enemies":[[0.0,1.0],[100.0,50.0],["orc","imp"]]}"#
    );
    let back: Level = serde_json::from_str(&json).unwrap();
    assert_eq!(back.enemies, level.enemies);
}

#[test]
fn columns_of_unequal_length_are_an_error() {
    let err = serde_json::from_str::<Level>(r#"{"enemies":[[0.0,1.0],[100.0],["orc","imp"]]}"#)
        .err()
        .expect("unequal columns must not deserialize");
    assert!(err.to_string().contains("different lengths"), "{err}");
    assert!(
        serde_json::from_str::<Level>(r#"{"enemies":[[0.0],[1.0]]}"#).is_err(),
        "a missing column"
    );
}

/// A nested field and a tuple struct: keys `pos.0`, `pos.1`, `hp`. Read back from the column
/// formats, so `Serialize` and `Deserialize`, as the rows they write and read must be.
#[derive(Soa, serde::Serialize, serde::Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct At(pub f32, pub f32);

/// A row with a nested field, for the named column format.
#[derive(Soa, serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
pub struct Unit {
    /// Position: columns `pos.0` and `pos.1`.
    #[soa(nested)]
    pub pos: At,
    /// Hit points.
    pub hp: u32,
}

/// The named column format through `#[serde(with)]`, the shape soa_derive writes.
#[derive(serde::Serialize, serde::Deserialize)]
struct Army {
    #[serde(with = "arena_kit::soa::serde::named_columns")]
    units: SoaVec<Unit>,
}

#[test]
fn named_column_format_round_trips_with_keys_in_any_order() {
    let units: SoaVec<Unit> = [
        Unit {
            pos: At(1.0, 2.0),
            hp: 3,
        },
        Unit {
            pos: At(4.0, 5.0),
            hp: 6,
        },
    ]
    .into();
    let army = Army { units };
    let json = serde_json::to_string(&army).unwrap();
    assert_eq!(
        json,
        r#"{"units":{"pos.0":[1.0,4.0],"pos.1":[2.0,5.0],"hp":[3,6]}}"#
    );
    let back: Army = serde_json::from_str(&json).unwrap();
    assert_eq!(back.units, army.units);
    let shuffled: Army =
        serde_json::from_str(r#"{"units":{"hp":[3,6],"pos.1":[2.0,5.0],"pos.0":[1.0,4.0]}}"#)
            .unwrap();
    assert_eq!(shuffled.units, army.units);
    for (bad, says) in [
        (
            r#"{"units":{"pos.0":[1.0],"pos.1":[2.0]}}"#,
            "`hp` is missing",
        ),
        (
            r#"{"units":{"pos.0":[1.0],"pos.1":[2.0],"hp":[3],"mp":[1]}}"#,
            "unknown SoA column `mp`",
        ),
        (
            r#"{"units":{"pos.0":[1.0],"pos.1":[2.0,5.0],"hp":[3]}}"#,
            "different lengths",
        ),
        (r#"{"units":[[1.0],[2.0],[3]]}"#, "a map of 3 named columns"),
    ] {
        let err = serde_json::from_str::<Army>(bad)
            .err()
            .expect(bad)
            .to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

#[test]
fn parallel_iteration_visits_every_row_once() {
    let mut v: SoaVec<Enemy> = (0..1000)
        .map(|i| Enemy {
            x: i as f32,
            health: 100.0,
            name: String::new(),
        })
        .collect();
    v.par_iter_mut().for_each(|e| *e.health -= *e.x);
    let total: f32 = v.par_iter().map(|e| *e.health).sum();
    assert_eq!(total, (0..1000).map(|i| 100.0 - i as f32).sum::<f32>());
}
