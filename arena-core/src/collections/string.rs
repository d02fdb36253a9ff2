//! [`ArenaString`]: a growable UTF-8 string whose buffer lives in an [`Arena`].

use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::{Deref, DerefMut};

use super::{ArenaFull, ArenaVec};
use crate::arena::{Arena, ArenaError};
use crate::or_panic::OrPanic;

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

    /// Inserts `c` at byte `idx` (`String::insert`).
    ///
    /// # Panics
    ///
    /// If `idx` is past the end or not on a char boundary; with the [`ArenaError`] text when the
    /// arena has no room.
    #[track_caller]
    pub fn insert(&mut self, idx: usize, c: char) {
        self.insert_str(idx, c.encode_utf8(&mut [0; 4]));
    }

    /// Inserts `s` at byte `idx` (`String::insert_str`).
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaString;
    ///
    /// let arena = Arena::new();
    /// let mut s = ArenaString::from_str_in("hé!", &arena);
    /// s.insert_str(3, "llo");
    /// s.insert(0, '¡');
    /// assert_eq!(s, "¡héllo!");
    /// ```
    ///
    /// # Panics
    ///
    /// If `idx` is past the end or not on a char boundary; with the [`ArenaError`] text when the
    /// arena has no room.
    #[track_caller]
    pub fn insert_str(&mut self, idx: usize, s: &str) {
        self.try_insert_str(idx, s).or_panic("");
    }

    /// [`insert_str`](ArenaString::insert_str), returning an error instead of panicking when
    /// the arena has no room.
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaString::try_reserve); the string is unchanged then.
    ///
    /// # Panics
    ///
    /// If `idx` is past the end or not on a char boundary.
    #[track_caller]
    pub fn try_insert_str(&mut self, idx: usize, s: &str) -> Result<(), ArenaError> {
        assert!(
            self.is_char_boundary(idx),
            "insert_str({idx}) is not on a char boundary"
        );
        self.bytes.try_extend_from_slice(s.as_bytes())?;
        // The new bytes, appended, rotate into place: whole chars on both sides of `idx`.
        self.bytes[idx..].rotate_right(s.len());
        Ok(())
    }

    /// Removes and returns the char at byte `idx` (`String::remove`).
    ///
    /// # Panics
    ///
    /// If `idx` is not the start of a char of the string.
    #[track_caller]
    pub fn remove(&mut self, idx: usize) -> char {
        let c = match self.get(idx..).and_then(|rest| rest.chars().next()) {
            Some(c) => c,
            None => panic!("cannot remove a char from the end of a string, or off a boundary"),
        };
        self.bytes[idx..].rotate_left(c.len_utf8());
        self.bytes.truncate(self.bytes.len() - c.len_utf8());
        c
    }

    /// Keeps only the chars for which `keep` returns `true` (`String::retain`). If `keep`
    /// panics, the string keeps the chars kept so far and those not yet visited: valid UTF-8.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaString;
    ///
    /// let arena = Arena::new();
    /// let mut s = ArenaString::from_str_in("a1é2ü3", &arena);
    /// s.retain(|c| !c.is_ascii_digit());
    /// assert_eq!(s, "aéü");
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(char) -> bool) {
        // Kept chars move down to `write`; between `write` and `read` lie stale bytes (not
        // always whole chars), so the loop reads the unvisited rest as bytes, never the whole
        // text as a `str`. A panic in `keep` leaves `[0, write)` plus the unvisited rest, put
        // together by the guard: valid UTF-8.
        struct Rest<'g, 'a> {
            s: &'g mut ArenaString<'a>,
            read: usize,
            write: usize,
        }
        impl Drop for Rest<'_, '_> {
            fn drop(&mut self) {
                let len = self.s.bytes.len();
                self.s.bytes.copy_within(self.read..len, self.write);
                self.s.bytes.truncate(self.write + (len - self.read));
            }
        }
        let mut g = Rest {
            s: self,
            read: 0,
            write: 0,
        };
        while g.read < g.s.bytes.len() {
            // SAFETY: `[read, len)` is the unvisited rest of the text, untouched so far and
            // starting at a char boundary: valid UTF-8.
            let rest = unsafe { core::str::from_utf8_unchecked(&g.s.bytes[g.read..]) };
            let c = rest.chars().next().expect("the rest is not empty");
            let n = c.len_utf8();
            if keep(c) {
                g.s.bytes.copy_within(g.read..g.read + n, g.write);
                g.write += n;
            }
            g.read += n;
        }
    }

    /// Splits the string at byte `at`: returns a new string (in the same arena) holding the
    /// text from `at` on, and keeps `[0, at)` (`String::split_off`).
    ///
    /// # Panics
    ///
    /// If `at` is past the end or not on a char boundary; with the [`ArenaError`] text when the
    /// arena has no room (the string is unchanged then).
    #[track_caller]
    pub fn split_off(&mut self, at: usize) -> Self {
        assert!(
            self.is_char_boundary(at),
            "split_off({at}) is not on a char boundary"
        );
        ArenaString {
            bytes: self.bytes.split_off(at),
        }
    }

    /// The bytes of `v` as a string, or `v` back with the UTF-8 error
    /// (`String::from_utf8`).
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::{ArenaString, ArenaVec};
    ///
    /// let arena = Arena::new();
    /// let bytes = ArenaVec::from_iter_in(*b"ok", &arena);
    /// assert_eq!(ArenaString::from_utf8(bytes).unwrap(), "ok");
    /// let bad = ArenaVec::from_iter_in([0xFF], &arena);
    /// assert!(ArenaString::from_utf8(bad).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// The bytes are not UTF-8: the vector comes back with the error.
    pub fn from_utf8(
        bytes: ArenaVec<'a, u8>,
    ) -> Result<Self, (ArenaVec<'a, u8>, core::str::Utf8Error)> {
        match core::str::from_utf8(&bytes) {
            Ok(_) => Ok(ArenaString { bytes }),
            Err(e) => Err((bytes, e)),
        }
    }

    /// The string's bytes, as a vector in the same arena.
    pub fn into_bytes(self) -> ArenaVec<'a, u8> {
        self.bytes
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

/// Ordered as the `str`s are.
impl PartialOrd for ArenaString<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ArenaString<'_> {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// Looks up a `HashMap<ArenaString, _>` or `BTreeMap` by `&str` (hash and order are the
/// text's).
impl core::borrow::Borrow<str> for ArenaString<'_> {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

#[cfg(feature = "alloc")]
impl PartialEq<alloc::string::String> for ArenaString<'_> {
    fn eq(&self, other: &alloc::string::String) -> bool {
        self.as_str() == other.as_str()
    }
}

#[cfg(feature = "alloc")]
impl PartialEq<ArenaString<'_>> for alloc::string::String {
    fn eq(&self, other: &ArenaString<'_>) -> bool {
        self.as_str() == other.as_str()
    }
}
