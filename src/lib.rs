#![doc = include_str!("../README.md")]
#![doc = include_str!("../docs/features.md")]
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "std")]
extern crate std;

pub use arena_kit_core::*;
pub use arena_kit_derive::{Layout, Soa};

pub mod guide;

/// The names most programs want in scope.
pub mod prelude {
    #[cfg(feature = "std")]
    pub use arena_kit_core::arena::scratch;
    pub use arena_kit_core::arena::{Arena, ArenaError, Marker, Scope};
    #[cfg(feature = "alloc")]
    pub use arena_kit_core::arena::{Frame, FrameArena, FrameReader};
    pub use arena_kit_core::arena_format;
    pub use arena_kit_core::collections::{ArenaBox, ArenaString, ArenaVec};
    pub use arena_kit_core::heap::{Fit, FreeError, FreeListHeap, HeapError, RequestError};
    #[cfg(feature = "std")]
    pub use arena_kit_core::pool::SparseSecondaryPool;
    #[cfg(feature = "alloc")]
    pub use arena_kit_core::pool::{Handle, Handle32, Pool, PoolFull, SecondaryPool};
    pub use arena_kit_core::soa::{Soa, SoaSlice, SoaSliceMut, ToValue};
    #[cfg(feature = "alloc")]
    pub use arena_kit_core::soa::{SoaPool, SoaTiles, SoaVec};
    #[cfg(feature = "std")]
    pub use arena_kit_core::tags::Recorder;
    pub use arena_kit_core::tags::{
        Budget, BudgetExceeded, Budgeted, MemoryUsage, Policy, Tag, TagPath, Tracked, Usage,
    };
    #[cfg(feature = "alloc")]
    pub use arena_kit_core::tags::{Registry, Report};
    pub use arena_kit_core::{
        EnumLayout, HasEnumLayout, HasLayout, StructLayout, assert_enum_layout, assert_layout,
    };
    pub use arena_kit_derive::{Layout, Soa};
}

/// Items used by generated code. Not part of the public API; may change in any release (the
/// derives and arena-kit-core are pinned to this release with `=`, so they always agree on it).
#[doc(hidden)]
pub mod __private_v0_1 {
    pub use arena_kit_core::__private_v0_1::*;
}
