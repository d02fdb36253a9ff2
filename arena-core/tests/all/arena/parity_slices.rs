//! The constructors users switching from bumpalo and bump-scope reach for: `Arena::new`,
//! `try_with_capacity`, `set_limit` on a live arena, the page walk, and the slice and fallible
//! constructors (`alloc_slice_fill_iter`, `_clone`, `_fill_copy`, `_fill_default`,
//! `alloc_try_with`, `alloc_slice_try_fill_with`), attacked with panicking and lying user code.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena_kit_core::arena::{AllocOrInitError, Arena, ArenaError, DEFAULT_PAGE_BYTES, PageUsage};

use crate::support::{counter, drops};

/// A `Send` value counting its drops, so it goes through the drop-registering paths.
#[derive(Debug)]
struct Counted(Arc<AtomicUsize>, u32);

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted(Arc::clone(&self.0), self.1)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

// --- Arena::new, Default, try_with_capacity ---

#[test]
fn new_and_default_are_chained_with_the_default_page_and_take_nothing_up_front() {
    for arena in [Arena::new(), Arena::default()] {
        assert_eq!((arena.system_bytes(), arena.page_count()), (0, 0));
        arena.alloc(1u64);
        assert_eq!(arena.system_bytes(), DEFAULT_PAGE_BYTES);
        // grows past one page
        arena.alloc([0u8; 3 * DEFAULT_PAGE_BYTES]);
        assert_eq!(arena.page_count(), 2);
    }
}

#[test]
fn try_with_capacity_reports_overflow_and_builds_the_block() {
    assert!(matches!(
        Arena::try_with_capacity(usize::MAX),
        Err(ArenaError::SizeOverflow { .. })
    ));
    assert!(matches!(
        Arena::try_with_capacity(isize::MAX as usize),
        Err(ArenaError::SizeOverflow { .. }) | Err(ArenaError::SystemOutOfMemory { .. })
    ));
    let arena = Arena::try_with_capacity(256).unwrap();
    assert_eq!(arena.capacity(), 256);
    assert_eq!(arena.try_alloc([0u8; 256]).map(|a| a.len()), Ok(256));
    assert!(matches!(arena.try_alloc(0u8), Err(ArenaError::Full { .. })));
    let empty = Arena::try_with_capacity(0).unwrap();
    assert!(empty.try_alloc(1u8).is_err());
}

// --- set_limit on a live arena ---

#[test]
fn a_limit_below_current_usage_keeps_values_and_refuses_only_new_pages() {
    let mut arena = Arena::chained(1024);
    let kept = arena.alloc_slice_copy(&[7u32; 16]);
    let held = arena.system_bytes();
    arena.set_limit(Some(100)); // far below the page already held
    assert_eq!(arena.limit(), Some(100));
    // the held page still serves
    assert!(arena.try_alloc([0u8; 128]).is_ok());
    let (used, stats) = (arena.used(), arena.stats());
    let refused = arena.try_alloc([0u8; 2048]);
    assert!(matches!(
        refused,
        Err(ArenaError::LimitReached { limit: 100, .. })
    ));
    assert_eq!(
        (arena.used(), arena.stats()),
        (used, stats),
        "a refusal changes nothing"
    );
    assert_eq!(arena.system_bytes(), held);
    assert!(kept.iter().all(|&x| x == 7));
    arena.reset();
    assert_eq!(arena.limit(), Some(100), "a reset keeps the limit");
    assert!(arena.try_alloc([0u8; 512]).is_ok(), "the held page is kept");
    arena.set_limit(None);
    assert_eq!(arena.limit(), None);
    assert!(arena.try_alloc([0u8; 2048]).is_ok());
}

#[test]
fn lowering_the_limit_shrinks_the_merged_page_at_the_next_reset() {
    let mut arena = Arena::chained(512);
    for _ in 0..4 {
        arena.alloc([0u8; 400]); // one page each
    }
    arena.reset(); // a first frame's pages are kept as they are
    assert_eq!(arena.page_count(), 4);
    for _ in 0..5 {
        arena.alloc([0u8; 400]); // the kept pages, then one more: the pages get merged
    }
    arena.set_limit(Some(1024)); // below the 2560 bytes held: nothing is freed now
    assert_eq!(arena.system_bytes(), 5 * 512);
    assert!(matches!(
        arena.try_alloc([0u8; 400]),
        Err(ArenaError::LimitReached { .. })
    ));
    arena.reset(); // merges the pages into one, capped by the limit
    assert_eq!(arena.page_count(), 1);
    assert!(arena.system_bytes() <= 1024);
    assert!(arena.try_alloc([0u8; 900]).is_ok());
}

#[test]
fn raising_the_limit_through_a_shared_borrow_lets_a_live_arena_grow() {
    let arena = Arena::chained(256).with_limit(256);
    let a = arena.alloc([1u8; 200]);
    assert!(arena.try_alloc([0u8; 200]).is_err());
    arena.set_limit(Some(4096)); // `a` is still borrowed: `set_limit` takes `&self`
    assert!(arena.try_alloc([0u8; 200]).is_ok());
    assert_eq!(a[199], 1);
}

// --- the page walk ---

fn check_walk(arena: &Arena) -> Vec<PageUsage> {
    let pages: Vec<PageUsage> = arena.pages().collect();
    assert_eq!(pages.iter().map(|p| p.used).sum::<usize>(), arena.used());
    assert_eq!(
        pages.iter().map(|p| p.capacity).sum::<usize>(),
        arena.capacity()
    );
    assert!(pages.iter().filter(|p| p.current).count() <= 1);
    assert!(pages.iter().all(|p| p.used <= p.capacity));
    for (i, p) in pages.iter().enumerate() {
        assert_eq!(p.index, i);
    }
    pages
}

#[test]
fn the_page_walk_matches_used_and_capacity_through_growth_and_reset() {
    let mut arena = Arena::chained(512);
    assert!(check_walk(&arena).is_empty());
    let n = if cfg!(miri) { 10 } else { 60 };
    for i in 0..n {
        arena.alloc_slice_copy(&vec![0u8; 1 + i * 13 % 700]);
        check_walk(&arena);
    }
    arena.reset();
    let pages = check_walk(&arena);
    assert!(
        pages.iter().all(|p| p.used == 0),
        "kept pages are empty after a reset"
    );
    arena.alloc(1u8);
    let pages = check_walk(&arena);
    assert!(pages[0].current && pages[0].used == 1);
}

#[test]
fn the_page_walk_lists_a_fixed_arenas_root_block() {
    let arena = Arena::with_capacity(100);
    arena.alloc([0u8; 30]);
    let pages = check_walk(&arena);
    assert_eq!(pages.len(), 1);
    assert!(pages[0].root && pages[0].current);
    assert_eq!((pages[0].used, pages[0].capacity), (30, 100));
}

#[test]
fn kept_pages_after_a_rewind_report_nothing_used() {
    let mut arena = Arena::chained(256);
    arena.alloc(1u32);
    let m = arena.mark();
    for _ in 0..5 {
        arena.alloc([0u8; 200]);
    }
    arena.rewind(m).unwrap();
    let pages = check_walk(&arena);
    assert_eq!(pages.iter().map(|p| p.used).sum::<usize>(), 4);
}

// --- alloc_slice_fill_iter ---

#[test]
fn fill_iter_takes_an_exact_size_iterator() {
    let arena = Arena::new();
    let c = counter();
    let s = arena.alloc_slice_fill_iter((0..5).map(|i| Counted(Arc::clone(&c), i)));
    assert_eq!(s.iter().map(|v| v.1).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    assert_eq!(arena.pending_drops(), 1);
    let empty: &mut [Counted] = arena.alloc_slice_fill_iter(Vec::new());
    assert!(empty.is_empty());
    drop(arena);
    assert_eq!(drops(&c), 5);
}

/// An iterator whose `len()` says `claimed` but which yields `actual` items.
struct Liar {
    claimed: usize,
    actual: usize,
    given: usize,
    c: Arc<AtomicUsize>,
}

impl Iterator for Liar {
    type Item = Counted;
    fn next(&mut self) -> Option<Counted> {
        (self.given < self.actual).then(|| {
            self.given += 1;
            Counted(Arc::clone(&self.c), self.given as u32)
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.claimed, Some(self.claimed))
    }
}

impl ExactSizeIterator for Liar {}

#[test]
fn an_iterator_shorter_than_its_len_panics_after_dropping_what_it_gave() {
    let mut arena = Arena::new();
    arena.alloc(0u64);
    let used = arena.used();
    let c = counter();
    let liar = Liar {
        claimed: 10,
        actual: 4,
        given: 0,
        c: Arc::clone(&c),
    };
    let r = catch_unwind(AssertUnwindSafe(|| arena.alloc_slice_fill_iter(liar).len()));
    let msg = r.unwrap_err();
    assert!(
        msg.downcast_ref::<String>()
            .unwrap()
            .contains("promised 10")
    );
    assert_eq!(drops(&c), 4, "the 4 items taken are dropped, once");
    assert_eq!(arena.pending_drops(), 0);
    assert_eq!(arena.used(), used, "the newest block was given back");
    arena.alloc_slice_fill_iter((0..3).map(|i| Counted(Arc::clone(&c), i)));
    arena.reset();
    assert_eq!(drops(&c), 7);
}

#[test]
fn an_iterator_longer_than_its_len_gives_only_len_items() {
    let arena = Arena::new();
    let c = counter();
    let mut liar = Liar {
        claimed: 3,
        actual: 8,
        given: 0,
        c: Arc::clone(&c),
    };
    let s = arena.alloc_slice_fill_iter(&mut liar);
    assert_eq!(s.len(), 3);
    assert_eq!(liar.given, 3, "the rest stays in the iterator");
    let rest: Vec<Counted> = liar.collect();
    assert_eq!(rest.len(), 5);
    drop(rest);
    drop(arena);
    assert_eq!(drops(&c), 8);
}

#[test]
fn a_panicking_iterator_drops_the_items_taken_and_leaves_the_arena_usable() {
    let mut arena = Arena::with_capacity(4096);
    let c = counter();
    let c2 = Arc::clone(&c);
    let r = catch_unwind(AssertUnwindSafe(|| {
        arena
            .alloc_slice_fill_iter((0..6).map(move |i| {
                assert!(i != 4, "item 4 panics");
                Counted(Arc::clone(&c2), i)
            }))
            .len()
    }));
    assert!(r.is_err());
    assert_eq!(drops(&c), 4);
    assert_eq!((arena.used(), arena.pending_drops()), (0, 0));
    arena.reset();
    assert_eq!(drops(&c), 4, "nothing dropped twice");
}

#[test]
fn fill_iter_refuses_before_touching_the_iterator() {
    let arena = Arena::with_capacity(16);
    let mut touched = false;
    let r = arena.try_alloc_slice_fill_iter((0..100u32).map(u64::from).inspect(|_| touched = true));
    assert!(matches!(r, Err(ArenaError::Full { .. })));
    assert!(!touched);
}

// --- alloc_slice_clone, fill_copy, fill_default ---

#[test]
fn clone_copy_and_default_fill() {
    let arena = Arena::new();
    let words = [String::from("a"), String::from("bc")];
    assert_eq!(arena.alloc_slice_clone(&words), words);
    assert_eq!(arena.alloc_slice_fill_copy(3, 9u16), [9, 9, 9]);
    assert_eq!(arena.alloc_slice_fill_default::<u8>(4), [0; 4]);
    let v: &mut [Vec<u8>] = arena.alloc_slice_fill_default(2);
    assert!(v.iter().all(Vec::is_empty));
    // zero-length and zero-sized forms allocate nothing and call nothing
    let before = arena.used();
    assert!(arena.alloc_slice_clone::<String>(&[]).is_empty());
    assert!(arena.alloc_slice_fill_copy(0, 1u64).is_empty());
    assert!(arena.alloc_slice_fill_default::<String>(0).is_empty());
    let n = if cfg!(miri) { 50 } else { 1000 };
    assert_eq!(arena.alloc_slice_fill_copy(n, ()).len(), n);
    assert_eq!(arena.used(), before);
}

#[test]
fn fill_copy_takes_borrowed_copy_types() {
    let arena = Arena::new();
    let owner = String::from("borrowed");
    let s = arena.alloc_slice_fill_copy(2, owner.as_str());
    assert_eq!(s, ["borrowed", "borrowed"]);
}

#[test]
fn size_overflow_is_a_typed_error_for_every_slice_constructor() {
    let arena = Arena::new();
    let huge = usize::MAX / 2;
    assert!(matches!(
        arena.try_alloc_slice_fill_copy(huge, 0u64),
        Err(ArenaError::SizeOverflow { elem_size: 8, .. })
    ));
    assert!(matches!(
        arena.try_alloc_slice_fill_default::<u32>(huge),
        Err(ArenaError::SizeOverflow { .. })
    ));
    assert!(matches!(
        arena.try_alloc_slice_try_fill_with(huge, |_| Ok::<u32, ()>(0)),
        Err(AllocOrInitError::Alloc(ArenaError::SizeOverflow { .. }))
    ));
    assert_eq!(arena.used(), 0);
}

struct PanicsOnClone(Arc<AtomicUsize>, bool);

impl Clone for PanicsOnClone {
    fn clone(&self) -> Self {
        assert!(!self.1, "this clone panics");
        PanicsOnClone(Arc::clone(&self.0), false)
    }
}

impl Drop for PanicsOnClone {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_panicking_clone_drops_the_clones_made_and_the_arena_stays_consistent() {
    let mut arena = Arena::new();
    let c = counter();
    let keep = arena.alloc(Counted(Arc::clone(&c), 99));
    assert_eq!(keep.1, 99);
    let src: Vec<PanicsOnClone> = (0..5)
        .map(|i| PanicsOnClone(Arc::clone(&c), i == 3))
        .collect();
    let (used, pending) = (arena.used(), arena.pending_drops());
    let r = catch_unwind(AssertUnwindSafe(|| arena.alloc_slice_clone(&src).len()));
    assert!(r.is_err());
    assert_eq!(drops(&c), 3, "the three clones made are dropped");
    assert_eq!((arena.used(), arena.pending_drops()), (used, pending));
    let ok = arena.alloc_slice_clone(&src[..2]);
    assert_eq!(ok.len(), 2);
    arena.reset();
    assert_eq!(drops(&c), 3 + 1 + 2);
}

// --- alloc_try_with, try_alloc_try_with, alloc_slice_try_fill_with ---

#[test]
fn try_with_builds_on_ok_and_gives_the_space_back_on_err() {
    let mut arena = Arena::new();
    let c = counter();
    let v = arena
        .alloc_try_with(|| Ok::<_, ()>(Counted(Arc::clone(&c), 1)))
        .unwrap();
    assert_eq!(v.1, 1);
    let used = arena.used();
    let e = arena.alloc_try_with(|| Err::<Counted, _>("bad input"));
    assert_eq!(e.unwrap_err(), "bad input");
    assert_eq!(arena.used(), used);
    assert_eq!(arena.pending_drops(), 1);
    arena.reset();
    assert_eq!(drops(&c), 1);
}

#[test]
fn try_with_of_large_values() {
    // bumpalo builds large arrays, structs, tuples and enums this way
    let arena = Arena::new();
    let big = arena.alloc_try_with(|| Ok::<_, ()>([7u8; 8192])).unwrap();
    assert_eq!(big[8191], 7);
    #[derive(Debug)]
    #[allow(clippy::large_enum_variant)] // large on purpose: built in place
    enum Shape {
        Empty,
        Grid([u16; 1024]),
    }
    let s = arena
        .alloc_try_with(|| Ok::<_, ()>(Shape::Grid([3; 1024])))
        .unwrap();
    assert!(matches!(s, Shape::Grid(g) if g[1023] == 3));
    let e = arena.alloc_try_with(|| Err::<Shape, _>("no shape"));
    assert_eq!(e.unwrap_err(), "no shape");
    let t = arena.alloc_try_with(|| Ok::<_, ()>(Shape::Empty)).unwrap();
    assert!(matches!(t, Shape::Empty));
}

#[test]
fn try_alloc_try_with_separates_the_arenas_error_from_the_constructors() {
    let arena = Arena::with_capacity(32);
    let mut called = false;
    let r = arena.try_alloc_try_with(|| {
        called = true;
        Ok::<_, ()>([0u8; 64])
    });
    assert!(matches!(
        r,
        Err(AllocOrInitError::Alloc(ArenaError::Full { .. }))
    ));
    assert!(
        !called,
        "the constructor does not run when there is no room"
    );
    let r = arena.try_alloc_try_with(|| Err::<u64, _>(5u8));
    assert_eq!(r.unwrap_err(), AllocOrInitError::Init(5));
    assert_eq!(arena.used(), 0);
    let text = AllocOrInitError::<&str>::Init("bad").to_string();
    assert!(text.contains("constructor failed: bad"), "{text}");
}

#[test]
fn slice_try_fill_stops_at_the_first_error_and_drops_the_prefix() {
    let mut arena = Arena::new();
    let c = counter();
    let r = arena.alloc_slice_try_fill_with(10, |i| {
        if i == 6 {
            Err(i)
        } else {
            Ok(Counted(Arc::clone(&c), i as u32))
        }
    });
    assert_eq!(r.unwrap_err(), 6);
    assert_eq!(drops(&c), 6);
    assert_eq!((arena.used(), arena.pending_drops()), (0, 0));
    let ok = arena
        .alloc_slice_try_fill_with(3, |i| Ok::<_, ()>(Counted(Arc::clone(&c), i as u32)))
        .unwrap();
    assert_eq!(ok[2].1, 2);
    arena.reset();
    assert_eq!(drops(&c), 9);
}

#[test]
fn a_failing_constructor_that_allocated_keeps_its_space_and_what_it_allocated() {
    // the constructor hands out an arena value it allocated after the slice: the slice's space
    // cannot be given back, and the escaped value stays valid
    let mut arena = Arena::new();
    let c = counter();
    let mut escaped: Option<&mut Counted> = None;
    let r = arena.alloc_slice_try_fill_with(4, |i| {
        if i == 2 {
            escaped = Some(arena.alloc(Counted(Arc::clone(&c), 77)));
            return Err(());
        }
        Ok(Counted(Arc::clone(&c), i as u32))
    });
    assert!(r.is_err());
    assert_eq!(drops(&c), 2);
    let escaped = escaped.unwrap();
    let filler = arena.alloc([0xAAu8; 256]); // would overwrite it if the space had been reused
    assert_eq!(escaped.1, 77);
    assert_eq!(filler[0], 0xAA);
    assert_eq!(arena.pending_drops(), 1);
    arena.reset();
    assert_eq!(drops(&c), 3);
}

#[test]
fn a_panicking_try_fill_in_a_scope_leaves_the_scope_usable() {
    let mut arena = Arena::with_capacity(1024);
    let c = counter();
    arena.alloc(Counted(Arc::clone(&c), 0));
    {
        let scope = arena.scope();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _ = scope.alloc_slice_try_fill_with(5, |i| {
                assert!(i < 3, "boom");
                Ok::<_, ()>(Counted(Arc::clone(&c), 1))
            });
        }));
        assert!(r.is_err());
        assert_eq!(drops(&c), 3);
        scope.alloc(Counted(Arc::clone(&c), 2));
    }
    assert_eq!(drops(&c), 4, "the scope's value went with it");
    arena.reset();
    assert_eq!(drops(&c), 5);
}

#[test]
fn every_allocation_lies_inside_a_walked_page() {
    // each value lies inside exactly one block of the walk, within its used bytes
    let arena = Arena::chained(300);
    let n = if cfg!(miri) { 20 } else { 200 };
    let mut spans = Vec::new();
    for i in 0..n {
        let s = arena.alloc_slice_fill_copy(1 + (i * 37) % 280, i as u8);
        spans.push((arena.offset_of(s.as_ptr()).unwrap(), s.len()));
    }
    let pages: Vec<PageUsage> = arena.pages().collect();
    let mut base = 0;
    let mut bounds = Vec::new();
    for p in &pages {
        bounds.push((base, base + p.used));
        base += p.capacity;
    }
    for (off, len) in spans {
        let inside = bounds
            .iter()
            .filter(|&&(lo, hi)| off >= lo && off + len <= hi)
            .count();
        assert_eq!(inside, 1, "allocation at {off}+{len} in {bounds:?}");
    }
}

#[test]
fn zero_length_slices_allocate_nothing_and_call_nothing() {
    let arena = Arena::new();
    arena.alloc(1u8);
    let used = arena.used();
    arena.alloc_slice_fill_with::<String, _>(0, |_| panic!("not called"));
    arena.alloc_slice_fill_iter(std::iter::empty::<String>());
    let r: Result<&mut [String], ()> = arena.alloc_slice_try_fill_with(0, |_| panic!("not called"));
    assert!(r.unwrap().is_empty());
    assert_eq!(arena.used(), used);
    assert_eq!(arena.pending_drops(), 0);
}
