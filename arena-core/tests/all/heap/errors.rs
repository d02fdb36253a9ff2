//! Bad input to `FreeListHeap`: each is a typed error (`RequestError`, `FreeError`, `BuildError`,
//! `Corruption`, or a `HeapError` holding one) whose text says what to do, and none
//! changes the heap.
use arena_kit_core::heap::{
    BuildError, FreeError, FreeListHeap, HeapError, MAX_ALIGN, RequestError,
};
use core::alloc::Layout;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).unwrap()
}

/// Runs `f` on a heap with a live block and asserts it fails with an error matching `expect`
/// whose text names a remedy, leaving the heap unchanged.
fn rejects(
    f: impl FnOnce(&mut FreeListHeap<'_>, NonNull<u8>) -> Result<(), HeapError>,
    expect: fn(&HeapError) -> bool,
) {
    let mut heap = FreeListHeap::with_capacity(4096);
    let live = heap.try_alloc(layout(100, 8)).unwrap();
    let before = (heap.to_string(), heap.stats());
    let err = f(&mut heap, live).unwrap_err();
    assert!(expect(&err), "unexpected error {err:?}");
    let text = err.to_string();
    assert!(
        text.contains(';'),
        "error text should say what to do: {text}"
    );
    assert_eq!(
        (heap.to_string(), heap.stats()),
        before,
        "a failed operation changed the heap"
    );
    heap.check().unwrap();
}

#[test]
fn zero_size() {
    rejects(
        |h, _| h.try_alloc(layout(0, 1)).map(drop).map_err(HeapError::from),
        |e| *e == HeapError::Request(RequestError::ZeroSize),
    );
    rejects(
        |h, p| h.try_realloc(p, layout(0, 1)).map(drop),
        |e| *e == HeapError::Request(RequestError::ZeroSize),
    );
}

#[test]
fn sizes_near_usize_max() {
    for size in [isize::MAX as usize, isize::MAX as usize - 15, 1 << 40, 4097] {
        rejects(
            |h, _| {
                h.try_alloc(layout(size, 1))
                    .map(drop)
                    .map_err(HeapError::from)
            },
            |e| matches!(e, HeapError::Request(RequestError::TooLarge { .. })),
        );
        rejects(
            |h, p| h.try_realloc(p, layout(size, 1)).map(drop),
            |e| matches!(e, HeapError::Request(RequestError::TooLarge { .. })),
        );
    }
}

#[test]
fn alignment_larger_than_supported() {
    rejects(
        |h, _| {
            h.try_alloc(layout(8, MAX_ALIGN * 2))
                .map(drop)
                .map_err(HeapError::from)
        },
        |e| {
            *e == HeapError::Request(RequestError::AlignmentTooLarge {
                align: 8192,
                max: 4096,
            })
        },
    );
}

#[test]
fn alignment_up_to_4k_works() {
    let mut heap = FreeListHeap::with_capacity(64 * 1024);
    let mut ptrs = Vec::new();
    for shift in 0..=12 {
        let p = heap.try_alloc(layout(24, 1 << shift)).unwrap();
        assert_eq!(p.as_ptr().addr() % (1 << shift), 0);
        heap.check().unwrap();
        ptrs.push(p);
    }
    for p in ptrs {
        heap.free(p).unwrap();
        heap.check().unwrap();
    }
    assert_eq!(heap.stats().free_blocks, 1);
}

#[test]
fn exhaustion() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let _big = heap.try_alloc(layout(3000, 8)).unwrap();
    let before = heap.to_string();
    let err = heap.try_alloc(layout(1100, 8)).unwrap_err();
    assert_eq!(heap.to_string(), before);
    let RequestError::OutOfMemory {
        requested,
        free,
        largest,
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(requested, 1100);
    assert_eq!(free, 4096 - 3024);
    assert_eq!(largest, 4096 - 3024 - 16);
    assert!(err.to_string().contains("free something first"));
    // The reported largest request really fits, and nothing larger does.
    assert!(heap.try_alloc(layout(largest + 1, 8)).is_err());
    heap.try_alloc(layout(largest, 8)).unwrap();
    heap.check().unwrap();
}

#[test]
fn double_free_interior_and_foreign_pointers() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let p = heap.try_alloc(layout(100, 8)).unwrap();
    let q = heap.try_alloc(layout(50, 8)).unwrap();
    heap.free(p).unwrap();
    let before = (heap.to_string(), heap.stats());
    assert!(matches!(
        heap.free(p),
        Err(FreeError::NotAllocated { offset: 8 })
    ));
    assert_eq!((heap.to_string(), heap.stats()), before);
    heap.free(q).unwrap();
    assert!(matches!(heap.free(q), Err(FreeError::NotAllocated { .. })));
    assert!(matches!(
        heap.try_realloc(q, layout(8, 8)),
        Err(HeapError::Free(FreeError::NotAllocated { .. }))
    ));
    heap.check().unwrap();
    // SAFETY: 8 < 100, inside the live block.
    rejects(
        |h, p| h.free(unsafe { p.add(8) }).map_err(HeapError::from),
        |e| matches!(e, HeapError::Free(FreeError::NotAllocated { .. })),
    );
    // SAFETY: 16 < 100; one granule in, where a block could start but none does.
    rejects(
        |h, p| h.free(unsafe { p.add(16) }).map_err(HeapError::from),
        |e| matches!(e, HeapError::Free(FreeError::NotAllocated { .. })),
    );
    let outside = Box::new(0u64);
    rejects(
        |h, _| {
            h.free(NonNull::from(&*outside).cast())
                .map_err(HeapError::from)
        },
        |e| matches!(e, HeapError::Free(FreeError::ForeignPointer { .. })),
    );
    rejects(
        |h, _| h.free(NonNull::<u8>::dangling()).map_err(HeapError::from),
        |e| matches!(e, HeapError::Free(FreeError::ForeignPointer { .. })),
    );
}

#[test]
fn realloc_failure_keeps_the_block() {
    let mut heap = FreeListHeap::with_capacity(1024);
    let p = heap.try_alloc(layout(100, 8)).unwrap();
    // SAFETY: `p` is live for 100 bytes.
    unsafe { p.as_ptr().write_bytes(7, 100) };
    let _wall = heap.try_alloc(layout(16, 8)).unwrap();
    assert!(matches!(
        heap.try_realloc(p, layout(900, 8)),
        Err(HeapError::Request(RequestError::OutOfMemory { .. }))
    ));
    // SAFETY: `p` is still live: a failed realloc leaves it alone.
    let kept = unsafe { core::slice::from_raw_parts(p.as_ptr(), 100) };
    assert!(kept.iter().all(|&b| b == 7));
    heap.free(p).unwrap();
    heap.check().unwrap();
}

#[test]
fn realloc_in_place_both_ways() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let p = heap.try_alloc(layout(100, 8)).unwrap();
    let grown = heap.try_realloc(p, layout(1000, 8)).unwrap();
    assert_eq!(grown, p, "the free neighbour lets it grow in place");
    let shrunk = heap.try_realloc(p, layout(40, 8)).unwrap();
    assert_eq!(shrunk, p);
    assert_eq!(heap.to_string(), "[Size: 40, Allocated] [Size: 4016, Free]");
    let wall = heap.try_alloc(layout(16, 8)).unwrap();
    let moved = heap.try_realloc(p, layout(200, 8)).unwrap();
    assert_ne!(moved, p, "a live neighbour forces a move");
    heap.free(wall).unwrap();
    heap.free(moved).unwrap();
    heap.check().unwrap();
    assert_eq!(heap.to_string(), "[Size: 4080, Free]");
}

#[test]
fn buffers_too_small() {
    let err = FreeListHeap::try_with_capacity(16).unwrap_err();
    assert!(matches!(err, BuildError::BufferTooSmall { .. }));
    // 24 bytes cannot hold a 32-byte block wherever the buffer lands: (24 - offset) rounded down
    // to 16 is at most 16. (A 40-byte buffer fits one at some addresses and not at others, which
    // made this test depend on where the stack put it.)
    let mut buf = [MaybeUninit::<u8>::uninit(); 24];
    assert!(matches!(
        FreeListHeap::try_from_buffer(&mut buf),
        Err(BuildError::BufferTooSmall { .. })
    ));
    let mut empty: [MaybeUninit<u8>; 0] = [];
    assert!(FreeListHeap::try_from_buffer(&mut empty).is_err());
}

#[test]
fn corrupted_tags_are_reported_not_followed() {
    let mut heap = FreeListHeap::with_capacity(1024);
    let p = heap.try_alloc(layout(100, 8)).unwrap();
    let q = heap.try_alloc(layout(100, 8)).unwrap();
    // An overrun: write 8 bytes past the first block's payload capacity (112), over its footer.
    // SAFETY: the bytes are inside the heap's memory (the footer and the next block's header
    // follow the payload); this simulates the bug `check` exists to find.
    unsafe { p.as_ptr().add(112).write_bytes(0xAB, 16) };
    let err = heap.check().unwrap_err();
    assert!(err.offset < 1024 && !err.problem.is_empty(), "{err:?}");
    assert!(err.to_string().contains("write past the end"));
    assert!(matches!(heap.free(q), Err(FreeError::Corrupt(_))));
}

/// Every way `free` can refuse a pointer, with the exact error (variant and offset) and no change
/// to the heap: the errors are built out of line from the pointer alone, and must say the same
/// as the checks that failed.
#[test]
fn free_errors_name_the_exact_offset() {
    let mut heap = FreeListHeap::with_capacity(1024);
    let p = heap.try_alloc(layout(100, 8)).unwrap(); // block at 0, payload at 8
    let q = heap.try_alloc(layout(100, 8)).unwrap(); // block at 128, payload at 136
    let before = (heap.to_string(), heap.stats());
    let at = |d: isize| {
        // SAFETY: every `d` used stays inside the heap's memory, which starts at least 8 bytes
        // below `p` (the first block's header) and holds both blocks.
        unsafe { p.offset(d) }
    };
    // The first block's header: inside the heap, never a payload.
    assert_eq!(
        heap.free(at(-8)),
        Err(FreeError::NotAllocated { offset: 0 })
    );
    // Off the granule, and on a granule where no block starts.
    assert_eq!(
        heap.free(at(8)),
        Err(FreeError::NotAllocated { offset: 16 })
    );
    assert_eq!(
        heap.free(at(16)),
        Err(FreeError::NotAllocated { offset: 24 })
    );
    let outside = Box::new(0u64);
    let foreign = NonNull::from(&*outside).cast::<u8>();
    assert_eq!(
        heap.free(foreign),
        Err(FreeError::ForeignPointer {
            addr: foreign.as_ptr().addr()
        })
    );
    assert_eq!((heap.to_string(), heap.stats()), before);
    // A live block whose footer was overwritten, then one whose header was (its `used` bit).
    // SAFETY: `q`'s footer is the 8 bytes at `q + 112`, and its header the 8 bytes before `q`,
    // both inside the heap's memory; the words are restored before the heap is used again.
    unsafe {
        let footer = q.add(112).cast::<u64>();
        let saved = footer.read_unaligned();
        footer.write_unaligned(0);
        let corrupt = heap.free(q).unwrap_err();
        footer.write_unaligned(saved);
        assert!(
            matches!(&corrupt, FreeError::Corrupt(c) if c.offset == 128),
            "{corrupt:?}"
        );
        let header = q.sub(8).cast::<u64>();
        let saved = header.read_unaligned();
        header.write_unaligned(saved & !1);
        let corrupt = heap.free(q).unwrap_err();
        header.write_unaligned(saved);
        assert!(
            matches!(&corrupt, FreeError::Corrupt(c) if c.offset == 128),
            "{corrupt:?}"
        );
    }
    assert_eq!((heap.to_string(), heap.stats()), before);
    heap.free(q).unwrap();
    assert_eq!(heap.free(q), Err(FreeError::NotAllocated { offset: 136 }));
    heap.free(p).unwrap();
    heap.check().unwrap();
}
