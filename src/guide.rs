// The guide's pages are Markdown files under `docs/guide/`, included here so rustdoc renders
// them as modules and runs their Rust snippets as doctests.
#![doc = include_str!("../docs/guide/README.md")]

#[doc = include_str!("../docs/guide/unity.md")]
pub mod unity {}

#[doc = include_str!("../docs/guide/unreal.md")]
pub mod unreal {}

#[doc = include_str!("../docs/guide/slotmap.md")]
pub mod slotmap {}

#[doc = include_str!("../docs/guide/soa.md")]
pub mod soa {}

#[doc = include_str!("../docs/guide/bumpalo.md")]
pub mod bumpalo {}
