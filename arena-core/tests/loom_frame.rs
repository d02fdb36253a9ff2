//! Model checks of the frame arena's reader protocol with [loom]: the real [`FrameArena`] and
//! [`FrameReader`] code, with its atomics, `Arc`, `Mutex` and thread parking swapped for loom's
//! by `arena-core/src/sync.rs`. Loom runs every interleaving of the threads' synchronising
//! operations (bounded by a preemption budget) and fails on a deadlock, a leaked `Arc` or a
//! failed assertion.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p arena-kit-core --test loom_frame --release`.
//!
//! What the model leaves out:
//! - Time: `begin_frame` parks with a 1 ms timeout in real builds; loom has no timeouts, so the
//!   shim parks without one. A wake-up that the protocol could lose would be a deadlock here
//!   instead of a 1 ms stall, which makes the check stricter, not weaker.
//! - Plain memory accesses: loom tracks atomics and its own cells, not the arena's bytes. Each
//!   published value therefore holds a `loom::cell::UnsafeCell` that the reader reads and the
//!   value's destructor (run by the arena when `begin_frame` resets the buffer) writes, so loom
//!   checks that every read happens before the reset: a missing `Release`/`Acquire` pair shows
//!   up as a causality violation, a reset under a live reader as a failed assertion. The
//!   producer also writes the next frame's pattern into the same bytes, which a reader that
//!   came too late would see.
//! - Size: two buffers, two or three frames and one or two reader threads, small enough for loom
//!   to explore exhaustively in seconds. The protocol is per buffer, so more buffers or frames
//!   only repeat the same interleavings.
//! - The `no_std` build, which spins instead of parking.
//!
//! [loom]: https://docs.rs/loom
#![cfg(loom)]

use arena_kit_core::arena::{FrameArena, FrameReader};
use loom::cell::UnsafeCell;
use loom::thread;

const LEN: usize = 4;

/// Frame `n`'s pattern.
fn pattern(n: u64) -> [u64; LEN] {
    core::array::from_fn(|i| n * 100 + i as u64)
}

/// What a frame publishes: its pattern in plain memory, and its number in a cell loom watches.
struct Payload {
    pattern: [u64; LEN],
    number: UnsafeCell<u64>,
}

// SAFETY: test-only. Readers only read `number` (through `with`); the one write is in `Drop`,
// which the arena runs when it resets the buffer, after every reader is gone (the property the
// models check: loom reports a causality violation if a read is not ordered before the write).
unsafe impl Sync for Payload {}

impl Drop for Payload {
    fn drop(&mut self) {
        self.number.with_mut(|n| {
            // SAFETY: `with_mut` is exclusive access, as `&mut self` is.
            unsafe { *n = u64::MAX }
        });
    }
}

/// Starts frame `n` (its number must be `n`), fills it and publishes its payload.
fn publish_frame(frames: &mut FrameArena<2>, n: u64) -> FrameReader<Payload> {
    let frame = frames.begin_frame();
    assert_eq!(frame.number(), n);
    let data = frame.arena().alloc(Payload {
        pattern: pattern(n),
        number: UnsafeCell::new(n),
    });
    frame
        .publish(&*data)
        .unwrap_or_else(|_| panic!("the data is in this frame"))
}

fn read(reader: &FrameReader<Payload>) {
    let n = reader.frame();
    // SAFETY: a shared read; the only write is the destructor, which must come after us.
    let number = reader.number.with(|p| unsafe { *p });
    assert_eq!(number, n, "frame {n}'s value was dropped under its reader");
    assert_eq!(
        reader.pattern,
        pattern(n),
        "frame {n} was overwritten under its reader"
    );
}

/// One reader thread reads frame 0 while the producer runs frames 1 and 2; frame 2 reuses
/// frame 0's buffer, so `begin_frame` must wait for the reader.
#[test]
fn begin_frame_waits_for_the_reader_of_the_buffer_it_reuses() {
    loom::model(|| {
        let mut frames = FrameArena::<2>::with_capacity(256);
        let reader = publish_frame(&mut frames, 0);
        let render = thread::spawn(move || {
            read(&reader);
            drop(reader);
        });
        drop(publish_frame(&mut frames, 1)); // buffer 1: never waits
        let third = publish_frame(&mut frames, 2); // buffer 0 again: waits for the reader
        read(&third);
        assert_eq!(
            frames.readers(0),
            1,
            "only the producer's own reader is left"
        );
        drop(third);
        render.join().unwrap();
    });
}

/// Two reader threads share frame 0 through a clone; the buffer is reused only after both are
/// dropped, whichever goes last (the last release is the one that wakes the producer).
#[test]
fn the_last_of_two_readers_releases_the_buffer() {
    loom::model(|| {
        let mut frames = FrameArena::<2>::with_capacity(256);
        let first = publish_frame(&mut frames, 0);
        let second = first.clone();
        let a = thread::spawn(move || read(&first));
        let b = thread::spawn(move || read(&second));
        drop(publish_frame(&mut frames, 1));
        drop(publish_frame(&mut frames, 2));
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// `try_begin_frame` never resets under a reader: it either reports the buffer in use (and
/// changes nothing) or runs after the reader is gone.
#[test]
fn try_begin_frame_refuses_or_runs_after_the_reader() {
    loom::model(|| {
        let mut frames = FrameArena::<2>::with_capacity(256);
        let reader = publish_frame(&mut frames, 0);
        let render = thread::spawn(move || read(&reader));
        drop(publish_frame(&mut frames, 1));
        match frames.try_begin_frame() {
            Err(in_use) => {
                assert_eq!((in_use.buffer, in_use.readers), (0, 1));
                assert_eq!(frames.frames_begun(), 2, "a refused frame changes nothing");
            }
            Ok(frame) => {
                frame.arena().alloc_slice_copy(&pattern(9)); // would clobber a live reader
            }
        }
        render.join().unwrap();
    });
}

/// Dropping the frame arena while a reader still reads leaks that buffer instead of freeing
/// it, whatever the interleaving.
#[test]
fn dropping_the_frame_arena_never_frees_under_a_reader() {
    loom::model(|| {
        let mut frames = FrameArena::<2>::with_capacity(256);
        let reader = publish_frame(&mut frames, 0);
        let render = thread::spawn(move || read(&reader));
        drop(frames);
        render.join().unwrap();
    });
}
