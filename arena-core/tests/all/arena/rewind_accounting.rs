//! `used()` is exact after every rewind, also to a marker the arena was rewound past and then
//! regrew past with different pages in between, so budgets built on it never under-count.

use crate::support;

use core::alloc::Layout;

use arena_kit_core::arena::{Arena, Marker};
use proptest::prelude::*;

fn bytes(arena: &Arena, n: usize) {
    arena.alloc_layout(Layout::from_size_align(n, 1).unwrap());
}

#[test]
fn rewinding_to_a_marker_regrown_past_with_a_new_page_in_between_counts_every_page() {
    let mut arena = Arena::chained(256);
    bytes(&arena, 1);
    let cap = arena.capacity(); // one page
    let half = cap / 2;
    arena.rewind(arena.mark()).unwrap();
    arena.reset();

    bytes(&arena, half);
    let early = arena.mark();
    bytes(&arena, cap - half); // the first page is full
    bytes(&arena, half); // a second page
    let late = arena.mark();
    assert_eq!(late.used(), cap + half);

    arena.rewind(early).unwrap();
    assert_eq!(arena.used(), half);
    bytes(&arena, cap - half); // the first page is full again
    bytes(&arena, 3 * cap); // too big for the kept page: a page of its own
    bytes(&arena, half); // back in the kept second page, up to `late`'s position
    bytes(&arena, 8); // and past it
    let live = cap + 3 * cap + half;
    assert_eq!(arena.used(), live + 8);

    arena.rewind(late).unwrap();
    assert_eq!(
        arena.used(),
        live,
        "the page inserted before the marker's page is counted"
    );
    // and allocation continues from there with the count still exact
    bytes(&arena, 4);
    assert_eq!(arena.used(), live + 4);
}

#[test]
fn rewinding_to_a_marker_regrown_past_on_a_page_used_less_counts_only_live_bytes() {
    let mut arena = Arena::chained(256);
    bytes(&arena, 1);
    let cap = arena.capacity();
    arena.reset();

    let start = arena.mark();
    bytes(&arena, cap - 8); // the first page, nearly full
    let late = arena.mark();
    bytes(&arena, 16); // a second page
    arena.rewind(start).unwrap();
    bytes(&arena, 16);
    bytes(&arena, cap); // does not fit the rest of the first page
    bytes(&arena, 8);
    let before = arena.used();
    arena.rewind(late).unwrap();
    assert!(
        arena.used() <= before,
        "a rewind never adds bytes: {} > {before}",
        arena.used()
    );
    assert!(arena.used() >= 16, "the first page's live bytes count");
}

#[derive(Debug, Clone)]
enum Op {
    Alloc(usize),
    Mark,
    /// Rewind to the i-th marker taken since the last reset (modulo their number), if any.
    Rewind(usize),
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop_oneof![1usize..200, 200usize..900].prop_map(Op::Alloc),
        2 => Just(Op::Mark),
        2 => (0usize..8).prop_map(Op::Rewind),
        1 => Just(Op::Reset),
    ]
}

/// Allocates `n` bytes and returns (address, size).
fn block(arena: &Arena, n: usize) -> (usize, usize) {
    let p = arena.alloc_layout(Layout::from_size_align(n, 1).unwrap());
    (p.as_ptr() as usize, n)
}

proptest! {
    #![proptest_config(support::proptest_config())]

    /// `used()` never counts fewer bytes than the live allocations hold, and never more than the
    /// memory below the bump pointer; a rewind to a marker never rewound past gives back its
    /// `used()` exactly. After a rewind, the live allocations are those that end at or before
    /// the bump pointer (found with a one-byte probe allocation and `offset_of`, which orders
    /// positions across pages).
    #[test]
    fn used_never_under_counts_after_any_rewind(ops in prop::collection::vec(op(), 1..support::miri_or(80, 30))) {
        let mut arena = Arena::chained(512);
        let mut live: Vec<(usize, usize)> = Vec::new();
        let mut markers: Vec<(Marker, usize)> = Vec::new(); // marker, rewinds since taken
        let mut rewinds = 0usize;
        for op in ops {
            match op {
                Op::Alloc(n) => live.push(block(&arena, n)),
                Op::Mark => markers.push((arena.mark(), rewinds)),
                Op::Rewind(i) if !markers.is_empty() => {
                    let (m, taken_at) = markers[i % markers.len()];
                    // positions before the rewind: pages at or before the cursor keep theirs, and
                    // pages after it may be merged or given back (nothing lives there)
                    let offsets: Vec<usize> = live
                        .iter()
                        .map(|&(p, _)| arena.offset_of(core::ptr::without_provenance::<u8>(p)).unwrap())
                        .collect();
                    if arena.rewind(m).is_err() {
                        continue;
                    }
                    // a marker taken after the last rewind was never rewound past
                    if taken_at == rewinds {
                        prop_assert_eq!(arena.used(), m.used());
                    }
                    rewinds += 1;
                    let used = arena.used();
                    let probe = block(&arena, 1);
                    let cut = arena.offset_of(core::ptr::without_provenance::<u8>(probe.0)).unwrap();
                    let mut kept = Vec::new();
                    for (&(p, n), &before) in live.iter().zip(&offsets) {
                        if before + n <= cut {
                            let now = arena.offset_of(core::ptr::without_provenance::<u8>(p));
                            prop_assert_eq!(now, Some(before), "a live block moved or its page was freed");
                            kept.push((p, n));
                        }
                    }
                    live = kept;
                    let sum: usize = live.iter().map(|b| b.1).sum();
                    prop_assert!(used >= sum, "used() = {} under-counts {} live bytes", used, sum);
                    live.push(probe);
                }
                Op::Rewind(_) => {}
                Op::Reset => {
                    arena.reset();
                    live.clear();
                    markers.clear();
                }
            }
            let sum: usize = live.iter().map(|b| b.1).sum();
            prop_assert!(
                arena.used() >= sum,
                "used() = {} under-counts {} live bytes",
                arena.used(),
                sum
            );
            prop_assert!(arena.used() <= arena.capacity() - arena.remaining());
        }
    }
}
