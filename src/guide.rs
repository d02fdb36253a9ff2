// The guide's pages are Markdown files under `docs/guide/`, included here so rustdoc renders
// them as modules and runs their Rust snippets as doctests.
#![doc = include_str!("../docs/guide/README.md")]

#[doc = include_str!("../docs/guide/unity.md")]
pub mod unity {}

#[doc = include_str!("../docs/guide/unreal.md")]
pub mod unreal {}
