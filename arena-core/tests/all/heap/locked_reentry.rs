//! `LockedHeap` re-entered from the thread holding its lock (inside `with`, from a formatter,
//! from a destructor) gets null or `HeapError::InUse` at once, never a deadlock or a panic;
//! another thread holding the lock makes callers wait, not fail. Debug never holds the lock while
//! formatting. Bad sizes and pointers are null, not overflow.
use crate::support;

use arena_kit_core::heap::{HeapError, LockedHeap};
use core::alloc::{GlobalAlloc, Layout};
use core::fmt::Write;
use std::sync::mpsc;
use std::time::Duration;
use support::miri_or;

/// Runs `f` on another thread and says whether it finished within a few seconds (a deadlock
/// would not; the stuck thread is left behind and dies with the test process).
fn finishes(f: impl FnOnce() + Send + 'static) -> bool {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(if cfg!(miri) { 600 } else { 10 }))
        .is_ok()
}

/// A `fmt::Write` that allocates from `heap` for every piece it is given, as a `String` in the
/// global allocator would.
struct AllocatingWriter<'h, const N: usize> {
    heap: &'h LockedHeap<N>,
    text: String,
    allocated: usize,
}

impl<const N: usize> Write for AllocatingWriter<'_, N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let l = Layout::from_size_align(s.len().max(1), 1).unwrap();
        // SAFETY: non-zero size; the block is freed at once with the same layout.
        unsafe {
            let p = self.heap.alloc(l);
            if !p.is_null() {
                self.allocated += 1;
                self.heap.dealloc(p, l);
            }
        }
        self.text.push_str(s);
        Ok(())
    }
}

#[test]
fn debug_formats_after_releasing_the_lock() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let done = finishes(|| {
        let mut w = AllocatingWriter {
            heap: &HEAP,
            text: String::new(),
            allocated: 0,
        };
        write!(w, "{HEAP:?}").unwrap();
        assert!(w.text.starts_with("LockedHeap"), "{}", w.text);
        assert!(w.text.contains("live_blocks: 0"), "{}", w.text);
        assert!(w.allocated > 0, "the formatter's allocations succeeded");
    });
    assert!(
        done,
        "formatting the heap into a writer that allocates from it deadlocked"
    );
    HEAP.check().unwrap();
}

#[test]
fn allocating_inside_with_returns_null_at_once() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let done = finishes(|| {
        let inner = HEAP
            .with(|heap| {
                let before = heap.stats();
                // SAFETY: non-zero size; a null result needs no free.
                let p = unsafe { HEAP.alloc(Layout::new::<[u64; 4]>()) };
                // SAFETY: as above.
                let z = unsafe { HEAP.alloc_zeroed(Layout::new::<[u64; 4]>()) };
                assert_eq!(heap.stats(), before);
                (p.is_null(), z.is_null())
            })
            .unwrap();
        assert_eq!(inner, (true, true));
    });
    assert!(done, "allocating inside `with` deadlocked");
    // SAFETY: non-zero size; freed with the same layout.
    unsafe {
        let p = HEAP.alloc(Layout::new::<[u64; 4]>());
        assert!(!p.is_null(), "outside `with` the heap works");
        HEAP.dealloc(p, Layout::new::<[u64; 4]>());
    }
    assert_eq!(HEAP.stats().unwrap().live_blocks, 0);
}

/// A block pointer handed to another thread.
struct SendPtr(*mut u8);

// SAFETY: the pointer is a heap block's address; the receiving thread is the only user meanwhile.
unsafe impl Send for SendPtr {}

impl SendPtr {
    fn get(self) -> *mut u8 {
        self.0
    }
}

#[test]
fn realloc_and_dealloc_inside_with_leave_the_heap_alone() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let l = Layout::from_size_align(32, 8).unwrap();
    // SAFETY: non-zero size.
    let p = unsafe { HEAP.alloc(l) };
    assert!(!p.is_null());
    // SAFETY: `p` is a live 32-byte block.
    unsafe { p.write_bytes(9, 32) };
    let sent = SendPtr(p);
    let done = finishes(move || {
        let p = sent.get();
        HEAP.with(|heap| {
            let before = (heap.to_string(), heap.stats());
            // SAFETY: `p` is live with `l`; 500 > 0.
            assert!(unsafe { HEAP.realloc(p, l, 500) }.is_null());
            // SAFETY: as above. The free is skipped: the heap is being read by this closure.
            unsafe { HEAP.dealloc(p, l) };
            assert_eq!((heap.to_string(), heap.stats()), before);
        })
        .unwrap();
    });
    assert!(done, "realloc or dealloc inside `with` deadlocked");
    let stats = HEAP.stats().unwrap();
    assert_eq!(stats.live_blocks, 1, "the skipped free leaked the block");
    // SAFETY: the block is still live (the free inside `with` was skipped).
    let bytes = unsafe { core::slice::from_raw_parts(p, 32) };
    assert!(bytes.iter().all(|&b| b == 9));
    // SAFETY: live with `l`.
    unsafe { HEAP.dealloc(p, l) };
    assert_eq!(HEAP.stats().unwrap().live_blocks, 0);
    HEAP.check().unwrap();
}

#[test]
fn stats_check_with_and_debug_inside_with_report_in_use() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let done = finishes(|| {
        HEAP.with(|_| {
            assert_eq!(HEAP.stats(), Err(HeapError::InUse));
            assert_eq!(HEAP.check(), Err(HeapError::InUse));
            assert_eq!(HEAP.with(|_| ()), Err(HeapError::InUse));
            // Formatting into a `String` of the (system) global allocator is fine here.
            let text = format!("{HEAP:?}");
            assert!(text.contains("in use by this thread"), "{text}");
        })
        .unwrap();
    });
    assert!(done, "calls inside `with` deadlocked");
    assert!(HeapError::InUse.to_string().contains("nothing was changed"));
}

#[test]
fn another_thread_holding_the_lock_makes_allocations_wait_not_fail() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    let (entered, wait) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            HEAP.with(|_| {
                entered.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(miri_or(50, 5) as u64));
            })
            .unwrap();
        });
        s.spawn(move || {
            wait.recv().unwrap();
            let l = Layout::new::<[u8; 100]>();
            // SAFETY: non-zero size; freed with the same layout.
            unsafe {
                let p = HEAP.alloc(l);
                assert!(!p.is_null(), "waited for the other thread, then allocated");
                HEAP.dealloc(p, l);
            }
            assert!(HEAP.stats().is_ok());
        });
    });
    HEAP.check().unwrap();
}

#[test]
fn huge_sizes_alignments_and_bad_pointers_are_null() {
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    for l in [
        Layout::from_size_align(isize::MAX as usize, 1).unwrap(),
        Layout::from_size_align(isize::MAX as usize - 4095, 4096).unwrap(),
        Layout::from_size_align(8, 1 << 30).unwrap(),
        Layout::from_size_align(1 << 17, 8).unwrap(),
    ] {
        // SAFETY: non-zero sizes; each call fails and returns null.
        unsafe {
            assert!(HEAP.alloc(l).is_null(), "{l:?}");
            assert!(HEAP.alloc_zeroed(l).is_null(), "{l:?}");
        }
    }
    let l = Layout::from_size_align(24, 8).unwrap();
    // SAFETY: non-zero size.
    let p = unsafe { HEAP.alloc(l) };
    assert!(!p.is_null());
    let before = HEAP.with(|h| (h.to_string(), h.stats())).unwrap();
    for new_size in [
        usize::MAX,
        isize::MAX as usize,
        isize::MAX as usize - 100,
        1 << 17,
    ] {
        // SAFETY: `p` is live with `l`; the sizes are non-zero. Each fails, keeping `p`.
        let q = unsafe { HEAP.realloc(p, l, new_size) };
        assert!(q.is_null(), "{new_size}");
    }
    let other = Box::new([0u64; 8]);
    let foreign = other.as_ptr().cast_mut().cast::<u8>();
    for bad in [
        p.wrapping_add(1),
        p.wrapping_sub(8),
        p.wrapping_sub(16),
        foreign,
    ] {
        // Not pointers this heap handed out: `realloc`'s contract is broken on purpose, and the
        // heap answers null without touching anything.
        // SAFETY: see above; nothing is read or written through `bad`.
        assert!(unsafe { HEAP.realloc(bad, l, 100) }.is_null());
    }
    assert_eq!(HEAP.with(|h| (h.to_string(), h.stats())).unwrap(), before);
    // SAFETY: still live with `l`.
    unsafe { HEAP.dealloc(p, l) };
    HEAP.check().unwrap();
}

#[test]
fn a_locked_heap_moved_while_empty_keeps_working() {
    let heap = LockedHeap::<8192>::new();
    let l = Layout::from_size_align(100, 64).unwrap();
    // SAFETY: non-zero size; freed with the same layout before the move.
    unsafe {
        let p = heap.alloc(l);
        assert_eq!(p.addr() % 64, 0);
        heap.dealloc(p, l);
    }
    let moved = Box::new(heap);
    // SAFETY: non-zero size; freed with the same layout.
    unsafe {
        let p = moved.alloc(l);
        assert!(!p.is_null());
        let at = core::ptr::from_ref(&*moved).addr();
        assert!((at..at + size_of::<LockedHeap<8192>>()).contains(&p.addr()));
        p.write_bytes(1, 100);
        moved.dealloc(p, l);
    }
    moved.check().unwrap();
    assert_eq!(moved.stats().unwrap().live_blocks, 0);
}

/// Allocates from `HEAP` in its destructor and records whether it got memory.
struct AllocatesOnDrop<'a, const N: usize> {
    heap: &'a LockedHeap<N>,
    got_memory: &'a std::sync::atomic::AtomicBool,
}

impl<const N: usize> Drop for AllocatesOnDrop<'_, N> {
    fn drop(&mut self) {
        let l = Layout::new::<[u64; 2]>();
        // SAFETY: non-zero size; freed with the same layout when not null.
        let p = unsafe { self.heap.alloc(l) };
        if !p.is_null() {
            // SAFETY: just allocated with `l`.
            unsafe { self.heap.dealloc(p, l) };
        }
        self.got_memory
            .store(!p.is_null(), std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn a_destructor_allocating_inside_with_gets_null_and_outside_gets_memory() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static HEAP: LockedHeap<{ 1 << 16 }> = LockedHeap::new();
    static GOT: AtomicBool = AtomicBool::new(true);
    let done = finishes(|| {
        let value = AllocatesOnDrop {
            heap: &HEAP,
            got_memory: &GOT,
        };
        HEAP.with(|_| drop(value)).unwrap();
    });
    assert!(done, "a destructor allocating inside `with` deadlocked");
    assert!(!GOT.load(Ordering::Relaxed), "re-entry got null");
    drop(AllocatesOnDrop {
        heap: &HEAP,
        got_memory: &GOT,
    });
    assert!(GOT.load(Ordering::Relaxed), "outside `with` it got memory");
    assert_eq!(HEAP.stats().unwrap().live_blocks, 0);
}
