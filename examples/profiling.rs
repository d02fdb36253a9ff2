//! Every byte of the process, tagged: a game loop whose physics, audio, rendering and AI code
//! allocate with plain `Vec`, `Box`, `String` and `BTreeMap`, charged to their subsystem by
//! `tag_scope` through the `TaggingAllocator` installed as the global allocator. Every few frames
//! it prints the report (with "Untracked": what no scope claimed), and at the end it writes the
//! history chart to `target/arena-kit-examples/profiling.svg`.
//!
//! Audio buffers are decoded on the main thread and freed by a mixer thread: each free is still
//! charged to Audio.
//!
//! Run: `cargo run --release --example profiling` (`ARENA_KIT_SMOKE=1` for a short run).

use std::alloc::System;
use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc;

use arena_kit::tags::{Source, TaggingAllocator, global_rows, mem_tag, tag_scope};
use arena_kit::{Registry, Report, Tag};

#[path = "support/mod.rs"]
mod support;

#[global_allocator]
static ALLOC: TaggingAllocator = TaggingAllocator::new(System);

/// The game's subsystems, and the row for memory no scope claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryTag {
    Physics,
    Audio,
    Rendering,
    AI,
    /// The reports and history themselves.
    Profiling,
    Untracked,
}

impl Tag for MemoryTag {
    fn name(&self) -> &'static str {
        match self {
            MemoryTag::Physics => "Physics",
            MemoryTag::Audio => "Audio",
            MemoryTag::Rendering => "Rendering",
            MemoryTag::AI => "AI",
            MemoryTag::Profiling => "Profiling",
            MemoryTag::Untracked => "Untracked",
        }
    }
}

/// A contact between two bodies, as the physics step produces them (only its size matters here).
#[allow(dead_code)]
#[derive(Clone, Copy, Default)]
struct Contact {
    normal: [f32; 3],
    depth: f32,
    bodies: [u32; 2],
}

/// The report of the global allocator's rows now, as the registry's frame `frame` ends.
fn end_frame(registry: &mut Registry<MemoryTag>) -> Report<MemoryTag> {
    let _profiling = tag_scope(MemoryTag::Profiling);
    let rows = global_rows(MemoryTag::Untracked);
    let sources: Vec<&dyn Source<MemoryTag>> =
        rows.iter().map(|r| r as &dyn Source<MemoryTag>).collect();
    match registry.end_frame(&sources) {
        Ok(report) => report,
        Err(over) => {
            println!("  frame {}: {over}", over.report.frame());
            over.report
        }
    }
}

fn main() {
    use MemoryTag::*;
    let smoke = std::env::var_os("ARENA_KIT_SMOKE").is_some();
    let (frames, every) = if smoke { (30u32, 10u32) } else { (300, 60) };

    // The mixer: a thread that plays decoded buffers and frees them. Its frees are charged to
    // the tag that allocated each buffer (Audio), not to the mixer's own scope.
    let (to_mixer, mixer_queue) = mpsc::channel::<Box<[i16]>>();
    let mixer = std::thread::spawn(move || {
        let mut played = 0usize;
        for buffer in mixer_queue {
            played += buffer.len();
        }
        played
    });

    let mut registry = Registry::with_history(frames as usize);
    registry.set_budget(Rendering, arena_kit::Budget::warn(2 << 20));
    // Loaded once, outside any scope: it shows up as "Untracked".
    let config: String = "vsync=on\nresolution=1920x1080\n".repeat(64);

    // Long-lived state, each made inside its subsystem's scope.
    let mut bodies: Vec<[f32; 16]> = mem_tag!(Physics, { Vec::with_capacity(64) });
    let mut paths: BTreeMap<u32, Vec<[f32; 2]>> = BTreeMap::new();
    let mut shader_names: Vec<String> = Vec::new();
    let mut streaming: VecDeque<Box<[i16]>> = VecDeque::new();

    for f in 0..frames {
        let t = f as f32 / frames as f32;
        {
            let _physics = tag_scope(Physics);
            if t < 0.5 {
                bodies.extend(std::iter::repeat_n([0.0; 16], 8));
            } else {
                bodies.truncate(bodies.len().saturating_sub(8));
            }
            // This frame's contacts: allocated and freed inside the frame.
            let contacts = vec![Contact::default(); bodies.len() * 2];
            std::hint::black_box(&contacts);
        }
        {
            let _audio = tag_scope(Audio);
            // Decode a buffer of 1/30 s at 48 kHz stereo, keep 8 queued, hand the oldest over
            // to the mixer thread, which frees it.
            streaming.push_back(vec![0i16; 3200].into_boxed_slice());
            if streaming.len() > 8
                && let Some(oldest) = streaming.pop_front()
            {
                to_mixer
                    .send(oldest)
                    .expect("the mixer runs until the channel closes");
            }
        }
        {
            let _rendering = tag_scope(Rendering);
            // Shaders compile during the first frames; the draw list is rebuilt every frame.
            if shader_names.len() < 48 {
                shader_names.push(format!("shaders/material_{:03}.wgsl", shader_names.len()));
            }
            let draw_list: Vec<[f32; 16]> = vec![[1.0; 16]; 256 + bodies.len()];
            std::hint::black_box(&draw_list);
        }
        {
            let _ai = tag_scope(AI);
            // Agents plan paths that live a few frames.
            paths.insert(f, vec![[0.0, 0.0]; 32 + (f as usize % 7) * 8]);
            if paths.len() > 20 {
                paths.pop_first();
            }
        }

        // A frame takes its time: the mixer thread runs meanwhile.
        std::thread::sleep(std::time::Duration::from_millis(1));
        let report = end_frame(&mut registry);
        if (f + 1) % every == 0 {
            println!("frame {}:", report.frame());
            print!("{}", report.totals());
        }
    }

    let _profiling = tag_scope(Profiling);
    let history = registry.history();
    for tag in [Physics, Audio, Rendering, AI, Profiling, Untracked] {
        if let Some((frame, bytes)) = history.peak_frame(tag) {
            println!("{:<10} highest at frame {frame}: {bytes} bytes", tag.name());
        }
    }
    println!(
        "chart of {} frames: {}",
        history.len(),
        support::write_output("profiling.svg", &history.to_svg(720, 360))
    );

    drop(to_mixer);
    let played = mixer.join().expect("the mixer thread does not panic");
    println!(
        "mixer played {played} samples; config is {} bytes",
        config.len()
    );
}
