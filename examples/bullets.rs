//! A machine gun: every frame it fires bullets into a fixed `Pool<Bullet>`, moves them, and
//! expires the ones that flew out of range. A homing missile keeps a `Handle<Bullet>` to its
//! target across frames; when the target expires the handle simply stops resolving (no dangling
//! pointer). Prints the pool's statistics.
//!
//! Run: `cargo run --example bullets` (`ARENA_KIT_SMOKE=1` for a short run).
#![allow(dead_code)]

use arena_kit::pool::PoolStats;
use arena_kit::prelude::*;

#[derive(Debug, Clone, Copy)]
struct Bullet {
    x: f32,
    y: f32,
    vx: f32,
    vy: f32,
    age: u16,
}

const POOL_SIZE: usize = 256;
const SHOTS_PER_FRAME: usize = 6;
const RANGE: f32 = 400.0;
const LIFETIME: u16 = 43;

fn report(stats: &PoolStats) {
    println!(
        "  pool dropped: {} bullets still live (peak {}, {} fired, {} expired)",
        stats.len, stats.peak_live, stats.inserts, stats.removes
    );
}

/// Runs the machine gun for a few thousand frames (120 with `ARENA_KIT_SMOKE`).
pub fn run() {
    let frames: u32 = if std::env::var_os("ARENA_KIT_SMOKE").is_some() {
        120
    } else {
        3_000
    };
    let mut bullets: Pool<Bullet> = Pool::with_capacity(POOL_SIZE);
    bullets.set_drop_report(report);
    let mut jammed = 0u64;
    let mut tracked: Option<Handle<Bullet>> = None;
    let mut lost_track = 0u32;
    // A cheap deterministic spread for the barrel.
    let mut spread = 0x1234_5678u32;

    println!("machine gun: {SHOTS_PER_FRAME} shots/frame into a pool of {POOL_SIZE} bullets");
    for frame in 0..frames {
        // Fire. A full pool hands the bullet back instead of returning a null pointer.
        for _ in 0..SHOTS_PER_FRAME {
            spread = spread.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let angle = (spread >> 16) as f32 / 65_536.0 * 0.6 - 0.3;
            let speed = 4.0 + (spread & 0xFF) as f32 / 64.0;
            let shot = Bullet {
                x: 0.0,
                y: 0.0,
                vx: speed * angle.cos(),
                vy: speed * angle.sin(),
                age: 0,
            };
            match bullets.try_insert(shot) {
                Ok(h) => {
                    if tracked.is_none() {
                        tracked = Some(h);
                    }
                }
                Err(_full) => jammed += 1,
            }
        }
        // Move.
        for (_, b) in bullets.iter_mut() {
            b.x += b.vx;
            b.y += b.vy;
            b.age += 1;
        }
        // Expire: out of range or too old. Their handles go stale; their slots are reused LIFO.
        bullets.retain(|_, b| b.x * b.x + b.y * b.y < RANGE * RANGE && b.age < LIFETIME);
        // The missile follows its target until the handle stops resolving.
        if let Some(h) = tracked
            && bullets.get(h).is_none()
        {
            lost_track += 1;
            tracked = None;
        }
        if frame % (frames / 4).max(1) == 0 {
            let s = bullets.stats();
            println!(
                "frame {frame:>5}: {:>3} live / {} slots, peak {}, fired {}, expired {}, jammed {jammed}",
                s.len, s.capacity, s.peak_live, s.inserts, s.removes
            );
        }
    }
    let s = bullets.stats();
    println!(
        "after {frames} frames: {} live, peak {} of {} slots, {} fired, {} expired, {jammed} shots \
         jammed by a full pool, target re-acquired {lost_track} times, {} slots retired",
        s.len, s.peak_live, s.capacity, s.inserts, s.removes, s.retired
    );
    assert_eq!(
        s.inserts - s.removes,
        s.len as u64,
        "every bullet accounted for"
    );
}

fn main() {
    run()
}
