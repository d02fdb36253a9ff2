//! A steady-state frame loop never calls the system allocator, and a full fixed pool refuses a
//! value without growing: counted with a counting global allocator that counts only the test's
//! own thread while a loop is measured (the test harness's main thread allocates at any time,
//! which made a process-wide count flaky).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use arena_kit_core::arena::{Arena, FrameArena};

struct Counting;

thread_local! {
    /// Whether this thread's allocations are counted. Const-initialised without drop glue, so
    /// reading it never allocates and works during thread teardown.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// This thread's counted allocations (a thread's own, as `LARGEST`).
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
    /// The largest block this thread allocated while counted (a thread's own, so that tests
    /// running side by side do not see each other's).
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

/// System allocations made by this thread while `f` runs.
fn system_allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCS.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCS.with(Cell::get) - before
}

// SAFETY: forwards to `System`, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
            let _ = LARGEST.try_with(|l| l.set(l.get().max(layout.size())));
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy)]
#[allow(dead_code)]
struct Particle {
    pos: [f32; 4],
    vel: [f32; 4],
    color: [f32; 4],
    life: [f32; 4],
}

fn frame(arena: &Arena, n: usize) {
    for i in 0..n {
        let p = arena.alloc(Particle {
            pos: [i as f32; 4],
            vel: [0.0; 4],
            color: [1.0; 4],
            life: [0.5; 4],
        });
        p.life[0] -= 0.1;
    }
    let big = arena.alloc_slice_fill_with(3000, |i| i as u32);
    big[0] = 1;
}

#[test]
fn steady_state_frames_do_not_call_the_system_allocator() {
    let n = if cfg!(miri) { 50 } else { 2000 };
    let mut arena = Arena::chained(4096);
    frame(&arena, n); // warm-up frame takes the pages
    arena.reset();
    let allocations = system_allocations_during(|| {
        for _ in 0..5 {
            frame(&arena, n);
            arena.reset();
        }
    });
    assert_eq!(allocations, 0);

    let mut frames = FrameArena::<3>::chained(4096);
    for _ in 0..3 {
        frame(&frames.begin_frame(), n);
    }
    let allocations = system_allocations_during(|| {
        for _ in 0..6 {
            frame(&frames.begin_frame(), n);
        }
    });
    assert_eq!(allocations, 0);
}

/// An insert into a full fixed `SoaPool` panics ("full") without growing its columns first: a
/// fixed pool never allocates after it is made. It used to make room for the row (doubling the
/// columns) before the slot map refused the value.
#[test]
fn a_full_fixed_soa_pool_refuses_an_insert_without_growing() {
    use arena_kit_core::soa::SoaPool;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    #[derive(arena_kit_derive::Soa)]
    #[soa(crate = arena_kit_core)]
    struct Body {
        x: f32,
        y: f32,
        z: f32,
        mass: f32,
    }
    let body = |i: usize| Body {
        x: i as f32,
        y: 0.0,
        z: 0.0,
        mass: 1.0,
    };
    let rows = if cfg!(miri) { 64 } else { 1024 };
    let mut pool = SoaPool::with_capacity(rows);
    for i in 0..rows {
        pool.insert(body(i));
    }
    // No report of the panic: printing it (and a backtrace, if asked for) allocates.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    LARGEST.with(|l| l.set(0));
    COUNTING.with(|c| c.set(true));
    let refused = catch_unwind(AssertUnwindSafe(|| pool.insert(body(rows))));
    COUNTING.with(|c| c.set(false));
    std::panic::set_hook(hook);
    assert!(refused.is_err(), "a full fixed pool refuses the value");
    // The panic's message takes a few dozen bytes; growing would take a block for twice the
    // rows (16 bytes each).
    let largest = LARGEST.with(Cell::get);
    assert!(
        largest < rows * 16,
        "a block of {largest} bytes was allocated while refusing the value"
    );
    assert_eq!(pool.len(), rows);
    assert!(pool.try_insert(body(rows)).is_err(), "still full");
}
