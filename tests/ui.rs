//! Compile-fail cases: every derive error, every layout assertion and every misuse the type system
//! rules out has a file in `tests/ui/` named after the mistake, with the diagnostic it must produce
//! in the `.stderr` beside it. The snapshots are written against the toolchain pinned in
//! `rust-toolchain.toml`; regenerate with `TRYBUILD=overwrite cargo test --test ui` and review by hand.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
