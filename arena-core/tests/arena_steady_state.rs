//! A steady-state frame loop never calls the system allocator: counted with a counting global
//! allocator that counts only the test's own thread while a loop is measured (the test harness's
//! main thread allocates at any time, which made a process-wide count flaky).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::arena::{Arena, FrameArena};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations are counted. Const-initialised without drop glue, so
    /// reading it never allocates and works during thread teardown.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

/// System allocations made by this thread while `f` runs.
fn system_allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCS.load(Ordering::Relaxed) - before
}

// SAFETY: forwards to `System`, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
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
