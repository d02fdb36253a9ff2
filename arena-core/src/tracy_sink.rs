//! [`TracySink`]: the profiler hooks, forwarded to the Tracy profiler through `tracy-client` (the
//! `tracy` feature). The FFI half of `tags`, outside it (`tags` forbids `unsafe`).
//!
//! The protocol is Tracy 0.14.1's (tracy-client 0.19 over tracy-client-sys 0.30, which bundles
//! the Tracy 0.14.1 client): connect a Tracy 0.14.x server. The client runs on demand: nothing is
//! collected (and the hooks cost a lookup and a call each) until a server connects.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::string::String;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::tags::{ProfilerEvent, ProfilerSink};

/// How many distinct names (pools and plots) a [`TracySink`] keeps; the events of pools and
/// plots beyond it are dropped (counted in the sink's `dropped`). They must not share a name:
/// Tracy keys a memory pool by its name and a discard ends every block of the pool, so one
/// allocator's reset would end another's blocks, whose frees Tracy then rejects as unknown
/// (stopping the capture).
const MAX_NAMES: usize = 4096;

/// The longest text (a message, a pool or plot name) handed to Tracy, in bytes. Tracy sends
/// lengths in 16 bits and asserts that a message is shorter than `u16::MAX` bytes (before it
/// looks for a server: a longer one aborts the program) and that a name fits; longer texts are
/// cut to this, at a character boundary.
const MAX_TEXT: usize = u16::MAX as usize - 1;

/// `text` cut to at most [`MAX_TEXT`] bytes, at a character boundary.
fn fit(text: &str) -> &str {
    &text[..text.floor_char_boundary(MAX_TEXT)]
}

/// A [`ProfilerSink`] that shows the tracked allocators in the Tracy profiler: each allocator is
/// a named memory pool (its allocations and frees, an arena's blocks; a reset, rewind or scope
/// exit is one memory discard, so Tracy shows no false leaks; a frame arena's buffer `i` is the
/// pool `"{name} [buffer i]"`), each tag a plot of its bytes at
/// every [`Registry::end_frame`](crate::tags::Registry::end_frame), a tag budget crossed a
/// message, and each frame's end a frame mark.
///
/// Tracy needs every name as a C string at a fixed address for the whole run: the sink keeps
/// each pool and plot name it sees once, up to 4096 names; the events of pools and plots seen
/// after that are not sent (merged into one pool, one allocator's reset would end another's
/// blocks in Tracy's eyes), and are counted in its `Debug` output as `dropped`. A name with a
/// NUL byte has it replaced by `?`. The name table is
/// behind a lock, taken once per event. Tracy takes texts of up to 64 KiB: a longer name or
/// message is cut to 65,534 bytes (at a character boundary), and names that are the same
/// up to there share one pool or plot. The protocol is Tracy 0.14.1's (tracy-client 0.19).
///
/// ```
/// use arena_kit::tags::TracySink;
/// use arena_kit::{Arena, Tracked};
///
/// TracySink::install(); // on demand: nothing is sent until a Tracy server connects
/// let mut scratch = Tracked::new(Arena::new(), "scratch", "Frame");
/// scratch.alloc([0u8; 5000]); // a second page: the first one's used range is reported
/// scratch.reset(); // one memory discard
/// arena_kit::tags::set_profiler_sink(None);
/// ```
pub struct TracySink {
    /// Keeps the Tracy client running while the sink lives.
    client: tracy_client::Client,
    /// Every name handed to Tracy: leaked C strings, never freed (Tracy keeps the pointers).
    names: Mutex<HashMap<String, &'static CStr>>,
    /// Events not sent because their pool or plot had no name left (see [`MAX_NAMES`]).
    dropped: AtomicU64,
}

impl TracySink {
    /// A sink that starts the Tracy client (on demand: it collects once a server connects).
    pub fn new() -> TracySink {
        TracySink {
            client: tracy_client::Client::start(),
            names: Mutex::new(HashMap::new()),
            dropped: AtomicU64::new(0),
        }
    }

    /// Makes a sink for the rest of the program and sets it as the profiler sink
    /// ([`set_profiler_sink`](crate::tags::set_profiler_sink)).
    pub fn install() -> &'static TracySink {
        let sink: &'static TracySink =
            std::boxed::Box::leak(std::boxed::Box::new(TracySink::new()));
        crate::tags::set_profiler_sink(Some(sink));
        sink
    }

    /// The pool's name; a frame arena's buffer `i` is the pool `"{pool} [buffer i]"`. `None`
    /// (the event is counted as dropped) if the name is new and the table is full.
    fn pool_name(&self, pool: &str, buffer: Option<usize>) -> Option<&'static CStr> {
        match buffer {
            None => self.name(pool),
            Some(i) => self.name(&crate::tags::profiler::buffer_pool_name(pool, i)),
        }
    }

    /// `name` as a C string at a fixed address, kept for the rest of the program; `None` (the
    /// event is counted as dropped) if it is new and [`MAX_NAMES`] names are taken.
    fn name(&self, name: &str) -> Option<&'static CStr> {
        let name = fit(name);
        // A sink that panicked while holding the lock left the table whole (it only inserts).
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&c) = names.get(name) {
            return Some(c);
        }
        if names.len() >= MAX_NAMES {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let c = CString::new(name.replace('\0', "?")).expect("NUL bytes were replaced");
        let c: &'static CStr = std::boxed::Box::leak(c.into_boxed_c_str());
        names.insert(String::from(name), c);
        Some(c)
    }
}

impl Default for TracySink {
    fn default() -> Self {
        TracySink::new()
    }
}

impl core::fmt::Debug for TracySink {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let names = self.names.lock().map_or(0, |n| n.len());
        f.debug_struct("TracySink")
            .field("names", &names)
            .field("dropped", &self.dropped.load(Ordering::Relaxed))
            .finish()
    }
}

impl ProfilerSink for TracySink {
    fn event(&self, event: &ProfilerEvent<'_>) {
        use tracy_client::sys;
        match *event {
            ProfilerEvent::Alloc {
                pool,
                addr,
                size,
                buffer,
                ..
            } => {
                let Some(name) = self.pool_name(pool, buffer) else {
                    return;
                };
                // SAFETY: `name` is NUL-terminated and lives for the rest of the program (Tracy
                // keeps the pointer); `addr` is only recorded, never dereferenced. The client is
                // running (`self.client`).
                unsafe {
                    sys::___tracy_emit_memory_alloc_named(
                        core::ptr::without_provenance(addr),
                        size,
                        name.as_ptr(),
                    )
                };
            }
            ProfilerEvent::Free {
                pool, addr, buffer, ..
            } => {
                let Some(name) = self.pool_name(pool, buffer) else {
                    return;
                };
                // SAFETY: as for `Alloc`.
                unsafe {
                    sys::___tracy_emit_memory_free_named(
                        core::ptr::without_provenance(addr),
                        name.as_ptr(),
                    )
                };
            }
            ProfilerEvent::Discard { pool, buffer, .. } => {
                let Some(name) = self.pool_name(pool, buffer) else {
                    return;
                };
                // SAFETY: `name` as for `Alloc`; the client is running.
                unsafe { sys::___tracy_emit_memory_discard(name.as_ptr()) };
            }
            ProfilerEvent::Plot { tag, bytes, .. } => {
                let Some(name) = self.name(tag) else {
                    return;
                };
                let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
                // SAFETY: `name` as for `Alloc` (Tracy keeps plot names too).
                unsafe { sys::___tracy_emit_plot_int(name.as_ptr(), bytes) };
            }
            ProfilerEvent::Message { text, .. } => self.client.message(fit(text), 0),
            ProfilerEvent::FrameEnd { .. } => self.client.frame_mark(),
            ProfilerEvent::PoolEnd { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    #[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
    fn names_the_same_up_to_the_limit_share_one_c_string() {
        let sink = TracySink::new();
        let long = "p".repeat(MAX_TEXT + 10);
        let a = sink.name(&long).unwrap();
        let b = sink.name(&(long.clone() + "other")).unwrap();
        assert!(core::ptr::eq(a, b));
        assert_eq!(a.to_bytes().len(), MAX_TEXT);
    }
}
