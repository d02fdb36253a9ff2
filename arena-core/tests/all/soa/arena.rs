//! `Arena::alloc_soa`: SoA columns carved from an arena, dropped with it.
#![allow(missing_docs)] // test-only row types

use crate::soa_rows;
use crate::support;

use arena_kit_core::arena::{Arena, ArenaError};
use arena_kit_derive::Soa;
use soa_rows::{Aligned, Particle};
use support::miri_or;

#[test]
fn a_frames_particle_scratch_is_one_call() {
    let mut arena = Arena::with_capacity(64 * 1024);
    for frame in 0..3 {
        let n = miri_or(1000, 20);
        let mut ps = arena.alloc_soa(n, |i| Particle {
            x: i as f32,
            vx: 2.0,
            ..Particle::default()
        });
        let s = ps.slices_mut();
        for (x, vx) in s.x.iter_mut().zip(s.vx.iter()) {
            *x += vx * 0.5;
        }
        assert_eq!(ps.len(), n);
        assert_eq!(ps.slices().x[3], 4.0);
        assert_eq!(*ps.get(n - 1).unwrap().vx, 2.0);
        // Every column is in the arena, in one block.
        let base = arena.offset_of(ps.slices().x.as_ptr()).unwrap();
        let life = arena.offset_of(ps.slices().life.as_ptr()).unwrap();
        assert_eq!(
            life - base,
            6 * 4 * n,
            "frame {frame}: columns back to back"
        );
        arena.reset();
    }
}

#[test]
fn columns_keep_their_alignment_in_the_arena() {
    let arena = Arena::with_capacity(4096);
    arena.alloc([0u8; 3]);
    let v = arena.alloc_soa_from_iter((0..5u8).map(|i| Aligned {
        a: i,
        b: u32::from(i),
        c: Box::new(7),
    }));
    let s = v.slices();
    for p in [
        s.a.as_ptr() as usize,
        s.b.as_ptr() as usize,
        s.c.as_ptr() as usize,
    ] {
        assert_eq!(p % 64, 0);
    }
    assert_eq!(s.b, &[0, 1, 2, 3, 4]);
}

/// Counts drops.
#[derive(Debug, Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy))]
pub struct Tracked {
    pub id: u32,
    pub name: String,
}

#[test]
fn rows_are_dropped_on_reset_and_a_panicking_init_keeps_what_it_made() {
    // `String` columns need dropping: the arena registers one record for the block.
    let mut arena = Arena::with_capacity(8192);
    let v = arena.alloc_soa(4, |i| Tracked {
        id: i as u32,
        name: format!("t{i}"),
    });
    assert_eq!(v.slices().name[2], "t2");
    assert_eq!(arena.pending_drops(), 1);
    arena.reset();
    assert_eq!(arena.pending_drops(), 0);

    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        arena.alloc_soa(5, |i| {
            assert!(i < 3, "init fails at row 3");
            Tracked {
                id: i as u32,
                name: format!("t{i}"),
            }
        });
    }));
    assert!(r.is_err());
    assert_eq!(
        arena.pending_drops(),
        1,
        "the three rows made are dropped with the arena"
    );
    arena.reset();
}

#[test]
fn exhaustion_is_an_error_and_changes_nothing() {
    let arena = Arena::with_capacity(256);
    let before = arena.used();
    let err = arena
        .try_alloc_soa(100, |_| Particle::default())
        .err()
        .unwrap();
    assert!(matches!(err, ArenaError::Full { .. }), "{err}");
    assert_eq!(arena.used(), before);
    let overflow = arena
        .try_alloc_soa(usize::MAX / 8, |_| Particle::default())
        .err()
        .unwrap();
    assert!(
        matches!(overflow, ArenaError::SizeOverflow { .. }),
        "{overflow}"
    );
    assert_eq!(
        arena
            .try_alloc_soa(2, |_| Particle::default())
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn an_arena_slice_sorts_in_place() {
    let arena = Arena::with_capacity(8192);
    let mut v = arena.alloc_soa(7, |i| Tracked {
        id: ((i * 5) % 7) as u32,
        name: format!("n{i}"),
    });
    v.sort_by_key(|r| *r.id);
    assert_eq!(v.slices().id, &[0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(v.slices().name[1], "n3", "the names moved with their ids");
    v.sort_by(|a, b| b.name.cmp(a.name));
    assert_eq!(v.slices().name[0], "n6");
    assert_eq!(*v.get(0).unwrap().id, 2);
}

#[test]
fn an_empty_soa_slice_takes_nothing_and_is_not_counted() {
    // as an empty `alloc_slice_copy`: a dangling aligned block, whatever the bump pointer
    let arena = Arena::with_capacity(1024);
    arena.alloc_layout(core::alloc::Layout::from_size_align(3, 1).unwrap());
    let before = (arena.used(), arena.allocation_count());
    let rows = arena.alloc_soa(0, |_| Particle::default());
    assert_eq!(rows.len(), 0);
    let rows = arena.alloc_soa_from_iter(core::iter::empty::<Particle>());
    assert_eq!(rows.len(), 0);
    assert_eq!((arena.used(), arena.allocation_count()), before);
}

#[test]
fn an_empty_soa_slice_of_rows_that_need_dropping_takes_nothing_and_is_not_counted() {
    // As an empty `alloc_slice_fill_with` of values that need dropping: no drop record for no
    // rows (the CHANGELOG: "empty SoA blocks still take and count nothing").
    let arena = Arena::with_capacity(1024);
    arena.alloc_layout(core::alloc::Layout::from_size_align(3, 1).unwrap());
    let before = super::arena_footprint(&arena);
    let rows = arena.alloc_soa(0, |_| Tracked {
        id: 0,
        name: String::new(),
    });
    assert_eq!(rows.len(), 0);
    let rows = arena.alloc_soa_from_iter(core::iter::empty::<Tracked>());
    assert_eq!(rows.len(), 0);
    let empty = arena.alloc_slice_fill_with(0, |_| String::new());
    assert!(empty.is_empty());
    assert_eq!(super::arena_footprint(&arena), before);
}
