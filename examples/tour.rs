//! The tour of arena-kit: every part, on small game examples, in one run.
//!
//! `cargo run --release --example tour` (set `ARENA_KIT_SMOKE=1` for a quick, small run).
//! Each stop is also an example of its own (`cargo run --release --example bullets`, ...).

#[path = "bullets.rs"]
mod bullets;
#[path = "frame_scratch.rs"]
mod frame_scratch;
#[path = "layout_report.rs"]
mod layout_report;
#[path = "level_heap.rs"]
mod level_heap;
#[path = "memory_report.rs"]
mod memory_report;
#[path = "particles.rs"]
mod particles;
#[path = "telemetry.rs"]
mod telemetry;

fn main() {
    let stops: [(&str, fn()); 7] = [
        ("what structs cost: #[derive(Layout)]", layout_report::run),
        (
            "a particle system as columns: #[derive(Soa)] and SoaVec",
            particles::run,
        ),
        (
            "per-frame scratch: FrameArena and scratch()",
            frame_scratch::run,
        ),
        (
            "one arena per thread: the telemetry profiler",
            telemetry::run,
        ),
        (
            "a machine gun: Pool<Bullet> and Handle<Bullet>",
            bullets::run,
        ),
        (
            "loading and unloading a level: FreeListHeap",
            level_heap::run,
        ),
        (
            "who owns every byte: memory tags, budgets and the report",
            memory_report::run,
        ),
    ];
    for (i, (title, run)) in stops.iter().enumerate() {
        println!("\n######## {}/{}: {title}\n", i + 1, stops.len());
        run();
    }
}
