//! [`Arena::pages`] walks the arena's blocks while the arena stays usable through `&Arena`:
//! allocations made between two steps of the walk may take pages, move kept pages up, or (in a
//! limited arena) give kept pages back to the system allocator. The walk must never read a page
//! that is gone, and what it reports from then on is the arena as it is.

use core::alloc::Layout;

use arena_kit_core::arena::{Arena, PageUsage};

/// A chained arena of three 1 KiB pages, reset: the first is current, two are kept after it.
fn three_kept_pages() -> Arena {
    let mut arena = Arena::chained(1024);
    for _ in 0..3 {
        arena.alloc([0u8; 900]);
    }
    assert_eq!(arena.page_count(), 3);
    arena.reset();
    assert_eq!(
        arena.page_count(),
        3,
        "a reset keeps pages appended in order"
    );
    arena
}

#[test]
fn a_page_walk_outliving_kept_pages_given_back_under_a_limit_reads_only_live_pages() {
    let arena = three_kept_pages();
    let mut walk = arena.pages();
    let first = walk.next().unwrap();
    assert!(first.current);
    // Under a limit of what it holds, a request no kept page holds (but the kept pages' bytes
    // do) makes the arena give the kept pages back and take one page for it.
    arena.set_limit(Some(arena.system_bytes()));
    let big = arena.alloc_layout(Layout::from_size_align(1500, 8).unwrap());
    assert_eq!(
        arena.page_count(),
        2,
        "the two kept pages went back for one new page"
    );
    let rest: Vec<PageUsage> = walk.collect();
    let now: Vec<PageUsage> = arena.pages().skip(1).collect();
    assert_eq!(
        rest, now,
        "the walk goes on over the pages the arena holds now"
    );
    assert!(arena.offset_of(big.as_ptr()).is_some());
}

#[test]
fn a_page_walk_outliving_kept_pages_moved_up_reports_the_pages_as_they_are() {
    let arena = three_kept_pages();
    let mut walk = arena.pages();
    walk.next().unwrap();
    // Fill the first page, then ask for more than the rest of it: the next kept page is taken.
    arena.alloc([0u8; 900]);
    arena.alloc([0u8; 600]);
    let rest: Vec<PageUsage> = walk.collect();
    let now: Vec<PageUsage> = arena.pages().skip(1).collect();
    assert_eq!(rest, now);
    assert_eq!(
        arena.pages().map(|p| p.used).sum::<usize>(),
        arena.used(),
        "the used figures still sum to used()"
    );
}

#[test]
fn page_walks_interleaved_with_allocations_limits_and_page_give_backs_report_the_arena_as_it_is() {
    let (cases, steps): (u64, usize) = if cfg!(miri) { (4, 60) } else { (300, 300) };
    for case in 0..cases {
        let mut rng = crate::support::Rng(case.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
        let mut arena = Arena::chained(256 + 128 * rng.below(4));
        for round in 0..3 {
            // walks started at different times, each advanced now and then
            let mut walks: Vec<(arena_kit_core::arena::Pages<'_>, usize)> = Vec::new();
            for step in 0..steps / 3 {
                match rng.below(10) {
                    0..=4 => {
                        let size = 1 + rng.below(700);
                        let align = 1 << rng.below(8);
                        let layout = Layout::from_size_align(size, align).unwrap();
                        let _ = arena.try_alloc_layout(layout);
                    }
                    5 => {
                        let _ = arena.try_alloc(String::from("a value the arena drops"));
                    }
                    6 => {
                        // a limit at, under or over what the arena holds: allocations that
                        // need a page then give the kept pages back first
                        let held = arena.system_bytes();
                        let limit = match rng.below(3) {
                            0 => None,
                            1 => Some(held),
                            _ => Some(held + rng.below(2048)),
                        };
                        arena.set_limit(limit);
                    }
                    7 if walks.len() < 4 => walks.push((arena.pages(), 0)),
                    _ => {
                        if walks.is_empty() {
                            continue;
                        }
                        let i = rng.below(walks.len());
                        let (walk, at) = &mut walks[i];
                        let got = walk.next();
                        let now = arena.pages().nth(*at);
                        assert_eq!(
                            got, now,
                            "case {case} round {round} step {step}: position {at}"
                        );
                        *at += 1;
                        if got.is_none() {
                            walks.swap_remove(i);
                        }
                    }
                }
            }
            for (walk, at) in walks {
                let rest: Vec<PageUsage> = walk.collect();
                let now: Vec<PageUsage> = arena.pages().skip(at).collect();
                assert_eq!(rest, now, "case {case} round {round}: the rest of a walk");
            }
            assert_eq!(arena.pages().map(|p| p.used).sum::<usize>(), arena.used());
            assert_eq!(
                arena.pages().map(|p| p.capacity).sum::<usize>(),
                arena.capacity()
            );
            arena.set_limit(None);
            arena.reset();
        }
    }
}
