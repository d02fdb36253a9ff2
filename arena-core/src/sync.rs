//! The synchronisation primitives [`FrameArena`](crate::arena::FrameArena) and
//! [`FrameReader`](crate::arena::FrameReader) use, in one place so the real protocol can be
//! model-checked: under `cfg(loom)` these are [loom](https://docs.rs/loom)'s instrumented
//! versions (see `tests/loom_frame.rs`), otherwise the `core`/`alloc`/`std` ones. This module
//! only re-exports; nothing of the protocol lives here.

#[cfg(not(loom))]
pub(crate) use alloc::sync::Arc;
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicUsize, Ordering};
#[cfg(all(not(loom), feature = "std"))]
pub(crate) use std::sync::Mutex;
#[cfg(all(not(loom), feature = "std"))]
pub(crate) use std::thread;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex};
#[cfg(loom)]
pub(crate) use loom::thread;

/// Blocks the producer in `begin_frame` until a reader's release unparks it (or briefly, as a
/// backstop against a missed wake-up).
///
/// Under loom there is no `park_timeout`: the model parks without a timeout, so a lost wake-up
/// shows up as a deadlock instead of being papered over by the timeout.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn park_briefly() {
    #[cfg(not(loom))]
    std::thread::park_timeout(core::time::Duration::from_millis(1));
    #[cfg(loom)]
    loom::thread::park();
}

/// Busy-wait hint for the `no_std` build, which has no thread to park.
#[cfg(not(feature = "std"))]
#[inline]
pub(crate) fn spin() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}
