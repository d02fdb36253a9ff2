//! Derive macros of arena-kit. Use them through the `arena-kit` crate, which re-exports them.
#![forbid(unsafe_code)]
