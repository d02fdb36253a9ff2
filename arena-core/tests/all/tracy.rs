//! `TracySink` with no Tracy server attached (on-demand mode collects nothing until one
//! connects): every event kind goes through, names are kept once each, from any thread. The sink
//! is called directly, not installed, so the recording sink of `profiler.rs` stays the global one.

use arena_kit_core::tags::{ProfilerEvent, ProfilerSink, TracySink};

fn names(sink: &TracySink) -> String {
    format!("{sink:?}")
}

#[test]
#[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
fn every_event_kind_goes_through_with_no_server_attached() {
    let sink = TracySink::new();
    let block = [0u8; 64];
    let addr = block.as_ptr() as usize;
    let events = [
        ProfilerEvent::Alloc {
            pool: "tracy: pool",
            tag: "T",
            addr,
            size: 64,
            buffer: None,
            id: 1,
            site: None,
        },
        ProfilerEvent::Free {
            pool: "tracy: pool",
            tag: "T",
            addr,
            size: 64,
            buffer: None,
            id: 1,
        },
        ProfilerEvent::Discard {
            pool: "tracy: pool",
            tag: "T",
            buffer: Some(1),
            id: 1,
        },
        ProfilerEvent::Plot {
            tag: "tracy: plot",
            bytes: usize::MAX,
            frame: 0,
        },
        ProfilerEvent::Message {
            text: "a message with no NUL at its end",
            frame: 0,
        },
        ProfilerEvent::FrameEnd { frame: 0 },
    ];
    for _ in 0..10 {
        for e in &events {
            sink.event(e);
        }
    }
    assert_eq!(
        names(&sink),
        "TracySink { names: 3, dropped: 0 }",
        "one pool name, its buffer 1's and one plot name, kept once however often they come"
    );
}

#[test]
#[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
fn a_name_with_a_nul_byte_is_kept_with_it_replaced() {
    let sink = TracySink::new();
    sink.event(&ProfilerEvent::Discard {
        pool: "tracy\0nul",
        tag: "T",
        buffer: None,
        id: 1,
    });
    sink.event(&ProfilerEvent::Message {
        text: "a message\0with a NUL inside",
        frame: 1,
    });
    assert_eq!(names(&sink), "TracySink { names: 1, dropped: 0 }");
}

#[test]
#[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
fn one_sink_serves_several_threads() {
    let sink = TracySink::new();
    std::thread::scope(|s| {
        for t in 0..4 {
            let sink = &sink;
            s.spawn(move || {
                for i in 0..100 {
                    sink.event(&ProfilerEvent::Plot {
                        tag: if t % 2 == 0 {
                            "tracy: even"
                        } else {
                            "tracy: odd"
                        },
                        bytes: i,
                        frame: i as u64,
                    });
                }
            });
        }
    });
    assert_eq!(names(&sink), "TracySink { names: 2, dropped: 0 }");
}

/// Attack: Tracy keeps a message's length in 16 bits and asserts it fits before it even looks
/// for a server, so a longer message (a long pool or tag name in a budget warning, or an event
/// made by hand) must be cut to fit, at a character boundary, rather than abort the program.
#[test]
#[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
fn a_message_longer_than_tracy_takes_is_cut_to_fit() {
    let sink = TracySink::new();
    for len in [65_534, 65_535, 65_536, 70_000, 1 << 20] {
        let text = "é".repeat(len / 2) + "x";
        sink.event(&ProfilerEvent::Message {
            text: &text,
            frame: 0,
        });
    }
    assert_eq!(names(&sink), "TracySink { names: 0, dropped: 0 }");
}

/// Attack: more pools than the sink keeps names for. Tracy keys a memory pool by its name, and
/// a discard ends every block of the pool, so pools past the limit must not share one name (one
/// allocator's reset would end another's blocks, whose frees Tracy then rejects, stopping the
/// capture): their events are dropped instead, and counted. Pools with a name still go through.
#[test]
#[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
fn pools_past_the_name_limit_are_dropped_not_merged() {
    let sink = TracySink::new();
    // Pool names are `'static` (an allocator's label): made once, kept for the run.
    let pools: &'static [String] = (0..4096)
        .map(|i| format!("tracy: pool {i}"))
        .collect::<Vec<_>>()
        .leak();
    for pool in pools {
        sink.event(&ProfilerEvent::Discard {
            pool,
            tag: "T",
            buffer: None,
            id: 1,
        });
    }
    assert_eq!(names(&sink), "TracySink { names: 4096, dropped: 0 }");
    let block = [0u8; 16];
    let addr = block.as_ptr() as usize;
    for pool in ["tracy: one too many", "tracy: two too many"] {
        sink.event(&ProfilerEvent::Alloc {
            pool,
            tag: "T",
            addr,
            size: 16,
            buffer: None,
            id: 1,
            site: None,
        });
        sink.event(&ProfilerEvent::Discard {
            pool,
            tag: "T",
            buffer: None,
            id: 1,
        });
        sink.event(&ProfilerEvent::Free {
            pool,
            tag: "T",
            addr,
            size: 16,
            buffer: None,
            id: 1,
        });
    }
    sink.event(&ProfilerEvent::Plot {
        tag: "tracy: a plot too many",
        bytes: 1,
        frame: 0,
    });
    sink.event(&ProfilerEvent::Discard {
        pool: &pools[7],
        tag: "T",
        buffer: None,
        id: 1,
    });
    assert_eq!(names(&sink), "TracySink { names: 4096, dropped: 7 }");
}

/// The events of two arenas of one name, live at the same time, then of one arena of that name
/// made and dropped over and over (a level's arena): each live allocator is a Tracy pool of its
/// own (one's discard must not end the other's blocks), and an ended allocator's name goes to
/// the next one, so the names stay few.
#[test]
#[cfg_attr(miri, ignore = "calls Tracy's C++ client")]
fn allocators_of_one_name_get_pools_of_their_own_and_reuse_ended_ones_names() {
    let sink = TracySink::new();
    let block = [0u8; 64];
    let addr = block.as_ptr() as usize;
    let alloc = |id| ProfilerEvent::Alloc {
        pool: "tracy: scratch",
        tag: "T",
        addr: addr + id as usize,
        size: 1,
        buffer: None,
        id,
        site: None,
    };
    let discard = |id| ProfilerEvent::Discard {
        pool: "tracy: scratch",
        tag: "T",
        buffer: None,
        id,
    };
    let end = |id| ProfilerEvent::PoolEnd {
        pool: "tracy: scratch",
        tag: "T",
        buffer: None,
        id,
    };
    sink.event(&alloc(1));
    sink.event(&alloc(2));
    sink.event(&discard(1));
    sink.event(&discard(2));
    assert_eq!(
        names(&sink),
        "TracySink { names: 2, dropped: 0 }",
        "two live arenas of one name: two pools"
    );
    sink.event(&end(2));
    for level in 3..100_000 {
        sink.event(&alloc(level));
        sink.event(&discard(level));
        sink.event(&end(level));
    }
    assert_eq!(
        names(&sink),
        "TracySink { names: 2, dropped: 0 }",
        "each level's arena took the name the one before it left"
    );
    sink.event(&end(1));
}
