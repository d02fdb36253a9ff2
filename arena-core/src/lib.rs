//! The runtime of arena-kit.
//!
//! Every container and allocator lives here as plain generic code; the derive macros in
//! `arena-kit-derive` only implement the traits this crate defines ([`HasLayout`], ...). Users normally
//! depend on the facade crate `arena-kit`, which re-exports this crate and the derives.
//!
//! | module | pick it when |
//! | --- | --- |
//! | [`arena`] | data that dies together: per-frame, per-level or per-call temporaries (bump allocation, O(1) reset, scopes, N-buffered frame arenas, per-thread scratch) |
//! | [`collections`] | a list or a text of unknown length built inside an arena (`ArenaVec`, `ArenaString`, `arena_format!`) |
//! | [`heap`] | irregular, long-lived allocations of many sizes freed in any order (level assets): a free-list heap with O(1) good fit, coalescing, safe double frees and a memory map |
//! | [`layout`] | you want to know, or assert at compile time, what a struct or an enum costs in bytes |
//! | [`poison`] | you read memory in a debugger and want to know what the fill bytes mean |
//! | [`pool`] | many objects of one type with independent lifetimes (bullets, enemies), referred to by generational handles |
//! | [`soa`] | hot loops read a few fields of many values: one column per field, `SoaVec`, SoA slices |
//! | [`tags`] | you want to know which subsystem owns every byte, keep subsystems inside budgets, and catch leaks (names, tags, budgets, reports, CSV/JSON/SVG) |
//!
//! ## Features
//!
//! The facade `arena-kit` has the same features and passes each one through. With
//! `default-features = false` this crate needs no allocator: arenas over your buffers, the
//! free-list heap over a region, [`LockedHeap`](heap::LockedHeap) (also as a
//! `#[global_allocator]`), layouts, SoA slices and tags all work on bare metal.
//!
//! | feature | default | turns on | implies |
//! | --- | --- | --- | --- |
//! | `std` | yes | thread-local scratch arenas (`scratch`, `ThreadScratch`); `LockedHeap` tells threads apart, so only the thread inside `with` is refused; the tagging global allocator (`tags::TaggingAllocator`, `tag_scope`); the allocation recorder (`tags::Recorder`) | `alloc` |
//! | `alloc` | (through `std`) | heap-backed containers: `Pool`, `FrameArena`, `SoaVec`, `SoaPool`, `GuardedHeap`, `FreeListHeap::with_capacity`, `Registry` and `Report` | |
//! | `allocator-api2` | yes | `allocator_api2::alloc::Allocator` for `&Arena` and `&HeapCell`, so `allocator_api2`/`hashbrown` collections live in them | |
//! | `log` | yes | budget warnings, leak reports and guard reports go to the `log` facade (nowhere without it) | |
//! | `debug-checks` | no | guard bytes (`0xFE`) and poison (`0xDD`) in release builds too; always on under `debug_assertions` | |
//! | `serde` | no | `Serialize`/`Deserialize` for `Pool`, `Handle`, the side tables (`SecondaryPool`, `SparseSecondaryPool`), `SoaVec` and the memory reports; `Serialize` for `StructLayout` and the layout snapshot | `alloc` |
//! | `rayon` | no | parallel row iteration over SoA containers, per-worker arenas (`WorkerArenas`) | `std` |
//! | `layout-registry` | no | every non-generic `#[derive(Layout)]` struct (and what `layouts!` lists) registers itself through `inventory`, for `layout::snapshot::check`, a test against a committed table of the program's layouts | `std` |
#![no_std]
#![warn(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// The prose of the docs names the heap-backed types (`Pool`, `Arena::chained`, `Registry`, ...)
// and the thread-aware ones (`scratch`, `tag_scope`, `TaggingAllocator`, `SparseSecondaryPool`)
// wherever they are the answer; without `std` some of those items do not exist, so in those
// builds, and only there, such links are plain text rather than errors. CI builds the
// documentation with the default features (every link checked) and without any.
#![cfg_attr(not(feature = "std"), allow(rustdoc::broken_intra_doc_links))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod arena;
pub mod collections;
pub mod heap;
pub mod layout;
mod or_panic;
pub mod poison;
#[cfg(feature = "alloc")]
pub mod pool;
mod range;
pub mod soa;
#[cfg(feature = "alloc")]
mod sync;
// Address-space reservations (`mmap`), for containers that grow in place.
#[cfg(feature = "alloc")]
mod vm;

/// Marks the path it is called on as unlikely (an empty `#[cold]` function, inlined): the
/// compiler then keeps each test of a fast path a branch of its own instead of merging tests
/// into flags and one branch, and lays the fast path out straight.
#[cold]
#[inline(always)]
pub(crate) fn cold_path() {}

/// Asks the processor to start loading the cache line that holds `addr`, for a read soon after,
/// without waiting for it: x86-64's `prefetcht0`, AArch64's `prfm pldl1keep`, nothing on other
/// targets or under Miri. It has no effect the program can observe and never faults, whatever
/// the address: a wrong one costs a line loaded for nothing.
#[inline(always)]
pub(crate) fn prefetch(addr: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetcht0` needs SSE, which every x86-64 processor has. It dereferences
    // nothing the program can observe, so any address is allowed.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(addr.cast());
    }
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: `prfm` dereferences nothing the program can observe, so any address is allowed;
    // it writes no memory, no register, no flags and no stack.
    unsafe {
        core::arch::asm!(
            "prfm pldl1keep, [{0}]",
            in(reg) addr,
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(all(any(target_arch = "x86_64", target_arch = "aarch64"), not(miri))))]
    let _ = addr;
}
pub mod tags;
// The global profiler sink's atomic slot (its `unsafe` half), outside the safe `tags`.
#[cfg(feature = "profiler")]
mod profiler_slot;
// `tags::TracySink`: the Tracy FFI, outside the safe `tags`.
#[cfg(feature = "tracy")]
mod tracy_sink;
// The unsafe half of `tags::TaggingAllocator` (its `GlobalAlloc` impl), outside the safe `tags`.
#[cfg(feature = "std")]
mod tagging_alloc;

// The main types sit at the root too (`arena_kit::SoaVec` beside `arena_kit::Arena`): what the
// README and the facade's prelude use, so a pasted example needs no module path.
#[cfg(feature = "std")]
pub use arena::scratch;
pub use arena::{Arena, ArenaError, Marker, Scope};
#[cfg(feature = "alloc")]
pub use arena::{Frame, FrameArena, FrameReader};
pub use heap::{Fit, FreeListHeap};
pub use layout::{EnumLayout, FieldLayout, HasEnumLayout, HasLayout, Repr, ReprKind, StructLayout};
#[cfg(feature = "alloc")]
pub use pool::{Handle, Pool, PoolFull};
pub use soa::Soa;
#[cfg(feature = "alloc")]
pub use soa::{SoaPool, SoaTiles, SoaVec};
pub use tags::{Budget, Tag, Tracked};
#[cfg(feature = "alloc")]
pub use tags::{History, Registry, Report};

/// Items used by generated code (`#[derive(Layout)]`, `#[derive(Soa)]`, [`assert_layout!`]). Not
/// part of the public API. The version in the name is the derive's: the `arena-kit` facade pins
/// `arena-kit-derive` and `arena-kit-core` to the same release with `=`, and a release that changes what
/// is here renames the module, so code generated by one release never builds against another.
#[doc(hidden)]
pub mod __private_v0_1 {
    pub use core;
    #[cfg(feature = "layout-registry")]
    pub use inventory;
    /// What `#[derive(Layout)]` and `assert_layout!` name.
    pub mod layout {
        pub use crate::__register_layout as register;
        #[cfg(feature = "layout-registry")]
        pub use crate::layout::Registered;
        pub use crate::layout::{
            EnumLayout, EnumRepr, FieldLayout, HasEnumLayout, HasLayout, Repr, StructLayout,
            VariantLayout, enums::max_of, round_up,
        };
        /// The compile-time assertions.
        pub mod check {
            pub use crate::layout::check::{
                MESSAGE_CAP, Message, align, max_padding, max_size, optimal, report,
                report_capacity, size,
            };
            pub use crate::layout::check::{hot, same_line, separate_lines};
            pub use crate::layout::enums::check::{
                enum_align, enum_max_padding, enum_max_size, enum_max_variant_size, enum_report,
                enum_report_capacity, enum_size,
            };
            pub use crate::layout::text::Text;
        }
    }
    /// What `#[derive(Soa)]` names.
    pub mod soa {
        pub use crate::soa::{
            Col, Columns, Nested, PlainRow, PublicField, RowConversion, Soa, SoaTiled, TileColumns,
            ToValue,
        };

        /// Compiles only if `S` is `Soa`: the derive calls it once per `#[soa(nested)]` field,
        /// spanned at the field's type, so a field whose type is not `Soa` gets one error there.
        pub const fn nested_field_is_soa<S: Soa>() {}

        /// Compiles only if `S` is `SoaTiled`: called once per `#[soa(nested)]` field of a
        /// `#[soa(tiled)]` struct, spanned at the field's type.
        pub const fn nested_field_is_tiled<S: SoaTiled>() {}
    }
}
