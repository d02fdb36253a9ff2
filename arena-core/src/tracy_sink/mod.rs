//! [`TracySink`]: the profiler hooks, forwarded to the Tracy profiler through `tracy-client` (the
//! `tracy` feature). The FFI half of `tags`, outside it (`tags` forbids `unsafe`).
//!
//! The protocol is Tracy 0.14.1's (tracy-client 0.19 over tracy-client-sys 0.30, which bundles
//! the Tracy 0.14.1 client): connect a Tracy 0.14.x server. The client runs on demand: nothing is
//! collected (and the hooks cost a lookup and a call each) until a server connects.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::tags::pool_names::{PoolNames, fit};
use crate::tags::{ProfilerEvent, ProfilerSink};

/// A [`ProfilerSink`] that shows the tracked allocators in the Tracy profiler: each allocator is
/// a named memory pool (its allocations and frees, an arena's blocks; a reset, rewind or scope
/// exit is one memory discard, so Tracy shows no false leaks; a frame arena's buffer `i` is the
/// pool `"{name} [buffer i]"`), each tag a plot of its bytes at
/// every [`Registry::end_frame`](crate::tags::Registry::end_frame), a tag budget crossed a
/// message, and each frame's end a frame mark.
///
/// Tracy keys a memory pool by its name, and a discard ends every block of the pool, so
/// allocators live at the same time never share a pool, whatever their names: each allocator
/// (a label, [`ProfilerLabel::id`](crate::tags::ProfilerLabel::id), and for a frame arena each
/// buffer) gets a pool name of its own while it lives. The first one of a name is shown under the
/// name itself, a second one live with it under `"{name} (2)"`, a third `"{name} (3)"`, and so
/// on. When an allocator's label ends
/// ([`ProfilerEvent::PoolEnd`](crate::tags::ProfilerEvent::PoolEnd): it was dropped or
/// unwrapped, after its last free or discard) the sink sends one more discard for its pool and
/// gives the name to the next allocator of that name: a level that makes a `"scratch"` arena and
/// drops it shows it under `"scratch"` every time.
///
/// Tracy needs every name as a C string at a fixed address for the whole run, so the sink keeps
/// each name it makes, up to 4096 (pool and plot names). An allocator or plot that finds no name
/// left is not sent, for its whole life (merged into another pool, its reset would end that
/// pool's blocks in Tracy's eyes); its events are counted in the sink's `Debug` output as
/// `dropped`. A name with a NUL byte has it replaced by `?`. The name table is behind a lock,
/// taken once per event. Tracy takes texts of up to 64 KiB: a longer name or message is cut to
/// 65,534 bytes (at a character boundary); names cut to the same text are told apart as any
/// others. The protocol is Tracy 0.14.1's (tracy-client 0.19).
///
/// ```
/// use arena_kit::tags::TracySink;
/// use arena_kit::{Arena, Tracked};
///
/// TracySink::install(); // on demand: nothing is sent until a Tracy server connects
/// let mut scratch = Tracked::new(Arena::new(), "scratch", "Frame");
/// let mut other = Tracked::new(Arena::new(), "scratch", "Frame"); // shown as "scratch (2)"
/// scratch.alloc([0u8; 5000]); // a second page: the first one's used range is reported
/// other.alloc([0u8; 5000]);
/// scratch.reset(); // one memory discard, of "scratch" only
/// drop(other); // "scratch (2)" is free for the next arena named "scratch"
/// arena_kit::tags::set_profiler_sink(None);
/// ```
pub struct TracySink {
    /// Keeps the Tracy client running while the sink lives.
    client: tracy_client::Client,
    /// The name each live allocator and each plot is shown under, and the events dropped.
    names: Mutex<PoolNames>,
}

impl TracySink {
    /// A sink that starts the Tracy client (on demand: it collects once a server connects).
    pub fn new() -> TracySink {
        TracySink {
            client: tracy_client::Client::start(),
            names: Mutex::new(PoolNames::default()),
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

    /// Calls `emit` with the C string allocator `(pool, buffer, id)` is shown under (see
    /// [`PoolNames::pool`]), unless it has none (the table was full when it first reported; the
    /// event is counted as dropped). The table's lock is let go before `emit` runs.
    fn with_pool_name(
        &self,
        pool: &'static str,
        buffer: Option<usize>,
        id: u64,
        emit: impl FnOnce(*const core::ffi::c_char),
    ) {
        let name = self.names().pool(pool, buffer, id);
        if let Some(name) = name {
            emit(name.as_c_str().as_ptr());
        }
    }

    /// The name table. Nothing called while the lock is held panics halfway through a change to
    /// it, so a poisoned lock still guards a whole table, and is taken over.
    fn names(&self) -> MutexGuard<'_, PoolNames> {
        self.names.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for TracySink {
    fn default() -> Self {
        TracySink::new()
    }
}

impl core::fmt::Debug for TracySink {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let names = self.names();
        f.debug_struct("TracySink")
            .field("names", &names.made())
            .field("dropped", &names.dropped())
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
                id,
                ..
            } => self.with_pool_name(pool, buffer, id, |name| {
                // SAFETY: `name` is NUL-terminated and lives for the rest of the program (Tracy
                // keeps the pointer); `addr` is only recorded, never dereferenced. The client is
                // running (`self.client`).
                unsafe {
                    sys::___tracy_emit_memory_alloc_named(
                        core::ptr::without_provenance(addr),
                        size,
                        name,
                    )
                }
            }),
            ProfilerEvent::Free {
                pool,
                addr,
                buffer,
                id,
                ..
            } => self.with_pool_name(pool, buffer, id, |name| {
                // SAFETY: as for `Alloc`.
                unsafe {
                    sys::___tracy_emit_memory_free_named(core::ptr::without_provenance(addr), name)
                }
            }),
            ProfilerEvent::Discard {
                pool, buffer, id, ..
            } => self.with_pool_name(pool, buffer, id, |name| {
                // SAFETY: `name` as for `Alloc`; the client is running.
                unsafe { sys::___tracy_emit_memory_discard(name) }
            }),
            ProfilerEvent::PoolEnd {
                pool, buffer, id, ..
            } => {
                // The allocator freed or discarded all it reported before this; the discard
                // also ends a block whose free never reached Tracy (an event lost to a panic),
                // so the name is empty for its next allocator. It is sent under the lock: the
                // next allocator of the name, on another thread, reports only after it.
                let mut names = self.names();
                let Some(name) = names.end(pool, buffer, id) else {
                    return;
                };
                // SAFETY: `name` as for `Alloc`; the client is running.
                unsafe { sys::___tracy_emit_memory_discard(name.as_c_str().as_ptr()) };
                drop(names);
            }
            ProfilerEvent::Plot { tag, bytes, .. } => {
                let Some(name) = self.names().plot(tag) else {
                    return;
                };
                let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
                // SAFETY: `name` as for `Alloc` (Tracy keeps plot names too).
                unsafe { sys::___tracy_emit_plot_int(name.as_c_str().as_ptr(), bytes) };
            }
            ProfilerEvent::Message { text, .. } => self.client.message(fit(text), 0),
            ProfilerEvent::FrameEnd { .. } => self.client.frame_mark(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::format;

    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
    fn an_ended_allocators_name_goes_to_the_next_one_of_that_name() {
        let sink = TracySink::new();
        let discard = |id| ProfilerEvent::Discard {
            pool: "tracy sink: level",
            tag: "T",
            buffer: None,
            id,
        };
        let end = |id| ProfilerEvent::PoolEnd {
            pool: "tracy sink: level",
            tag: "T",
            buffer: None,
            id,
        };
        for level in 0..10_000 {
            sink.event(&discard(level));
            sink.event(&end(level));
        }
        assert_eq!(format!("{sink:?}"), "TracySink { names: 1, dropped: 0 }");
        sink.event(&discard(1));
        sink.event(&discard(2));
        assert_eq!(format!("{sink:?}"), "TracySink { names: 2, dropped: 0 }");
    }
}
