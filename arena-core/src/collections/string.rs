//! [`ArenaString`]: a growable UTF-8 string whose buffer lives in an [`Arena`].

use crate::or_panic::OrPanic;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::{Deref, DerefMut};

use super::{ArenaFull, ArenaVec};
use crate::arena::{Arena, ArenaError};

/// A `String` whose buffer lives in an [`Arena`]: an [`ArenaVec<u8>`](ArenaVec) that holds
/// UTF-8, with `push_str`, [`fmt::Write`] (so `write!` works) and the
/// [`arena_format!`](crate::arena_format) macro. [`into_str`](ArenaString::into_str) leaves
/// the text in the arena for its lifetime.
///
/// ```
/// use core::fmt::Write;
/// use arena_kit::Arena;
/// use arena_kit::collections::ArenaString;
///
/// let arena = Arena::new();
/// let mut line = ArenaString::new_in(&arena);
/// line.push_str("hp: ");
/// write!(line, "{}/{}", 7, 10).unwrap();
/// line.push('!');
/// assert_eq!(line, "hp: 7/10!");
/// let line: &str = line.into_str();
/// assert_eq!(line.len(), 9);
/// ```
///
/// # Variance and borrows
///
/// As [`ArenaVec`]: covariant in `'a`, and it borrows the arena shared while it lives.
#[derive(Clone, PartialEq, Eq)]
pub struct ArenaString<'a> {
    /// Always valid UTF-8.
    bytes: ArenaVec<'a, u8>,
}

impl<'a> ArenaString<'a> {
    /// An empty string; nothing is allocated until the first byte.
    pub fn new_in(arena: &'a Arena) -> Self {
        ArenaString {
            bytes: ArenaVec::new_in(arena),
        }
    }

    /// An empty string with room for `capacity` bytes.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room.
    #[track_caller]
    pub fn with_capacity_in(capacity: usize, arena: &'a Arena) -> Self {
        ArenaString {
            bytes: ArenaVec::with_capacity_in(capacity, arena),
        }
    }

    /// [`with_capacity_in`](ArenaString::with_capacity_in), returning an error instead of
    /// panicking.
    ///
    /// # Errors
    ///
    /// As [`ArenaVec::try_with_capacity_in`].
    pub fn try_with_capacity_in(capacity: usize, arena: &'a Arena) -> Result<Self, ArenaError> {
        Ok(ArenaString {
            bytes: ArenaVec::try_with_capacity_in(capacity, arena)?,
        })
    }

    /// A copy of `s` in the arena.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room.
    #[track_caller]
    pub fn from_str_in(s: &str, arena: &'a Arena) -> Self {
        let mut out = Self::with_capacity_in(s.len(), arena);
        out.push_str(s);
        out
    }

    /// Formats `args` into a new string in the arena: what
    /// [`arena_format!`](crate::arena_format) expands to.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room; if a `Display` impl returns an
    /// error on its own.
    #[track_caller]
    pub fn format_in(arena: &'a Arena, args: fmt::Arguments<'_>) -> Self {
        Self::try_format_in(arena, args).or_panic("")
    }

    /// [`format_in`](ArenaString::format_in), returning the arena's error instead of
    /// panicking.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaString;
    ///
    /// let arena = Arena::with_capacity(4);
    /// assert!(ArenaString::try_format_in(&arena, format_args!("{}", 1234)).is_ok());
    /// assert!(ArenaString::try_format_in(&arena, format_args!("{}", 56789)).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaString::try_reserve).
    ///
    /// # Panics
    ///
    /// If a `Display` impl returns an error on its own (the arena had room).
    #[track_caller]
    pub fn try_format_in(arena: &'a Arena, args: fmt::Arguments<'_>) -> Result<Self, ArenaError> {
        /// Keeps the arena's error, which `fmt::Error` cannot carry.
        struct Sink<'s, 'a> {
            out: &'s mut ArenaString<'a>,
            error: Option<ArenaError>,
        }
        impl fmt::Write for Sink<'_, '_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                // After a refusal, nothing more: a `Display` impl that ignores the error and
                // writes on must not leave a text with a piece missing.
                if self.error.is_some() {
                    return Err(fmt::Error);
                }
                self.out.try_push_str(s).map_err(|e| {
                    self.error = Some(e);
                    fmt::Error
                })
            }
        }
        let mut out = Self::new_in(arena);
        if let Some(s) = args.as_str() {
            out.try_push_str(s)?;
            return Ok(out);
        }
        let mut sink = Sink {
            out: &mut out,
            error: None,
        };
        let written = fmt::write(&mut sink, args);
        // The arena's refusal wins even where a `Display` impl swallowed it and returned `Ok`.
        if let Some(e) = sink.error {
            return Err(e);
        }
        assert!(
            written.is_ok(),
            "a Display impl returned an error although the arena had room"
        );
        Ok(out)
    }

    /// The arena the buffer lives in.
    pub fn arena(&self) -> &'a Arena {
        self.bytes.arena()
    }

    /// Bytes the buffer holds without growing.
    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // SAFETY: the bytes are always valid UTF-8 (every writer appends or cuts whole chars).
        unsafe { core::str::from_utf8_unchecked(&self.bytes) }
    }

    /// The text, mutably.
    pub fn as_mut_str(&mut self) -> &mut str {
        // SAFETY: as for `as_str`; `&mut str` only allows UTF-8-preserving changes.
        unsafe { core::str::from_utf8_unchecked_mut(&mut self.bytes) }
    }

    /// The UTF-8 bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Makes room for `additional` more bytes.
    ///
    /// # Errors
    ///
    /// As [`ArenaVec::try_reserve`]; the string is unchanged.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), ArenaError> {
        self.bytes.try_reserve(additional)
    }

    /// [`try_reserve`](ArenaString::try_reserve), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room.
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.bytes.reserve(additional);
    }

    /// Appends `s`.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room.
    #[track_caller]
    pub fn push_str(&mut self, s: &str) {
        self.try_push_str(s).or_panic("");
    }

    /// [`push_str`](ArenaString::push_str), returning an error instead of panicking.
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaString::try_reserve); the string is unchanged.
    pub fn try_push_str(&mut self, s: &str) -> Result<(), ArenaError> {
        self.bytes.try_extend_from_slice(s.as_bytes())
    }

    /// Appends `c`.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room.
    #[track_caller]
    pub fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// Appends `c`, or hands it back with the reason.
    ///
    /// # Errors
    ///
    /// [`ArenaFull`] with `c` and the [`ArenaError`]; the string is unchanged.
    pub fn try_push(&mut self, c: char) -> Result<(), ArenaFull<char>> {
        self.try_push_str(c.encode_utf8(&mut [0; 4]))
            .map_err(|error| ArenaFull { value: c, error })
    }

    /// Removes and returns the last char.
    pub fn pop(&mut self) -> Option<char> {
        let c = self.as_str().chars().next_back()?;
        self.bytes.truncate(self.bytes.len() - c.len_utf8());
        Some(c)
    }

    /// Keeps the first `len` bytes (no-op if `len >= self.len()`).
    ///
    /// # Panics
    ///
    /// If `len` is not on a char boundary.
    #[track_caller]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            assert!(
                self.is_char_boundary(len),
                "truncate({len}) is not on a char boundary"
            );
            self.bytes.truncate(len);
        }
    }

    /// Empties the string; the capacity is kept.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Leaves the text in the arena and returns it, borrowed for the arena's lifetime (bytes
    /// need no dropping). The spare capacity is given back if the buffer is the arena's newest
    /// allocation.
    pub fn into_str(self) -> &'a mut str {
        let bytes = self.bytes.into_slice_no_drop();
        // SAFETY: the bytes were valid UTF-8 in the string.
        unsafe { core::str::from_utf8_unchecked_mut(bytes) }
    }
}

impl Deref for ArenaString<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl DerefMut for ArenaString<'_> {
    fn deref_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl AsRef<str> for ArenaString<'_> {
    fn as_ref(&self) -> &str {
        self
    }
}

impl AsRef<[u8]> for ArenaString<'_> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Write for ArenaString<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.try_push_str(s).map_err(|_| fmt::Error)
    }

    fn write_char(&mut self, c: char) -> fmt::Result {
        self.try_push(c).map_err(|_| fmt::Error)
    }
}

impl fmt::Display for ArenaString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for ArenaString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for ArenaString<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ArenaString<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ArenaString<'_>> for str {
    fn eq(&self, other: &ArenaString<'_>) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ArenaString<'_>> for &str {
    fn eq(&self, other: &ArenaString<'_>) -> bool {
        *self == other.as_str()
    }
}

/// Hashes like the `str` (and so like a `String` of the same text).
impl Hash for ArenaString<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl<'c> Extend<&'c str> for ArenaString<'_> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = &'c str>>(&mut self, iter: I) {
        for s in iter {
            self.push_str(s);
        }
    }
}

impl Extend<char> for ArenaString<'_> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = char>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for c in iter {
            self.push(c);
        }
    }
}
