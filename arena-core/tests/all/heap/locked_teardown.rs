//! `LockedHeap` used from thread-local destructors while threads end: the lock still tells the
//! ending thread from the others (its token is a thread-local too), so allocating and freeing
//! there works, re-entry from a `with` closure there gets null and `HeapError::InUse` at once,
//! blocks cross between ending threads and the main one, and the heap checks clean afterwards.
use arena_kit_core::heap::{HeapError, LockedHeap};
use core::alloc::{GlobalAlloc, Layout};
use std::cell::RefCell;
use std::sync::mpsc;

use crate::support::miri_or;

static HEAP: LockedHeap<{ 1 << 12 }> = LockedHeap::new();

/// What a thread's last destructor saw, sent back to the test.
#[derive(Debug, PartialEq)]
struct Seen {
    /// It got memory, wrote it and read it back.
    allocated: bool,
    /// Inside `with`: allocation got null, `stats` got `InUse`, `with` got `InUse`.
    reentry: (bool, bool, bool),
    /// It freed the block its thread made while it ran.
    freed_the_threads_block: bool,
}

/// A block the destructor hands to the main thread to free.
struct Handoff(*mut u8);

// SAFETY: the block is `HEAP`'s, shared by every thread; only the receiver touches it.
unsafe impl Send for Handoff {}

struct OnExit {
    seen: mpsc::Sender<Seen>,
    handoff: mpsc::Sender<Handoff>,
    /// A block this thread made while it ran, freed by the destructor.
    block: *mut u8,
}

const BLOCK: Layout = Layout::new::<[u64; 4]>();

impl Drop for OnExit {
    fn drop(&mut self) {
        // SAFETY: non-zero size; each block is written within its size and freed once with the
        // layout it was made with (here, or by the main thread after the handoff).
        let seen = unsafe {
            let p = HEAP.alloc(BLOCK);
            let allocated = !p.is_null() && {
                p.write_bytes(0x5A, BLOCK.size());
                p.add(BLOCK.size() - 1).read() == 0x5A
            };
            let reentry = HEAP
                .with(|_| {
                    let nested = HEAP.alloc(BLOCK);
                    (
                        nested.is_null(),
                        matches!(HEAP.stats(), Err(HeapError::InUse)),
                        matches!(HEAP.with(|_| ()), Err(HeapError::InUse)),
                    )
                })
                .unwrap();
            HEAP.dealloc(self.block, BLOCK);
            if !p.is_null() {
                let _ = self.handoff.send(Handoff(p));
            }
            Seen {
                allocated,
                reentry,
                freed_the_threads_block: true,
            }
        };
        let _ = self.seen.send(seen);
    }
}

thread_local! {
    static ON_EXIT: RefCell<Option<OnExit>> = const { RefCell::new(None) };
}

#[test]
fn thread_local_destructors_allocate_free_and_reenter_the_locked_heap_while_threads_end() {
    let before = HEAP.stats().unwrap().live_blocks;
    let (seen_tx, seen_rx) = mpsc::channel();
    let (handoff_tx, handoff_rx) = mpsc::channel();
    let threads = miri_or(6, 2);
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let seen = seen_tx.clone();
            let handoff = handoff_tx.clone();
            std::thread::spawn(move || {
                // SAFETY: non-zero size; freed by this thread's destructor with the same layout.
                let block = unsafe { HEAP.alloc(BLOCK) };
                assert!(!block.is_null());
                ON_EXIT.with(|slot| {
                    *slot.borrow_mut() = Some(OnExit {
                        seen,
                        handoff,
                        block,
                    })
                });
                // Keep the other threads' operations and teardowns interleaved with this one's.
                for _ in 0..miri_or(50, 2) {
                    // SAFETY: as above, freed at once.
                    unsafe {
                        let p = HEAP.alloc(BLOCK);
                        assert!(!p.is_null());
                        HEAP.dealloc(p, BLOCK);
                    }
                }
            })
        })
        .collect();
    drop((seen_tx, handoff_tx));
    for w in workers {
        w.join().unwrap();
    }
    let seen: Vec<Seen> = seen_rx.iter().collect();
    assert_eq!(seen.len(), threads, "every destructor ran to its end");
    for s in &seen {
        assert_eq!(
            *s,
            Seen {
                allocated: true,
                reentry: (true, true, true),
                freed_the_threads_block: true,
            }
        );
    }
    let handed: Vec<Handoff> = handoff_rx.iter().collect();
    assert_eq!(handed.len(), threads);
    assert_eq!(HEAP.stats().unwrap().live_blocks, before + threads);
    for Handoff(p) in handed {
        // SAFETY: a live block of `HEAP` made with `BLOCK` by an ended thread's destructor and
        // handed here to be freed once.
        unsafe {
            assert_eq!(p.read(), 0x5A);
            HEAP.dealloc(p, BLOCK);
        }
    }
    HEAP.check().unwrap();
    assert_eq!(HEAP.stats().unwrap().live_blocks, before);
}
