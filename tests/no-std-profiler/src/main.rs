//! Exits 0 never: a profiler sink panics inside `SoaPool::remove`, between the handle map's
//! change and the row's move. Without `std` that panic cannot be caught where the event is
//! raised, so the program must abort (a signal, exit status 134 from a shell); if the panic
//! unwound out of the pool instead, the pool is left with a freed slot whose row is still there,
//! and this program says so and exits with status 1.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use arena_kit::Soa;
use arena_kit::soa::SoaPool;
use arena_kit::tags::{ProfilerEvent, ProfilerSink, Tracked, set_profiler_sink};

#[derive(Soa, Debug, Clone, Copy, PartialEq)]
struct Particle {
    x: f32,
    y: f32,
}

/// Panics on the first `Free` event once armed.
struct PanicOnFree(AtomicBool);

impl ProfilerSink for PanicOnFree {
    fn event(&self, event: &ProfilerEvent<'_>) {
        if matches!(event, ProfilerEvent::Free { .. }) && self.0.swap(false, Ordering::Relaxed) {
            panic!("the profiler sink panics");
        }
    }
}

static SINK: PanicOnFree = PanicOnFree(AtomicBool::new(false));

fn main() {
    set_profiler_sink(Some(&SINK));
    let mut pool = Tracked::new(SoaPool::<Particle>::with_capacity(4), "particles", "FX");
    let a = pool.insert(Particle { x: 1.0, y: 1.0 });
    let _b = pool.insert(Particle { x: 2.0, y: 2.0 });
    SINK.0.store(true, Ordering::Relaxed);
    let unwound = catch_unwind(AssertUnwindSafe(|| pool.remove(a))).is_err();
    eprintln!(
        "the sink's panic {} out of SoaPool::remove: the pool holds {} live handles, its \
         iterator yields {}",
        if unwound { "unwound" } else { "did not unwind" },
        pool.len(),
        pool.iter().count(),
    );
    std::process::exit(1);
}
