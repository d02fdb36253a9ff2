//! [`TracySink`]: the profiler hooks, forwarded to the Tracy profiler through `tracy-client` (the
//! `tracy` feature). The FFI half of `tags`, outside it (`tags` forbids `unsafe`).
//!
//! The protocol is Tracy 0.14.1's (tracy-client 0.19 over tracy-client-sys 0.30, which bundles
//! the Tracy 0.14.1 client): connect a Tracy 0.14.x server. The client runs on demand: nothing is
//! collected (and the hooks cost a lookup and a call each) until a server connects.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError, RwLock};

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
/// Tracy's client is a C++ static object, destroyed when the process exits. A thread still
/// allocating then (main returned while it ran; a thread-local's destructor on Windows) would
/// send into the destroyed client. So the first sink made registers an exit handler (the C
/// runtime's `atexit`, which runs before Tracy's destructor; on Linux it is also registered
/// before `main`, for a first sink made while the process exits) that closes every sink: an event
/// already being sent finishes first, and later events are not sent (they are counted as
/// `dropped`). Tracy still sends what it collected before that to a connected server.
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
    /// Closed when the process exits, before Tracy's client is destroyed: [`EXIT_GATE`].
    gate: &'static ExitGate,
    /// Events not sent because the gate was closed.
    after_exit: AtomicU64,
}

/// Whether Tracy's client may still be called: open until the process exits. Every call into
/// Tracy runs inside [`ExitGate::send`], which holds the gate open while it runs, so closing it
/// waits for the calls under way and refuses the later ones.
struct ExitGate {
    closed: RwLock<bool>,
}

impl ExitGate {
    const fn new() -> ExitGate {
        ExitGate {
            closed: RwLock::new(false),
        }
    }

    /// Runs `emit` (a call into Tracy) unless the gate is closed; the gate cannot close while it
    /// runs. Whether it ran. (A poisoned lock still holds a whole `bool`.)
    fn send(&self, emit: impl FnOnce()) -> bool {
        let closed = self.closed.read().unwrap_or_else(PoisonError::into_inner);
        if *closed {
            return false;
        }
        emit();
        true
    }

    /// Closes the gate once the calls under way have returned.
    fn close(&self) {
        *self.closed.write().unwrap_or_else(PoisonError::into_inner) = true;
    }
}

/// The gate of every sink [`TracySink::new`] makes, closed at exit by [`close_at_exit`].
static EXIT_GATE: ExitGate = ExitGate::new();

/// The exit handler: closes [`EXIT_GATE`].
extern "C" fn close_at_exit() {
    EXIT_GATE.close();
}

/// Registers [`close_at_exit`] with the C runtime, once. Tracy's client is constructed before
/// `main` (a static with an early init priority), so its destructor was registered first and
/// runs after every `atexit` handler registered later, this one included. Should the runtime
/// refuse the handler, the gate closes now: no event is ever sent, rather than one sent into a
/// destroyed client.
fn register_exit_gate() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(register_close_at_exit);
}

/// Registers [`close_at_exit`] with the C runtime's `atexit`; if it is refused, closes the gate
/// now.
fn register_close_at_exit() {
    unsafe extern "C" {
        /// The C standard library's `atexit`.
        fn atexit(handler: extern "C" fn()) -> core::ffi::c_int;
    }
    // SAFETY: `atexit` only records the handler, a non-unwinding `extern "C" fn()` with no
    // captures that stays valid for the whole run (a plain function); its one failure is
    // reported by a non-zero return.
    if unsafe { atexit(close_at_exit) } != 0 {
        EXIT_GATE.close();
    }
}

/// [`register_exit_gate`] runs when the first sink is made: a first sink made while the process
/// exits, after Tracy's destructor ran (a thread that starts profiling as `main` returns),
/// would register the handler too late, its gate open. So on ELF targets the handler is also
/// registered before `main`, from `.init_array`: the loader runs entries without a priority
/// after Tracy's prioritised constructors (`init_priority`), so this handler runs before
/// Tracy's destructor as well. [`register_exit_gate`] still registers its own (should a linker
/// not sort the priorities, this one would run too late); closing the gate twice is closing it.
#[cfg(all(target_os = "linux", not(miri)))]
#[used]
#[unsafe(link_section = ".init_array")]
static REGISTER_BEFORE_MAIN: extern "C" fn() = {
    extern "C" fn register() {
        register_close_at_exit();
    }
    register
};

impl TracySink {
    /// A sink that starts the Tracy client (on demand: it collects once a server connects).
    pub fn new() -> TracySink {
        register_exit_gate();
        TracySink::with_gate(&EXIT_GATE)
    }

    /// A sink whose calls into Tracy go through `gate`.
    fn with_gate(gate: &'static ExitGate) -> TracySink {
        TracySink {
            client: tracy_client::Client::start(),
            names: Mutex::new(PoolNames::default()),
            gate,
            after_exit: AtomicU64::new(0),
        }
    }

    /// Runs `emit` (a call into Tracy) unless the process is exiting; then counts the event as
    /// dropped.
    fn send(&self, emit: impl FnOnce()) {
        if !self.gate.send(emit) {
            self.after_exit.fetch_add(1, Ordering::Relaxed);
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
            self.send(|| emit(name.as_c_str().as_ptr()));
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
            .field(
                "dropped",
                &(names.dropped() + self.after_exit.load(Ordering::Relaxed)),
            )
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
                // running (`self.client`) and not destroyed: this runs inside the exit gate
                // (`with_pool_name` sends through it), which closes before Tracy's destructor.
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
                // SAFETY: `name` as for `Alloc`; the client is running, inside the exit gate.
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
                // SAFETY: `name` as for `Alloc`; the client is running, inside the exit gate.
                self.send(|| unsafe {
                    sys::___tracy_emit_memory_discard(name.as_c_str().as_ptr())
                });
                drop(names);
            }
            ProfilerEvent::Plot { tag, bytes, .. } => {
                let Some(name) = self.names().plot(tag) else {
                    return;
                };
                let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
                // SAFETY: `name` as for `Alloc` (Tracy keeps plot names too).
                self.send(|| unsafe {
                    sys::___tracy_emit_plot_int(name.as_c_str().as_ptr(), bytes)
                });
            }
            ProfilerEvent::Message { text, .. } => self.send(|| self.client.message(fit(text), 0)),
            ProfilerEvent::FrameEnd { .. } => self.send(|| self.client.frame_mark()),
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

    /// One event of each kind, all of one allocator (`id`), ending with its end.
    fn every_event(id: u64) -> [ProfilerEvent<'static>; 7] {
        let pool = "tracy sink: exit";
        [
            ProfilerEvent::Alloc {
                pool,
                tag: "T",
                addr: 64,
                size: 8,
                buffer: None,
                id,
                site: None,
            },
            ProfilerEvent::Free {
                pool,
                tag: "T",
                addr: 64,
                size: 8,
                buffer: None,
                id,
            },
            ProfilerEvent::Discard {
                pool,
                tag: "T",
                buffer: None,
                id,
            },
            ProfilerEvent::Plot {
                tag: "tracy sink: exit",
                bytes: 8,
                frame: 1,
            },
            ProfilerEvent::Message {
                text: "tracy sink: exit",
                frame: 1,
            },
            ProfilerEvent::FrameEnd { frame: 1 },
            ProfilerEvent::PoolEnd {
                pool,
                tag: "T",
                buffer: None,
                id,
            },
        ]
    }

    #[test]
    #[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
    fn once_the_exit_gate_closes_no_event_reaches_tracy_and_each_counts_as_dropped() {
        let sink =
            TracySink::with_gate(std::boxed::Box::leak(std::boxed::Box::new(ExitGate::new())));
        for event in &every_event(1) {
            sink.event(event);
        }
        assert_eq!(format!("{sink:?}"), "TracySink { names: 2, dropped: 0 }");
        sink.gate.close();
        for event in &every_event(2) {
            sink.event(event);
        }
        // All seven (the second allocator still takes the first one's name, and gives it back).
        assert_eq!(format!("{sink:?}"), "TracySink { names: 2, dropped: 7 }");
    }

    #[test]
    fn closing_the_exit_gate_waits_for_the_call_under_way_and_refuses_later_ones() {
        use std::sync::Barrier;
        use std::sync::atomic::AtomicBool;
        let gate: &'static ExitGate = std::boxed::Box::leak(std::boxed::Box::new(ExitGate::new()));
        let (inside, done) = (Barrier::new(2), AtomicBool::new(false));
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(gate.send(|| {
                    inside.wait();
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    done.store(true, Ordering::SeqCst);
                }));
            });
            inside.wait();
            gate.close();
            assert!(
                done.load(Ordering::SeqCst),
                "closed while a call was under way"
            );
        });
        assert!(!gate.send(|| panic!("sent through a closed gate")));
    }

    /// Run by the C runtime after the exit handlers it ran before it: Tracy's static destructor
    /// among them (registered before `main`), so Tracy's client is destroyed by now. Only in the
    /// child process of the test below; it pins the timing of what a thread racing the process's
    /// exit does when it makes its first sink then.
    #[cfg(target_os = "linux")]
    extern "C" fn first_sink_after_tracys_destructor() {
        if std::env::var_os(LATE_CHILD).is_none() {
            return;
        }
        let tracy_threads = tracy_threads();
        let sink = TracySink::new();
        sink.event(&ProfilerEvent::FrameEnd { frame: 1 });
        std::eprintln!("tracy threads: {tracy_threads}; late sink: {sink:?}");
    }

    /// How many of Tracy's worker threads run.
    #[cfg(target_os = "linux")]
    fn tracy_threads() -> usize {
        std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .filter(|name| name.starts_with("Tracy"))
            .count()
    }

    #[cfg(target_os = "linux")]
    #[used]
    #[unsafe(link_section = ".fini_array")]
    static FIRST_SINK_AFTER_TRACYS_DESTRUCTOR: extern "C" fn() = first_sink_after_tracys_destructor;

    #[cfg(target_os = "linux")]
    const LATE_CHILD: &str = "ARENA_KIT_TRACY_LATE_SINK_CHILD";

    /// The exit gate's handler is registered when the first sink is made. A first sink made
    /// while the process exits, after Tracy's destructor ran (a thread that starts using the
    /// profiler as `main` returns), registers it too late: its gate is open, and its events go
    /// into the destroyed client. The child process makes that sink from a `.fini_array`
    /// function, which glibc runs after Tracy's destructor (Tracy's worker threads are joined by
    /// then), and sends one frame mark: it must be dropped, not sent.
    #[test]
    #[cfg(target_os = "linux")]
    #[cfg_attr(miri, ignore = "runs a child process and Tracy's C++ client")]
    fn a_first_sink_made_after_tracys_destructor_sends_nothing() {
        if std::env::var_os(LATE_CHILD).is_some() {
            std::eprintln!("tracy threads in main: {}", tracy_threads());
            return; // the process exits: `first_sink_after_tracys_destructor` runs then
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tracy_sink::tests::a_first_sink_made_after_tracys_destructor_sends_nothing",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(LATE_CHILD, "1")
            .output()
            .unwrap();
        let stderr = std::string::String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", out.status);
        assert!(
            stderr.contains("tracy threads in main: ")
                && !stderr.contains("tracy threads in main: 0"),
            "Tracy's worker threads do not run in main: {stderr}"
        );
        assert!(
            stderr.contains("tracy threads: 0;"),
            "Tracy's worker threads still run at fini: {stderr}"
        );
        assert!(
            stderr.contains("late sink: TracySink { names: 0, dropped: 1 }"),
            "the frame mark went into Tracy's destroyed client: {stderr}"
        );
    }

    /// The exit handler itself: a child process (this test, run again) whose threads keep sending
    /// events while `exit` runs the handler, then Tracy's destructor. It must exit cleanly, and
    /// not hang (the handler waits only for calls under way).
    #[test]
    #[cfg_attr(miri, ignore = "runs a child process and Tracy's C++ client")]
    fn a_process_exiting_while_threads_send_events_exits_cleanly() {
        const CHILD: &str = "ARENA_KIT_TRACY_EXIT_CHILD";
        if std::env::var_os(CHILD).is_some() {
            let sink = TracySink::install();
            for thread in 0..4 {
                std::thread::spawn(move || {
                    for id in (thread * 1_000_000u64).. {
                        for event in &every_event(id) {
                            sink.event(event);
                        }
                    }
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            std::process::exit(0);
        }
        for _ in 0..3 {
            let mut child = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "tracy_sink::tests::a_process_exiting_while_threads_send_events_exits_cleanly",
                    "--test-threads=1",
                ])
                .env(CHILD, "1")
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            let status = loop {
                if let Some(status) = child.try_wait().unwrap() {
                    break status;
                }
                if std::time::Instant::now() > deadline {
                    child.kill().unwrap();
                    panic!("the child process hung at exit");
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            };
            assert!(status.success(), "the child process exited with {status}");
        }
    }
}
