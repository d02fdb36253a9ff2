//! `&HeapCell` as an allocator when it is re-entered: allocating or freeing through the cell
//! from inside `HeapCell::with`'s closure, or from a destructor that runs there, gets
//! `AllocError` (or a deferred free), never a panic and never a second `&mut` to the heap. A
//! panicking closure leaves the cell usable and consistent.
use allocator_api2::alloc::{AllocError, Allocator};
use allocator_api2::boxed::Box as HeapBox;
use allocator_api2::vec::Vec as HeapVec;
use arena_kit_core::heap::{FreeListHeap, HeapCell};
use core::alloc::Layout;
use core::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).unwrap()
}

#[test]
fn allocating_inside_with_is_an_alloc_error() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let result = cell.with(|heap| {
        let before = heap.stats();
        let r = (&cell).allocate(layout(64, 8));
        assert_eq!(heap.stats(), before, "nothing changed under the borrow");
        r.map(drop)
    });
    assert_eq!(result, Err(AllocError));
    assert_eq!(cell.stats().live_blocks, 0);
    // The cell works as before afterwards.
    let p = (&cell).allocate(layout(64, 8)).unwrap();
    // SAFETY: `p` came from this allocator with this layout.
    unsafe { (&cell).deallocate(p.cast(), layout(64, 8)) };
    cell.check().unwrap();
}

#[test]
fn growing_or_shrinking_inside_with_is_an_alloc_error_and_keeps_the_block() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let old = layout(32, 8);
    let p = (&cell).allocate(old).unwrap().cast::<u8>();
    // SAFETY: `p` is a live 32-byte block of this cell.
    unsafe { p.write_bytes(7, 32) };
    cell.with(|_| {
        // SAFETY: `p` is live with `old`; the new layouts are larger / smaller as required.
        unsafe {
            assert_eq!((&cell).grow(p, old, layout(500, 8)), Err(AllocError));
            assert_eq!((&cell).grow_zeroed(p, old, layout(500, 8)), Err(AllocError));
            assert_eq!((&cell).shrink(p, old, layout(8, 8)), Err(AllocError));
        }
    });
    // SAFETY: the failed calls left `p` live with its 32 bytes.
    let bytes = unsafe { core::slice::from_raw_parts(p.as_ptr(), 32) };
    assert!(bytes.iter().all(|&b| b == 7));
    // SAFETY: `p` is still live with `old`.
    unsafe { (&cell).deallocate(p, old) };
    assert_eq!(cell.stats().live_blocks, 0);
    cell.check().unwrap();
}

#[test]
fn dropping_a_collection_inside_with_frees_it_once_the_borrow_ends() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let mut v = HeapVec::new_in(&cell);
    v.extend(0..100u32);
    let b = HeapBox::new_in([1u64; 4], &cell);
    assert_eq!(cell.stats().live_blocks, 2);
    let live_inside = cell.with(|heap| {
        drop(v);
        drop(b);
        heap.check().unwrap();
        heap.stats().live_blocks
    });
    assert_eq!(live_inside, 2, "the frees wait until the borrow ends");
    let stats = cell.stats();
    assert_eq!((stats.live_blocks, stats.free_blocks), (0, 1));
    cell.check().unwrap();
}

/// Allocates from `cell` in its destructor and records what it got.
struct AllocatesOnDrop<'c, 'b> {
    cell: &'c HeapCell<'b>,
    got: &'c Cell<Option<Result<(), AllocError>>>,
}

impl Drop for AllocatesOnDrop<'_, '_> {
    fn drop(&mut self) {
        let r = self.cell.allocate(Layout::new::<[u64; 2]>());
        if let Ok(p) = r {
            // SAFETY: `p` was just allocated with this layout.
            unsafe { self.cell.deallocate(p.cast(), Layout::new::<[u64; 2]>()) };
        }
        self.got.set(Some(r.map(drop)));
    }
}

#[test]
fn a_destructor_allocating_inside_with_gets_alloc_error() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let got = Cell::new(None);
    let guard = AllocatesOnDrop {
        cell: &cell,
        got: &got,
    };
    cell.with(|_| drop(guard));
    assert_eq!(got.get(), Some(Err(AllocError)));
    // Outside any borrow the same destructor succeeds.
    drop(AllocatesOnDrop {
        cell: &cell,
        got: &got,
    });
    assert_eq!(got.get(), Some(Ok(())));
    assert_eq!(cell.stats().live_blocks, 0);
}

#[test]
fn destructors_of_elements_may_allocate_from_the_same_cell() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(8192));
    let got = Cell::new(None);
    let mut v = HeapVec::new_in(&cell);
    for _ in 0..4 {
        v.push(AllocatesOnDrop {
            cell: &cell,
            got: &got,
        });
    }
    drop(v);
    assert_eq!(got.get(), Some(Ok(())));
    assert_eq!(cell.stats().live_blocks, 0);
    cell.check().unwrap();
}

#[test]
fn nested_with_and_stats_inside_with_work() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let v: HeapVec<u8, _> = HeapVec::with_capacity_in(10, &cell);
    let n = cell.with(|outer| cell.with(|inner| outer.stats() == inner.stats()));
    assert!(n);
    assert_eq!(cell.with(|_| cell.stats().live_blocks), 1);
    assert!(cell.with(|_| cell.check()).is_ok());
    assert!(format!("{cell:?}").contains("HeapCell"));
    assert!(cell.with(|_| format!("{cell:?}")).contains("HeapCell"));
    drop(v);
}

#[test]
fn a_panicking_with_closure_leaves_the_cell_usable() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let mut v = HeapVec::new_in(&cell);
    v.extend(0..10u64);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        cell.with(|_| {
            drop(v);
            panic!("closure fails");
        })
    }));
    assert!(caught.is_err());
    cell.check().unwrap();
    let p = (&cell).allocate(layout(100, 16)).unwrap();
    assert_eq!(cell.stats().live_blocks, 1, "the deferred free happened");
    // SAFETY: `p` came from this allocator with this layout.
    unsafe { (&cell).deallocate(p.cast(), layout(100, 16)) };
    let stats = cell.stats();
    assert_eq!((stats.live_blocks, stats.free_blocks), (0, 1));
    cell.check().unwrap();
    let heap = cell.into_inner();
    heap.check().unwrap();
}

/// A deferred free is held to the layout as a direct one is: a block freed inside `with` with
/// a size that is not its own is refused (a debug assertion), not queued, so it stays live.
#[test]
fn a_deferred_free_with_the_wrong_size_is_refused() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let p = (&cell).allocate(layout(100, 8)).unwrap().cast::<u8>();
    let deallocate = || {
        cell.with(|_| {
            // SAFETY: none: the size is not the block's, which the cell must notice; it reads
            // only the block's tags.
            unsafe { (&cell).deallocate(p, layout(64, 8)) }
        })
    };
    if cfg!(debug_assertions) {
        crate::support::panics::panic_location(deallocate);
    } else {
        deallocate();
    }
    assert_eq!(cell.stats().live_blocks, 1, "the block was not queued");
    // SAFETY: `p` is still live, with its own layout.
    unsafe { (&cell).deallocate(p, layout(100, 8)) };
    assert_eq!(cell.stats().live_blocks, 0);
    cell.check().unwrap();
}

#[test]
fn into_inner_completes_deferred_frees() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let b = HeapBox::new_in(5u32, &cell);
    cell.with(|_| drop(b));
    let heap = cell.into_inner();
    assert_eq!(heap.stats().live_blocks, 0);
    heap.check().unwrap();
}

#[test]
fn huge_sizes_and_alignments_are_alloc_errors() {
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    for l in [
        layout(isize::MAX as usize, 1),
        layout(isize::MAX as usize - 4095, 4096),
        layout(8, 1 << 30),
        layout(5000, 8),
    ] {
        assert_eq!((&cell).allocate(l), Err(AllocError), "{l:?}");
        assert_eq!((&cell).allocate_zeroed(l), Err(AllocError), "{l:?}");
    }
    let old = layout(16, 8);
    let p = (&cell).allocate(old).unwrap().cast::<u8>();
    for l in [
        layout(isize::MAX as usize, 1),
        layout(64, 1 << 30),
        layout(5000, 8),
    ] {
        // SAFETY: `p` is live with `old`, and `l` is at least as large.
        assert_eq!(unsafe { (&cell).grow(p, old, l) }, Err(AllocError), "{l:?}");
    }
    // SAFETY: `p` is live with `old` (every grow failed and kept it); 8 <= 16.
    let shrunk = unsafe { (&cell).shrink(p, old, layout(8, 1 << 30)) };
    assert_eq!(shrunk, Err(AllocError));
    assert_eq!(cell.stats().live_blocks, 1);
    // SAFETY: still live with `old`.
    unsafe { (&cell).deallocate(p, old) };
    cell.check().unwrap();
}

#[test]
fn a_cell_with_deferred_frees_can_move_to_another_thread() {
    fn assert_send<T: Send>(_: &T) {}
    let cell = HeapCell::new(FreeListHeap::with_capacity(4096));
    let b = HeapBox::new_in([3u8; 40], &cell);
    cell.with(|_| drop(b));
    assert_send(&cell);
    let heap = std::thread::spawn(move || {
        cell.check().unwrap();
        cell.into_inner()
    })
    .join()
    .unwrap();
    assert_eq!(heap.stats().live_blocks, 0);
}
