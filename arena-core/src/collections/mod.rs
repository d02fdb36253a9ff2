//! Growable collections inside an [`Arena`](crate::Arena), with no extra dependency:
//! [`ArenaVec`] and [`ArenaString`] (bumpalo's `collections::{Vec, String}`, bump-scope's
//! `BumpVec`/`BumpString`), and the [`arena_format!`](crate::arena_format) macro; and
//! [`ArenaBox`], one value or a slice of them dropped with its box (bumpalo's `boxed::Box`,
//! bump-scope's `BumpBox`), with [`IntoIter`] to move a boxed slice's or a vector's values out.
//!
//! Pick them when a list or a text of unknown length is built during a frame and then used (or
//! kept, through [`ArenaVec::into_slice`] / [`ArenaString::into_str`]) until the arena is reset.
//! Growing the arena's newest allocation extends it in place, so build one collection at a time
//! (or reserve first). Don't pick them for long-lived data that grows without bound while other
//! things are allocated: every move leaves the old buffer used until the next reset; use `Vec`
//! then. With the `allocator-api2` feature, `allocator_api2::vec::Vec<T, &Arena>` works too.
//!
//! ```
//! use arena_kit::{Arena, arena_format};
//! use arena_kit::collections::{ArenaString, ArenaVec};
//!
//! let mut arena = Arena::new();
//! {
//!     let mut labels: ArenaVec<&str> = ArenaVec::new_in(&arena);
//!     for (i, hp) in [30, 0, 12].into_iter().enumerate() {
//!         let label: ArenaString = arena_format!(in &arena, "unit {i}: {hp} hp");
//!         labels.push(label.into_str());
//!     }
//!     assert_eq!(labels[2], "unit 2: 12 hp");
//! }
//! arena.reset(); // the labels and their texts go at once
//! ```

use core::fmt;

use crate::arena::ArenaError;

mod boxed;
mod string;
mod vec;

pub use boxed::{ArenaBox, IntoIter};
pub use string::ArenaString;
pub use vec::{ArenaVec, Drain};

/// An [`ArenaVec`] or [`ArenaString`] operation found no room: the value it was given (an
/// element, a char, or the vector itself for [`ArenaVec::try_into_slice`]) is handed back with
/// the reason. The collection is unchanged.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ArenaFull<V> {
    /// The value, handed back.
    pub value: V,
    /// Why the arena could not make room.
    pub error: ArenaError,
}

impl<V> ArenaFull<V> {
    /// The value handed back.
    pub fn into_value(self) -> V {
        self.value
    }
}

/// Shows the error, not the value (which need not be `Debug`).
impl<V> fmt::Debug for ArenaFull<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArenaFull")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<V> fmt::Display for ArenaFull<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (the value was handed back in `ArenaFull::value`)",
            self.error
        )
    }
}

impl<V> core::error::Error for ArenaFull<V> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// `format!` into an arena: `arena_format!(in &arena, "...", args)` returns an
/// [`ArenaString`](crate::collections::ArenaString) whose buffer lives in the arena (a
/// [`Scope`](crate::Scope) works too: `in &scope`).
///
/// ```
/// use arena_kit::{Arena, arena_format};
///
/// let arena = Arena::new();
/// let (x, y) = (3, -2);
/// let at = arena_format!(in &arena, "({x}, {y})");
/// assert_eq!(at, "(3, -2)");
/// ```
///
/// # Panics
///
/// With the [`ArenaError`](crate::ArenaError) text when the arena has no room
/// ([`ArenaString::try_format_in`](crate::collections::ArenaString::try_format_in) returns it).
#[macro_export]
macro_rules! arena_format {
    (in $arena:expr, $($arg:tt)*) => {
        $crate::collections::ArenaString::format_in($arena, ::core::format_args!($($arg)*))
    };
}
