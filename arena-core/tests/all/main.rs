//! arena-kit-core's integration tests, in one binary (one link; run one family with
//! `cargo test -p arena-kit-core --test all arena::`). Tests that need a process of their own (a
//! `#[global_allocator]`, the loom model) are separate files beside this folder.
#![allow(missing_docs)] // test-only row types

mod panic_harness;
mod soa_rows;
mod support;

mod arena;
mod derive_crate_path;
mod doc_examples;
mod heap;
mod layout;
mod layout_attacks;
mod pool;
#[cfg(feature = "profiler")]
mod profiler;
mod send_sync_bounds;
mod soa;
mod tags;
#[cfg(feature = "tracy")]
mod tracy;
mod variance;
