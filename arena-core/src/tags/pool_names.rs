//! Which name each live allocator is shown under, for the profiler sinks that keep allocators of
//! one name apart: `TracySink` (with `tracy`: a Tracy memory pool per name) and the
//! [`Recorder`](super::Recorder) (an allocator per name in its records).
//!
//! Names need not be unique (two threads' `"scratch"` arenas), and a sink that knows allocators
//! by name alone merges them: one's discard ends the other's blocks. So each live allocator
//! (its `(pool, buffer, id)`, see [`ProfilerEvent`](super::ProfilerEvent)) gets a name of its
//! own: the first one of a name gets the name itself, a second one live with it
//! `"{name} (2)"`, and so on; a frame arena's buffer `i` is named from `"{name} [buffer i]"`.
//! Names are kept for the rest of the program (Tracy keeps their pointers; a recorder's records
//! hand them out as `&'static str`), so, to keep their number bounded in a program that makes
//! and drops allocators all the time, a name whose allocator ended
//! ([`ProfilerEvent::PoolEnd`](super::ProfilerEvent::PoolEnd), sent after its last free or
//! discard) goes back to its base name's free names, and the next allocator of that base name
//! takes it. The texts are made once for the whole program (see [`keep`]): tables made and
//! dropped (a recorder per capture) share them.

use std::boxed::Box;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};
use std::ffi::{CStr, CString};
use std::string::String;
use std::sync::{Mutex, PoisonError};
use std::vec::Vec;

/// How many names (pools and plots) one table makes at most; the events of pools and plots
/// that find no name are refused (counted in [`PoolNames::dropped`]) rather than merged into
/// another pool.
pub(crate) const MAX_NAMES: usize = 4096;

/// The longest text (a message, a pool or plot name) handed to Tracy, in bytes. Tracy sends
/// lengths in 16 bits and asserts that a message is shorter than `u16::MAX` bytes (before it
/// looks for a server: a longer one aborts the program) and that a name fits; longer texts are
/// cut to this, at a character boundary.
pub(crate) const MAX_TEXT: usize = u16::MAX as usize - 1;

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

/// `text` cut to at most [`MAX_TEXT`] bytes, at a character boundary.
pub(crate) fn fit(text: &str) -> &str {
    cut(text, MAX_TEXT)
}

/// A name an allocator or plot is shown under, kept for the rest of the program: as a C string
/// (for Tracy) and as the same text (for a recorder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Name {
    c: &'static CStr,
    text: &'static str,
}

impl Name {
    /// The name as a NUL-terminated C string.
    pub(crate) fn as_c_str(self) -> &'static CStr {
        self.c
    }

    /// The name's text (no NUL byte, valid UTF-8).
    pub(crate) fn as_str(self) -> &'static str {
        self.text
    }
}

/// Every name text any table made, kept once for the whole program: a table made after another
/// one ended (a recorder per capture) takes the texts made before rather than making them again,
/// and every name stays reachable from here.
static TEXTS: Mutex<BTreeSet<&'static CStr>> = Mutex::new(BTreeSet::new());

/// `text` (no NUL byte) as a [`Name`] kept for the rest of the program: the one made before for
/// the same text, or a new one.
fn keep(text: String) -> Name {
    let text = CString::new(text).expect("names have no NUL byte");
    let mut texts = TEXTS.lock().unwrap_or_else(PoisonError::into_inner);
    let c = match texts.get(text.as_c_str()) {
        Some(&c) => c,
        None => {
            let c: &'static CStr = Box::leak(text.into_boxed_c_str());
            texts.insert(c);
            c
        }
    };
    let text = c.to_str().expect("names are made from `str`s");
    Name { c, text }
}

/// One allocator as its events name it: its pool name, its frame-arena buffer, its identity.
type Key = (&'static str, Option<usize>, u64);

/// The names made for one base name: an allocator's name, or a frame arena buffer's
/// `"{name} [buffer i]"`.
#[derive(Default)]
struct Base {
    /// Every name made for it, in the order made: the base name itself first when it was free.
    names: Vec<Name>,
    /// Indices into `names` of the names no live allocator holds; the lowest is given first. A
    /// heap over a vector, so giving a name back and taking it again allocate nothing once it
    /// has held as many as it ever does.
    free: BinaryHeap<Reverse<usize>>,
}

/// The name table of one sink: which name each live allocator is shown under.
#[derive(Default)]
pub(crate) struct PoolNames {
    /// The name each live allocator is shown under: its base (an index into `bases`) and the
    /// name's index in that base's `names`.
    live: HashMap<Key, (usize, usize)>,
    /// Live allocators that found no name (the table was full): they stay refused until their
    /// end, so a sink that drops their events never hears of a free whose allocation it was not
    /// told of.
    refused: HashSet<Key>,
    /// The pool names made, per base name.
    bases: Vec<Base>,
    /// Each base name's index in `bases`, by the allocator's name and buffer (so that finding
    /// it makes no text).
    base_index: HashMap<(&'static str, Option<usize>), usize>,
    /// Every pool name this table made, so that no two bases make the same one (`"a (2)"` is
    /// also a name an allocator may have).
    taken: HashSet<&'static CStr>,
    /// The plot name of each tag.
    plots: HashMap<String, Name>,
    /// Names made, pools and plots (at most [`MAX_NAMES`]).
    made: usize,
    /// Events refused because their pool or plot had no name.
    dropped: u64,
}

impl PoolNames {
    /// Names made so far, pools and plots: the table never frees one. `TracySink` shows it in
    /// its `Debug` output, as it does [`dropped`](PoolNames::dropped).
    #[cfg_attr(not(feature = "tracy"), allow(dead_code))]
    pub(crate) fn made(&self) -> usize {
        self.made
    }

    /// Events refused because their pool or plot had no name (`TracySink` drops them, the
    /// `Recorder` records them under the pool's plain name).
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The name allocator `(pool, buffer, id)` is shown under: the one it holds, or the lowest
    /// free name of its base name, or a new one. `None` (the event is counted as refused) if it
    /// has none and the table is full, or it found none earlier in its life. Allocates only to
    /// make a new name, or when more allocators are live than the table has held so far.
    pub(crate) fn pool(
        &mut self,
        pool: &'static str,
        buffer: Option<usize>,
        id: u64,
    ) -> Option<Name> {
        let key = (pool, buffer, id);
        if let Some(&(b, i)) = self.live.get(&key) {
            return Some(self.bases[b].names[i]);
        }
        if self.refused.contains(&key) {
            self.dropped += 1;
            return None;
        }
        let Some((b, i)) = self.take_name(pool, buffer) else {
            self.refused.insert(key);
            self.dropped += 1;
            return None;
        };
        self.live.insert(key, (b, i));
        Some(self.bases[b].names[i])
    }

    /// A name for one more allocator of base `(pool, buffer)` (as `(base, name)` indices): the
    /// base's lowest free one, else a new one while the table has room.
    fn take_name(&mut self, pool: &'static str, buffer: Option<usize>) -> Option<(usize, usize)> {
        let known = self.base_index.get(&(pool, buffer)).copied();
        if let Some(b) = known
            && let Some(Reverse(i)) = self.bases[b].free.pop()
        {
            return Some((b, i));
        }
        if self.made >= MAX_NAMES {
            return None;
        }
        let base = match buffer {
            None => String::from(pool),
            Some(i) => std::format!("{pool} [buffer {i}]"),
        };
        let base = fit(&base).replace('\0', "?");
        let name = self.new_pool_name(&base, known.map_or(0, |b| self.bases[b].names.len()));
        self.made += 1;
        self.taken.insert(name.as_c_str());
        let b = known.unwrap_or_else(|| {
            self.bases.push(Base::default());
            self.base_index.insert((pool, buffer), self.bases.len() - 1);
            self.bases.len() - 1
        });
        self.bases[b].names.push(name);
        Some((b, self.bases[b].names.len() - 1))
    }

    /// The first of `base`, `"{base} (2)"`, `"{base} (3)"`, ... (from the one after the
    /// `made` the base has) that this table has not made, each cut to [`MAX_TEXT`] bytes (from
    /// the base's end).
    fn new_pool_name(&self, base: &str, made: usize) -> Name {
        let mut n = made + 1;
        loop {
            let name = if n == 1 {
                String::from(base)
            } else {
                let suffix = std::format!(" ({n})");
                String::from(cut(base, MAX_TEXT - suffix.len())) + &suffix
            };
            let name = CString::new(name).expect("the base has no NUL byte");
            if !self.taken.contains(name.as_c_str()) {
                return keep(name.into_string().expect("made from a `String`"));
            }
            n += 1;
        }
    }

    /// Allocator `(pool, buffer, id)` ended (it sent its last free or discard before): its name
    /// is free for the next allocator of its base name. Returns the name it held, if any.
    pub(crate) fn end(
        &mut self,
        pool: &'static str,
        buffer: Option<usize>,
        id: u64,
    ) -> Option<Name> {
        let key = (pool, buffer, id);
        self.refused.remove(&key);
        let (b, i) = self.live.remove(&key)?;
        self.bases[b].free.push(Reverse(i));
        Some(self.bases[b].names[i])
    }

    /// The plot name of tag `tag`, made once; `None` (the event is counted as refused) if it is
    /// new and the table is full. Only `TracySink` sends plots.
    #[cfg_attr(not(feature = "tracy"), allow(dead_code))]
    pub(crate) fn plot(&mut self, tag: &str) -> Option<Name> {
        let tag = fit(tag);
        if let Some(&name) = self.plots.get(tag) {
            return Some(name);
        }
        if self.made >= MAX_NAMES {
            self.dropped += 1;
            return None;
        }
        let name = keep(tag.replace('\0', "?"));
        self.made += 1;
        self.plots.insert(String::from(tag), name);
        Some(name)
    }
}

#[cfg(test)]
mod tests {
    use std::format;
    use std::string::ToString;

    use super::*;

    fn text(name: Option<Name>) -> String {
        let name = name.expect("a name");
        assert_eq!(name.as_c_str().to_str(), Ok(name.as_str()));
        name.as_str().to_string()
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        assert_eq!(fit("short"), "short");
        let exact = "x".repeat(MAX_TEXT);
        assert_eq!(fit(&exact).len(), MAX_TEXT);
        // A two-byte character straddling the limit is left out whole.
        let straddling = "x".repeat(MAX_TEXT - 1) + "é";
        assert_eq!(fit(&straddling).len(), MAX_TEXT - 1);
        assert_eq!(fit(&"é".repeat(1 << 16)).len(), MAX_TEXT);
    }

    #[test]
    fn two_live_allocators_of_one_name_get_two_names() {
        let mut names = PoolNames::default();
        assert_eq!(text(names.pool("scratch", None, 1)), "scratch");
        assert_eq!(text(names.pool("scratch", None, 2)), "scratch (2)");
        assert_eq!(text(names.pool("scratch", None, 3)), "scratch (3)");
        // Each keeps its own, event after event.
        assert_eq!(text(names.pool("scratch", None, 2)), "scratch (2)");
        assert_eq!(text(names.pool("scratch", None, 1)), "scratch");
        assert_eq!((names.made(), names.dropped()), (3, 0));
    }

    #[test]
    fn an_ended_allocators_name_goes_to_the_next_allocator_of_its_name() {
        let mut names = PoolNames::default();
        let first = names.pool("scratch", None, 1).unwrap();
        let second = names.pool("scratch", None, 2).unwrap();
        assert_eq!(names.end("scratch", None, 1), Some(first));
        // The plain name is free again: the next `"scratch"` takes it, not a third name.
        assert_eq!(names.pool("scratch", None, 3), Some(first));
        assert_eq!(names.pool("scratch", None, 2), Some(second));
        // An allocator made and dropped a million times (a level's arena) takes one name.
        for id in 10..1_000_000 {
            assert_eq!(text(names.pool("level", None, id)), "level");
            names.end("level", None, id);
        }
        assert_eq!((names.made(), names.dropped()), (3, 0));
        // Of two free names, the lowest goes first.
        names.end("scratch", None, 2);
        names.end("scratch", None, 3);
        assert_eq!(text(names.pool("scratch", None, 4)), "scratch");
        assert_eq!(text(names.pool("scratch", None, 5)), "scratch (2)");
        // An end of an allocator the table does not know frees nothing.
        assert!(names.end("scratch", None, 99).is_none());
        assert!(names.end("nowhere", None, 4).is_none());
    }

    #[test]
    fn a_frame_arenas_buffers_keep_apart_from_each_other_and_from_other_frame_arenas() {
        let mut names = PoolNames::default();
        assert_eq!(text(names.pool("frame", Some(0), 1)), "frame [buffer 0]");
        assert_eq!(text(names.pool("frame", Some(1), 1)), "frame [buffer 1]");
        assert_eq!(text(names.pool("frame", None, 1)), "frame");
        assert_eq!(
            text(names.pool("frame", Some(0), 2)),
            "frame [buffer 0] (2)"
        );
        names.end("frame", Some(0), 1);
        assert_eq!(text(names.pool("frame", Some(1), 1)), "frame [buffer 1]");
        assert_eq!(text(names.pool("frame", Some(0), 3)), "frame [buffer 0]");
    }

    #[test]
    fn a_made_up_name_never_meets_an_allocators_own() {
        let mut names = PoolNames::default();
        // An allocator that is really called "a (2)" keeps it from the second "a".
        assert_eq!(text(names.pool("a (2)", None, 1)), "a (2)");
        assert_eq!(text(names.pool("a", None, 2)), "a");
        assert_eq!(text(names.pool("a", None, 3)), "a (3)");
        assert_eq!(text(names.pool("a (2)", None, 4)), "a (2) (2)");
        // NUL bytes are replaced, and the replaced name is told apart from one spelled so.
        assert_eq!(text(names.pool("n\0l", None, 5)), "n?l");
        assert_eq!(text(names.pool("n?l", None, 6)), "n?l (2)");
    }

    #[test]
    fn names_cut_to_the_same_text_stay_apart_and_fit() {
        let mut names = PoolNames::default();
        let long: &'static str = "p".repeat(MAX_TEXT + 10).leak();
        let longer: &'static str = format!("{long}other").leak();
        let a = text(names.pool(long, None, 1));
        let b = text(names.pool(longer, None, 2));
        assert_eq!(a.len(), MAX_TEXT);
        assert_eq!(b.len(), MAX_TEXT);
        assert!(b.ends_with(" (2)"), "{}", &b[b.len() - 8..]);
        assert_ne!(a, b);
    }

    #[test]
    fn past_the_limit_events_are_dropped_and_counted_and_names_are_never_freed() {
        let mut names = PoolNames::default();
        for id in 0..MAX_NAMES as u64 {
            assert!(names.pool("full", None, id).is_some());
        }
        assert_eq!((names.made(), names.dropped()), (MAX_NAMES, 0));
        // A new allocator, of any name, and a new plot find none: dropped and counted.
        assert!(names.pool("full", None, 5000).is_none());
        assert!(names.pool("other", None, 1).is_none());
        assert!(names.plot("a plot").is_none());
        assert_eq!(names.dropped(), 3);
        // An allocator refused once stays refused while it lives, even once a name of its
        // base is free: Tracy must not hear of a free whose allocation it never heard of.
        names.end("full", None, 0);
        assert!(names.pool("full", None, 5000).is_none());
        assert_eq!(names.dropped(), 4);
        // Once it ends, the free name is there for the next allocator of the name; no name was
        // freed or made along the way.
        names.end("full", None, 5000);
        assert_eq!(text(names.pool("full", None, 5001)), "full");
        assert!(names.pool("other", None, 2).is_none());
        assert_eq!((names.made(), names.dropped()), (MAX_NAMES, 5));
    }

    #[test]
    fn tables_share_the_texts_they_make() {
        let a = PoolNames::default().pool("shared text", None, 1).unwrap();
        let b = PoolNames::default()
            .pool("shared text", Some(0), 1)
            .unwrap();
        let c = PoolNames::default().pool("shared text", None, 7).unwrap();
        assert!(core::ptr::eq(a.as_c_str(), c.as_c_str()));
        assert!(core::ptr::eq(a.as_str(), c.as_str()));
        assert_eq!(b.as_str(), "shared text [buffer 0]");
    }

    #[test]
    fn a_plot_name_is_made_once_per_tag() {
        let mut names = PoolNames::default();
        let a = names.plot("Physics").unwrap();
        assert_eq!(names.plot("Physics"), Some(a));
        assert_eq!(text(names.plot("N\0l")), "N?l");
        // Plots and pools are apart in Tracy: a pool of a plot's name keeps its name.
        assert_eq!(text(names.pool("Physics", None, 1)), "Physics");
        assert_eq!(names.made(), 3);
    }
}
