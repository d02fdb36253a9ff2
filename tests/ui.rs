//! Compile-fail cases: every derive error, every layout assertion and every misuse the type system
//! rules out has a file in `tests/ui/` named after the mistake, with the diagnostic it must produce
//! in the `.stderr` beside it. The snapshots are written against the toolchain pinned in
//! `rust-toolchain.toml`; regenerate with `TRYBUILD=overwrite cargo test --test ui` and review by hand.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

/// The parallel iterators' misuses (`tests/ui/rayon/`): need the `rayon` feature,
/// `cargo test --features rayon --test ui`.
#[cfg(feature = "rayon")]
#[test]
fn ui_rayon() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/rayon/*.rs");
}

/// The serde column formats' misuses (`tests/ui/serde/`): need the `serde` feature,
/// `cargo test --features serde --test ui`.
#[cfg(feature = "serde")]
#[test]
fn ui_serde() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/serde/*.rs");
}

/// Parallel iteration the bounds must allow (`tests/ui/rayon/pass/`).
#[cfg(feature = "rayon")]
#[test]
fn ui_rayon_pass() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/rayon/pass/*.rs");
}

/// Inputs the derives must accept (`tests/ui/pass/`): items named like primitives beside the
/// derive, `Self` in a field type. With them, the mistakes only a build reports
/// (`tests/ui/post-mono/`: checks on a type's constants, evaluated where generic code is
/// instantiated, which `cargo check` skips): one set of cases with a `pass` among them is built,
/// not only checked.
#[test]
fn ui_pass() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/post-mono/*.rs");
}
