//! A reset frees everything without comparing each drop record's place with a position: every
//! kind of arena drops each value exactly once, and a destructor that panics part-way through
//! (in a record's run or in its tail of alternating types) still lets the rest drop once.

use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::arena::{Arena, FrameArena, scratch};

use crate::support::{counter, drops, miri_or};

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts its drops; another type, so that it alternates with [`Counted`].
struct Wider(Arc<AtomicUsize>, #[allow(dead_code)] [u64; 3]);

impl Drop for Wider {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// `k` rounds of values that alternate types, a slice now and then, and a block that takes a
/// page of its own in small chained arenas; returns how many values need dropping.
fn fill(a: &Arena, c: &Arc<AtomicUsize>, k: usize) -> usize {
    let mut made = 0;
    for i in 0..k {
        a.alloc(Counted(c.clone()));
        made += 1;
        if i % 3 == 0 {
            a.alloc(Wider(c.clone(), [i as u64; 3]));
            made += 1;
        }
        if i % 7 == 0 {
            made += a.alloc_slice_fill_with(3, |_| Counted(c.clone())).len();
        }
        if i % 11 == 0 {
            a.alloc([0u8; 300]);
        }
    }
    made
}

#[test]
fn a_reset_drops_every_value_once_in_every_kind_of_arena() {
    let k = miri_or(60, 15);
    // chained, with pages used out of order (a rewind, then a request that skips pages)
    let c = counter();
    let mut a = Arena::chained(256);
    let mut made = fill(&a, &c, k);
    let m = a.mark();
    made += fill(&a, &c, k);
    a.rewind(m).unwrap();
    a.alloc([0u8; 2000]);
    made += fill(&a, &c, k);
    a.reset();
    assert_eq!(drops(&c), made, "chained");
    assert_eq!(a.pending_drops(), 0);
    made += fill(&a, &c, k);
    a.reset();
    assert_eq!(drops(&c), made, "chained, after coalescing");

    // borrowed memory, then pages after it
    let c = counter();
    let mut buf = [MaybeUninit::<u8>::uninit(); 1 << 14];
    let mut b = Arena::from_buffer(&mut buf);
    let made = fill(&b, &c, k);
    b.reset();
    assert_eq!(drops(&c), made, "borrowed buffer");

    // guarded
    let c = counter();
    let mut g = Arena::chained(512).with_guards();
    let made = fill(&g, &c, k);
    g.reset();
    assert_eq!(drops(&c), made, "guarded");
    assert_eq!(g.check_guards(), Ok(()));

    // a fixed block
    let c = counter();
    let mut r = Arena::with_capacity(1 << 15);
    let made = fill(&r, &c, k);
    r.reset();
    assert_eq!(drops(&c), made, "fixed");

    // frames: each buffer is reset when its turn comes again
    let c = counter();
    let mut frames = FrameArena::<2>::chained(512);
    let mut made = 0;
    for _ in 0..5 {
        let f = frames.begin_frame();
        made += fill(f.arena(), &c, k / 2);
    }
    let _ = frames.begin_frame();
    let _ = frames.begin_frame();
    assert_eq!(drops(&c), made, "frames");

    // scratch, with a destructor that opens scratch again during the reset
    struct Reenter(Arc<AtomicUsize>);
    impl Drop for Reenter {
        fn drop(&mut self) {
            let c = self.0.clone();
            scratch(|s| {
                s.alloc(Counted(c.clone()));
                s.alloc(Wider(c.clone(), [0; 3]));
            });
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let c = counter();
    scratch(|s| {
        for _ in 0..20 {
            s.alloc(Reenter(c.clone()));
            s.alloc(Counted(c.clone()));
        }
    });
    assert_eq!(drops(&c), 20 * 4, "scratch");
}

#[test]
fn a_destructor_panicking_mid_reset_lets_the_rest_drop_once() {
    /// Counts its drops, and panics in the one built with `true`.
    struct Bomb(Arc<AtomicUsize>, bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
            assert!(!self.1, "this one panics");
        }
    }
    let n = miri_or(100, 20);
    for arena in [
        Arena::chained(200),
        Arena::chained(100).with_guards(),
        Arena::with_capacity(1 << 15),
    ] {
        let mut arena = arena;
        let c = counter();
        let mut made = 0;
        // alternating types: one record and a tail of entries, broken by the small pages
        for i in 0..n {
            arena.alloc(Bomb(c.clone(), i == n / 3));
            arena.alloc(Counted(c.clone()));
            made += 2;
        }
        let r = catch_unwind(AssertUnwindSafe(|| arena.reset()));
        assert!(r.is_err());
        assert_eq!(drops(&c), made);
        assert_eq!(arena.pending_drops(), 0);
        assert_eq!(arena.used(), 0);
        arena.alloc(Counted(c.clone()));
        arena.reset();
        assert_eq!(drops(&c), made + 1);
    }
}
