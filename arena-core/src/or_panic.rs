//! Panicking on an `Err` at the caller's line.
//!
//! `result.unwrap_or_else(|e| panic!("{e}"))` reports the closure's line inside this crate, not
//! the user's: a closure does not inherit `#[track_caller]`. The panicking forms of the `try_`
//! APIs go through [`OrPanic::or_panic`] instead, which keeps the location through every
//! `#[track_caller]` frame above it.

use core::fmt::Display;

/// [`or_panic`](OrPanic::or_panic) for `Result`.
pub(crate) trait OrPanic<T> {
    /// The value, or a panic with `"{context}{error}"` at the caller's location.
    fn or_panic(self, context: &str) -> T;
}

impl<T, E: Display> OrPanic<T> for Result<T, E> {
    #[inline(always)]
    #[track_caller]
    fn or_panic(self, context: &str) -> T {
        match self {
            Ok(value) => value,
            Err(e) => failed(context, &e),
        }
    }
}

/// The panic of [`OrPanic::or_panic`], out of line.
#[cold]
#[inline(never)]
#[track_caller]
fn failed(context: &str, e: &dyn Display) -> ! {
    panic!("{context}{e}")
}

/// [`or_fail`](OrFail::or_fail) for the arena's results.
pub(crate) trait OrFail<T> {
    /// The value, or [`fail`](crate::arena::fail)'s panic with the error's text at the caller's
    /// location: the arena's infallible forms, whose hot paths keep the one-argument call.
    fn or_fail(self) -> T;
}

impl<T> OrFail<T> for Result<T, crate::arena::ArenaError> {
    #[inline(always)]
    #[track_caller]
    fn or_fail(self) -> T {
        match self {
            Ok(value) => value,
            Err(e) => crate::arena::fail(e),
        }
    }
}
