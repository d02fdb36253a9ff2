//! The largest sizes and alignments a `Layout` can hold, on every heap entry point that takes
//! one (plain, guarded, tracked, with and without a budget) and on the constructors: a typed
//! error, no overflow, nothing changed. (A non-power-of-two alignment cannot be expressed as a
//! `Layout`; `GlobalAlloc::realloc`'s raw `new_size` is covered by the `LockedHeap` tests.)
use arena_kit_core::heap::{BuildError, FreeListHeap, HeapError, MAX_ALIGN, RequestError};
use arena_kit_core::tags::{Budget, GuardedHeap, Tracked};
use core::alloc::Layout;
use core::mem::MaybeUninit;

/// Requests no 4 KiB heap can serve: huge sizes at every alignment, huge alignments.
fn huge() -> Vec<Layout> {
    let mut v = Vec::new();
    for align in [1, 16, MAX_ALIGN, 1 << 20, 1 << 30] {
        for size in [
            isize::MAX as usize - (align - 1),
            (isize::MAX as usize - (align - 1)) & !(align - 1),
            1 << 40,
            4097,
        ] {
            if let Ok(l) = Layout::from_size_align(size, align) {
                v.push(l);
            }
        }
    }
    v.push(Layout::from_size_align(8, 1 << 30).unwrap());
    v.push(Layout::from_size_align(1, 1 << 62).unwrap());
    v
}

fn is_size_or_align_error<E: Clone + Into<HeapError>>(e: &E) -> bool {
    matches!(
        e.clone().into(),
        HeapError::Request(RequestError::TooLarge { .. } | RequestError::AlignmentTooLarge { .. })
    )
}

#[test]
fn plain_heap_alloc_and_realloc_reject_huge_layouts() {
    let mut heap = FreeListHeap::with_capacity(4096);
    let p = heap.try_alloc(Layout::new::<[u64; 2]>()).unwrap();
    let before = (heap.to_string(), heap.stats());
    for l in huge() {
        let e = heap.try_alloc(l).unwrap_err();
        assert!(is_size_or_align_error(&e), "{l:?}: {e:?}");
        let e = heap.try_realloc(p, l).unwrap_err();
        assert!(is_size_or_align_error(&e), "{l:?}: {e:?}");
        assert_eq!((heap.to_string(), heap.stats()), before, "{l:?}");
    }
    heap.free(p).unwrap();
    heap.check().unwrap();
}

#[test]
fn guarded_heap_rejects_huge_layouts_without_overflow() {
    let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(4096));
    let p = heap.try_alloc(Layout::new::<[u64; 2]>()).unwrap();
    let before = (heap.to_string(), heap.stats());
    for l in huge() {
        let e = heap.try_alloc(l).unwrap_err();
        assert!(is_size_or_align_error(&e), "{l:?}: {e:?}");
        assert_eq!((heap.to_string(), heap.stats()), before, "{l:?}");
    }
    heap.check_guards().unwrap();
    heap.free(p).unwrap();
}

#[test]
fn tracked_heaps_reject_huge_layouts_with_and_without_a_budget() {
    let mut plain = Tracked::new(FreeListHeap::with_capacity(4096), "plain", "Assets");
    let mut guarded = Tracked::new(
        GuardedHeap::new(FreeListHeap::with_capacity(4096)),
        "guarded",
        "Assets",
    );
    for l in huge() {
        assert!(
            matches!(plain.try_alloc(l), Err(ref e) if is_size_or_align_error(e)),
            "{l:?}"
        );
        assert!(
            matches!(guarded.try_alloc(l), Err(ref e) if is_size_or_align_error(e)),
            "{l:?}"
        );
    }
    plain.set_budget(Some(Budget::fail(usize::MAX)));
    guarded.set_budget(Some(Budget::fail(1024)));
    let _keep = plain.try_alloc(Layout::new::<[u8; 100]>()).unwrap();
    for l in huge() {
        assert!(plain.try_alloc(l).is_err(), "{l:?}");
        let refused = guarded.try_alloc(l).unwrap_err();
        assert!(
            match refused {
                RequestError::OverBudget(_) => l.size() > 1024,
                ref e => is_size_or_align_error(e),
            },
            "{l:?}: {refused:?}"
        );
    }
    assert_eq!(plain.usage().allocations, 1);
    assert_eq!(guarded.usage().allocations, 0);
    plain.set_forgive_leaks(true);
}

#[test]
fn constructors_reject_impossible_capacities() {
    for bytes in [
        usize::MAX,
        usize::MAX - 15,
        isize::MAX as usize,
        isize::MAX as usize + 1,
    ] {
        let e = FreeListHeap::try_with_capacity(bytes).unwrap_err();
        assert!(matches!(e, BuildError::TooLarge { .. }), "{bytes}: {e:?}");
    }
    for bytes in [0, 1, 31] {
        let e = FreeListHeap::try_with_capacity(bytes).unwrap_err();
        assert!(
            matches!(e, BuildError::BufferTooSmall { .. }),
            "{bytes}: {e:?}"
        );
    }
    // Too small wherever it lands (40 bytes fit one block at some addresses).
    let mut buf = [MaybeUninit::<u8>::uninit(); 24];
    assert!(matches!(
        FreeListHeap::try_from_buffer(&mut buf),
        Err(BuildError::BufferTooSmall { .. })
    ));
    assert!(matches!(
        FreeListHeap::try_from_buffer(&mut []),
        Err(BuildError::BufferTooSmall { .. })
    ));
}
