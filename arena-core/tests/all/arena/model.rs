//! Model-based property test: random allocations (sizes, alignments, with and without drop
//! glue), markers, rewinds, scopes and resets, checked against a plain model (a `Vec` of live
//! allocations and a log of drops) for overlap, alignment, bounds, accounting and drop counts.

use crate::support;

use core::alloc::Layout;
use std::sync::{Arc, Mutex};

use arena_kit_core::arena::Arena;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Alloc {
        size: usize,
        align_shift: u32,
    },
    /// A value with drop glue, of one of three types (0, 1, 2): runs form when one repeats, and
    /// alternating ones go to a record's tail.
    AllocDrop(u8),
    Slice {
        len: usize,
    },
    Mark,
    Rewind(usize),
    Scope(Vec<(usize, u32)>),
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..300, 0u32..7).prop_map(|(size, align_shift)| Op::Alloc { size, align_shift }),
        3 => (0u8..3).prop_map(Op::AllocDrop),
        1 => (0usize..40).prop_map(|len| Op::Slice { len }),
        1 => Just(Op::Mark),
        1 => (0usize..4).prop_map(Op::Rewind),
        1 => prop::collection::vec((0usize..200, 0u32..5), 0..6).prop_map(Op::Scope),
        1 => Just(Op::Reset),
    ]
}

struct Tracked {
    id: u32,
    log: Arc<Mutex<Vec<u32>>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.id);
    }
}

/// One live allocation in the model.
struct Live {
    ptr: *const u8,
    size: usize,
    fill: u8,
    /// Drop ids owned by this allocation (values with drop glue).
    drops: Vec<u32>,
    /// From `try_alloc_layout`: counted as a live allocation even when zero-sized.
    raw: bool,
}

struct Model {
    live: Vec<Live>,
    /// Model length (`live.len()`) and real marker for each open marker, oldest first.
    marks: Vec<(usize, arena_kit_core::arena::Marker)>,
    next_id: u32,
    next_fill: u8,
    expected_drops: Vec<u32>,
}

impl Model {
    fn fill(&mut self) -> u8 {
        self.next_fill = self.next_fill.wrapping_add(1).max(1);
        self.next_fill
    }

    /// Pops everything after `len`, newest first, recording the drops the arena must run.
    fn truncate(&mut self, len: usize) {
        while self.live.len() > len {
            let l = self.live.pop().unwrap();
            self.expected_drops.extend(l.drops.iter().rev());
        }
    }
}

fn alloc_raw(arena: &Arena, m: &mut Model, size: usize, align: usize) {
    let layout = Layout::from_size_align(size, align).unwrap();
    let before = arena.stats();
    match arena.try_alloc_layout(layout) {
        Ok(p) => {
            assert_eq!(p.as_ptr() as usize % align, 0, "alignment {align}");
            let fill = m.fill();
            // SAFETY: `p` is valid for `size` fresh bytes.
            unsafe { p.write_bytes(fill, size) };
            if size > 0 {
                assert!(arena.offset_of(p.as_ptr()).is_some(), "inside the arena");
            }
            m.live.push(Live {
                ptr: p.as_ptr(),
                size,
                fill,
                drops: vec![],
                raw: true,
            });
        }
        Err(_) => assert_eq!(arena.stats(), before, "a failed allocation changes nothing"),
    }
}

/// A second type with drop glue (the same size as [`Tracked`]).
struct Other(#[allow(dead_code)] Tracked); // held for its destructor only

/// A third, over-aligned type with drop glue.
#[repr(align(32))]
struct Wide(#[allow(dead_code)] Tracked); // held for its destructor only

fn alloc_drop(arena: &Arena, m: &mut Model, log: &Arc<Mutex<Vec<u32>>>, kind: u8) {
    let id = m.next_id;
    m.next_id += 1;
    let value = Tracked {
        id,
        log: Arc::clone(log),
    };
    let ptr = match kind {
        0 => arena
            .try_alloc(value)
            .map(|t| (t as *mut Tracked).cast::<u8>()),
        1 => arena
            .try_alloc(Other(value))
            .map(|t| (t as *mut Other).cast::<u8>()),
        _ => arena.try_alloc(Wide(value)).map(|t| {
            assert_eq!((t as *mut Wide).addr() % 32, 0, "alignment 32");
            (t as *mut Wide).cast::<u8>()
        }),
    };
    if let Ok(ptr) = ptr {
        m.live.push(Live {
            ptr,
            size: 0,
            fill: 0,
            drops: vec![id],
            raw: false,
        });
    } else {
        // the value was dropped by the failed try_alloc
        m.expected_drops.push(id);
    }
}

fn alloc_slice(arena: &Arena, m: &mut Model, log: &Arc<Mutex<Vec<u32>>>, len: usize) {
    let first = m.next_id;
    m.next_id += len as u32;
    if let Ok(s) = arena.try_alloc_slice_fill_with(len, |i| Tracked {
        id: first + i as u32,
        log: Arc::clone(log),
    }) {
        let ptr = s.as_mut_ptr().cast::<u8>();
        // like everything else, a slice drops last element first
        m.live.push(Live {
            ptr,
            size: 0,
            fill: 0,
            drops: (first..first + len as u32).collect(),
            raw: false,
        });
    }
}

fn check(arena: &Arena, m: &Model, log: &Arc<Mutex<Vec<u32>>>) {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for l in &m.live {
        if l.size > 0 {
            // SAFETY: a live allocation's bytes are still owned by it.
            let bytes = unsafe { core::slice::from_raw_parts(l.ptr, l.size) };
            assert!(
                bytes.iter().all(|&b| b == l.fill),
                "an allocation was clobbered"
            );
            ranges.push((l.ptr as usize, l.ptr as usize + l.size));
        }
    }
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        assert!(w[0].1 <= w[1].0, "overlap");
    }
    let live_bytes: usize = m.live.iter().map(|l| l.size).sum();
    assert!(arena.used() >= live_bytes);
    assert!(arena.used() <= arena.capacity());
    assert!(arena.high_water() >= arena.used());
    assert_eq!(
        arena.allocation_count(),
        m.live
            .iter()
            // every `try_alloc_layout` counts, zero-sized ones included; typed values count when
            // they take bytes or need dropping (an empty slice does not)
            .filter(|l| l.raw || !l.drops.is_empty())
            .count()
    );
    // values of one type allocated back to back share a record, so records <= values
    let with_drops = m.live.iter().filter(|l| !l.drops.is_empty()).count();
    assert!(arena.pending_drops() <= with_drops);
    assert_eq!(arena.pending_drops() == 0, with_drops == 0);
    assert_eq!(
        *log.lock().unwrap(),
        m.expected_drops,
        "drops ran in reverse allocation order"
    );
}

fn run(mut arena: Arena, ops: Vec<Op>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut m = Model {
        live: vec![],
        marks: vec![],
        next_id: 0,
        next_fill: 0,
        expected_drops: vec![],
    };
    for op in ops {
        match op {
            Op::Alloc { size, align_shift } => alloc_raw(&arena, &mut m, size, 1 << align_shift),
            Op::AllocDrop(kind) => alloc_drop(&arena, &mut m, &log, kind),
            Op::Slice { len } => alloc_slice(&arena, &mut m, &log, len),
            Op::Mark => m.marks.push((m.live.len(), arena.mark())),
            Op::Rewind(back) => {
                if let Some(i) = m.marks.len().checked_sub(back + 1) {
                    let (len, marker) = m.marks[i];
                    m.marks.truncate(i + 1);
                    arena.rewind(marker).unwrap();
                    m.truncate(len);
                }
            }
            Op::Scope(allocs) => {
                let outer_len = m.live.len();
                {
                    let scope = arena.scope();
                    for (size, shift) in allocs {
                        alloc_raw(&scope, &mut m, size, 1 << shift);
                        alloc_drop(&scope, &mut m, &log, (size % 3) as u8);
                    }
                    check(&scope, &m, &log);
                }
                m.truncate(outer_len);
                // markers taken inside the scope are gone with it (none are taken here)
            }
            Op::Reset => {
                arena.reset();
                m.truncate(0);
                m.marks.clear();
            }
        }
        check(&arena, &m, &log);
    }
    drop(arena);
    m.truncate(0);
    assert_eq!(*log.lock().unwrap(), m.expected_drops);
}

proptest! {
    #![proptest_config(support::proptest_config())]

    #[test]
    fn chained_arena_matches_the_model(ops in prop::collection::vec(op(), 0..support::miri_or(80, 25))) {
        run(Arena::chained(256), ops);
    }

    #[test]
    fn fixed_arena_matches_the_model(ops in prop::collection::vec(op(), 0..support::miri_or(80, 25))) {
        run(Arena::with_capacity(2048), ops);
    }

    #[test]
    fn limited_guarded_arena_matches_the_model(ops in prop::collection::vec(op(), 0..support::miri_or(80, 25))) {
        run(Arena::chained(512).with_limit(3000).with_guards(), ops);
    }
}
