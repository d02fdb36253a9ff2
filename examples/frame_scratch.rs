//! A game loop with the arena family: triple-buffered frame arenas whose render commands a render
//! thread consumes a frame later, per-call `scratch` arenas for pathfinding, and a level arena
//! with a scope per frame (a stack allocator: level data below the marker, frame data
//! above it).
//!
//! Run: `cargo run --release --example frame_scratch` (`ARENA_KIT_SMOKE=1` for a quick run).
#![allow(dead_code)]

use std::sync::mpsc;
use std::thread;

use arena_kit::arena::{Arena, FrameArena, FrameReader, scratch};

#[derive(Debug, Clone, Copy)]
struct DrawCommand {
    mesh: u32,
    transform: [f32; 12],
}

#[derive(Debug, Clone, Copy)]
struct Enemy {
    pos: (i32, i32),
    target: (i32, i32),
}

/// Breadth-first path length on an open grid, using scratch memory for the frontier.
fn path_length(from: (i32, i32), to: (i32, i32)) -> usize {
    scratch(|arena| {
        // the frontier and the visited set live in this call's scratch arena
        let size = 32i32;
        let visited = arena.alloc_slice_fill_with((size * size) as usize, |_| false);
        let frontier =
            arena.alloc_slice_fill_with((size * size) as usize, |_| (0i32, 0i32, 0usize));
        let (mut head, mut tail) = (0, 1);
        frontier[0] = (from.0, from.1, 0);
        visited[(from.1 * size + from.0) as usize] = true;
        while head < tail {
            let (x, y, d) = frontier[head];
            head += 1;
            if (x, y) == to {
                return d;
            }
            for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                let (nx, ny) = (x + dx, y + dy);
                if (0..size).contains(&nx)
                    && (0..size).contains(&ny)
                    && !visited[(ny * size + nx) as usize]
                {
                    visited[(ny * size + nx) as usize] = true;
                    frontier[tail] = (nx, ny, d + 1);
                    tail += 1;
                }
            }
        }
        usize::MAX
    })
}

/// Runs the example (small sizes when `ARENA_KIT_SMOKE` is set).
pub fn run() {
    let smoke = std::env::var_os("ARENA_KIT_SMOKE").is_some();
    let (frames, enemies, draws) = if smoke { (6, 8, 200) } else { (240, 64, 5_000) };

    // Level arena: level data stays for the whole level; each frame's work goes in a scope.
    let mut level = Arena::with_capacity(4 << 20);
    let level_enemies = level.alloc_slice_fill_with(enemies, |i| Enemy {
        pos: (i as i32 % 32, 0),
        target: (31 - i as i32 % 32, 31),
    });
    let level_enemies: Vec<Enemy> = level_enemies.to_vec();
    let level_marker = level.mark();

    let (to_render, render_rx) = mpsc::channel::<FrameReader<[DrawCommand]>>();
    let render = thread::spawn(move || {
        let mut meshes = 0u64;
        let mut frames = 0;
        for commands in render_rx {
            meshes += commands.iter().map(|c| u64::from(c.mesh)).sum::<u64>();
            frames += 1;
        }
        (frames, meshes)
    });

    let mut frame_arenas = FrameArena::<3>::chained(256 * 1024);
    let mut total_path = 0;
    for _ in 0..frames {
        // stack allocator: per-frame AI scratch above the level data, freed at scope end
        {
            let scope = level.scope();
            let lengths = scope.alloc_slice_fill_with(level_enemies.len(), |i| {
                let e = level_enemies[i];
                path_length(e.pos, e.target)
            });
            total_path += lengths.iter().sum::<usize>();
        }
        debug_assert_eq!(level.used(), level_marker.used());

        // frame arena: render commands for the render thread, alive until it drops the reader
        let frame = frame_arenas.begin_frame();
        let commands = frame.arena().alloc_slice_fill_with(draws, |i| DrawCommand {
            mesh: (i % 16) as u32,
            transform: [frame.number() as f32; 12],
        });
        to_render
            .send(frame.publish(&*commands).expect("in this frame"))
            .expect("render thread alive");
    }
    drop(to_render);
    let (rendered, meshes) = render.join().expect("render thread");

    println!(
        "frame_scratch: {frames} frames, {rendered} rendered, mesh sum {meshes}, path total {total_path}"
    );
    let s = level.stats();
    println!(
        "level arena: used {} B (level data), high water {} B, capacity {} B, allocations {}",
        s.used, s.high_water, s.capacity, s.allocations
    );
    for i in 0..frame_arenas.buffer_count() {
        let s = frame_arenas.buffer(i).stats();
        println!(
            "frame buffer {i}: used {} B, high water {} B, pages {}, system bytes {}",
            s.used, s.high_water, s.pages, s.system_bytes
        );
    }
    println!(
        "scratch arena after the loop: used {} B (reset after every call)",
        scratch(|a| a.used())
    );
}

fn main() {
    run()
}
