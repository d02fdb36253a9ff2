//! A heap cell whose heap carries a `Panic` budget: the panic's hook is user code (process-wide,
//! it runs before the unwinding starts), and it may use the cell like a report sink does: read
//! it, free a block into it. It must find the heap released, as a `Warn` budget's sink does, not
//! borrowed mutably (a free then leaks silently; `stats`, `with` and `check` panic inside the
//! hook, which aborts).

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use allocator_api2::boxed::Box as HeapBox;
use arena_kit_core::Budget;
use arena_kit_core::heap::{FreeListHeap, HeapCell};
use arena_kit_core::tags::Budgeted;

type Cellref = &'static HeapCell<'static>;

thread_local! {
    /// The cell the hook looks at on this thread (none: the hook only passes the panic on).
    static HOOK_CELL: Cell<Option<Cellref>> = const { Cell::new(None) };
    /// A block of the cell the hook frees.
    static HOOK_BLOCK: RefCell<Option<HeapBox<[u8; 32], Cellref>>> = const { RefCell::new(None) };
    /// The cell's `Debug` text as the hook saw it.
    static HOOK_SAW: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once for the binary) a hook that, on a thread with a cell set, records the cell's
/// `Debug` text and frees the block it was given; other panics go to the hook before it.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let Some(cell) = HOOK_CELL.with(Cell::get) else {
                return prev(info);
            };
            // `Debug` does not panic on a borrowed heap: it says so.
            HOOK_SAW.with(|s| *s.borrow_mut() = Some(format!("{cell:?}")));
            if let Some(block) = HOOK_BLOCK.with(|b| b.borrow_mut().take()) {
                drop(block);
            }
        }));
    });
}

/// An allocation over a `Panic` budget panics; the hook sees the heap released and its free
/// goes through: no block stays live that nobody owns.
#[test]
fn a_panic_budgets_hook_finds_the_heap_cell_released_and_frees_into_it() {
    install_hook();
    let mut heap = FreeListHeap::with_capacity(8192);
    heap.set_budget(Some(Budget::panic(256).into()));
    let raw = Box::into_raw(Box::new(HeapCell::new(heap)));
    {
        // SAFETY: `raw` is a live box, freed below once nothing in it or naming it is left.
        let cell: Cellref = unsafe { &*raw };
        HOOK_BLOCK.with(|b| *b.borrow_mut() = Some(HeapBox::new_in([7u8; 32], cell)));
        assert_eq!(cell.stats().live_blocks, 1);
        HOOK_CELL.with(|c| c.set(Some(cell)));
        let over = catch_unwind(AssertUnwindSafe(|| HeapBox::new_in([0u8; 1024], cell)));
        HOOK_CELL.with(|c| c.set(None));
        assert!(over.is_err(), "a Panic budget panics");
        let saw = HOOK_SAW.with(|s| s.borrow_mut().take()).unwrap();
        let live = cell.stats().live_blocks;
        // Whatever the outcome, nothing of the hook's is left for the next test.
        HOOK_BLOCK.with(|b| b.borrow_mut().take());
        assert!(
            !saw.contains("<borrowed>") && live == 0,
            "the hook saw {saw}; live blocks after it freed its one: {live}"
        );
        cell.check().unwrap();
    }
    // SAFETY: from `Box::into_raw`; nothing refers to the cell any more.
    drop(unsafe { Box::from_raw(raw) });
}
