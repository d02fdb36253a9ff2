//! Frame arenas (with a real reader thread), per-thread scratch and the allocator_api2 impl.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use allocator_api2::vec::Vec as AVec;
use arena_kit_core::arena::{Arena, FrameArena, FrameInUse, scratch, scratch_depth};

#[test]
fn double_buffering_trace() {
    let mut frames = FrameArena::<2>::with_capacity(1024);
    let mut seen = Vec::new();
    for frame in 0..4 {
        let f = frames.begin_frame();
        f.alloc([0u8; 64]);
        assert_eq!(f.number(), frame);
        seen.push(f.buffer_index());
    }
    assert_eq!(seen, [0, 1, 0, 1]);
    let mut triple = FrameArena::<3>::chained(1024);
    let idx: Vec<_> = (0..5)
        .map(|_| triple.begin_frame().buffer_index())
        .collect();
    assert_eq!(idx, [0, 1, 2, 0, 1]);
}

#[test]
fn a_held_buffer_is_never_reset_under_its_reader() {
    let mut frames = FrameArena::<2>::chained(1024);
    let f0 = frames.begin_frame();
    let data = f0.arena().alloc_slice_fill_with(16, |i| i as u64);
    let reader = f0.publish(&*data).unwrap();
    assert_eq!(frames.readers(0), 1);
    frames.begin_frame().alloc(1u8); // buffer 1
    assert_eq!(
        frames.try_begin_frame().unwrap_err(),
        FrameInUse {
            buffer: 0,
            readers: 1
        }
    );
    assert_eq!(
        reader.iter().sum::<u64>(),
        120,
        "the reader's data is intact"
    );
    let second = reader.clone();
    drop(reader);
    assert!(
        frames.try_begin_frame().is_err(),
        "the clone still holds the buffer"
    );
    drop(second);
    assert_eq!(frames.try_begin_frame().unwrap().buffer_index(), 0);
    assert!(
        FrameInUse {
            buffer: 0,
            readers: 1
        }
        .to_string()
        .contains("still read by 1 reader")
    );
}

#[test]
fn publish_refuses_data_outside_the_frame() {
    let mut frames = FrameArena::<2>::chained(1024);
    static OUTSIDE: u32 = 5;
    let f = frames.begin_frame();
    assert!(f.publish(&OUTSIDE).is_err());
}

#[test]
fn a_render_thread_reads_frames_while_the_producer_waits_for_it() {
    let frames_to_run: u64 = if cfg!(miri) { 4 } else { 50 };
    let (to_render, from_main) = mpsc::channel();
    let render = thread::spawn(move || {
        let mut sums = Vec::new();
        for reader in from_main {
            let reader: arena_kit_core::arena::FrameReader<[u64]> = reader;
            thread::sleep(Duration::from_micros(200)); // a slow GPU upload
            sums.push((reader.frame(), reader.iter().sum::<u64>()));
        }
        sums
    });
    let mut frames = FrameArena::<2>::chained(4096);
    for n in 0..frames_to_run {
        // begin_frame waits whenever the render thread still holds the buffer about to be reused
        let frame = frames.begin_frame();
        let draws = frame
            .arena()
            .alloc_slice_fill_with(64, |i| n * 1000 + i as u64);
        to_render.send(frame.publish(&*draws).unwrap()).unwrap();
    }
    drop(to_render);
    let sums = render.join().unwrap();
    assert_eq!(sums.len() as u64, frames_to_run);
    for (n, sum) in sums {
        assert_eq!(
            sum,
            (0..64).map(|i| n * 1000 + i).sum::<u64>(),
            "frame {n} was not clobbered"
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "leaks the held buffer on purpose, which Miri reports")]
fn dropping_the_frame_arena_under_a_reader_leaks_instead_of_freeing() {
    let mut frames = FrameArena::<2>::chained(1024);
    let frame = frames.begin_frame();
    let s = frame.arena().alloc_str("still here");
    let reader = frame.publish(&*s).unwrap();
    drop(frames);
    assert_eq!(&*reader, "still here");
}

#[test]
fn nested_scratch_gets_a_different_arena() {
    let out = scratch(|outer| {
        assert_eq!(scratch_depth(), 1);
        let a = outer.alloc_slice_copy(&[1u32; 8]);
        let b = scratch(|inner| {
            assert_eq!(scratch_depth(), 2);
            assert!(!std::ptr::eq(inner, outer));
            // allocating from the caller's arena inside a nested call is safe: the nested reset
            // only touches the inner arena
            let kept = outer.alloc(7u32);
            inner
                .alloc_slice_fill_with(100, |i| i as u32)
                .iter()
                .sum::<u32>()
                + *kept
        });
        a.iter().sum::<u32>() + b
    });
    assert_eq!(out, 8 + 4950 + 7);
    assert_eq!(scratch_depth(), 0);
    let used_after = scratch(|a| a.used());
    assert_eq!(
        used_after, 0,
        "the scratch arena was reset when the closure returned"
    );
}

#[test]
fn scratch_survives_a_panicking_closure() {
    let r = std::panic::catch_unwind(|| {
        scratch(|a| -> u32 {
            a.alloc(String::from("x"));
            panic!("job fails")
        })
    });
    assert!(r.is_err());
    assert_eq!(scratch_depth(), 0);
    assert_eq!(scratch(|a| a.used()), 0);
}

#[test]
fn allocator_api2_vec_and_hashmap_use_the_arena() {
    let mut arena = Arena::chained(1024);
    {
        let mut v: AVec<u64, &Arena> = AVec::new_in(&arena);
        for i in 0..200 {
            v.push(i);
        }
        assert_eq!(v.iter().sum::<u64>(), 19900);
        let mut map =
            hashbrown::HashMap::with_hasher_in(hashbrown::DefaultHashBuilder::default(), &arena);
        for i in 0..50u32 {
            map.insert(i, i * 2);
        }
        assert_eq!(map[&49], 98);
        v.shrink_to_fit();
        assert!(arena.used() >= 200 * 8);
    }
    arena.reset();
    let lone = {
        let mut v: AVec<u8, &Arena> = AVec::new_in(&arena);
        v.extend(0..255u8);
        v.len()
    };
    assert_eq!(lone, 255);
    assert!(
        arena.used() < 255 * 2,
        "growing the newest allocation extends it in place"
    );
}
