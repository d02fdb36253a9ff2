//! Zero-sized raw layouts (`alloc_layout`, the `allocator_api2` impl) never fail and never take
//! a page: on a fresh `Arena::new()`, a full fixed arena, an empty buffer, a `Fail` budget used
//! up exactly, a limit reached, inside a scope and in a guarded arena. Each hands out a pointer
//! aligned to the request; `used()` grows by the alignment padding at most (only where the
//! rounded bump pointer still lies in the current page and under the budget), and each counts
//! as one live allocation until a reset or rewind.

use core::alloc::Layout;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use allocator_api2::alloc::Allocator;
use arena_kit_core::arena::Arena;
use arena_kit_core::poison;
use arena_kit_core::tags::{Budget, Budgeted};

fn zst(align: usize) -> Layout {
    Layout::from_size_align(0, align).unwrap()
}

/// Alignments 1, 2, 4, ... 4096.
fn alignments() -> impl Iterator<Item = usize> {
    (0..=12).map(|shift| 1usize << shift)
}

/// What a zero-sized request may not change: pages, system memory, capacity, the budget's state.
fn fixed_state(arena: &Arena) -> (usize, usize, usize, Option<usize>) {
    (
        arena.page_count(),
        arena.system_bytes(),
        arena.capacity(),
        arena.budget().map(|g| g.limit()),
    )
}

/// One zero-sized `try_alloc_layout` at `align`, checked against the contract: `Ok`, aligned,
/// no page, budget untouched, one more live allocation, `used()` grown by less than `align`
/// (padding only), and a dangling pointer (address `align`) whenever nothing was taken.
#[track_caller]
fn one(arena: &Arena, align: usize) -> NonNull<u8> {
    let (used, count, state) = (arena.used(), arena.allocation_count(), fixed_state(arena));
    let p = arena
        .try_alloc_layout(zst(align))
        .unwrap_or_else(|e| panic!("zero-sized layout at align {align} refused: {e}"));
    assert_eq!(p.as_ptr() as usize % align, 0, "align {align}");
    assert_eq!(
        fixed_state(arena),
        state,
        "align {align}: no page, no budget policy"
    );
    assert_eq!(
        arena.allocation_count(),
        count + 1,
        "align {align}: counted"
    );
    let grew = arena.used() - used;
    assert!(
        grew < align,
        "align {align}: grew by {grew}, more than padding"
    );
    if p.as_ptr() as usize == align && grew > 0 {
        panic!("align {align}: a dangling pointer took {grew} bytes");
    }
    p
}

/// [`one`] at every alignment from 1 to 4096.
#[track_caller]
fn every_alignment(arena: &Arena) {
    for align in alignments() {
        one(arena, align);
    }
}

#[test]
fn a_fresh_chained_arena_takes_no_page_for_zero_sized_layouts() {
    let arena = Arena::new();
    every_alignment(&arena);
    assert_eq!(
        (arena.used(), arena.page_count(), arena.system_bytes()),
        (0, 0, 0)
    );
    assert_eq!(arena.allocation_count(), 13);
    // the panicking form too
    let p = arena.alloc_layout(zst(64));
    assert_eq!(p.as_ptr() as usize % 64, 0);
    assert_eq!(arena.page_count(), 0);
    // a limit of zero bytes: a page could never be taken, and none is needed
    let limited = Arena::chained(256).with_limit(0);
    every_alignment(&limited);
    assert_eq!(limited.system_bytes(), 0);
}

#[test]
fn a_full_fixed_arena_still_hands_out_zero_sized_layouts() {
    let arena = Arena::with_capacity(64);
    arena.alloc_layout(Layout::from_size_align(64, 1).unwrap());
    assert_eq!(arena.remaining(), 0);
    every_alignment(&arena);
    assert_eq!(
        (arena.used(), arena.remaining()),
        (64, 0),
        "no room for padding either"
    );
    // nearly full: the padding may fill the rest, never more
    let arena = Arena::with_capacity(64);
    arena.alloc_layout(Layout::from_size_align(61, 1).unwrap());
    every_alignment(&arena);
    assert!(arena.used() <= 64);
    assert_eq!(arena.used() + arena.remaining(), 64);
    // no block at all
    every_alignment(&Arena::with_capacity(0));
    let mut empty: [MaybeUninit<u8>; 0] = [];
    every_alignment(&Arena::from_buffer(&mut empty));
}

#[test]
fn a_zero_sized_layout_that_fits_sits_after_its_padding_and_overlaps_nothing() {
    let arena = Arena::with_capacity(16 * 1024);
    let first = arena.alloc_layout(Layout::from_size_align(1, 1).unwrap());
    // SAFETY: `first` is valid for one fresh byte.
    unsafe { first.write(7) };
    for align in alignments() {
        let p = one(&arena, align);
        // It fits the block: it is handed out at the rounded bump pointer.
        assert_eq!(
            arena.offset_of(p.as_ptr()),
            Some(arena.used()),
            "align {align}"
        );
        // The next allocation may start exactly there; nothing before it is handed out twice.
        let next = arena.alloc_layout(Layout::from_size_align(1, 1).unwrap());
        assert_eq!(next, p, "align {align}");
        // SAFETY: `next` is valid for one fresh byte.
        unsafe { next.write(align as u8) };
    }
    // SAFETY: `first` is still live.
    assert_eq!(unsafe { first.read() }, 7);
}

#[test]
fn a_zero_sized_layout_that_does_not_fit_the_page_takes_no_new_page() {
    let arena = Arena::chained(256);
    arena.alloc_layout(Layout::from_size_align(200, 1).unwrap());
    let pages = arena.page_count();
    assert_eq!(pages, 1);
    every_alignment(&arena);
    assert_eq!(arena.page_count(), pages);
    // at its limit with the page full: no `LimitReached`
    let arena = Arena::chained(256).with_limit(256);
    while arena
        .try_alloc_layout(Layout::from_size_align(16, 1).unwrap())
        .is_ok()
    {}
    every_alignment(&arena);
    assert_eq!(arena.system_bytes(), 256);
}

#[test]
fn a_budget_used_up_exactly_still_hands_out_zero_sized_layouts() {
    for budget in [Budget::fail(100), Budget::panic(100), Budget::warn(100)] {
        for mut arena in [Arena::chained(4096), Arena::with_capacity(4096)] {
            arena.set_budget(Some(budget.into()));
            arena.alloc_layout(Layout::from_size_align(100, 1).unwrap());
            assert_eq!(arena.used(), 100);
            // Any padding would cross the budget: never `OverBudget`, never a panic, never a
            // warning (the clamp stays, see `one`), and no byte is taken.
            every_alignment(&arena);
            assert_eq!(arena.used(), 100, "{budget:?}");
            // the budget still holds for real bytes
            if budget.policy == arena_kit_core::tags::Policy::Fail {
                assert!(
                    arena
                        .try_alloc_layout(Layout::from_size_align(1, 1).unwrap())
                        .is_err()
                );
            }
        }
    }
    // a budget of nothing, on an arena with no page
    let mut arena = Arena::new();
    arena.set_budget(Some(Budget::fail(0).into()));
    every_alignment(&arena);
    assert_eq!((arena.used(), arena.page_count()), (0, 0));
}

#[test]
fn zero_sized_layouts_inside_a_scope_are_rewound_with_it() {
    let mut arena = Arena::with_capacity(16 * 1024);
    arena.alloc_layout(Layout::from_size_align(3, 1).unwrap());
    let before = (arena.used(), arena.allocation_count());
    {
        let scope = arena.scope();
        every_alignment(&scope);
        assert_eq!(scope.allocation_count(), before.1 + 13);
        assert!(scope.used() > before.0, "padding was taken in the block");
    }
    assert_eq!((arena.used(), arena.allocation_count()), before);
    let marker = arena.mark();
    every_alignment(&arena);
    arena.rewind(marker).unwrap();
    assert_eq!((arena.used(), arena.allocation_count()), before);
    every_alignment(&arena);
    arena.reset();
    assert_eq!((arena.used(), arena.allocation_count()), (0, 0));
}

#[test]
fn a_guarded_arena_hands_out_zero_sized_layouts_without_guards_or_pages() {
    let arena = Arena::chained(256).with_guards();
    every_alignment(&arena);
    assert_eq!((arena.used(), arena.page_count()), (0, 0));
    let arena = Arena::with_capacity(256).with_guards();
    arena.alloc_layout(Layout::from_size_align(8, 8).unwrap());
    let used = arena.used();
    every_alignment(&arena);
    if poison::ENABLED {
        // no guard bytes around nothing: every zero-sized request is dangling
        assert_eq!(arena.used(), used);
    }
    while arena
        .try_alloc_layout(Layout::from_size_align(8, 8).unwrap())
        .is_ok()
    {}
    every_alignment(&arena);
    assert_eq!(arena.check_guards(), Ok(()));
}

#[test]
fn allocator_api2_zero_sized_blocks_never_fail_or_take_a_page() {
    let full = Arena::with_capacity(32);
    full.alloc_layout(Layout::from_size_align(32, 1).unwrap());
    for arena in [Arena::new(), full] {
        for align in alignments() {
            let state = fixed_state(&arena);
            let block = (&arena).allocate(zst(align)).expect("zero-sized allocate");
            assert_eq!(block.len(), 0);
            assert_eq!(block.cast::<u8>().as_ptr() as usize % align, 0);
            assert_eq!(fixed_state(&arena), state);
            let stats = arena.stats();
            // SAFETY: `block` was just allocated with this layout by this allocator.
            unsafe { (&arena).deallocate(block.cast(), zst(align)) };
            assert_eq!(
                arena.stats(),
                stats,
                "a zero-sized block has nothing to give back"
            );
        }
    }
    // a zero-sized block grows (by moving) and shrinks back like any other
    let arena = Arena::with_capacity(1024);
    let z = (&arena).allocate(zst(8)).unwrap().cast::<u8>();
    let big = Layout::from_size_align(24, 8).unwrap();
    // SAFETY: `z` is a live block of `zst(8)`; 24 >= 0.
    let grown = unsafe { (&arena).grow(z, zst(8), big) }.unwrap();
    assert_eq!(grown.len(), 24);
    // SAFETY: `grown` is a live block of `big`; 0 <= 24.
    let shrunk = unsafe { (&arena).shrink(grown.cast(), big, zst(8)) }.unwrap();
    assert_eq!(shrunk.len(), 0);
}

#[test]
fn shrinking_the_newest_block_to_zero_bytes_gives_its_bytes_back() {
    // The module doc of the `Allocator` impl: "Freeing or shrinking the newest allocation gives
    // its bytes back". Shrunk to no bytes, the block is a zero-sized block at its own start,
    // which is where a zero-sized `allocate` would have put it: its bytes go back, it still
    // counts as one live allocation (as a zero-sized `allocate` does), and the peak is kept.
    let arena = Arena::with_capacity(1024);
    arena.alloc_layout(Layout::from_size_align(3, 1).unwrap());
    let count = arena.allocation_count();
    let big = Layout::from_size_align(24, 8).unwrap();
    let block = (&arena).allocate(big).unwrap().cast::<u8>();
    assert_eq!((arena.used(), arena.high_water()), (32, 32));
    // SAFETY: `block` is a live block of `big`; 0 <= 24 and the alignment is kept.
    let shrunk = unsafe { (&arena).shrink(block, big, zst(8)) }.unwrap();
    assert_eq!(shrunk.len(), 0);
    assert_eq!(shrunk.cast::<u8>(), block);
    assert_eq!(
        arena.used(),
        8,
        "the 24 bytes are given back, the padding stays"
    );
    assert_eq!(arena.allocation_count(), count + 1, "still one live block");
    assert_eq!(arena.high_water(), 32);
    // SAFETY: `shrunk` is a live block of `zst(8)`.
    unsafe { (&arena).deallocate(shrunk.cast(), zst(8)) };
    assert_eq!(arena.used(), 8);
    // the bytes are handed out again, and are writable whole
    let again = (&arena).allocate(big).unwrap().cast::<u8>();
    assert_eq!(again, block);
    // SAFETY: `again` is a fresh block of 24 bytes.
    unsafe { again.write_bytes(0xAB, 24) };
    // a block that is not the newest keeps its bytes
    let older = (&arena).allocate(big).unwrap().cast::<u8>();
    let newest = (&arena).allocate(big).unwrap().cast::<u8>();
    let used = arena.used();
    // SAFETY: `older` is a live block of `big`.
    unsafe { (&arena).shrink(older, big, zst(8)) }.unwrap();
    assert_eq!(arena.used(), used);
    // SAFETY: `newest` is a live block of `big`, still the newest.
    unsafe { newest.write_bytes(0xCD, 24) };
}

#[test]
fn a_full_arena_hands_out_its_end_for_an_alignment_the_bump_pointer_meets() {
    // `try_alloc_layout`'s doc: a zero-sized layout is handed out at the rounded bump pointer
    // wherever that is at most the page's clamped end, a full page included (the end itself);
    // only a request whose padding would cross the end gets the dangling pointer.
    let mut buf = [MaybeUninit::<u8>::uninit(); 16];
    let end = buf.as_ptr_range().end as usize;
    let arena = Arena::from_buffer(&mut buf);
    arena.alloc_layout(Layout::from_size_align(16, 1).unwrap());
    let p = one(&arena, 1);
    assert_eq!(
        p.as_ptr() as usize,
        end,
        "the end of the buffer, not a dangling pointer"
    );
    assert_eq!(
        arena.offset_of(p.as_ptr()),
        None,
        "one past the end is not in the arena"
    );
    assert_eq!(arena.used(), 16);
    if !end.is_multiple_of(64) {
        assert_eq!(
            one(&arena, 64).as_ptr() as usize,
            64,
            "dangling where padding is needed"
        );
    }
}

#[test]
fn a_warn_budget_warns_once_whatever_zero_sized_layouts_do_around_it() {
    // A zero-sized layout never runs the policy: it takes padding only up to the clamp (the
    // budget exactly), gets a dangling pointer past it, and takes padding freely once a
    // warning has lifted the clamp; a real byte over the budget warns once, and usage falling
    // back under re-arms it.
    let mut arena = Arena::with_capacity(4096);
    arena.set_budget(Some(Budget::warn(100).into()));
    arena.alloc_layout(Layout::from_size_align(97, 1).unwrap());
    let base = arena.alloc_layout(zst(1)).as_ptr() as usize; // at the bump pointer, 97 in
    let pad = base.wrapping_neg() % 4;
    one(&arena, 4);
    assert_eq!(arena.used(), 97 + pad);
    assert_eq!(arena.budget().unwrap().limit(), 100, "armed: no warning");
    let p = one(&arena, 4096);
    if arena.offset_of(p.as_ptr()).is_none() {
        assert_eq!(
            arena.used(),
            97 + pad,
            "padding past the budget: dangling, nothing taken"
        );
    }
    assert_eq!(arena.budget().unwrap().limit(), 100, "still armed");
    {
        let scope = arena.scope();
        scope.alloc_layout(Layout::from_size_align(8, 1).unwrap()); // over: warns, lifts
        assert_eq!(scope.budget().unwrap().limit(), usize::MAX);
        let used = scope.used();
        one(&scope, 64); // lifted: padding taken, no second warning
        assert!(scope.used() >= used && scope.used() < used + 64);
        assert_eq!(scope.budget().unwrap().limit(), usize::MAX);
    }
    assert_eq!(
        arena.budget().unwrap().limit(),
        100,
        "re-armed by the scope's end"
    );
}

#[test]
fn a_zero_sized_block_at_the_bump_pointer_is_never_taken_for_the_newest_block() {
    // A zero-sized block handed out at the bump pointer ends there too, but freeing, growing
    // or shrinking it moves nothing: only a block with bytes is given back or grown in place.
    // The newest block with bytes before it still is, and may grow over its address (no bytes
    // are shared).
    let arena = Arena::with_capacity(1024);
    let small = Layout::from_size_align(16, 8).unwrap();
    let big = Layout::from_size_align(32, 8).unwrap();
    let a = (&arena).allocate(small).unwrap().cast::<u8>();
    let z = (&arena).allocate(zst(8)).unwrap().cast::<u8>();
    // SAFETY: `a` is valid for 16 bytes.
    assert_eq!(z, unsafe { a.add(16) }, "at the bump pointer, no padding");
    let stats = arena.stats();
    // SAFETY: `z` is a live block of `zst(8)` (each call below keeps it one).
    unsafe {
        (&arena).deallocate(z, zst(8));
        assert_eq!(arena.stats(), stats, "freeing it gives nothing back");
        let z2 = (&arena).shrink(z, zst(8), zst(1)).unwrap().cast::<u8>();
        assert_eq!((z2, arena.stats()), (z, stats), "nor does shrinking it");
    }
    // growing it moves it: the bytes come after it, and it is counted as a new block
    // SAFETY: `z` is a live block of `zst(8)`; 16 >= 0.
    let zg = unsafe { (&arena).grow(z, zst(8), small) }
        .unwrap()
        .cast::<u8>();
    assert_eq!(zg, z, "the bytes after the block are the fresh ones");
    assert_eq!(arena.allocation_count(), stats.allocations + 1);
    // SAFETY: `zg` is valid for 16 fresh bytes; `a` for its own 16.
    unsafe {
        zg.write_bytes(0x22, 16);
        a.write_bytes(0x11, 16);
    }
    // `a` is no longer the newest: it grows by moving
    // SAFETY: `a` is a live block of `small`.
    let ag = unsafe { (&arena).grow(a, small, big) }
        .unwrap()
        .cast::<u8>();
    assert_ne!(ag, a);
    // SAFETY: `ag` holds `a`'s 16 bytes and 16 fresh ones; `zg` is still live and untouched.
    unsafe {
        assert_eq!(ag.read(), 0x11);
        ag.add(16).write_bytes(0x33, 16);
        assert_eq!(zg.add(15).read(), 0x22);
    }
    // the newest block with bytes before a zero-sized one grows in place over its address
    let arena = Arena::with_capacity(1024);
    let a = (&arena).allocate(small).unwrap().cast::<u8>();
    let z = (&arena).allocate(zst(1)).unwrap().cast::<u8>();
    // SAFETY: `a` is the newest block with bytes, of `small`.
    let ag = unsafe { (&arena).grow(a, small, big) }
        .unwrap()
        .cast::<u8>();
    assert_eq!(ag, a, "in place");
    // SAFETY: `ag` is valid for 32 bytes; `z` for none.
    unsafe {
        ag.write_bytes(0x44, 32);
        z.cast::<()>().read();
    }
    let next = (&arena).allocate(small).unwrap().cast::<u8>();
    // SAFETY: `ag` is valid for 32 bytes.
    let after = unsafe { ag.add(32) };
    assert_eq!(
        next, after,
        "nothing after the grown block is handed out twice"
    );
    assert_eq!(arena.allocation_count(), 3);
}
