//! The runtime of arena-kit.
//!
//! Every container and allocator lives here as plain generic code; the derive macros in
//! `arena-derive` only implement the traits this crate defines ([`HasLayout`], ...). Users normally
//! depend on the facade crate `arena-kit`, which re-exports this crate and the derives.
//!
//! | module | pick it when |
//! | --- | --- |
//! | [`heap`] | irregular, long-lived allocations of many sizes freed in any order (level assets): a free-list heap with O(1) good fit, coalescing, safe double frees and a memory map |
//! | [`poison`] | you read memory in a debugger and want to know what the fill bytes mean |
#![no_std]
#![warn(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod heap;
pub mod poison;
/// Items used by generated code. Not part of the public API; may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use core;
}
