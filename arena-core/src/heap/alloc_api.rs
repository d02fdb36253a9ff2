//! The heap behind the standard allocator interfaces: [`HeapCell`] for `allocator_api2`
//! collections on one thread, [`LockedHeap`] as a `GlobalAlloc` behind a lock.

#[cfg(feature = "allocator-api2")]
pub use cell::HeapCell;
#[cfg(feature = "std")]
pub use locked::LockedHeap;

#[cfg(feature = "allocator-api2")]
mod cell {
    use core::alloc::Layout;
    use core::cell::{Cell, RefCell};
    use core::ptr::NonNull;

    use allocator_api2::alloc::{AllocError, Allocator};

    use crate::heap::{FreeListHeap, HeapError, HeapStats};

    /// A [`FreeListHeap`] with interior mutability, so that `&HeapCell` implements
    /// [`allocator_api2::alloc::Allocator`] and collections can live in the heap.
    ///
    /// Single-threaded (`!Sync`): the heap sits in a `RefCell`. Zero-size allocations get a
    /// dangling, aligned pointer and never touch the heap.
    ///
    /// ```
    /// use allocator_api2::vec::Vec;
    /// use arena_core::heap::{FreeListHeap, HeapCell};
    ///
    /// let heap = HeapCell::new(FreeListHeap::with_capacity(64 * 1024));
    /// let mut names: Vec<&str, _> = Vec::new_in(&heap);
    /// names.extend(["castle", "forest", "swamp"]);
    /// assert_eq!(names.len(), 3);
    /// assert_eq!(heap.stats().live_blocks, 1);
    /// drop(names);
    /// assert_eq!(heap.stats().live_blocks, 0);
    /// ```
    ///
    /// # Re-entry
    ///
    /// While [`with`](Self::with)'s closure runs, the heap is borrowed. Allocating, growing or
    /// shrinking through the cell from inside it (directly, or from a destructor that runs
    /// there) returns [`AllocError`] and changes nothing; freeing is deferred: the block stays
    /// live until the borrow ends and the next operation on the cell (or
    /// [`into_inner`](Self::into_inner)) frees it. Nothing panics and the heap is never
    /// borrowed mutably twice.
    pub struct HeapCell<'buf> {
        heap: RefCell<FreeListHeap<'buf>>,
        /// Blocks freed while the heap was borrowed, waiting to be freed: a list threaded
        /// through the first word of each block's payload (at least 16 bytes, and no longer the
        /// caller's once it is deallocated).
        deferred: Cell<Option<NonNull<u8>>>,
    }

    impl<'buf> HeapCell<'buf> {
        /// Wraps `heap`.
        pub fn new(heap: FreeListHeap<'buf>) -> Self {
            HeapCell {
                heap: RefCell::new(heap),
                deferred: Cell::new(None),
            }
        }

        /// The heap's [`stats`](FreeListHeap::stats). Frees deferred while the heap was
        /// borrowed are done first when possible.
        pub fn stats(&self) -> HeapStats {
            self.settle();
            self.shared(FreeListHeap::stats)
        }

        /// The heap's [`check`](FreeListHeap::check).
        pub fn check(&self) -> Result<(), HeapError> {
            self.settle();
            self.shared(FreeListHeap::check)
        }

        /// Runs `f` with shared access to the heap (for its layout line, memory map, blocks).
        ///
        /// `f` may call `with`, [`stats`](Self::stats) and [`check`](Self::check) again; an
        /// allocation through the cell inside `f` fails with [`AllocError`] and a free is
        /// deferred (see [Re-entry](Self#re-entry)). If `f` panics, the borrow ends as the
        /// panic unwinds and the heap is as `f` found it.
        pub fn with<R>(&self, f: impl FnOnce(&FreeListHeap<'buf>) -> R) -> R {
            self.settle();
            self.shared(f)
        }

        /// The heap back, with every deferred free done. Possible only once nothing borrows
        /// the cell, so no collection still lives in it.
        pub fn into_inner(self) -> FreeListHeap<'buf> {
            self.settle();
            self.heap.into_inner()
        }

        /// `f` on a shared borrow. Only the allocator methods borrow mutably, and they never
        /// run code of the caller's (see the `Allocator` impl), so no mutable borrow is held
        /// whenever user code can call this; the `expect` cannot fire.
        fn shared<R>(&self, f: impl FnOnce(&FreeListHeap<'buf>) -> R) -> R {
            f(&self
                .heap
                .try_borrow()
                .expect("HeapCell: the heap is borrowed mutably only inside its own methods"))
        }

        /// The heap, mutably, with the deferred frees done; `None` while `with` (or anything
        /// else) borrows it.
        #[inline]
        fn heap_mut(&self) -> Option<core::cell::RefMut<'_, FreeListHeap<'buf>>> {
            let mut heap = self.heap.try_borrow_mut().ok()?;
            if self.deferred.get().is_some() {
                self.free_deferred(&mut heap);
            }
            Some(heap)
        }

        /// Does the deferred frees if the heap can be borrowed mutably now.
        fn settle(&self) {
            if self.deferred.get().is_some() {
                drop(self.heap_mut());
            }
        }

        #[cold]
        fn free_deferred(&self, heap: &mut FreeListHeap<'buf>) {
            let mut next = self.deferred.take();
            while let Some(ptr) = next {
                // `defer` only queues live blocks and a block is queued once (deallocating it
                // twice breaks `deallocate`'s contract); stop rather than read a link from a
                // block that is not live.
                if !heap.is_live(ptr) {
                    debug_assert!(false, "HeapCell: deferred free of a block that is not live");
                    return;
                }
                // SAFETY: `ptr` is a live block of `heap` (checked above) whose payload holds
                // at least 16 bytes; `defer` wrote the link into its first word.
                next = unsafe { ptr.cast::<Option<NonNull<u8>>>().read_unaligned() };
                let freed = heap.free(ptr);
                debug_assert!(freed.is_ok(), "deferred free: {freed:?}");
            }
        }

        /// Queues `ptr` (a live block the caller gave up) to be freed once the borrow of the
        /// heap ends. `heap` is that shared borrow.
        fn defer(&self, heap: &FreeListHeap<'buf>, ptr: NonNull<u8>) {
            if !heap.is_live(ptr) {
                debug_assert!(false, "deallocate: {:?}", heap.not_an_allocation(ptr));
                return;
            }
            // SAFETY: `ptr` is a live block of this heap (checked above), so its payload is
            // at least 16 bytes of the heap's region, writable through `ptr` (which carries
            // the region's provenance); the caller gave the block up, and the heap reads no
            // live payload, so nothing else reads or writes this word until `free_deferred`.
            unsafe {
                ptr.cast::<Option<NonNull<u8>>>()
                    .write_unaligned(self.deferred.get())
            };
            self.deferred.set(Some(ptr));
        }

        fn realloc(&self, ptr: NonNull<u8>, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
            let mut heap = self.heap_mut().ok_or(AllocError)?;
            let new = heap.realloc(ptr, layout).map_err(|_| AllocError)?;
            Ok(NonNull::slice_from_raw_parts(new, layout.size()))
        }
    }

    impl core::fmt::Debug for HeapCell<'_> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            // Copy the numbers out first: the formatter may allocate, perhaps from this cell.
            let summary = self
                .heap
                .try_borrow()
                .map(|heap| (heap.fit(), heap.stats()));
            let mut t = f.debug_struct("HeapCell");
            match summary {
                Ok((fit, stats)) => t.field("fit", &fit).field("stats", &stats),
                Err(_) => t.field("heap", &"<borrowed>"),
            }
            .field("deferred_frees", &self.deferred.get().is_some())
            .finish()
        }
    }

    fn dangling(layout: Layout) -> NonNull<[u8]> {
        let ptr = NonNull::new(core::ptr::without_provenance_mut::<u8>(layout.align()))
            .expect("alignments are non-zero");
        NonNull::slice_from_raw_parts(ptr, 0)
    }

    // SAFETY: `Allocator` requires that blocks stay valid until deallocated or the allocator
    // (every copy of it) is gone, that copies are interchangeable, and that the methods are
    // sound to call in any state. Here:
    // - A block is a `FreeListHeap` payload: at least `layout.size()` bytes, aligned, inside the
    //   heap's region, which the heap owns until the `HeapCell` is dropped or `into_inner`
    //   takes it, and neither can happen while any `&HeapCell` (this allocator) exists. The heap
    //   never reads or writes a live payload.
    // - Copies of `&HeapCell` are the same cell, so any copy may free or grow any block.
    // - The heap is mutated only through `try_borrow_mut`, which fails instead of aliasing a
    //   shared borrow. Shared borrows are held while user code runs (`with`'s closure, and
    //   whatever it calls or drops); a re-entrant `allocate`/`grow`/`shrink` then returns
    //   `AllocError` having changed nothing, and `deallocate` defers the free (writing only
    //   into the block the caller gave up). The mutable borrow itself never overlaps user code:
    //   heap methods take no closures, call no traits of the caller's and do not allocate.
    unsafe impl Allocator for &HeapCell<'_> {
        #[inline]
        fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
            if layout.size() == 0 {
                return Ok(dangling(layout));
            }
            let ptr = self
                .heap_mut()
                .ok_or(AllocError)?
                .alloc(layout)
                .map_err(|_| AllocError)?;
            Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
        }

        #[inline]
        unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
            if layout.size() == 0 {
                return;
            }
            if let Some(mut heap) = self.heap_mut() {
                let freed = heap.free(ptr);
                debug_assert!(freed.is_ok(), "deallocate: {freed:?}");
            } else if let Ok(heap) = self.heap.try_borrow() {
                self.defer(&heap, ptr);
            }
            // Otherwise the heap is borrowed mutably, which happens only inside this cell's own
            // methods, never while code that could deallocate runs; the block would leak.
        }

        unsafe fn grow(
            &self,
            ptr: NonNull<u8>,
            old_layout: Layout,
            new_layout: Layout,
        ) -> Result<NonNull<[u8]>, AllocError> {
            if old_layout.size() == 0 {
                return self.allocate(new_layout);
            }
            self.realloc(ptr, new_layout)
        }

        unsafe fn shrink(
            &self,
            ptr: NonNull<u8>,
            old_layout: Layout,
            new_layout: Layout,
        ) -> Result<NonNull<[u8]>, AllocError> {
            if new_layout.size() == 0 {
                // SAFETY: the caller guarantees `ptr` is a live block of this allocator that fits
                // `old_layout`.
                unsafe { self.deallocate(ptr, old_layout) };
                return Ok(dangling(new_layout));
            }
            self.realloc(ptr, new_layout)
        }
    }
}

#[cfg(feature = "std")]
mod locked {
    use core::alloc::{GlobalAlloc, Layout};
    use core::ptr::{self, NonNull};
    use std::sync::{Mutex, MutexGuard, PoisonError};

    use crate::heap::FreeListHeap;

    /// A [`FreeListHeap`] behind a `std::sync::Mutex`, implementing [`GlobalAlloc`], for programs
    /// that want the heap as their `#[global_allocator]` or shared between threads.
    ///
    /// Start it [`empty`](LockedHeap::empty) in a `static` and [`init`](LockedHeap::init) it with a
    /// heap over a `'static` buffer before the first allocation; until then every allocation
    /// fails (returns null). A heap, once installed, cannot be taken out or replaced, since
    /// blocks handed out must stay valid.
    ///
    /// ```
    /// use arena_core::heap::{FreeListHeap, LockedHeap};
    /// use core::alloc::{GlobalAlloc, Layout};
    ///
    /// static HEAP: LockedHeap = LockedHeap::empty();
    /// HEAP.init(FreeListHeap::with_capacity(1 << 16)).unwrap();
    /// let layout = Layout::new::<[u64; 4]>();
    /// // SAFETY: the layout has a non-zero size; the pointer is freed with the same layout.
    /// unsafe {
    ///     let p = HEAP.alloc(layout);
    ///     assert!(!p.is_null());
    ///     HEAP.dealloc(p, layout);
    /// }
    /// assert_eq!(HEAP.with(|heap| heap.stats().live_blocks), Some(0));
    /// ```
    pub struct LockedHeap {
        heap: Mutex<Option<FreeListHeap<'static>>>,
    }

    impl LockedHeap {
        /// A lock with no heap yet: allocations fail until [`init`](Self::init).
        pub const fn empty() -> Self {
            LockedHeap {
                heap: Mutex::new(None),
            }
        }

        /// A lock around `heap`.
        pub fn new(heap: FreeListHeap<'static>) -> Self {
            LockedHeap {
                heap: Mutex::new(Some(heap)),
            }
        }

        /// Installs `heap`; gives it back if one is installed already.
        // The error hands the (large) heap back by value on purpose: a one-time call, and the
        // caller keeps its memory instead of losing it in an error type.
        #[allow(clippy::result_large_err)]
        pub fn init(&self, heap: FreeListHeap<'static>) -> Result<(), FreeListHeap<'static>> {
            let mut guard = self.lock();
            if guard.is_some() {
                return Err(heap);
            }
            *guard = Some(heap);
            Ok(())
        }

        /// Runs `f` with shared access to the heap (stats, check, layout line), if installed.
        pub fn with<R>(&self, f: impl FnOnce(&FreeListHeap<'static>) -> R) -> Option<R> {
            self.lock().as_ref().map(f)
        }

        fn lock(&self) -> MutexGuard<'_, Option<FreeListHeap<'static>>> {
            // A panic inside a heap operation (an internal bounds assertion) leaves the heap as
            // it was before the failing write, so a poisoned lock is still usable.
            self.heap.lock().unwrap_or_else(PoisonError::into_inner)
        }
    }

    impl core::fmt::Debug for LockedHeap {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_tuple("LockedHeap").field(&*self.lock()).finish()
        }
    }

    // SAFETY: blocks come from the installed heap, which is never removed or replaced, so they
    // stay valid until freed; the mutex serialises every heap access; errors become null.
    unsafe impl GlobalAlloc for LockedHeap {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            match self.lock().as_mut().map(|heap| heap.alloc(layout)) {
                Some(Ok(p)) => p.as_ptr(),
                _ => ptr::null_mut(),
            }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
            if let (Some(heap), Some(ptr)) = (self.lock().as_mut(), NonNull::new(ptr)) {
                let freed = heap.free(ptr);
                debug_assert!(freed.is_ok(), "dealloc: {freed:?}");
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
                return ptr::null_mut();
            };
            let mut guard = self.lock();
            let (Some(heap), Some(ptr)) = (guard.as_mut(), NonNull::new(ptr)) else {
                return ptr::null_mut();
            };
            heap.realloc(ptr, new_layout)
                .map_or(ptr::null_mut(), NonNull::as_ptr)
        }
    }
}
