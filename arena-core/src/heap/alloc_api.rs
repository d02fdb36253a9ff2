//! The heap behind the standard allocator interfaces: [`HeapCell`] for `allocator_api2`
//! collections on one thread, [`LockedHeap`] as a `GlobalAlloc` behind a lock.

#[cfg(feature = "allocator-api2")]
pub use cell::HeapCell;
#[cfg(feature = "std")]
pub use locked::LockedHeap;

#[cfg(feature = "allocator-api2")]
mod cell {
    use core::alloc::Layout;
    use core::cell::RefCell;
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
    /// # Variance
    ///
    /// Invariant in `'buf`, because the heap sits in a `RefCell`. A heap cell is used as an
    /// allocator through shared references, so its buffer lifetime is fixed where it is made.
    pub struct HeapCell<'buf> {
        heap: RefCell<FreeListHeap<'buf>>,
    }

    impl<'buf> HeapCell<'buf> {
        /// Wraps `heap`.
        pub fn new(heap: FreeListHeap<'buf>) -> Self {
            HeapCell {
                heap: RefCell::new(heap),
            }
        }

        /// The heap's [`stats`](FreeListHeap::stats).
        pub fn stats(&self) -> HeapStats {
            self.heap.borrow().stats()
        }

        /// The heap's [`check`](FreeListHeap::check).
        pub fn check(&self) -> Result<(), HeapError> {
            self.heap.borrow().check()
        }

        /// Runs `f` with shared access to the heap (for its layout line, memory map, blocks).
        pub fn with<R>(&self, f: impl FnOnce(&FreeListHeap<'buf>) -> R) -> R {
            f(&self.heap.borrow())
        }

        /// The heap back. Possible only once nothing borrows the cell, so no collection still
        /// lives in it.
        pub fn into_inner(self) -> FreeListHeap<'buf> {
            self.heap.into_inner()
        }
    }

    impl core::fmt::Debug for HeapCell<'_> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_tuple("HeapCell").field(&self.heap).finish()
        }
    }

    impl HeapCell<'_> {
        fn realloc(&self, ptr: NonNull<u8>, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
            let mut heap = self.heap.borrow_mut();
            let new = heap.realloc(ptr, layout).map_err(|_| AllocError)?;
            Ok(NonNull::slice_from_raw_parts(new, layout.size()))
        }
    }

    fn dangling(layout: Layout) -> NonNull<[u8]> {
        let ptr = NonNull::new(core::ptr::without_provenance_mut::<u8>(layout.align()))
            .expect("alignments are non-zero");
        NonNull::slice_from_raw_parts(ptr, 0)
    }

    // SAFETY: blocks stay valid until deallocated or until the `HeapCell` is dropped, which the
    // borrow `&'a HeapCell` outlives every collection using it; copies of `&HeapCell` are the same
    // allocator; `RefCell` makes the heap's `&mut` access exclusive, and no heap method calls back
    // into user code, so the borrow never conflicts.
    unsafe impl Allocator for &HeapCell<'_> {
        fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
            if layout.size() == 0 {
                return Ok(dangling(layout));
            }
            let ptr = self
                .heap
                .borrow_mut()
                .alloc(layout)
                .map_err(|_| AllocError)?;
            Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
        }

        unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
            if layout.size() != 0 {
                let freed = self.heap.borrow_mut().free(ptr);
                debug_assert!(freed.is_ok(), "deallocate: {freed:?}");
            }
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
    ///
    /// # Variance
    ///
    /// No parameters (the heap it holds is over a `'static` buffer).
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
