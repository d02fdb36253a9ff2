//! A table of enums covering niches, explicit reprs and generic instantiations, shared by the
//! stable test (`enum_layouts`) and the `enum_layouts` example, whose numbers
//! `scripts/enum-layouts-vs-rustc.sh` compares with rustc's `-Zprint-type-sizes`.

#![allow(dead_code)]

use core::num::NonZeroU32;

use arena_kit::{EnumLayout, HasEnumLayout, Layout};

/// `Option<&u8>`: the null niche holds `None`.
#[derive(Layout)]
pub enum MaybeRef<'a> {
    /// A reference.
    Some(&'a u8),
    /// Nothing.
    None,
}

/// `Option<NonZeroU32>`: zero is the niche.
#[derive(Layout)]
pub enum MaybeNonZero {
    /// A non-zero value.
    Some(NonZeroU32),
    /// Nothing.
    None,
}

/// A `bool`'s 254 invalid values are niches.
#[derive(Layout)]
pub enum Flag {
    /// On, with a value.
    On(bool),
    /// Off.
    Off,
}

/// Fieldless: the tag is all there is.
#[derive(Layout)]
pub enum Plain {
    /// First.
    A,
    /// Second.
    B,
    /// Third.
    C,
}

/// No niche in `u64` or `u8`: a tag, padded to 8.
#[derive(Layout)]
pub enum Tagged {
    /// Eight bytes.
    Int(u64),
    /// One byte.
    Byte(u8),
}

/// The tag fits in the payload's padding: no bigger than the payload.
#[derive(Layout)]
pub enum InPadding {
    /// Five bytes of fields in eight.
    A(u32, u8),
    /// Nothing.
    B,
}

/// An 8-bit tag, then each variant's fields as a `#[repr(C)]` struct.
#[derive(Layout)]
#[repr(u8)]
pub enum ReprU8 {
    /// A `u32` at 4.
    A(u32),
    /// A `u16` at 2 and a `u8` at 4.
    B(u16, u8),
    /// Nothing.
    C,
}

/// A 32-bit tag.
#[derive(Layout)]
#[repr(u32)]
pub enum ReprU32 {
    /// A byte at 4.
    A(u8),
    /// A `u64` at 8.
    B(u64),
}

/// A C enum tag (4 bytes), then a union of the payloads.
#[derive(Layout)]
#[repr(C)]
pub enum ReprC {
    /// A `u64` at 8.
    A(u64),
    /// A `u8` at 8 and a `u16` at 10.
    B(u8, u16),
    /// Nothing.
    C,
}

/// A `u8` tag, then a union of the payloads.
#[derive(Layout)]
#[repr(C, u8)]
pub enum ReprCU8 {
    /// A `u64` at 8.
    A(u64),
    /// A `u8` at 8 and a `u16` at 10.
    B(u8, u16),
    /// Nothing.
    C,
}

/// Named fields under an integer repr.
#[derive(Layout)]
#[repr(u16)]
pub enum Named {
    /// Two floats at 4 and 8.
    Move {
        /// Across.
        x: f32,
        /// Up.
        y: f32,
    },
    /// Nothing.
    Stop,
}

/// Signed discriminants that need 16 bits.
#[derive(Layout)]
#[repr(i16)]
pub enum Signed {
    /// Minus one.
    A = -1,
    /// More than a byte holds.
    B = 300,
}

/// Alignment raised by `repr(align(16))`.
#[derive(Layout)]
#[repr(u8, align(16))]
pub enum Aligned {
    /// A byte at 1.
    A(u8),
    /// Nothing.
    B,
}

/// Generic: the niche depends on `T`.
#[derive(Layout)]
pub enum Generic<T> {
    /// A value.
    Some(T),
    /// Nothing.
    None,
}

/// Generic under an integer repr.
#[derive(Layout)]
#[repr(u8)]
pub enum GenericU8<T> {
    /// A value after the tag.
    A(T),
    /// Nothing.
    B,
}

/// One huge variant: worth boxing.
#[derive(Layout)]
pub enum Big {
    /// One byte.
    Small(u8),
    /// 64 bytes.
    Huge([u64; 8]),
}

/// One row of the table: the name rustc prints for the type, our layout, and the compiler's own
/// `size_of` and `align_of`.
pub struct Row {
    /// The type as `-Zprint-type-sizes` names it, without the module path.
    pub name: &'static str,
    /// What the derive says.
    pub layout: EnumLayout,
    /// `size_of`.
    pub size_of: usize,
    /// `align_of`.
    pub align_of: usize,
}

fn row<T: HasEnumLayout>(name: &'static str) -> Row {
    Row {
        name,
        layout: T::LAYOUT,
        size_of: core::mem::size_of::<T>(),
        align_of: core::mem::align_of::<T>(),
    }
}

/// Every enum of the table.
pub fn table() -> Vec<Row> {
    vec![
        row::<MaybeRef<'static>>("MaybeRef<'_>"),
        row::<MaybeNonZero>("MaybeNonZero"),
        row::<Flag>("Flag"),
        row::<Plain>("Plain"),
        row::<Tagged>("Tagged"),
        row::<InPadding>("InPadding"),
        row::<ReprU8>("ReprU8"),
        row::<ReprU32>("ReprU32"),
        row::<ReprC>("ReprC"),
        row::<ReprCU8>("ReprCU8"),
        row::<Named>("Named"),
        row::<Signed>("Signed"),
        row::<Aligned>("Aligned"),
        row::<Generic<u32>>("Generic<u32>"),
        row::<Generic<&'static u16>>("Generic<&u16>"),
        row::<Generic<[u8; 3]>>("Generic<[u8; 3]>"),
        row::<GenericU8<u64>>("GenericU8<u64>"),
        row::<Big>("Big"),
    ]
}
