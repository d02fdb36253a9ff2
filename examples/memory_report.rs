//! Who owns every byte: a small game loop whose allocators carry names, tags and budgets, ending
//! with the memory report (`Physics: 4096 bytes` per tag, with peaks, counts and budgets) and
//! an SVG chart of each tag over the frames in `target/arena-kit-examples/memory-report.svg`.
//!
//! Run: `cargo run --example memory_report` (`ARENA_KIT_SMOKE=1` for a short run).
#![allow(dead_code)]

use std::alloc::Layout;

use arena_kit::prelude::*;

#[path = "support/mod.rs"]
mod support;

/// The game's subsystems, with particles under rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryTag {
    Physics,
    Audio,
    Rendering,
    Particles,
    AI,
}

impl Tag for MemoryTag {
    fn name(&self) -> &'static str {
        match self {
            MemoryTag::Physics => "Physics",
            MemoryTag::Audio => "Audio",
            MemoryTag::Rendering => "Rendering",
            MemoryTag::Particles => "Particles",
            MemoryTag::AI => "AI",
        }
    }

    fn parent(&self) -> Option<Self> {
        (*self == MemoryTag::Particles).then_some(MemoryTag::Rendering)
    }
}

/// A 64-byte rigid body.
#[derive(Clone, Copy, Default)]
struct RigidBody {
    position: [f32; 4],
    velocity: [f32; 4],
    inertia: [f32; 8],
}

/// A 32-byte particle.
#[derive(Clone, Copy, Default)]
struct Particle {
    position: [f32; 3],
    velocity: [f32; 3],
    age: f32,
    size: f32,
}

/// Prints budget warnings and leak reports from the `log` facade.
struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            println!("  [{}] {}", r.level(), r.args());
        }
    }
    fn flush(&self) {}
}

/// Plays a few seconds of a game (30 frames with `ARENA_KIT_SMOKE`), then prints the report and
/// writes the chart.
pub fn run() {
    use MemoryTag::*;
    if log::set_logger(&Stderr).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
    let frames: u32 = if std::env::var_os("ARENA_KIT_SMOKE").is_some() {
        30
    } else {
        180
    };
    let mut bodies = Tracked::new(Pool::with_capacity(256), "rigid bodies", Physics)
        .with_budget(Budget::fail(256 * 64));
    let mut sounds = Tracked::new(FreeListHeap::with_capacity(256 << 10), "sound bank", Audio);
    let mut music = None;
    let mut draw = Tracked::new(FrameArena::<2>::chained(64 << 10), "draw lists", Rendering);
    let mut sparks =
        Tracked::new(Pool::growable(256), "sparks", Particles).with_budget(Budget::warn(24 << 10));
    let mut paths = Tracked::new(Arena::with_capacity(16 << 10), "pathfinding", AI)
        .with_budget(Budget::fail(8 << 10));
    let mut registry = Registry::new();
    let mut last = None;
    registry.set_budget(Rendering, Budget::warn(512 << 10));

    let mut live_bodies = Vec::new();
    let mut live_sparks = Vec::new();
    let (mut refused_paths, mut refused_bodies) = (0, 0);
    // The same totals whatever the frame count: 300 bodies (more than the physics budget
    // allows), 900 sparks (over the particles' warning budget).
    let bodies_per_frame = 300usize.div_ceil(frames as usize / 2);
    let sparks_per_frame = 900usize.div_ceil(frames as usize / 10);
    for f in 0..frames {
        let t = f as f32 / frames as f32;
        // Physics: bodies spawn during the first half, then settle and are removed.
        if t < 0.5 {
            for _ in 0..bodies_per_frame {
                match bodies.try_insert(RigidBody::default()) {
                    Ok(h) => live_bodies.push(h),
                    Err(_) => refused_bodies += 1,
                }
            }
        } else if let Some(h) = live_bodies.pop() {
            bodies.remove(h);
        }
        // Audio: the level's music is decoded at 10% and unloaded at 80%.
        if f == frames / 10 {
            let decoded = Layout::array::<i16>(32 << 10).expect("64 KiB");
            music = sounds.try_alloc(decoded).ok();
        }
        if f == frames * 4 / 5
            && let Some(buffer) = music.take()
        {
            sounds.free(buffer).expect("a live block of this heap");
        }
        // Particles: an explosion at 40% sprays sparks, which then burn out.
        if (0.4..0.5).contains(&t) {
            for _ in 0..sparks_per_frame {
                live_sparks.push(sparks.insert(Particle::default()));
            }
        }
        let burnt = live_sparks.len().min(sparks_per_frame / 4);
        for h in live_sparks.drain(..burnt) {
            sparks.remove(h);
        }
        // Rendering: this frame's draw list, one command per body and spark.
        let frame = draw.begin_frame();
        let commands = bodies.len() + sparks.len() + 64;
        frame.alloc_slice_copy(&vec![[0f32; 16]; commands]);
        drop(frame);
        // AI: path requests in a scratch arena, refused beyond its budget.
        paths.reset();
        for _ in 0..(4 + bodies.len() / 8) {
            if paths.try_alloc([[0f32; 2]; 32]).is_err() {
                refused_paths += 1;
            }
        }
        last = match registry.end_frame(&[&bodies, &sounds, &draw, &sparks, &paths]) {
            Ok(report) => Some(report),
            Err(over) => {
                println!("  frame {}: {over}", over.report.frame());
                Some(over.report)
            }
        };
    }

    let report = last.expect("at least one frame ran");
    println!("Bytes per tag, from the allocators themselves:");
    print!("{}", report.totals());
    println!();
    print!("{report}");
    println!(
        "refused by their budgets: {refused_bodies} rigid bodies, {refused_paths} path requests"
    );
    let history = registry.history();
    for tag in [Physics, Audio, Rendering, Particles, AI] {
        if let Some((frame, bytes)) = history.peak_frame(tag) {
            println!(
                "{:<20} highest at frame {frame}: {bytes} bytes",
                TagPath(tag).to_string()
            );
        }
    }

    println!(
        "chart of {} frames: {}",
        history.len(),
        support::write_output("memory-report.svg", &history.to_svg(720, 360))
    );
    // Bodies and sparks still live at shutdown are intended: no leak report.
    bodies.set_forgive_leaks(true);
    sparks.set_forgive_leaks(true);
}

fn main() {
    run();
}
