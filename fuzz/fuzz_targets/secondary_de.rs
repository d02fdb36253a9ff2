//! Hostile `Deserialize` input for arena-kit-core: see `fuzz/hostile/mod.rs` and `fuzz/README.md`.
#![no_main]

#[path = "../hostile/mod.rs"]
mod hostile;

#[global_allocator]
static ALLOC: hostile::Counting = hostile::Counting;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hostile::run("secondary_de", data);
});
