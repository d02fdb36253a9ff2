//! Derive macros of arena-kit. Use them through the `arena-kit` crate, which re-exports them.
//!
//! Each derive is built in the same four steps: the input is modelled (`ast`) with its attributes
//! parsed into it, struct and each field, with their spans (`soa::attr`, `layout::attr`, on the
//! shared helpers of `attr`), checked against the derive's rules (`valid`), and expanded
//! (`expand`). Generated code names arena-kit-core only through `<crate>::__private_v0_1`. Errors are
//! collected in a `ctxt::Ctxt` and reported together, and the trait impl is still emitted after
//! an attribute error so uses of it don't cascade.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

mod ast;
mod attr;
mod ctxt;
mod layout;
mod soa;

/// Implements `HasLayout` for a struct: `T::LAYOUT` holds the offsets, sizes and alignments of its
/// fields, its padding and its best field order, all usable in `const`.
///
/// Struct-level `#[layout(...)]` keys fail the build when the layout is not what you expect:
/// `size = N`, `max_size = N`, `align = N`, `max_padding = N`, `optimal` (no field order is
/// smaller) and `report` (fails on purpose and prints the layout table). `crate = path` (or
/// `crate = "path"`) names arena-kit when it is renamed in `Cargo.toml`, or `arena_kit_core` in a
/// crate that uses arena-kit-core without the facade.
///
/// ```
/// use arena_kit::{HasLayout, Layout};
///
/// #[derive(Layout)]
/// #[layout(size = 16, max_padding = 6)]
/// #[repr(C)]
/// struct Good {
///     b: f64,
///     a: u8,
///     c: u8,
/// }
///
/// assert_eq!(Good::LAYOUT.padding(), 6);
/// ```
#[proc_macro_derive(Layout, attributes(layout))]
pub fn derive_layout(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    layout::expand::derive(&input).into()
}

/// Stores a struct as one column per field: implements `Soa` and writes four view structs, for
/// `Particle`: `ParticleRef<'a>` and `ParticleMut<'a>` (one row's fields as references) and
/// `ParticleSlices<'a>` and `ParticleSlicesMut<'a>` (every column as a slice), each with a field
/// per struct field carrying that field's visibility. The containers (`SoaVec<T>`, arena SoA
/// slices) are generic code in arena-kit-core.
///
/// Struct keys in `#[soa(...)]`: `align = N` (every column starts on an `N`-byte boundary),
/// `derive(Clone, PartialEq, ...)` (derived on the views; `Clone`/`Copy` only on the shared ones;
/// `Debug` is accepted and changes nothing, as every view implements `Debug` already: printed as
/// `#[derive(Debug)]` would, `EnemyRef { x: 0.0, health: 100.0 }`, bounded on the field types, so
/// a field type without `Debug` is an error only where a view is printed),
/// `crate = path` or `crate = "path"` (arena-kit renamed in `Cargo.toml`, or `arena_kit_core` in a
/// crate that uses arena-kit-core without the facade). Field key: `#[soa(nested)]` on a field whose
/// type is itself `Soa` stores its fields as columns of their own (`slices.pos.x`); the impl and
/// the views then carry a `for<'__soa_nested> FieldType: Soa` bound, so a generic struct is `Soa`
/// for the arguments that make its nested fields `Soa`.
///
/// ```
/// use arena_kit::prelude::*;
///
/// #[derive(Soa)]
/// struct Enemy {
///     x: f32,
///     health: f32,
/// }
///
/// let mut enemies = SoaVec::new();
/// enemies.push(Enemy { x: 0.0, health: 100.0 });
/// enemies.push(Enemy { x: 1.0, health: 50.0 });
/// for h in enemies.slices_mut().health {
///     *h -= 10.0;
/// }
/// assert_eq!(enemies.slices().health, &[90.0, 40.0]);
/// assert_eq!(format!("{:?}", enemies.get(1).unwrap()), "EnemyRef { x: 1.0, health: 40.0 }");
/// ```
#[proc_macro_derive(Soa, attributes(soa))]
pub fn derive_soa(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    soa::expand::derive(&input).into()
}
