//! Recording never allocates: a counting global allocator around `System` sees no allocation
//! while a recorder records far more events than it holds, from this thread and from another.
//! Frame ends match the frame's frees to its allocations in tables reserved with the ring; a
//! frame end allocates only while its small tables grow (a name, call site or combination of them
//! not seen before, more live addresses than at any earlier frame end), so one warm-up pass of
//! the same loop runs before counting.
//!
//! No test harness (`harness = false` in Cargo.toml): the harness's threads and output buffers
//! would allocate while the count is read.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use arena_kit_core::tags::Recorder;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static WORKER_READY: AtomicBool = AtomicBool::new(false);

// SAFETY: every method forwards to `System` with the caller's arguments, so `System`'s guarantees
// hold; the counter is an atomic bump on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's `layout` contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this `layout` (every allocation does).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The names and call site every pass records, made once: under Miri each evaluation of a
/// string literal or of `Location::caller()` may get an address of its own, and the recorder
/// remembers a name or site by its address (then by its text), so a fresh address would be a
/// new entry (an allocation) at the next frame end, as a name never seen before is.
struct Names {
    pool: &'static str,
    tag: &'static str,
    scratch: &'static str,
    frame: &'static str,
    site: &'static std::panic::Location<'static>,
}

fn record_lots(recorder: &Recorder, names: &Names, base: usize) {
    let n = if cfg!(miri) { 100 } else { 10_000 };
    for i in 0..n {
        let addr = base + 16 * i;
        recorder.alloc(names.pool, names.tag, addr, 64, Some(names.site));
        recorder.free(names.pool, names.tag, addr, 64);
        if i % 100 == 0 {
            recorder.discard(names.scratch, names.frame);
            recorder.end_frame(i as u64);
        }
    }
}

fn main() {
    let recorder = Recorder::new(64);
    let bytes = recorder.memory_bytes();
    let names = Names {
        pool: "bodies",
        tag: "Physics",
        scratch: "scratch",
        frame: "Frame",
        site: std::panic::Location::caller(),
    };
    record_lots(&recorder, &names, 1 << 40);
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            // The thread's own start-up allocations are done before counting starts.
            WORKER_READY.store(true, Ordering::SeqCst);
            std::thread::park();
            record_lots(&recorder, &names, 1 << 30);
        });
        while !WORKER_READY.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        COUNTING.store(true, Ordering::SeqCst);
        record_lots(&recorder, &names, 0);
        let counted = ALLOCATIONS.load(Ordering::SeqCst);
        COUNTING.store(false, Ordering::SeqCst);
        assert_eq!(counted, 0, "recording on the main thread allocated");
        let thread = worker.thread().clone();
        COUNTING.store(true, Ordering::SeqCst);
        thread.unpark();
        worker.join().unwrap();
        COUNTING.store(false, Ordering::SeqCst);
    });
    let counted = ALLOCATIONS.load(Ordering::SeqCst);
    assert_eq!(counted, 0, "recording on a second thread allocated");
    assert_eq!(recorder.memory_bytes(), bytes);
    assert_eq!(recorder.len(), 64);
    assert!(recorder.dropped() > 0);
    println!("recorder_no_alloc: recording allocated nothing");
}
