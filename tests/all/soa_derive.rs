//! `#[derive(Soa)]` through the facade: every struct shape the derive accepts, every attribute, and
//! the worked examples. The crate denies `unsafe_code` and `missing_docs` (workspace lints),
//! so the generated code is checked against both.
#![deny(unsafe_code)]

use std::fmt::Debug;
use std::marker::PhantomData;

use arena_kit::prelude::*;

/// The particle: seven `f32`.
#[derive(Soa, Debug, Clone, Copy, PartialEq, Default)]
#[soa(derive(Debug, Clone, Copy, PartialEq))]
pub struct Particle {
    /// Position.
    pub x: f32,
    /// Position.
    pub y: f32,
    /// Position.
    pub z: f32,
    /// Velocity.
    pub vx: f32,
    /// Velocity.
    pub vy: f32,
    /// Velocity.
    pub vz: f32,
    /// Seconds remaining.
    pub life: f32,
}

/// The `ParticleSystem::updatePositions`, on the generated column view.
fn update_positions(ps: &mut SoaVec<Particle>, dt: f32) {
    let ParticleSlicesMut {
        x,
        y,
        z,
        vx,
        vy,
        vz,
        ..
    } = ps.slices_mut();
    for i in 0..x.len() {
        x[i] += vx[i] * dt;
        y[i] += vy[i] * dt;
        z[i] += vz[i] * dt;
    }
}

#[test]
fn update_positions_through_column_views() {
    let mut ps = SoaVec::new();
    ps.push(Particle {
        x: 1.0,
        y: 2.0,
        z: 3.0,
        vx: 2.0,
        vy: -4.0,
        vz: 0.0,
        life: 5.0,
    });
    ps.push(Particle {
        x: 0.0,
        vx: 1.0,
        vy: 1.0,
        vz: 1.0,
        ..Particle::default()
    });
    update_positions(&mut ps, 0.5);
    let s: ParticleSlices<'_> = ps.slices();
    assert_eq!(
        (s.x, s.y, s.z),
        (&[2.0, 0.5][..], &[0.0, 0.5][..], &[3.0, 0.5][..])
    );
    let r: ParticleRef<'_> = ps.get(0).unwrap();
    assert_eq!(*r.life, 5.0);
    let m: ParticleMut<'_> = ps.get_mut(1).unwrap();
    *m.life = 9.0;
    assert_eq!(
        ps.pop(),
        Some(Particle {
            x: 0.5,
            y: 0.5,
            z: 0.5,
            vx: 1.0,
            vy: 1.0,
            vz: 1.0,
            life: 9.0
        })
    );
}

/// The exercise: parallel arrays of enemies.
#[derive(Soa)]
pub struct Enemy {
    /// Position.
    pub x: f32,
    /// Position.
    pub y: f32,
    /// Hit points.
    pub health: f32,
    /// Identifier.
    pub id: i32,
}

/// The `damageAll`.
fn damage_all(es: &mut SoaVec<Enemy>, amount: f32) {
    for h in es.slices_mut().health {
        *h -= amount;
    }
}

#[test]
fn damage_all_through_column_views() {
    let mut es = SoaVec::new();
    es.push(Enemy {
        x: 0.0,
        y: 0.0,
        health: 100.0,
        id: 1,
    });
    es.push(Enemy {
        x: 1.0,
        y: 1.0,
        health: 50.0,
        id: 2,
    });
    damage_all(&mut es, 10.0);
    assert_eq!(es.slices().health, &[90.0, 40.0]);
    assert_eq!(format!("{:.1}", es.slices().health[0]), "90.0");
    assert_eq!(format!("{:.1}", es.slices().health[1]), "40.0");
}

/// Columns `0` and `1`.
#[derive(Soa, Clone)]
#[soa(derive(Debug, Clone, PartialEq))]
pub struct Pair(pub u8, pub String);

#[test]
fn tuple_structs_have_numbered_columns() {
    let mut v: SoaVec<Pair> = vec![Pair(1, "a".into()), Pair(2, "b".into())].into();
    assert_eq!(v.slices().0, &[1, 2]);
    assert_eq!(v.get(1).unwrap().1, "b");
    v.get_mut(0).unwrap().1.push('!');
    let PairSlices(nums, names) = v.slices();
    assert_eq!((nums.len(), names[0].as_str()), (2, "a!"));
    let back: Vec<Pair> = v.into_vec();
    assert_eq!(back[0].1, "a!");
}

/// Generic with bounds, a where clause, a lifetime and a zero-sized field.
#[derive(Soa, Clone)]
#[soa(derive(Debug))]
pub struct Tagged<'n, T: Clone + Debug, const N: usize>
where
    T: PartialEq,
{
    /// A borrowed name.
    pub name: &'n str,
    /// The payload.
    pub value: T,
    /// A fixed array.
    pub arr: [u8; N],
    /// A marker.
    pub marker: PhantomData<T>,
}

#[test]
fn generics_lifetimes_and_zero_sized_fields() {
    let owner = String::from("orc");
    let mut v: SoaVec<Tagged<'_, Vec<u32>, 2>> = SoaVec::new();
    v.push(Tagged {
        name: &owner,
        value: vec![1],
        arr: [1, 2],
        marker: PhantomData,
    });
    v.push(Tagged {
        name: &owner,
        value: vec![2, 3],
        arr: [3, 4],
        marker: PhantomData,
    });
    assert_eq!(v.slices().value[1], vec![2, 3]);
    assert_eq!(v.slices().arr[0], [1, 2]);
    assert_eq!(*v.get(0).unwrap().name, "orc");
    v.remove(0);
    assert_eq!(v.len(), 1);
    assert_eq!(v.slices().marker.len(), 1);
}

/// A 3-vector, itself `Soa`.
#[derive(Soa, Debug, Clone, Copy, PartialEq)]
#[soa(derive(Debug, Clone, Copy))]
pub struct Vec3 {
    /// x
    pub x: f32,
    /// y
    pub y: f32,
    /// z
    pub z: f32,
}

/// A body whose position is split into three columns, every column on a cache line.
#[derive(Soa, Debug, Clone, PartialEq)]
#[soa(align = 64, derive(Debug))]
pub struct Body {
    /// Position: columns `pos.x`, `pos.y`, `pos.z`.
    #[soa(nested)]
    pub pos: Vec3,
    /// Mass.
    pub mass: f64,
    /// Drop glue.
    pub name: String,
}

#[test]
fn nested_fields_and_aligned_columns() {
    let mut v = SoaVec::new();
    for i in 0..3 {
        let f = i as f32;
        v.push(Body {
            pos: Vec3 {
                x: f,
                y: f * 2.0,
                z: f * 3.0,
            },
            mass: 1.0,
            name: format!("b{i}"),
        });
    }
    let s = v.slices_mut();
    for y in s.pos.y.iter_mut() {
        *y += 0.5;
    }
    let s = v.slices();
    assert_eq!(s.pos.y, &[0.5, 2.5, 4.5]);
    for p in [
        s.pos.x.as_ptr() as usize,
        s.pos.y.as_ptr() as usize,
        s.mass.as_ptr() as usize,
    ] {
        assert_eq!(p % 64, 0);
    }
    let r: BodyRef<'_> = v.get(2).unwrap();
    assert_eq!((*r.pos.z, r.name.as_str()), (6.0, "b2"));
    assert_eq!(
        v.remove(0),
        Body {
            pos: Vec3 {
                x: 0.0,
                y: 0.5,
                z: 0.0
            },
            mass: 1.0,
            name: "b0".into()
        }
    );
}

/// Fields named like container methods.
#[derive(Soa)]
pub struct Shadow {
    /// Not the container's length.
    pub len: u32,
    /// Not the container's iterator.
    pub iter: u32,
    /// Not `capacity`.
    pub capacity: u32,
}

#[test]
fn fields_named_len_and_iter_do_not_shadow_methods() {
    let mut v = SoaVec::new();
    v.push(Shadow {
        len: 7,
        iter: 8,
        capacity: 9,
    });
    assert_eq!(v.len(), 1);
    assert_eq!(v.iter().count(), 1);
    assert_eq!(v.slices().len, &[7]);
    assert_eq!(v.slices().iter, &[8]);
    assert_eq!(*v.get(0).unwrap().capacity, 9);
}

mod private_fields {
    use arena_kit::prelude::*;

    /// One public and one private field.
    #[derive(Soa)]
    pub struct Secretive {
        /// Public.
        pub shown: u8,
        hidden: u8,
    }

    /// Makes a vector (the private field cannot be named outside this module).
    pub fn make() -> SoaVec<Secretive> {
        let mut v = SoaVec::new();
        v.push(Secretive {
            shown: 1,
            hidden: 2,
        });
        assert_eq!(v.slices().hidden, &[2]);
        let row = v.pop().unwrap();
        assert_eq!((row.shown, row.hidden), (1, 2));
        v.push(row);
        v
    }
}

#[test]
fn field_visibility_carries_to_columns() {
    let v = private_fields::make();
    assert_eq!(v.slices().shown, &[1]);
}

mod renamed {
    extern crate arena_kit as kit;

    /// Uses `crate = kit`.
    #[derive(kit::Soa)]
    #[soa(crate = kit)]
    pub struct Renamed {
        /// A value.
        pub a: u16,
    }

    #[test]
    fn crate_path_override() {
        let mut v = kit::soa::SoaVec::new();
        v.push(Renamed { a: 3 });
        assert_eq!(v.slices().a, &[3]);
        assert_eq!(v.pop().map(|r| r.a), Some(3));
    }
}

#[test]
fn views_carry_the_requested_derives() {
    let v: SoaVec<Particle> = (0..3)
        .map(|i| Particle {
            x: i as f32,
            ..Default::default()
        })
        .collect();
    let a = v.get(1).unwrap();
    let b = a; // Copy
    assert_eq!(a, b);
    assert!(format!("{a:?}").starts_with("ParticleRef"));
    assert!(format!("{v:?}").contains("ParticleRef"));
    let c = v.clone();
    assert_eq!(c, v);
}

/// A row without `#[soa(derive(..))]`: its views are `Debug` anyway.
#[derive(Soa)]
pub struct Spark {
    /// Position.
    pub pos: [f32; 2],
    /// Seconds remaining.
    pub life: f32,
}

/// A generic row: its views are `Debug` when its fields are.
#[derive(Soa)]
pub struct Slot<T> {
    /// The slot's id.
    pub id: u32,
    /// The payload.
    pub value: T,
}

#[test]
fn views_are_debug_without_a_derive_and_print_like_a_struct() {
    let mut v = SoaVec::new();
    v.push(Spark {
        pos: [1.0, 2.0],
        life: 0.5,
    });
    assert_eq!(
        format!("{:?}", v.get(0).unwrap()),
        "SparkRef { pos: [1.0, 2.0], life: 0.5 }"
    );
    assert_eq!(
        format!("{:?}", v.get_mut(0).unwrap()),
        "SparkMut { pos: [1.0, 2.0], life: 0.5 }"
    );
    assert_eq!(
        format!("{:?}", v.slices()),
        "SparkSlices { pos: [[1.0, 2.0]], life: [0.5] }"
    );
    assert_eq!(
        format!("{:?}", v.slices_mut()),
        "SparkSlicesMut { pos: [[1.0, 2.0]], life: [0.5] }"
    );
    // `{:#?}` works as for a derived `Debug`.
    assert_eq!(
        format!("{:#?}", v.get(0).unwrap()),
        "SparkRef {\n    pos: [\n        1.0,\n        2.0,\n    ],\n    life: 0.5,\n}"
    );
}

#[test]
fn generic_nested_and_tuple_rows_print_their_views() {
    let mut slots = SoaVec::new();
    slots.push(Slot {
        id: 7,
        value: String::from("orc"),
    });
    assert_eq!(
        format!("{:?}", slots.get(0).unwrap()),
        r#"SlotRef { id: 7, value: "orc" }"#
    );
    // A payload without `Debug` is fine as long as no view is printed.
    struct Opaque;
    let mut opaque = SoaVec::new();
    opaque.push(Slot {
        id: 1,
        value: Opaque,
    });
    assert_eq!(opaque.slices().id, &[1]);

    let mut bodies = SoaVec::new();
    bodies.push(Body {
        pos: Vec3 {
            x: 1.0,
            y: 2.0,
            z: 3.0,
        },
        mass: 4.0,
        name: "b0".into(),
    });
    assert_eq!(
        format!("{:?}", bodies.get_mut(0).unwrap()),
        r#"BodyMut { pos: Vec3Mut { x: 1.0, y: 2.0, z: 3.0 }, mass: 4.0, name: "b0" }"#
    );
    assert_eq!(
        format!("{:?}", bodies.slices()),
        r#"BodySlices { pos: Vec3Slices { x: [1.0], y: [2.0], z: [3.0] }, mass: [4.0], name: ["b0"] }"#
    );

    let pairs: SoaVec<Pair> = vec![Pair(1, "a".into())].into();
    assert_eq!(format!("{:?}", pairs.get(0).unwrap()), r#"PairRef(1, "a")"#);
}

/// A row with a field that is not `Clone`: it still derives, only `to_value` is unavailable.
#[derive(Soa)]
pub struct Unclonable {
    /// Not `Clone`.
    pub lock: std::sync::Mutex<u8>,
    /// Clone.
    pub n: u8,
}

#[test]
fn to_value_on_every_struct_shape_the_derive_accepts() {
    // Tuple struct.
    let v: SoaVec<Pair> = [Pair(1, "a".into()), Pair(2, "b".into())].into();
    let Pair(n, s) = v.get(1).unwrap().to_value();
    assert_eq!((n, s.as_str()), (2, "b"));
    // Generics, a lifetime, a const parameter and a zero-sized field.
    let owner = String::from("orc");
    let mut t: SoaVec<Tagged<'_, Vec<u32>, 2>> = SoaVec::new();
    t.push(Tagged {
        name: &owner,
        value: vec![7],
        arr: [1, 2],
        marker: PhantomData,
    });
    let back = t.get_mut(0).unwrap().to_value();
    assert_eq!((back.name, back.value, back.arr), ("orc", vec![7], [1, 2]));
    // A nested field on 64-byte columns, through the `Mut` view too.
    let mut b: SoaVec<Body> = SoaVec::new();
    b.push(Body {
        pos: Vec3 {
            x: 1.0,
            y: 2.0,
            z: 3.0,
        },
        mass: 4.0,
        name: "b".into(),
    });
    let want = Body {
        pos: Vec3 {
            x: 1.0,
            y: 2.0,
            z: 3.0,
        },
        mass: 4.0,
        name: "b".into(),
    };
    assert_eq!(b.get(0).unwrap().to_value(), want);
    assert_eq!(b.get_mut(0).unwrap().to_value(), want);
    // Without `Clone` fields the views exist and work, `to_value` does not apply.
    let u: SoaVec<Unclonable> = [Unclonable {
        lock: std::sync::Mutex::new(1),
        n: 2,
    }]
    .into();
    assert_eq!(*u.get(0).unwrap().n, 2);
}

/// A row whose views compare: the generic sort and `SoaVec`'s own order through the facade.
#[derive(Soa, Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[soa(derive(PartialEq, Eq, PartialOrd, Ord))]
pub struct Score {
    /// Points.
    pub points: u32,
    /// Who.
    pub who: String,
}

fn sort_generic<T: Soa>(v: &mut SoaVec<T>)
where
    for<'a> T::Ref<'a>: PartialOrd,
{
    v.sort_by(|a, b| a.partial_cmp(&b).expect("a total order"));
}

#[test]
fn generic_code_sorts_and_vectors_order_like_vec() {
    let rows = [(3, "c"), (1, "z"), (3, "a"), (2, "m")]
        .map(|(points, who)| Score {
            points,
            who: who.into(),
        })
        .to_vec();
    let mut v: SoaVec<Score> = rows.clone().into();
    sort_generic(&mut v);
    let mut want = rows.clone();
    want.sort();
    assert_eq!(v.iter().map(|r| r.to_value()).collect::<Vec<_>>(), want);
    let unsorted: SoaVec<Score> = rows.clone().into();
    assert_eq!(v.cmp(&unsorted), want.cmp(&rows));
    assert!(v != unsorted);
    let mut u = unsorted.clone();
    u.sort_unstable();
    assert_eq!(u, v);
}
