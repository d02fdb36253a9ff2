//! Attacks on a growable pool's reserved address range (`vm.rs`, block 0 growing in place): values
//! aligned past a page, slots that straddle pages, shrinking into the middle of a page and growing
//! back, stale handles across a shrink, and a drop that re-enters the pool's neighbours while
//! pages are given back. Where there is no range (Miri, other platforms, a finite `ulimit -v`) the
//! same calls take chunks from the global allocator, and every check holds just the same.

use std::cell::Cell;
use std::rc::Rc;

use arena_kit_core::pool::Pool;

/// A value aligned to 64 KiB: past the page size on most systems, so a page-aligned range start
/// does not align it.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(65536))]
struct Aligned64K(u64);

/// A value aligned to 8 KiB, twice a 4 KiB page.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(8192))]
struct Aligned8K(u64);

/// A value whose slot (4,093 bytes plus the generation, rounded) straddles page boundaries.
#[derive(Clone, Copy)]
struct Odd([u8; 4093]);

fn rounds() -> usize {
    if cfg!(miri) { 6 } else { 200 }
}

/// Values aligned past the page size keep their alignment and contents through growth chunk by
/// chunk, a shrink and growth again. On a thread with a large stack: unoptimised, this test's
/// own frame holds many 64 KiB-aligned temporaries, more than a test thread's 2 MiB.
#[test]
fn values_aligned_past_a_page_stay_aligned_and_whole() {
    std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(aligned_values)
        .unwrap()
        .join()
        .unwrap();
}

fn aligned_values() {
    let mut big: Pool<Aligned64K> = Pool::growable(1);
    let mut mid: Pool<Aligned8K> = Pool::growable(2);
    let n = if cfg!(miri) { 4 } else { 40 };
    let hb: Vec<_> = (0..n).map(|i| big.insert(Aligned64K(i as u64))).collect();
    let hm: Vec<_> = (0..n)
        .map(|i| mid.insert(Aligned8K(i as u64 * 3)))
        .collect();
    for (i, (&b, &m)) in hb.iter().zip(&hm).enumerate() {
        let pb: *const Aligned64K = &big[b];
        let pm: *const Aligned8K = &mid[m];
        assert_eq!(pb.addr() % 65536, 0);
        assert_eq!(pm.addr() % 8192, 0);
        assert_eq!(big[b], Aligned64K(i as u64));
        assert_eq!(mid[m], Aligned8K(i as u64 * 3));
    }
    // Remove the tail, shrink (nothing was ever in the slots past the high water, so nothing
    // goes) and grow again: the values left are untouched.
    for &b in &hb[n / 2..] {
        assert!(big.remove(b).is_some());
    }
    big.shrink_to_fit();
    for i in 0..n {
        let h = big.insert(Aligned64K(1000 + i as u64));
        let p: *const Aligned64K = &big[h];
        assert_eq!(p.addr() % 65536, 0);
    }
    for (i, &b) in hb[..n / 2].iter().enumerate() {
        assert_eq!(big[b], Aligned64K(i as u64));
    }
    for &b in &hb[n / 2..] {
        assert!(big.get(b).is_none(), "a removed value's handle stays stale");
    }
}

/// Slots that straddle pages: a pool grown far, emptied from the top and shrunk to a point inside
/// a page keeps every byte of the values below it, and the slots it grows back into are vacant.
#[test]
fn shrinking_into_the_middle_of_a_page_keeps_the_values_below() {
    let mut pool: Pool<Odd> = Pool::growable(1);
    let n = if cfg!(miri) { 5 } else { 300 };
    // Reserve first: slots past the high water were never used, so a shrink gives them back.
    pool.reserve(n * 2);
    let grown = pool.capacity();
    let handles: Vec<_> = (0..n).map(|i| pool.insert(Odd([i as u8; 4093]))).collect();
    let freed = pool.shrink_to_fit();
    assert_eq!(pool.capacity(), grown - freed);
    assert!(pool.capacity() >= n);
    for (i, &h) in handles.iter().enumerate() {
        assert!(pool[h].0.iter().all(|&b| b == i as u8), "value {i} whole");
    }
    // Grow back past where it was, writing every new value in full.
    let more: Vec<_> = (0..n)
        .map(|i| pool.insert(Odd([!(i as u8); 4093])))
        .collect();
    for (i, &h) in handles.iter().enumerate() {
        assert!(pool[h].0.iter().all(|&b| b == i as u8));
    }
    for (i, &h) in more.iter().enumerate() {
        assert!(pool[h].0.iter().all(|&b| b == !(i as u8)));
    }
    assert_eq!(pool.len(), 2 * n);
}

/// Rounds of growing, emptying, shrinking and growing again: no handle from an earlier round
/// reaches a value of a later one (the slots that held values keep their generations, and those
/// given back were never used).
#[test]
fn stale_handles_stay_stale_across_shrink_and_regrowth() {
    let mut pool: Pool<u64> = Pool::growable(16);
    let mut stale = Vec::new();
    for round in 0..rounds() as u64 {
        let hs: Vec<_> = (0..64).map(|i| pool.insert(round * 1000 + i)).collect();
        for &h in &hs {
            assert!(pool.remove(h).is_some());
        }
        pool.shrink_to_fit();
        pool.reserve(1 + (round as usize % 7) * 16);
        stale.extend(hs);
        if stale.len() > 4096 {
            stale.drain(..2048);
        }
        for &h in &stale {
            assert!(pool.get(h).is_none());
        }
    }
}

/// A drop run by `clear` that grows and shrinks another pool (its own range) and reads this
/// one's neighbour: each range is its own, and the pool being cleared ends consistent.
#[test]
fn drops_that_grow_and_shrink_other_pools_while_one_clears() {
    thread_local! {
        static OTHER: std::cell::RefCell<Pool<[u64; 32]>> =
            std::cell::RefCell::new(Pool::growable(4));
    }
    struct Churn(Rc<Cell<usize>>);
    impl Drop for Churn {
        fn drop(&mut self) {
            OTHER.with(|o| {
                let mut o = o.borrow_mut();
                let hs: Vec<_> = (0..9).map(|i| o.insert([i; 32])).collect();
                for h in hs {
                    o.remove(h);
                }
                o.shrink_to_fit();
            });
            self.0.set(self.0.get() + 1);
        }
    }
    let drops = Rc::new(Cell::new(0));
    let mut pool: Pool<Churn> = Pool::growable(8);
    let n = if cfg!(miri) { 10 } else { 100 };
    for _ in 0..n {
        pool.insert(Churn(drops.clone()));
    }
    pool.clear();
    assert_eq!(drops.get(), n);
    assert!(pool.is_empty());
    let h = pool.insert(Churn(drops.clone()));
    assert!(pool.contains(h));
    drop(pool);
    assert_eq!(drops.get(), n + 1);
    OTHER.with(|o| assert!(o.borrow().is_empty()));
}
