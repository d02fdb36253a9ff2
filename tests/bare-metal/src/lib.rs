//! A bare-metal program using arena-kit: `LockedHeap` is the global allocator, and a `Vec`, a
//! `Pool` with generational handles and an arena over a stack buffer run on it. Built for
//! `thumbv7em-none-eabihf` by .ci/run; nothing runs it (there is no board), the build is the check
//! that the facade and the heap work without std.
#![no_std]

extern crate alloc;

use alloc::vec::Vec;
use core::mem::MaybeUninit;
use core::panic::PanicInfo;

use arena_kit::heap::LockedHeap;
use arena_kit::prelude::{Arena, Pool};

#[global_allocator]
static HEAP: LockedHeap<{ 16 * 1024 }> = LockedHeap::new();

/// An enemy in the pool.
struct Enemy {
    hp: u32,
}

/// The entry point a start-up routine would call: returns a checksum of the work done, or
/// `u32::MAX` if the heap found its bookkeeping inconsistent afterwards.
#[unsafe(no_mangle)]
pub extern "C" fn arena_kit_bare_metal_main() -> u32 {
    let mut squares: Vec<u32> = (0..64).map(|i| i * i).collect();
    squares.retain(|s| s % 2 == 0);

    let mut enemies = Pool::with_capacity(8);
    let first = enemies.insert(Enemy { hp: 10 });
    let second = enemies.insert(Enemy { hp: 20 });
    enemies.remove(first);
    let stale = enemies.get(first).is_none();
    let hp = enemies.get(second).map_or(0, |e| e.hp);

    let mut buffer = [MaybeUninit::<u8>::uninit(); 256];
    let arena = Arena::from_buffer(&mut buffer);
    let scratch = arena.alloc([1u32; 8]);
    let sum: u32 = scratch.iter().sum();

    let live = HEAP.stats().map_or(0, |s| s.live_blocks as u32);
    drop(squares);
    drop(enemies);
    if HEAP.check().is_err() {
        return u32::MAX;
    }
    u32::from(stale) + hp + sum + live
}

#[panic_handler]
fn panic(_: &PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
