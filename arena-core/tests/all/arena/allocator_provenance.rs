//! `&Arena` as an `allocator_api2` allocator: giving back the newest block (free, shrink, grow in
//! place) moves the bump pointer without adopting the caller's pointer, whose provenance may
//! cover only the freed block. Run under Miri with `-Zmiri-strict-provenance` (Stacked Borrows)
//! and with `-Zmiri-tree-borrows`.
#![cfg(feature = "allocator-api2")]

use allocator_api2::boxed::Box as ABox;
use allocator_api2::vec::Vec as AVec;
use arena_kit_core::arena::Arena;

#[test]
fn allocating_after_freeing_the_newest_box_writes_past_the_freed_block() {
    let mut arena = Arena::chained(1024);
    let _before = arena.alloc(1u64);
    let boxed = ABox::new_in(5u32, &arena);
    drop(boxed); // the newest block: its bytes are given back
    let next = arena.alloc([7u8; 64]);
    assert_eq!(next.iter().map(|&b| b as u32).sum::<u32>(), 7 * 64);
    let after = arena.alloc_slice_fill_with(32, |i| i as u64);
    assert_eq!(after[31], 31);
    arena.reset();
    let again = arena.alloc([9u8; 100]);
    assert_eq!(again[99], 9);
}

#[test]
fn allocating_after_shrinking_the_newest_block_writes_past_it() {
    let arena = Arena::chained(1024);
    let mut v: AVec<u8, &Arena> = AVec::with_capacity_in(64, &arena);
    v.extend_from_slice(&[3; 8]);
    // `into_boxed_slice` shrinks in place, then the box narrows the pointer to its 8 bytes
    let boxed = v.into_boxed_slice();
    assert_eq!(boxed.len(), 8);
    drop(boxed); // gives back the 8 bytes through the narrowed pointer
    let next = arena.alloc([1u8; 200]);
    assert_eq!(next[199], 1);
}

#[test]
fn growing_the_newest_block_in_place_returns_a_pointer_valid_for_the_new_size() {
    let arena = Arena::chained(1024);
    let mut exact: AVec<u8, &Arena> = AVec::with_capacity_in(4, &arena);
    exact.extend_from_slice(&[5; 4]);
    let boxed: ABox<[u8], &Arena> = exact.into_boxed_slice(); // no shrink: already exact
    // the vector starts from the box's pointer, which covers only 4 bytes
    let mut v = AVec::from(boxed);
    for i in 0..100u8 {
        v.push(i); // the first growth is in place
    }
    assert_eq!(v[3], 5);
    assert_eq!(v[103], 99);
    drop(v);
    let next = arena.alloc([2u8; 300]);
    assert_eq!(next[299], 2);
}
