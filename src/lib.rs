//! arena-kit: the memory tools shipped game engines rely on, with lifetimes enforced by the type
//! system.
//!
//! - [`derive@Layout`]: what a struct costs (offsets, padding, best field order) as a `const`,
//!   and `#[layout(size = .., align = .., max_padding = ..)]` assertions that fail the build.
//! - [`heap::FreeListHeap`]: a general-purpose free-list heap over one region (boundary tags,
//!   O(1) segregated fit, double frees caught as errors, stats and an SVG memory map).
//!
//! This crate re-exports the runtime ([`arena_core`]) and the derive macros ([`arena_derive`]).
//! Most programs only need `use arena_kit::prelude::*;`.
#![forbid(unsafe_code)]

pub use arena_core::*;

/// The names most programs want in scope.
pub mod prelude {
    pub use arena_core::heap::{Fit, FreeListHeap, HeapError};
}

/// Items used by generated code. Not part of the public API; may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use arena_core::__private::*;
}
