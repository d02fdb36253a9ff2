//! arena-kit: the memory tools shipped game engines rely on, with lifetimes enforced by the type
//! system.
//!
//! - [`derive@Layout`]: what a struct costs (offsets, padding, best field order) as a `const`,
//!   and `#[layout(size = .., align = .., max_padding = ..)]` assertions that fail the build.
//! - [`derive@Soa`]: struct-of-arrays storage, one column per field, for [`SoaVec`](soa::SoaVec)
//!   and SoA slices in arenas.
//!
//! This crate re-exports the runtime ([`arena_core`]) and the derive macros ([`arena_derive`]).
//! Most programs only need `use arena_kit::prelude::*;`.
#![forbid(unsafe_code)]

pub use arena_core::*;
pub use arena_derive::{Layout, Soa};

/// The names most programs want in scope.
pub mod prelude {
    pub use arena_core::soa::{Soa, SoaSlice, SoaSliceMut, SoaVec};
    pub use arena_core::{HasLayout, StructLayout, assert_layout};
    pub use arena_derive::{Layout, Soa};
}

/// Items used by generated code. Not part of the public API; may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use arena_core::__private::*;
}
