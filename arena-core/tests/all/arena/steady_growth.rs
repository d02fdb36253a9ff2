//! A chained arena in a steady frame loop stops growing: after a reset it can serve any frame it
//! already served without new pages, and a limited arena gives its kept pages back before it
//! refuses. Frames are drawn from a seeded generator, so the runs are deterministic.

use core::alloc::Layout;

use crate::support::Rng;
use arena_kit_core::arena::{Arena, ArenaError, FrameArena};

/// The requests of one frame: mostly small, some medium, a few larger than `page` bytes.
fn frame_requests(rng: &mut Rng, page: usize, count: (usize, usize)) -> Vec<Layout> {
    let n = rng.between(count.0, count.1);
    (0..n)
        .map(|_| {
            let kind = rng.below(100);
            let (size, align) = if kind < 80 {
                (rng.between(8, page / 16), 8)
            } else if kind < 97 {
                (rng.between(page / 8, page * 3 / 4), 16)
            } else {
                (rng.between(page + page / 4, page * 3), 8)
            };
            Layout::from_size_align(size, align).unwrap()
        })
        .collect()
}

/// Runs one frame's requests, some inside a scope that is rewound halfway.
fn run_frame(arena: &mut Arena, requests: &[Layout]) -> Result<usize, ArenaError> {
    let half = requests.len() / 2;
    for layout in &requests[..half] {
        arena.try_alloc_layout(*layout)?;
    }
    {
        let scope = arena.scope();
        for layout in &requests[half..] {
            scope.try_alloc_layout(*layout)?;
        }
    }
    for layout in &requests[half..] {
        arena.try_alloc_layout(*layout)?;
    }
    Ok(arena.used())
}

#[test]
fn a_seeded_frame_loop_stops_growing_after_its_first_tenth() {
    let (frames, page, count) = if cfg!(miri) {
        (400, 1024, (3, 8))
    } else {
        (4000, 4096, (20, 80))
    };
    let mut rng = Rng(0x5EED_F00D);
    let mut arena = Arena::chained(page);
    let mut peak = 0;
    let mut reserved_at_tenth = 0;
    let mut peak_at_tenth = 0;
    for frame in 0..frames {
        let requests = frame_requests(&mut rng, page, count);
        peak = peak.max(run_frame(&mut arena, &requests).unwrap());
        arena.reset();
        if frame + 1 == frames / 10 {
            reserved_at_tenth = arena.system_bytes();
            peak_at_tenth = peak;
        }
    }
    assert_eq!(
        arena.system_bytes(),
        reserved_at_tenth,
        "reserved bytes grew from {reserved_at_tenth} to {} while the peak frame grew from \
         {peak_at_tenth} to {peak}",
        arena.system_bytes()
    );
    assert!(arena.high_water() >= peak);
}

#[test]
fn replaying_any_served_frame_after_a_reset_takes_no_new_page() {
    let (frames, page, count) = if cfg!(miri) {
        (12, 1024, (4, 12))
    } else {
        (300, 4096, (20, 80))
    };
    let mut rng = Rng(0xFA57_BEEF);
    let mut arena = Arena::chained(page);
    let mut served: Vec<Vec<Layout>> = Vec::new();
    for _ in 0..frames {
        let requests = frame_requests(&mut rng, page, count);
        run_frame(&mut arena, &requests).unwrap();
        arena.reset();
        served.push(requests);
        // every frame served so far fits in what the reset kept
        let reserved = arena.system_bytes();
        for (i, old) in served.iter().enumerate().rev().take(8) {
            run_frame(&mut arena, old).unwrap();
            arena.reset();
            assert_eq!(
                arena.system_bytes(),
                reserved,
                "replaying frame {i} after a reset took a new page"
            );
        }
    }
}

#[test]
fn a_limited_arena_never_refuses_a_frame_no_bigger_than_one_it_served() {
    let (frames, page, limit, count) = if cfg!(miri) {
        (60, 1024, 16 * 1024, (3, 10))
    } else {
        (3000, 64 * 1024, 1024 * 1024, (3, 10))
    };
    let mut rng = Rng(0x11_3175);
    let mut arena = Arena::chained(page).with_limit(limit);
    let mut biggest = 0usize;
    for frame in 0..frames {
        let mut requests = frame_requests(&mut rng, page / 2, count);
        // and one request of a whole page, the size the arena refused
        requests.insert(
            requests.len() / 3,
            Layout::from_size_align(page, 16).unwrap(),
        );
        let total: usize = requests.iter().map(Layout::size).sum();
        match run_frame(&mut arena, &requests) {
            Ok(_) => biggest = biggest.max(total),
            Err(e) => assert!(
                total > biggest,
                "frame {frame} of {total} requested bytes (the biggest served so far: \
                 {biggest}) was refused with {e:?} holding {} pages",
                arena.page_count()
            ),
        }
        arena.reset();
        assert!(arena.system_bytes() <= limit);
    }
}

#[test]
fn a_limited_arena_frees_kept_pages_that_do_not_fit_before_refusing() {
    let mut arena = Arena::chained(256).with_limit(4096);
    // fill the limit with small pages
    while arena
        .try_alloc_layout(Layout::from_size_align(64, 8).unwrap())
        .is_ok()
    {}
    arena.reset();
    // none of the kept pages holds this, but together they free enough room for it
    let big = arena.try_alloc_layout(Layout::from_size_align(2048, 8).unwrap());
    assert!(big.is_ok(), "{big:?}");
    assert!(arena.system_bytes() <= 4096);
}

#[test]
fn frame_arenas_take_a_limit_per_buffer() {
    let mut frames = FrameArena::<2>::chained(256).with_limit(1024);
    for i in 0..6 {
        let frame = frames.begin_frame();
        let over = frame.try_alloc_layout(Layout::from_size_align(2000, 8).unwrap());
        assert!(
            matches!(over, Err(ArenaError::LimitReached { limit: 1024, .. })),
            "{over:?}"
        );
        frame.alloc_slice_fill_with(100, |j| (i + j) as u32);
    }
    for b in 0..2 {
        assert!(frames.buffer(b).system_bytes() <= 1024);
        assert_eq!(frames.buffer(b).limit(), Some(1024));
    }
}

/// `set_limit` on a live frame arena, while a published frame is still read: the reader's data
/// stays, every buffer takes the new limit, and `None` lifts it.
#[test]
fn a_frame_arena_takes_a_new_limit_while_a_frame_is_read() {
    let mut frames = FrameArena::<2>::chained(256);
    let reader = {
        let frame = frames.begin_frame();
        let data = frame.alloc_slice_fill_with(300, |j| j as u32);
        frame.publish(&*data).unwrap()
    };
    frames.set_limit(Some(512));
    for b in 0..2 {
        assert_eq!(frames.buffer(b).limit(), Some(512));
    }
    let frame = frames.begin_frame();
    let over = frame.try_alloc_layout(Layout::from_size_align(2000, 8).unwrap());
    assert!(
        matches!(over, Err(ArenaError::LimitReached { limit: 512, .. })),
        "{over:?}"
    );
    assert_eq!(reader[299], 299, "the frame in flight is untouched");
    frames.set_limit(None);
    assert!(frames.buffer(0).limit().is_none() && frames.buffer(1).limit().is_none());
    drop(reader);
    let frame = frames.begin_frame();
    assert!(
        frame
            .try_alloc_layout(Layout::from_size_align(2000, 8).unwrap())
            .is_ok()
    );
}

/// A level arena that is never reset: level data below a marker, each frame's temporaries in a
/// scope above it (the stack-allocator pattern). The scope's end must leave the arena able to
/// serve any frame it already served, requests larger than a page included.
#[test]
fn a_loop_of_scopes_above_level_data_stops_growing() {
    let page = if cfg!(miri) { 512 } else { 4096 };
    let frames = if cfg!(miri) { 40 } else { 4000 };
    let mut rng = Rng(11);
    let mut arena = Arena::chained(page);
    for i in 0..64 {
        arena.alloc(i as u64); // level data, kept for the whole loop
    }
    let level_used = arena.used();
    // the busiest frame first; later frames stay at or under it in total and in request size
    let busiest = frame_requests(&mut rng, page, (40, 40));
    let busiest_bytes: usize = busiest.iter().map(|l| l.size() + l.align()).sum();
    let mut after_first_tenth = None;
    for frame in 0..frames {
        let requests = if frame == 0 {
            busiest.clone()
        } else {
            let mut r = frame_requests(&mut rng, page, (5, 40));
            while r.iter().map(|l| l.size() + l.align()).sum::<usize>() > busiest_bytes / 2 {
                r.pop();
            }
            r
        };
        {
            let scope = arena.scope();
            for layout in &requests {
                scope.try_alloc_layout(*layout).expect("no limit");
            }
        }
        assert_eq!(arena.used(), level_used);
        if frame + 1 == frames / 10 {
            after_first_tenth = Some(arena.system_bytes());
        }
    }
    let start = after_first_tenth.unwrap();
    assert!(
        arena.system_bytes() <= start,
        "reserved bytes grew from {start} to {} after the first tenth of {frames} frames",
        arena.system_bytes()
    );
}
