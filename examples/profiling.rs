//! Every byte of the process, tagged: a game loop whose physics, audio, rendering and AI code
//! allocate with plain `Vec`, `Box`, `String` and `BTreeMap`, charged to their subsystem by
//! `tag_scope` through the `TaggingAllocator` installed as the global allocator. Every few frames
//! it prints the report (with "Untracked": what no scope claimed), and at the end it writes the
//! history chart to `target/arena-kit-examples/profiling.svg`.
//!
//! Audio buffers are decoded on the main thread and freed by a mixer thread: each free is still
//! charged to Audio. The rigid bodies live in a tracked pool and the draw lists in a tracked
//! frame arena: the pool's chunks are charged to Physics wherever it grows, and with the
//! `profiler` feature a `Recorder` hears every insert, remove, block and reset of both, answers
//! what outlived its frame, and writes a Perfetto trace (`profiling.trace.json`: open it in
//! ui.perfetto.dev) with a counter track per tag.
//!
//! Run: `cargo run --release --features profiler --example profiling` (without the feature, no
//! trace; `ARENA_KIT_SMOKE=1` for a short run).

use std::alloc::System;
use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc;

use arena_kit::tags::{Source, TaggingAllocator, global_rows, mem_tag, tag_scope};
use arena_kit::{FrameArena, Pool, Registry, Report, Tag, Tracked};

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

/// The report of the global allocator's rows now, as the registry's frame ends. The tracked
/// allocators are passed too, for their per-frame profiler events, but report in a registry of
/// their own: their pages are in the global rows already (see `global_rows`).
fn end_frame(
    registry: &mut Registry<MemoryTag>,
    inside: &mut Registry<MemoryTag>,
    tracked: &[&dyn Source<MemoryTag>],
) -> Report<MemoryTag> {
    let _profiling = tag_scope(MemoryTag::Profiling);
    let rows = global_rows(MemoryTag::Untracked);
    let sources: Vec<&dyn Source<MemoryTag>> =
        rows.iter().map(|r| r as &dyn Source<MemoryTag>).collect();
    if let Err(over) = inside.end_frame(tracked) {
        println!("  frame {}: {over}", over.report.frame());
    }
    match registry.end_frame(&sources) {
        Ok(report) => report,
        Err(over) => {
            println!("  frame {}: {over}", over.report.frame());
            over.report
        }
    }
}

/// With the `profiler` feature: a recorder of every tracked allocator's events, installed as the
/// profiler sink.
#[cfg(feature = "profiler")]
fn start_recording() -> &'static arena_kit::tags::Recorder {
    let _profiling = tag_scope(MemoryTag::Profiling);
    let recorder = Box::leak(Box::new(arena_kit::tags::Recorder::new(1 << 16)));
    arena_kit::tags::set_profiler_sink(Some(recorder));
    recorder
}

/// What the recorder saw, and the Perfetto trace.
#[cfg(feature = "profiler")]
fn finish_recording(recorder: &arena_kit::tags::Recorder) {
    arena_kit::tags::set_profiler_sink(None);
    let _profiling = tag_scope(MemoryTag::Profiling);
    let late = recorder.outlived_frame().value;
    let bodies = late.iter().filter(|a| a.pool == "rigid bodies").count();
    println!(
        "recorder: {} events held ({} dropped); {bodies} rigid bodies outlived the frame they \
         were made in; {} allocations live at the last frame",
        recorder.len(),
        recorder.dropped(),
        recorder
            .live_at(recorder.frame().saturating_sub(1))
            .value
            .len()
    );
    println!(
        "perfetto trace: {}",
        support::write_output("profiling.trace.json", &recorder.to_trace_json())
    );
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

    #[cfg(feature = "profiler")]
    let recorder = start_recording();
    #[cfg(not(feature = "profiler"))]
    println!("(built without the `profiler` feature: no allocation recorder, no Perfetto trace)");

    let mut registry = Registry::with_history(frames as usize);
    let mut inside = Registry::with_history(1);
    registry.set_budget(Rendering, arena_kit::Budget::warn(2 << 20));
    // Loaded once, outside any scope: it shows up as "Untracked".
    let config: String = "vsync=on\nresolution=1920x1080\n".repeat(64);

    // Long-lived state, each made inside its subsystem's scope.
    let mut bodies: Vec<[f32; 16]> = mem_tag!(Physics, { Vec::with_capacity(64) });
    // A growable pool made outside any scope: tracked as Physics, its chunks are charged to
    // Physics even when it grows inside the AI scope below.
    let mut rigid = Tracked::new(Pool::growable(32), "rigid bodies", Physics);
    let mut live_rigid = VecDeque::new();
    let mut draw = mem_tag!(Rendering, {
        Tracked::new(FrameArena::<2>::chained(16 << 10), "draw lists", Rendering)
    });
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
            // Shaders compile during the first frames; the draw list is rebuilt every frame, in
            // this frame's buffer of the frame arena.
            if shader_names.len() < 48 {
                shader_names.push(format!("shaders/material_{:03}.wgsl", shader_names.len()));
            }
            let frame = draw.begin_frame();
            let commands = frame.alloc_slice_fill_copy(256 + bodies.len(), [1.0f32; 16]);
            std::hint::black_box(commands);
        }
        {
            let _ai = tag_scope(AI);
            // The AI spawns rigid bodies (ragdolls) that live 30 frames; the pool grows here,
            // but its chunks are charged to Physics.
            for _ in 0..(f % 4) {
                live_rigid.push_back((f, rigid.insert([0.0f32; 16])));
            }
            while live_rigid.front().is_some_and(|&(made, _)| made + 30 <= f) {
                let (_, body) = live_rigid.pop_front().expect("checked above");
                rigid.remove(body);
            }
            // Agents plan paths that live a few frames.
            paths.insert(f, vec![[0.0, 0.0]; 32 + (f as usize % 7) * 8]);
            if paths.len() > 20 {
                paths.pop_first();
            }
        }

        // A frame takes its time: the mixer thread runs meanwhile.
        std::thread::sleep(std::time::Duration::from_millis(1));
        let report = end_frame(&mut registry, &mut inside, &[&rigid, &draw]);
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

    #[cfg(feature = "profiler")]
    finish_recording(recorder);
    rigid.set_forgive_leaks(true); // the ragdolls still live at shutdown are intended

    drop(to_mixer);
    let played = mixer.join().expect("the mixer thread does not panic");
    println!(
        "mixer played {played} samples; config is {} bytes",
        config.len()
    );
}
