//! Attacks on the arena from safe code: `allocator_api2` boxes and vectors (grow, shrink, free)
//! interleaved with typed values, drop records, zero-sized and over-aligned types, constructors
//! that allocate or mark, markers kept across rewinds, resets and page give-backs, in chained
//! (limited or not) and fixed arenas. Every value must be dropped exactly once, intact, and the
//! statistics must stay consistent.

use std::cell::RefCell;

use allocator_api2::boxed::Box as ABox;
use allocator_api2::vec::Vec as AVec;
use arena_kit_core::arena::{Arena, Marker};
use core::alloc::Layout;
use proptest::prelude::*;

thread_local! {
    /// Ids of the values dropped so far, in order.
    static DROPPED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// Zero-sized values dropped so far.
    static ZST_DROPPED: RefCell<usize> = const { RefCell::new(0) };
}

/// A value that checks it is intact when dropped and logs its id.
struct Checked {
    id: u64,
    check: u64,
}

impl Drop for Checked {
    fn drop(&mut self) {
        assert_eq!(
            self.check, !self.id,
            "a value was overwritten before its drop"
        );
        DROPPED.with(|d| d.borrow_mut().push(self.id));
    }
}

/// An over-aligned value with drop glue.
#[repr(align(64))]
struct Aligned(Checked);

/// A zero-sized value with drop glue.
struct Zst;

impl Drop for Zst {
    fn drop(&mut self) {
        ZST_DROPPED.with(|z| *z.borrow_mut() += 1);
    }
}

#[derive(Debug, Clone)]
enum Sub {
    Value,
    AlignedValue,
    Zst,
    /// A constructor that itself allocates (0: a value, 1: a zero-sized value, 2: marks first,
    /// 3: a boxed block it frees again).
    Nested(u8),
    Bytes(usize, u32),
    NewBox,
    NewVec(usize),
    Push(usize, usize),
    Shrink(usize),
    DropItem(usize),
    Mark,
}

#[derive(Debug, Clone)]
enum Op {
    Session(Vec<Sub>),
    Scope(Vec<Sub>),
    Rewind(usize),
    Reset,
}

fn sub() -> impl Strategy<Value = Sub> {
    prop_oneof![
        3 => Just(Sub::Value),
        1 => Just(Sub::AlignedValue),
        2 => Just(Sub::Zst),
        2 => (0u8..4).prop_map(Sub::Nested),
        3 => (0usize..200, 0u32..9).prop_map(|(s, a)| Sub::Bytes(s, a)),
        2 => Just(Sub::NewBox),
        2 => (0usize..40).prop_map(Sub::NewVec),
        3 => (0usize..8, 1usize..60).prop_map(|(i, n)| Sub::Push(i, n)),
        1 => (0usize..8).prop_map(Sub::Shrink),
        3 => (0usize..8).prop_map(Sub::DropItem),
        2 => Just(Sub::Mark),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let subs = || prop::collection::vec(sub(), 0..if cfg!(miri) { 8 } else { 24 });
    prop_oneof![
        4 => subs().prop_map(Op::Session),
        2 => subs().prop_map(Op::Scope),
        3 => (0usize..16).prop_map(Op::Rewind),
        1 => Just(Op::Reset),
    ]
}

enum Item<'a> {
    Boxed(ABox<[u64; 3], &'a Arena>, u64),
    Vec(AVec<u8, &'a Arena>, u8),
}

struct Model {
    next_id: u64,
    made: Vec<u64>,
    zst_made: usize,
    markers: Vec<Marker>,
}

impl Model {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.made.push(self.next_id);
        self.next_id
    }
    fn checked(&mut self) -> Checked {
        let id = self.id();
        Checked { id, check: !id }
    }
}

fn session(arena: &Arena, m: &mut Model, subs: &[Sub]) {
    let mut items: Vec<Item<'_>> = Vec::new();
    // (pointer, len, fill) of the bytes blocks, and (pointer, id) of values, made in this session
    let mut bytes: Vec<(*const u8, usize, u8)> = Vec::new();
    let mut values: Vec<(*const Checked, u64)> = Vec::new();
    for (n, s) in subs.iter().enumerate() {
        match s {
            Sub::Value => {
                let v = m.checked();
                let id = v.id;
                if let Ok(v) = arena.try_alloc(v) {
                    values.push((v as *const Checked, id));
                }
            }
            Sub::AlignedValue => {
                let v = Aligned(m.checked());
                let id = v.0.id;
                if let Ok(v) = arena.try_alloc(v) {
                    assert_eq!((v as *const Aligned as usize) % 64, 0);
                    values.push((&v.0 as *const Checked, id));
                }
            }
            Sub::Zst => {
                m.zst_made += 1;
                let _ = arena.try_alloc(Zst);
            }
            Sub::Nested(k) => {
                let outer = m.checked();
                let id = outer.id;
                let mut inner_made = (Vec::new(), 0usize);
                let r = arena.try_alloc_with(|| {
                    match k {
                        0 => {
                            let iid = 1_000_000 + id;
                            inner_made.0.push(iid);
                            let _ = arena.try_alloc(Checked {
                                id: iid,
                                check: !iid,
                            });
                        }
                        1 => {
                            inner_made.1 += 1;
                            let _ = arena.try_alloc(Zst);
                        }
                        2 => {
                            let _ = arena.mark();
                        }
                        _ => drop(ABox::try_new_in([7u64; 3], arena)),
                    }
                    outer
                });
                m.made.extend(inner_made.0);
                m.zst_made += inner_made.1;
                if let Ok(v) = r {
                    values.push((v as *const Checked, id));
                }
            }
            Sub::Bytes(size, align) => {
                let layout = Layout::from_size_align(*size, 1 << align).unwrap();
                if let Ok(p) = arena.try_alloc_layout(layout) {
                    assert_eq!(p.as_ptr() as usize % (1 << align), 0);
                    let fill = n as u8 ^ 0x5a;
                    // SAFETY: `p` is valid for `size` fresh bytes.
                    unsafe { p.as_ptr().write_bytes(fill, *size) };
                    bytes.push((p.as_ptr(), *size, fill));
                }
            }
            Sub::NewBox => {
                let tag = n as u64 + 11;
                if let Ok(b) = ABox::try_new_in([tag; 3], arena) {
                    items.push(Item::Boxed(b, tag));
                }
            }
            Sub::NewVec(cap) => {
                let fill = n as u8 | 1;
                let mut v = AVec::new_in(arena);
                if v.try_reserve(*cap).is_ok() {
                    v.extend(core::iter::repeat_n(fill, *cap / 2));
                    items.push(Item::Vec(v, fill));
                }
            }
            Sub::Push(i, k) => {
                if !items.is_empty() {
                    let len = items.len();
                    if let Item::Vec(v, fill) = &mut items[i % len]
                        && v.try_reserve(*k).is_ok()
                    {
                        v.extend(core::iter::repeat_n(*fill, *k));
                    }
                }
            }
            Sub::Shrink(i) => {
                if !items.is_empty() {
                    let len = items.len();
                    if let Item::Vec(v, _) = &mut items[i % len] {
                        let keep = v.len() / 2;
                        v.truncate(keep);
                        v.shrink_to_fit();
                    }
                }
            }
            Sub::DropItem(i) => {
                if !items.is_empty() {
                    let len = items.len();
                    drop(items.remove(i % len));
                }
            }
            Sub::Mark => m.markers.push(arena.mark()),
        }
        check_stats(arena);
    }
    for item in &items {
        match item {
            Item::Boxed(b, tag) => assert_eq!(**b, [*tag; 3], "a boxed block was overwritten"),
            // Whole-slice comparisons (one `memcmp`, where Miri would step through a closure
            // call per byte).
            Item::Vec(v, fill) => {
                assert!(v[..] == vec![*fill; v.len()], "a vector was overwritten")
            }
        }
    }
    for &(p, len, fill) in &bytes {
        // SAFETY: the block is still allocated: nothing is rewound inside a session.
        let s = unsafe { core::slice::from_raw_parts(p, len) };
        assert!(*s == vec![fill; len], "a block was overwritten");
    }
    for &(p, id) in &values {
        // SAFETY: as above.
        let v = unsafe { &*p };
        assert_eq!((v.id, v.check), (id, !id), "a value was overwritten");
    }
}

fn check_stats(arena: &Arena) {
    let s = arena.stats();
    assert!(s.used <= s.capacity, "{s:?}");
    assert!(s.used <= s.high_water, "{s:?}");
    assert!(s.used + s.remaining <= s.capacity, "{s:?}");
    if s.pages == 0 {
        assert_eq!(s.used + s.remaining, s.capacity, "{s:?}");
    } else {
        // every heap page costs its capacity plus one header of the same size
        let overhead = s.system_bytes - s.capacity;
        assert_eq!(overhead % s.pages, 0, "{s:?}");
    }
    if let Some(limit) = arena.limit() {
        assert!(s.system_bytes <= limit, "{s:?}");
    }
}

fn dropped_ids() -> Vec<u64> {
    DROPPED.with(|d| d.borrow().clone())
}

fn assert_each_dropped_at_most_once() {
    let mut d = dropped_ids();
    let n = d.len();
    d.sort_unstable();
    d.dedup();
    assert_eq!(d.len(), n, "a value was dropped twice");
}

fn run(mut arena: Arena, ops: &[Op]) {
    DROPPED.with(|d| d.borrow_mut().clear());
    ZST_DROPPED.with(|z| *z.borrow_mut() = 0);
    let mut m = Model {
        next_id: 0,
        made: Vec::new(),
        zst_made: 0,
        markers: Vec::new(),
    };
    for op in ops {
        match op {
            Op::Session(subs) => session(&arena, &mut m, subs),
            Op::Scope(subs) => {
                let before = arena.used();
                let scope = arena.scope();
                session(&scope, &mut m, subs);
                drop(scope);
                assert!(arena.used() <= before.max(arena.used()));
            }
            Op::Rewind(i) => {
                if !m.markers.is_empty() {
                    let marker = m.markers[i % m.markers.len()];
                    let _ = arena.rewind(marker);
                }
            }
            Op::Reset => {
                arena.reset();
                let mut d = dropped_ids();
                d.sort_unstable();
                let mut made = m.made.clone();
                made.sort_unstable();
                assert_eq!(d, made, "reset drops every value exactly once");
                assert_eq!(ZST_DROPPED.with(|z| *z.borrow()), m.zst_made);
                assert_eq!(arena.used(), 0);
                assert_eq!(arena.allocation_count(), 0);
                assert_eq!(arena.pending_drops(), 0);
            }
        }
        assert_each_dropped_at_most_once();
        check_stats(&arena);
    }
    drop(arena);
    let mut d = dropped_ids();
    d.sort_unstable();
    let mut made = m.made.clone();
    made.sort_unstable();
    assert_eq!(d, made, "dropping the arena drops every value exactly once");
    assert_eq!(ZST_DROPPED.with(|z| *z.borrow()), m.zst_made);
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..if cfg!(miri) { 10 } else { 40 })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn allocator_blocks_typed_values_and_markers_interleaved_in_a_chained_arena(
        page in 96usize..600, ops in ops()
    ) {
        run(Arena::chained(page), &ops);
    }

    #[test]
    fn allocator_blocks_typed_values_and_markers_interleaved_in_a_limited_arena(
        page in 96usize..600, limit in 200usize..3000, ops in ops()
    ) {
        run(Arena::chained(page).with_limit(limit), &ops);
    }

    #[test]
    fn allocator_blocks_typed_values_and_markers_interleaved_in_a_fixed_arena(
        cap in 0usize..2000, ops in ops()
    ) {
        run(Arena::with_capacity(cap), &ops);
    }
}

/// A value whose destructor panics.
struct PanicsOnDrop(u64);

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        DROPPED.with(|d| d.borrow_mut().push(self.0));
        panic!("destructor {} panics", self.0);
    }
}

fn drop_log_len() -> usize {
    DROPPED.with(|d| d.borrow().len())
}

#[test]
fn a_destructor_panicking_in_a_reset_that_would_coalesce_leaves_a_usable_arena() {
    DROPPED.with(|d| d.borrow_mut().clear());
    let mut arena = Arena::chained(128);
    // first frame: two pages, kept at the reset
    arena.alloc_slice_copy(&[1u8; 60]);
    arena.alloc_slice_copy(&[2u8; 60]);
    arena.reset();
    let kept = arena.page_count();
    assert!(kept >= 2);
    // second frame grows beyond the kept pages, so the next reset would coalesce
    arena.alloc(PanicsOnDrop(1));
    arena.alloc(Checked { id: 2, check: !2 });
    arena.alloc_slice_copy(&[3u8; 300]);
    let pages = arena.page_count();
    assert!(pages > kept);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| arena.reset()));
    assert!(r.is_err());
    assert_eq!(drop_log_len(), 2, "the other destructor still ran");
    assert_eq!(
        (
            arena.used(),
            arena.allocation_count(),
            arena.pending_drops()
        ),
        (0, 0, 0)
    );
    // the arena is usable and the next reset coalesces the pages it still holds
    let v = arena.alloc(Checked { id: 3, check: !3 });
    assert_eq!(v.id, 3);
    arena.alloc_slice_copy(&[4u8; 300]);
    arena.reset();
    assert_eq!(drop_log_len(), 3);
    assert_eq!(
        arena.page_count(),
        1,
        "coalesced at the first reset that completed"
    );
    assert!(arena.capacity() >= 300 + 60);
}

#[test]
fn a_destructor_panicking_in_the_scratch_reset_pops_the_depth_and_drops_the_rest() {
    use arena_kit_core::arena::{scratch, scratch_depth};
    DROPPED.with(|d| d.borrow_mut().clear());
    let r = std::panic::catch_unwind(|| {
        scratch(|a| {
            a.alloc(Checked { id: 10, check: !10 });
            a.alloc(PanicsOnDrop(11));
            a.alloc(Checked { id: 12, check: !12 });
        })
    });
    assert!(r.is_err());
    assert_eq!(scratch_depth(), 0);
    let mut d = dropped_ids();
    d.sort_unstable();
    assert_eq!(d, [10, 11, 12]);
    // the same depth's arena is clean and reusable
    let used = scratch(|a| {
        assert_eq!((a.used(), a.pending_drops()), (0, 0));
        a.alloc(Checked { id: 13, check: !13 });
        scratch_depth()
    });
    assert_eq!(used, 1);
    assert_eq!(drop_log_len(), 4);
}

#[test]
fn a_destructor_run_by_the_scratch_reset_may_panic_inside_a_nested_scratch() {
    use arena_kit_core::arena::{scratch, scratch_depth};
    struct NestsAndPanics;
    impl Drop for NestsAndPanics {
        fn drop(&mut self) {
            scratch(|inner| {
                assert_eq!(
                    scratch_depth(),
                    2,
                    "a deeper arena than the one being reset"
                );
                inner.alloc(Checked { id: 21, check: !21 });
                panic!("inside the nested scratch");
            });
        }
    }
    DROPPED.with(|d| d.borrow_mut().clear());
    let r = std::panic::catch_unwind(|| {
        scratch(|a| {
            a.alloc(Checked { id: 20, check: !20 });
            a.alloc(NestsAndPanics);
        })
    });
    assert!(r.is_err());
    assert_eq!(scratch_depth(), 0);
    let mut d = dropped_ids();
    d.sort_unstable();
    assert_eq!(d, [20, 21]);
    scratch(|a| {
        scratch(|b| {
            assert_eq!((a.pending_drops(), b.pending_drops()), (0, 0));
        })
    });
}

#[test]
fn a_limited_frame_arena_giving_back_pages_leaves_published_data_intact() {
    use arena_kit_core::arena::FrameArena;
    let mut frames = FrameArena::<2>::chained(128).with_limit(1024);
    {
        let f = frames.begin_frame();
        f.alloc_slice_copy(&[9u8; 40]); // first page
        f.alloc_slice_copy(&[8u8; 300]); // a page of its own
        f.alloc_slice_copy(&[7u8; 60]); // a third page
    }
    let _ = frames.begin_frame();
    let reader = {
        let f = frames.begin_frame(); // buffer 0 again: its pages are kept
        assert_eq!(f.buffer_index(), 0);
        let data = f.alloc_slice_copy(&[42u32; 8]); // in the first page
        f.publish(&*data).unwrap()
    };
    let _ = frames.begin_frame();
    assert!(
        frames.try_begin_frame().is_err(),
        "buffer 0 waits for its reader"
    );
    // allocating more in the read buffer (past its bump pointer): no kept page holds the
    // request and the limit is reached, so the kept pages after the current one are given back
    let a = frames.buffer(0);
    let (pages, bytes) = (a.page_count(), a.system_bytes());
    assert_eq!(pages, 3);
    a.alloc_slice_copy(&[1u8; 600]);
    assert!(a.page_count() < pages + 1, "kept pages were given back");
    assert!(a.system_bytes() <= 1024 && a.system_bytes() > bytes - 300);
    assert_eq!(*reader, [42u32; 8]);
    drop(reader);
    let f = frames.begin_frame();
    assert_eq!((f.buffer_index(), f.used()), (0, 0));
}

#[test]
fn over_aligned_zero_sized_values_with_destructors_in_a_chained_arena() {
    #[repr(align(4096))]
    struct Big;
    impl Drop for Big {
        fn drop(&mut self) {
            ZST_DROPPED.with(|z| *z.borrow_mut() += 1);
        }
    }
    ZST_DROPPED.with(|z| *z.borrow_mut() = 0);
    let mut arena = Arena::chained(256);
    for _ in 0..3 {
        let b = arena.alloc(Big);
        assert_eq!((b as *mut Big as usize) % 4096, 0);
        arena.alloc(7u8);
    }
    let s = arena.alloc_slice_fill_with(5, |_| Big);
    assert_eq!((s.as_ptr() as usize) % 4096, 0);
    let m = arena.mark();
    arena.alloc(Big);
    arena.rewind(m).unwrap();
    assert_eq!(ZST_DROPPED.with(|z| *z.borrow()), 1);
    arena.reset();
    assert_eq!(ZST_DROPPED.with(|z| *z.borrow()), 9);
    let limited = Arena::chained(256).with_limit(4096);
    assert!(
        limited.try_alloc(Big).is_err(),
        "needs a page beyond the limit"
    );
    assert_eq!(limited.system_bytes(), 0);
}

#[test]
fn a_buffer_arena_serves_allocator_blocks_scopes_and_rewinds() {
    let mut buffer = [core::mem::MaybeUninit::<u8>::uninit(); 512];
    let mut arena = Arena::from_buffer(&mut buffer);
    DROPPED.with(|d| d.borrow_mut().clear());
    let start = arena.mark();
    {
        let mut v: AVec<u64, &Arena> = AVec::new_in(&arena);
        v.extend(0..8);
        arena.alloc(Checked { id: 30, check: !30 });
        v.extend(8..16); // not the newest block any more: moves
        assert!(v.iter().copied().eq(0..16));
        let b = ABox::new_in(5u32, &*arena);
        drop(v);
        assert_eq!(*b, 5);
    }
    {
        let s = arena.scope();
        s.alloc(Checked { id: 31, check: !31 });
        assert!(s.try_alloc_slice_copy(&[0u8; 1024]).is_err());
    }
    assert_eq!(dropped_ids(), [31]);
    arena.rewind(start).unwrap();
    assert_eq!(dropped_ids(), [31, 30]);
    assert_eq!(arena.used(), 0);
    arena.reset();
    assert_eq!(
        arena.rewind(start),
        Err(arena_kit_core::arena::MarkerError::Stale)
    );
}

#[test]
fn shrinking_the_newest_allocator_block_keeps_its_peak_in_the_high_water_mark() {
    let arena = Arena::chained(4096);
    let mut v: AVec<u8, &Arena> = AVec::with_capacity_in(1000, &arena);
    v.push(1);
    let peak = arena.used();
    assert!(peak >= 1000);
    v.shrink_to_fit(); // the newest block: its tail is given back
    assert!(arena.used() < 100);
    assert_eq!(
        arena.high_water(),
        peak,
        "the peak before the shrink is kept"
    );
    assert_eq!(arena.stats().high_water, peak);
}

#[test]
fn rewinding_to_a_marker_taken_inside_a_constructor_keeps_the_value_being_built() {
    DROPPED.with(|d| d.borrow_mut().clear());
    for extend_a_run in [false, true] {
        let mut arena = Arena::chained(256);
        if extend_a_run {
            arena.alloc(Checked { id: 40, check: !40 }); // the next value joins this run
        }
        let mut inside = None;
        let outer = arena.alloc_with(|| {
            inside = Some(arena.mark());
            arena.alloc(Checked { id: 41, check: !41 });
            arena.alloc_slice_copy(&[0u8; 300]); // and on to another page
            arena.alloc(Checked { id: 42, check: !42 });
            Checked { id: 43, check: !43 }
        });
        assert_eq!(outer.id, 43);
        let before = drop_log_len();
        arena.rewind(inside.unwrap()).unwrap();
        let mut d = dropped_ids()[before..].to_vec();
        d.sort_unstable();
        assert_eq!(
            d,
            [41, 42],
            "only what the constructor allocated after its marker"
        );
        let kept = arena.alloc(Checked { id: 44, check: !44 });
        assert_eq!(kept.id, 44);
        arena.reset();
        let mut d = dropped_ids()[before..].to_vec();
        d.sort_unstable();
        let mut want = vec![41, 42, 43, 44];
        if extend_a_run {
            want.insert(0, 40);
        }
        assert_eq!(d, want);
        DROPPED.with(|d| d.borrow_mut().clear());
    }
}

#[test]
fn a_frame_loop_of_growing_allocator_vectors_stops_taking_memory() {
    // Under Miri (a push is interpreted) frames of up to 1,000 bytes, still a few 256-byte pages
    // each for the two vectors.
    let (frames, most) = if cfg!(miri) { (12, 1000) } else { (200, 3000) };
    let mut arena = Arena::chained(256);
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut sizes = Vec::new();
    for _ in 0..frames {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        sizes.push((seed % most) as usize);
    }
    let busiest = *sizes.iter().max().unwrap();
    sizes[0] = busiest; // the first frame is the busiest: nothing later may need more
    let mut after_first = 0;
    for (i, &n) in sizes.iter().enumerate() {
        {
            let mut v: AVec<u8, &Arena> = AVec::new_in(&arena);
            let mut w: AVec<u32, &Arena> = AVec::new_in(&arena);
            for k in 0..n {
                v.push(k as u8);
                if k % 4 == 0 {
                    w.push(k as u32); // the two vectors take turns being the newest block
                }
            }
            assert_eq!(v.len(), n);
        }
        arena.reset();
        if i == 1 {
            after_first = arena.system_bytes(); // once the first frame's pages are coalesced
        }
        if i > 1 {
            assert_eq!(
                arena.system_bytes(),
                after_first,
                "frame {i} ({n} bytes) took memory"
            );
        }
    }
}
