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
/// fields, its padding and its best field order, all usable in `const`. On an enum it implements
/// `HasEnumLayout` instead: `T::LAYOUT` is an `EnumLayout` with the tag, each variant's payload,
/// the largest variant and what boxing it would save.
///
/// Struct-level `#[layout(...)]` keys fail the build when the layout is not what you expect:
/// `size = N`, `max_size = N`, `align = N`, `max_padding = N`, `optimal` (no field order is
/// smaller; structs only), `max_variant_size = N` (no variant's payload is larger; enums only),
/// the cache-line keys below (structs only) and `report` (fails on purpose and prints the layout
/// table). `#[layout(...)]` goes on the type, not on a field or a variant. `crate = path` (or
/// `crate = "path"`) names arena-kit when it is renamed in `Cargo.toml`, or `arena_kit_core` in a
/// crate that uses arena-kit-core without the facade.
///
/// Cache-line keys say which fields a loop or a thread touches together:
///
/// - `hot(a, b, c)`: the bytes of these fields lie in one cache line, or in `hot_lines = N` lines.
/// - `same_line(a, b)`: both fields lie entirely in one line.
/// - `separate_lines(a, b)`: the fields never share a line, so two threads writing them don't
///   slow each other down (false sharing).
/// - `line = N` (a power of two, default 64; 128 for cores with 128-byte lines) and
///   `hot_lines = N` (at least 1, default 1) apply to the checks of their own `#[layout(...)]`;
///   `hot`, `same_line` and `separate_lines` may each be given several times.
///
/// Lines count from the struct's start, which is only meaningful when the struct is aligned to a
/// line: `hot` and `same_line` fail on a struct whose align is below `line`, asking for
/// `#[repr(align(64))]`. `separate_lines` then holds at any address only if at least `line - 1`
/// bytes lie between the end of one field and the start of the other (the last byte of the
/// first and the first of the second are then `line` apart); on an aligned struct it compares line
/// numbers. Fields are named as declared, or by position (`hot(0, 1)`) in a tuple struct. A failed
/// check names the fields, their lines and a fix.
///
/// `cfg(predicate)` makes every check of its `#[layout(...)]` (and its `report`) conditional, as
/// `#[cfg(predicate)]` would, so one struct carries its numbers for each target; keys may repeat
/// across attributes with different `cfg`s. `crate` cannot be conditional. Clippy's
/// `duplicated_attributes` lint compares keys by name, not by integer value, so a struct that
/// repeats `size` under two `cfg`s (or the same `cfg` in two attributes) needs
/// `#[allow(clippy::duplicated_attributes)]`.
///
/// ```
/// use core::sync::atomic::AtomicU64;
/// use arena_kit::Layout;
///
/// #[derive(Layout)]
/// #[layout(hot(pos, vel), separate_lines(pos, written_by_audio))]
/// #[layout(cfg(target_pointer_width = "64"), size = 128)]
/// #[repr(C, align(64))]
/// struct Emitter {
///     pos: [f32; 3],
///     vel: [f32; 3],
///     cold: [u8; 40],
///     written_by_audio: AtomicU64,
/// }
/// ```
///
/// ```
/// use arena_kit::{HasEnumLayout, HasLayout, Layout};
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
///
/// #[derive(Layout)]
/// #[layout(max_size = 16, max_variant_size = 8)]
/// enum Shape {
///     Circle(f32),
///     Rect { w: f32, h: f32 },
/// }
///
/// assert_eq!(Shape::LAYOUT.size(), 12);
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
/// Struct key `plain`: implements `PlainRow`, the promise that any values of the row's fields make
/// a valid row and that its clone is its fields' clones, so containers may clone it and the serde
/// column formats may read it field by field. A row whose fields are all `pub` is plain without
/// it (any code could build any row anyway); one with private fields that keep an invariant must
/// not say it. Refused beside `#[serde(try_from = "..")]` or `#[serde(from = "..")]`, whose
/// conversion would be skipped. Each `pub` field also gets `PublicField<K>` (its column may be
/// lent by position, `TrackedSoaVec::column_mut::<K>()`).
///
/// Struct key `tiled`: also implements `SoaTiled` (storage in `SoaTiles<T, N>`, tiles of `N`
/// rows) and writes two more views, `ParticleTile<'a, N>` and `ParticleTileMut<'a, N>`, a
/// `&[F; N]` / `&mut [F; N]` per field (a nested field's own tile view; it must be `tiled` too).
/// An attribute rather than a derive of its own, so the struct's `#[soa(...)]` is read once and
/// `Soa` stays as it is: a hand-written `Soa` impl compiles unchanged (and can implement the
/// safe `SoaTiled` by hand).
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
