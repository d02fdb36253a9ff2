//! The runtime of arena-kit.
//!
//! Every container and allocator lives here as plain generic code; the derive macros in
//! `arena-derive` only implement the traits this crate defines ([`HasLayout`], ...). Users normally
//! depend on the facade crate `arena-kit`, which re-exports this crate and the derives.
//!
//! | module | pick it when |
//! | --- | --- |
//! | [`arena`] | data that dies together: per-frame, per-level or per-call temporaries (bump allocation, O(1) reset, scopes, N-buffered frame arenas, per-thread scratch) |
//! | [`heap`] | irregular, long-lived allocations of many sizes freed in any order (level assets): a free-list heap with O(1) good fit, coalescing, safe double frees and a memory map |
//! | [`layout`] | you want to know, or assert at compile time, what a struct costs in bytes |
//! | [`poison`] | you read memory in a debugger and want to know what the fill bytes mean |
//! | [`pool`] | many objects of one type with independent lifetimes (bullets, enemies), referred to by generational handles |
//! | [`soa`] | hot loops read a few fields of many values: one column per field, `SoaVec`, SoA slices |
//! | [`tags`] | you want to know which subsystem owns every byte, keep subsystems inside budgets, and catch leaks (names, tags, budgets, reports, CSV/JSON/SVG) |
#![no_std]
#![warn(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod arena;
pub mod heap;
pub mod layout;
pub mod poison;
#[cfg(feature = "alloc")]
pub mod pool;
pub mod soa;
#[cfg(feature = "alloc")]
mod sync;
pub mod tags;

#[cfg(feature = "std")]
pub use arena::scratch;
pub use arena::{Arena, ArenaError, Marker, Scope};
#[cfg(feature = "alloc")]
pub use arena::{Frame, FrameArena, FrameReader};
pub use layout::{FieldLayout, HasLayout, Repr, ReprKind, StructLayout};
#[cfg(feature = "alloc")]
pub use pool::{Handle, Pool, PoolFull};

/// Items used by generated code. Not part of the public API; may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use core;
    /// What `#[derive(Soa)]` names.
    pub mod soa {
        pub use crate::soa::{Col, Columns, Nested, Soa};
    }
}
