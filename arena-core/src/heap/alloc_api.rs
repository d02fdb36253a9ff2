//! The heap behind the standard allocator interfaces: [`HeapCell`] for `allocator_api2`
//! collections on one thread, [`LockedHeap`] as a `GlobalAlloc` behind a lock.

#[cfg(feature = "allocator-api2")]
pub use cell::HeapCell;
pub use locked::{LockedHeap, MIN_LOCKED_HEAP};

#[cfg(feature = "allocator-api2")]
mod cell {
    use core::alloc::Layout;
    use core::cell::RefCell;
    use core::ptr::{self, NonNull};
    use core::sync::atomic::AtomicPtr;
    use core::sync::atomic::Ordering::Relaxed;

    use allocator_api2::alloc::{AllocError, Allocator};

    use crate::heap::{Corruption, FreeListHeap, HeapStats};

    /// A [`FreeListHeap`] with interior mutability, so that `&HeapCell` implements
    /// [`allocator_api2::alloc::Allocator`] and collections can live in the heap.
    ///
    /// Single-threaded (`!Sync`): the heap sits in a `RefCell`. Zero-size allocations get a
    /// dangling, aligned pointer and never touch the heap.
    ///
    /// ```
    /// use allocator_api2::vec::Vec;
    /// use arena_kit::FreeListHeap;
    /// use arena_kit::heap::HeapCell;
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
    ///
    /// A [`Budget::warn`](crate::tags::Budget::warn) set on the heap before it was wrapped
    /// warns once the allocation that crossed it is done and the heap is released, so the
    /// report sink or logger that receives the warning may use the cell like any other code
    /// (read its [`stats`](Self::stats), free or allocate through it). A sink that panics
    /// leaves the cell as it was: the new block is freed, a block grown in place shrinks back,
    /// and a block that moves keeps its old place until the new one holds its contents. A
    /// [`Budget::panic`](crate::tags::Budget::panic)'s panic is likewise raised once the heap is
    /// released (the heap unchanged), so a panic hook may use the cell too.
    ///
    /// # Variance
    ///
    /// Invariant in `'buf`, because the heap sits in a `RefCell`. A heap cell is used as an
    /// allocator through shared references, so its buffer lifetime is fixed where it is made.
    pub struct HeapCell<'buf> {
        heap: RefCell<FreeListHeap<'buf>>,
        /// Blocks freed while the heap was borrowed, waiting to be freed: a list threaded
        /// through the first word of each block's payload (at least 16 bytes, and no longer the
        /// caller's once it is deallocated), written through the region's own provenance.
        /// (An atomic only so that it adds nothing to the cell's auto traits: the cell is
        /// `!Sync` through its `RefCell`, so every access is from one thread and `Relaxed`.)
        deferred: AtomicPtr<u8>,
    }

    impl<'buf> HeapCell<'buf> {
        /// Wraps `heap`. With the `profiler` feature, a profiler label the heap had
        /// (`Budgeted::set_profiler_label`) is taken off first (its blocks are reported freed):
        /// the cell runs no user code while it borrows the heap, and a sink is user code. For
        /// the same reason a `Warn` budget's warning is held by the heap and raised by the cell
        /// once the heap is released (see [Re-entry](Self#re-entry)).
        pub fn new(mut heap: FreeListHeap<'buf>) -> Self {
            #[cfg(feature = "profiler")]
            crate::tags::Budgeted::set_profiler_label(&mut heap, None);
            heap.hold_warnings(true);
            HeapCell {
                heap: RefCell::new(heap),
                deferred: AtomicPtr::new(ptr::null_mut()),
            }
        }

        /// The heap's [`stats`](FreeListHeap::stats). Frees deferred while the heap was
        /// borrowed are done first when possible.
        pub fn stats(&self) -> HeapStats {
            self.settle();
            self.shared(FreeListHeap::stats)
        }

        /// The heap's [`check`](FreeListHeap::check).
        ///
        /// # Errors
        ///
        /// The first inconsistency found.
        pub fn check(&self) -> Result<(), Corruption> {
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

        /// The heap back, with every deferred free done, raising its budget's warnings where
        /// they are crossed again. Possible only once nothing borrows the cell, so no collection
        /// still lives in it.
        pub fn into_inner(self) -> FreeListHeap<'buf> {
            self.settle();
            let mut heap = self.heap.into_inner();
            heap.hold_warnings(false);
            heap
        }

        /// `f` on the heap borrowed mutably (`None` while it is borrowed), then, with the
        /// borrow ended, the budget warning `f` crossed, if any: every change to the heap goes
        /// through here, so no user code runs while the heap is borrowed mutably.
        ///
        /// If the warning's sink panics, `undo` gets `f`'s result as the panic unwinds: the
        /// caller never receives it, so whatever `f` did for it must be taken back (a report
        /// sink's contract: a panicking sink leaves the allocator as it was).
        fn change<R>(
            &self,
            f: impl FnOnce(&mut FreeListHeap<'buf>) -> R,
            undo: impl FnOnce(&Self, &R),
        ) -> Option<R> {
            let mut heap = self.heap_mut()?;
            let r = f(&mut heap);
            let warning = heap.take_held_warning();
            let refused = heap.take_held_refusal();
            drop(heap);
            if let Some(e) = refused {
                // A `Panic` budget refused `f` (which changed nothing): its panic, now that the
                // hook it runs finds the heap released.
                panic!("{e}");
            }
            if let Some(warning) = warning {
                let guard = UndoOnUnwind {
                    cell: self,
                    result: &r,
                    undo: Some(undo),
                };
                crate::tags::raise_warning(&warning);
                core::mem::forget(guard);
            }
            Some(r)
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
            if !self.deferred.load(Relaxed).is_null() {
                self.free_deferred(&mut heap);
            }
            Some(heap)
        }

        /// Does the deferred frees if the heap can be borrowed mutably now.
        fn settle(&self) {
            if !self.deferred.load(Relaxed).is_null() {
                drop(self.heap_mut());
            }
        }

        #[cold]
        fn free_deferred(&self, heap: &mut FreeListHeap<'buf>) {
            // Load and store, not `swap`: targets without compare-and-swap have these too.
            let mut next = NonNull::new(self.deferred.load(Relaxed));
            self.deferred.store(ptr::null_mut(), Relaxed);
            while let Some(ptr) = next {
                // `defer` only queues live blocks and a block is queued once (deallocating it
                // twice breaks `deallocate`'s contract); stop rather than read a link from a
                // block that is not live.
                let Some((payload, _)) = heap.live_payload(ptr) else {
                    debug_assert!(false, "HeapCell: deferred free of a block that is not live");
                    return;
                };
                // SAFETY: `payload` is the live block's payload (at least 16 bytes) with the
                // region's provenance; `defer` wrote the link into its first word.
                next = unsafe { payload.cast::<Option<NonNull<u8>>>().read_unaligned() };
                let freed = heap.free(ptr);
                debug_assert!(freed.is_ok(), "deferred free: {freed:?}");
            }
        }

        /// Queues `ptr` (a live block the caller gave up, allocated with `layout`) to be freed
        /// once the borrow of the heap ends. `heap` is that shared borrow. A block of another
        /// size is refused, as `free_sized` refuses it.
        fn defer(&self, heap: &FreeListHeap<'buf>, ptr: NonNull<u8>, layout: Layout) {
            let Some((payload, requested)) = heap.live_payload(ptr) else {
                debug_assert!(false, "deallocate: {:?}", heap.not_an_allocation(ptr));
                return;
            };
            if requested != layout.size() {
                debug_assert!(
                    false,
                    "deallocate: a block of {requested} bytes freed as {}",
                    layout.size()
                );
                return;
            }
            // SAFETY: `payload` is a live block's payload, at least 16 bytes of the heap's
            // region, and carries the region's provenance, which allows writes (the region is
            // valid for writes and reached only through raw pointers, never a reference). The
            // caller gave the block up and the heap reads no live payload (the closure holding
            // the shared borrow can only read tags), so nothing reads or writes this word until
            // `free_deferred`.
            unsafe {
                payload
                    .cast::<Option<NonNull<u8>>>()
                    .write_unaligned(NonNull::new(self.deferred.load(Relaxed)))
            };
            self.deferred.store(ptr.as_ptr(), Relaxed);
        }

        /// Resizes live block `ptr` of `old` (both sizes non-zero): in place when the heap can,
        /// else into a new block, with the contents copied and the old block freed only then.
        /// (The heap's own `try_realloc` frees the old block before the cell could raise a
        /// warning the new one crossed; a sink that panicked then left the caller holding a
        /// freed block.)
        ///
        /// # Safety
        ///
        /// `ptr` is a live block of this cell that fits `old`.
        unsafe fn realloc(
            &self,
            ptr: NonNull<u8>,
            old: Layout,
            new: Layout,
        ) -> Result<NonNull<[u8]>, AllocError> {
            let in_place = self
                .change(
                    |heap| heap.try_realloc_in_place(ptr, old.size(), new),
                    |cell, resized| {
                        if let Ok(Some(_)) = resized {
                            // Back to `old`, in place: a shrink, which crosses no budget.
                            let back = cell.change(
                                |heap| heap.try_realloc_in_place(ptr, new.size(), old),
                                |_, _| {},
                            );
                            debug_assert!(matches!(back, Some(Ok(Some(_))) | None), "{back:?}");
                        }
                    },
                )
                .ok_or(AllocError)?
                .map_err(|_| AllocError)?;
            if in_place.is_some() {
                return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
            }
            // A move. `allocate` takes its block back if a warning's sink panics, so until
            // the copy is done the old block is untouched and still the caller's.
            let moved = Allocator::allocate(&self, new)?;
            // SAFETY: `ptr` is live for `old.size()` bytes (guaranteed by the caller), `moved`
            // for `new.size()`, and they are different blocks.
            unsafe {
                ptr::copy_nonoverlapping(
                    ptr.as_ptr(),
                    moved.cast::<u8>().as_ptr(),
                    old.size().min(new.size()),
                );
            }
            // SAFETY: `ptr` is a live block of this cell that fits `old` (guaranteed by the
            // caller), and the caller gives it up: its contents are in `moved` now.
            unsafe { Allocator::deallocate(&self, ptr, old) };
            Ok(moved)
        }
    }

    /// Runs [`HeapCell::change`]'s `undo` if dropped, that is if the budget warning's sink
    /// panicked (on success the guard is forgotten).
    struct UndoOnUnwind<'c, 'buf, R, U: FnOnce(&HeapCell<'buf>, &R)> {
        cell: &'c HeapCell<'buf>,
        result: &'c R,
        undo: Option<U>,
    }

    impl<'buf, R, U: FnOnce(&HeapCell<'buf>, &R)> Drop for UndoOnUnwind<'_, 'buf, R, U> {
        fn drop(&mut self) {
            if let Some(undo) = self.undo.take() {
                undo(self.cell, self.result);
            }
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
            .field("deferred_frees", &!self.deferred.load(Relaxed).is_null())
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
    //   heap methods take no closures, call no traits of the caller's and do not allocate, and
    //   the one piece of user code a heap runs, a `Warn` budget's warning (the report sink, a
    //   logger), is held by the heap and raised after the borrow ends (`change`).
    unsafe impl Allocator for &HeapCell<'_> {
        #[inline]
        fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
            if layout.size() == 0 {
                return Ok(dangling(layout));
            }
            let ptr = self
                .change(
                    |heap| heap.try_alloc(layout),
                    |cell, made| {
                        if let Ok(ptr) = made {
                            // SAFETY: `ptr` is the block just made for `layout`, which nobody
                            // received.
                            unsafe { Allocator::deallocate(&cell, *ptr, layout) };
                        }
                    },
                )
                .ok_or(AllocError)?
                .map_err(|_| AllocError)?;
            Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
        }

        #[inline]
        unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
            if layout.size() == 0 {
                return;
            }
            // A free crosses no budget: nothing to undo.
            if let Some(freed) = self.change(|heap| heap.free_sized(ptr, layout), |_, _| {}) {
                debug_assert!(freed.is_ok(), "deallocate: {freed:?}");
            } else if let Ok(heap) = self.heap.try_borrow() {
                self.defer(&heap, ptr, layout);
            }
            // Otherwise the heap is borrowed mutably, which happens only inside `change`, never
            // while code that could deallocate runs; the block would leak.
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
            // SAFETY: forwarded from the caller (`ptr` a live block that fits `old_layout`).
            unsafe { self.realloc(ptr, old_layout, new_layout) }
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
            // SAFETY: forwarded from the caller (`ptr` a live block that fits `old_layout`).
            unsafe { self.realloc(ptr, old_layout, new_layout) }
        }
    }
}

mod locked {
    use core::alloc::{GlobalAlloc, Layout};
    use core::cell::UnsafeCell;
    use core::mem::MaybeUninit;
    use core::ptr::{self, NonNull};

    use crate::heap::{BuildError, FreeListHeap, HeapError, HeapStats};

    use lock::{Hold, TryLock};

    /// The smallest `N` a [`LockedHeap`] accepts: room for its bitmap and one block.
    pub const MIN_LOCKED_HEAP: usize = 64;

    /// A [`FreeListHeap`] over `N` bytes it holds inline, behind a lock, implementing
    /// [`GlobalAlloc`]: a `#[global_allocator]`, or a heap shared between threads.
    ///
    /// `new` is a `const fn` and needs no `unsafe`; the heap writes its bitmap and block tags
    /// into the region on first use (the first allocation, or the first call to
    /// [`stats`](Self::stats), [`check`](Self::check) or [`with`](Self::with)), so a `static`
    /// of it costs no start-up work and is ready whenever the first allocation comes: std
    /// allocates before `main`, and that just works (and so does a `#![no_std]` program: see
    /// [Without `std`](Self#without-std)). The region is 4096-aligned, and part of it (1 bit per 16
    /// bytes, rounded to 8 bytes) holds the heap's bitmap of live blocks. Alignments up to
    /// [`MAX_ALIGN`](crate::heap::MAX_ALIGN) (4096) are served; a larger one gets null, like any
    /// request the heap cannot serve, and as the global allocator std then aborts with an
    /// allocation failure (a `Box` of a `#[repr(align(8192))]` type, say).
    ///
    /// `N` is checked at compile time: below [`MIN_LOCKED_HEAP`] (64) bytes the program does
    /// not build (`LockedHeap::<32>::new()` is a compile error naming the limit).
    ///
    /// ```
    /// use arena_kit::heap::LockedHeap;
    ///
    /// #[global_allocator]
    /// static HEAP: LockedHeap<{ 1 << 20 }> = LockedHeap::new();
    ///
    /// fn main() {
    ///     let names: Vec<String> = (0..100).map(|i| format!("entity {i}")).collect();
    ///     assert_eq!(names[42], "entity 42");
    ///     let stats = HEAP.stats().unwrap();
    ///     assert!(stats.live_blocks >= 101, "{stats}");
    ///     drop(names);
    ///     HEAP.check().unwrap();
    ///     println!("{HEAP:?}"); // formatting allocates, and may: Debug copies the numbers first
    /// }
    /// ```
    ///
    /// ```compile_fail,E0080
    /// use arena_kit::heap::LockedHeap;
    ///
    /// static TOO_SMALL: LockedHeap<32> = LockedHeap::new(); // below MIN_LOCKED_HEAP
    /// # fn main() { let _ = TOO_SMALL.stats(); }
    /// ```
    ///
    /// # Locking and re-entry
    ///
    /// Every operation takes the lock with a try-lock: while another thread holds it, the caller
    /// spins briefly and then yields until it is free (the lock is held only for one heap
    /// operation, or for a [`with`](Self::with) closure); when the calling thread holds it
    /// already (code running inside `with`, including destructors and formatting there),
    /// nothing waits: allocations return null, [`stats`](Self::stats), [`check`](Self::check)
    /// and `with` return [`HeapError::InUse`], and a free is skipped (the block leaks rather
    /// than aliasing the heap the closure is reading). A thread is told apart from others by the
    /// address of a thread-local byte, which std guarantees a global allocator may use.
    ///
    /// As the global allocator, that means a `with` closure must not allocate at all (a failed
    /// allocation aborts the program, and so does a panic in the closure: std allocates the
    /// panic's payload while the lock is still held); copy what you need out (`HEAP.with(|h| h.stats())`) and
    /// format afterwards.
    ///
    /// ## Without `std`
    ///
    /// The type needs no feature at all (a `#![no_std]` program with `alloc` makes it its
    /// `#[global_allocator]`), but without `std` there are no thread-locals to tell threads
    /// apart, so the lock knows only *what* holds it:
    ///
    /// - a heap operation (allocate, free, `stats`, `check`, `Debug`'s copy): others spin until
    ///   it ends. It runs no caller code, so it cannot be re-entered, and it is short.
    /// - a `with` closure: everything else is refused at once, on every core (allocations get
    ///   null, [`HeapError::InUse`], and a free is skipped, so that block leaks), because the
    ///   caller may be the closure itself, and spinning on it would hang forever. As the global
    ///   allocator on more than one core, keep `with` for moments when the other cores do not
    ///   allocate or free (a refused allocation aborts the program).
    ///
    /// No lock can save an interrupt handler that allocates from this heap while the code it
    /// interrupted is inside a heap operation: the handler spins on a lock that cannot be
    /// released until it returns. Do not allocate in interrupt handlers, or mask interrupts
    /// around the allocations of the code they interrupt. A heap operation that panics aborts
    /// (the panic in the destructor of an unwinding guard), with or without `std`.
    ///
    /// # Moving
    ///
    /// The blocks live inside the `LockedHeap`. A `static` never moves or drops; a `LockedHeap`
    /// in a local variable or a `Box` may be moved or dropped only while it has no live blocks
    /// (moving it is safe for the heap itself, which keeps offsets, not addresses, and finds its
    /// region again on every call, but pointers handed out before the move point into the old
    /// place, and `dealloc` of one breaks its safety contract).
    /// # Variance
    ///
    /// No lifetime or type parameters (the region is inline; `N` is its size in bytes).
    ///
    #[repr(C)]
    pub struct LockedHeap<const N: usize> {
        memory: Memory<N>,
        lock: TryLock,
        /// `None` until first use. Accessed only while `lock` is held.
        heap: UnsafeCell<Option<FreeListHeap<'static>>>,
    }

    /// The inline region, aligned so that the heap's layout inside it (bitmap, first block)
    /// does not depend on where the `LockedHeap` is placed.
    #[repr(C, align(4096))]
    struct Memory<const N: usize>(UnsafeCell<MaybeUninit<[u8; N]>>);

    // SAFETY: `heap` and `memory` are touched only by the thread holding `lock` (an acquire /
    // release lock, so each holder sees the previous holder's writes), or through payload
    // pointers the heap handed out, which belong to their callers. The `FreeListHeap` in it is
    // `Send`, so a different thread may be the one using it each time.
    unsafe impl<const N: usize> Sync for LockedHeap<N> {}

    impl<const N: usize> LockedHeap<N> {
        const VALID: () = assert!(
            N >= MIN_LOCKED_HEAP,
            "LockedHeap<N> needs N >= MIN_LOCKED_HEAP (64) bytes"
        );

        /// A heap over `N` inline bytes; nothing is written until first use.
        #[must_use]
        pub const fn new() -> Self {
            let () = Self::VALID;
            LockedHeap {
                memory: Memory(UnsafeCell::new(MaybeUninit::uninit())),
                lock: TryLock::new(),
                heap: UnsafeCell::new(None),
            }
        }

        /// A copy of the heap's [`stats`](FreeListHeap::stats).
        ///
        /// # Errors
        ///
        /// [`HeapError::InUse`] when called on a thread already inside this heap's lock.
        pub fn stats(&self) -> Result<HeapStats, HeapError> {
            self.locked(|heap| heap.stats())
        }

        /// The heap's [`check`](FreeListHeap::check).
        ///
        /// # Errors
        ///
        /// [`HeapError::InUse`] on re-entry, or the inconsistency `check` found.
        pub fn check(&self) -> Result<(), HeapError> {
            Ok(self.locked(|heap| heap.check())??)
        }

        /// Runs `f` with shared access to the heap (layout line, memory map, blocks) while holding
        /// the lock: other threads' allocations wait until `f` returns, so keep it short, and do
        /// not wait in it for a thread that allocates from this heap. Allocating from this heap
        /// inside `f` returns null (see [Locking and re-entry](Self#locking-and-re-entry)).
        ///
        /// If `f` panics, the lock is released as the panic unwinds; the heap is as `f` found it.
        ///
        /// # Errors
        ///
        /// [`HeapError::InUse`] when called inside another `with` of this heap on this thread.
        pub fn with<R>(&self, f: impl FnOnce(&FreeListHeap<'_>) -> R) -> Result<R, HeapError> {
            self.locked_as(Hold::With, |heap| f(heap))
        }

        /// `f`, a heap operation that runs no caller code, under the lock.
        #[inline]
        fn locked<R>(
            &self,
            f: impl FnOnce(&mut FreeListHeap<'static>) -> R,
        ) -> Result<R, HeapError> {
            self.locked_as(Hold::Op, f)
        }

        /// `f` on the heap, initialised if this is the first use, under the lock taken as
        /// `hold`.
        #[inline]
        fn locked_as<R>(
            &self,
            hold: Hold,
            f: impl FnOnce(&mut FreeListHeap<'static>) -> R,
        ) -> Result<R, HeapError> {
            let _guard = self.lock.lock(hold).ok_or(HeapError::InUse)?;
            let base =
                NonNull::new(self.memory.0.get().cast::<u8>()).expect("field of a reference");
            // SAFETY: the lock is held, so this is the only access to `heap` until `_guard`
            // drops, after `f` returns or unwinds.
            let slot = unsafe { &mut *self.heap.get() };
            let heap = match slot {
                Some(heap) => {
                    // SAFETY: `base` is this `LockedHeap`'s region, valid for `N` bytes while
                    // `&self` lives, accessed only under the lock or through handed-out
                    // payloads; if the `LockedHeap` moved since, its region's bytes moved with it
                    // and stay 4096-aligned; the heap was built over an inline region, so it
                    // does not own it.
                    unsafe { heap.rebase(base) };
                    heap
                }
                None => slot.insert(Self::first_use(base).map_err(HeapError::Build)?),
            };
            Ok(f(heap))
        }

        #[cold]
        fn first_use(base: NonNull<u8>) -> Result<FreeListHeap<'static>, BuildError> {
            // SAFETY: `base` is the inline region, `N` bytes valid for reads and writes while the
            // `LockedHeap` lives, and untouched so far (no heap existed); from now on the heap
            // is used only under the lock and rebased to the region's current place each time,
            // so the `'static` here never outlives the region in practice.
            unsafe { FreeListHeap::from_raw_parts(base, N) }
        }
    }

    impl<const N: usize> Default for LockedHeap<N> {
        fn default() -> Self {
            Self::new()
        }
    }

    impl<const N: usize> core::fmt::Debug for LockedHeap<N> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            // Copy the numbers out and release the lock before formatting: the formatter may
            // allocate, and this may be the global allocator.
            let summary = self.locked(|heap| (heap.fit(), heap.stats()));
            let mut t = f.debug_struct("LockedHeap");
            t.field("bytes", &N);
            match summary {
                Ok((fit, stats)) => t.field("fit", &fit).field("stats", &stats),
                #[cfg(feature = "std")]
                Err(_) => t.field("heap", &"<in use by this thread>"),
                #[cfg(not(feature = "std"))]
                Err(_) => t.field("heap", &"<in use by a `with` closure>"),
            }
            .finish()
        }
    }

    /// Aborts the process when dropped, which happens only while unwinding: `GlobalAlloc`
    /// methods must not unwind, and a heap method panics only on broken bookkeeping (a write
    /// outside a block hit a tag), or a debug assertion on a bad free.
    struct AbortOnUnwind;

    impl Drop for AbortOnUnwind {
        fn drop(&mut self) {
            #[cfg(feature = "std")]
            std::process::abort();
            // A panic while unwinding aborts (core has no `abort` of its own).
            #[cfg(not(feature = "std"))]
            panic!("LockedHeap: a heap operation panicked inside GlobalAlloc");
        }
    }

    // SAFETY: `GlobalAlloc` requires that a returned block be valid for `layout` until
    // deallocated, that methods not unwind, and that failures be null.
    // - Blocks are `FreeListHeap` payloads (at least `layout.size()` bytes, aligned to
    //   `layout.align()`) inside the inline region, which lives as long as the `LockedHeap`; a
    //   `static` never moves or drops, and the type's docs state that a moved one invalidates
    //   earlier pointers (calling `alloc` is `unsafe`, so that is the caller's to keep).
    // - The heap is reached only through `locked`, so accesses are serialised between threads,
    //   and a same-thread re-entry (from a `with` closure) gets null or a skipped free instead of
    //   a second `&mut` to the heap the closure is reading.
    // - `AbortOnUnwind` turns any panic into an abort; every error becomes null (or, for
    //   `dealloc`, a no-op with a debug assertion).
    unsafe impl<const N: usize> GlobalAlloc for LockedHeap<N> {
        #[inline]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let bomb = AbortOnUnwind;
            let p = match self.locked(|heap| heap.try_alloc(layout)) {
                Ok(Ok(p)) => p.as_ptr(),
                _ => ptr::null_mut(),
            };
            core::mem::forget(bomb);
            p
        }

        #[inline]
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            let bomb = AbortOnUnwind;
            if let Some(ptr) = NonNull::new(ptr) {
                // The lock is released before the assertion can panic.
                let freed = self.locked(|heap| heap.free_sized(ptr, layout));
                debug_assert!(
                    matches!(freed, Ok(Ok(())) | Err(HeapError::InUse)),
                    "LockedHeap::dealloc: {freed:?}"
                );
            }
            core::mem::forget(bomb);
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let bomb = AbortOnUnwind;
            let new = match (
                Layout::from_size_align(new_size, layout.align()),
                NonNull::new(ptr),
            ) {
                (Ok(new_layout), Some(ptr)) => {
                    // A block whose size is not `layout`'s is refused, as `dealloc` refuses it.
                    let resized =
                        self.locked(|heap| heap.try_realloc_sized(ptr, layout.size(), new_layout));
                    match resized {
                        Ok(Ok(p)) => p.as_ptr(),
                        _ => ptr::null_mut(),
                    }
                }
                _ => ptr::null_mut(),
            };
            core::mem::forget(bomb);
            new
        }
    }

    /// The lock behind [`LockedHeap`]: a try-lock on one atomic word that tells re-entry (give
    /// up at once: null or [`HeapError::InUse`]) from contention (wait: the lock is held for one
    /// heap operation, or one `with` closure).
    ///
    /// With `std`, the word is 0 when free and otherwise the holder's thread token: the address
    /// of a thread-local byte, unique among the threads alive at any moment (a token is reused
    /// only by a thread started after its first owner ended, and that owner released the lock
    /// before ending). Seeing one's own token means re-entry; any other holder is waited for,
    /// spinning briefly and then yielding to the scheduler.
    ///
    /// Without `std` there are no threads to tell apart, so the word says what holds the lock
    /// instead: [`Hold::Op`], a heap operation (bounded, runs no caller code, so nothing in it
    /// can come back to the heap) or [`Hold::With`], a `with` closure (caller code, which may
    /// allocate). A heap operation is waited for by spinning; a `with` closure is never waited
    /// for, since the caller may be the closure itself, and spinning on it would hang forever
    /// on one core. So, without `std`, every use of the heap fails at once while a `with`
    /// closure runs (on any core), and nothing here ever spins on caller code. What no lock
    /// without interrupt masking can avoid: an interrupt handler that uses the heap while the
    /// code it interrupted is inside a heap operation spins forever (the interrupted operation
    /// cannot finish until the handler returns).
    mod lock {
        use core::sync::atomic::{AtomicUsize, Ordering};

        const FREE: usize = 0;
        /// The token of a thread whose thread-locals are gone (never treated as re-entry).
        #[cfg(feature = "std")]
        const UNKNOWN: usize = 1;
        #[cfg(not(feature = "std"))]
        const HELD_BY_OP: usize = 1;
        #[cfg(not(feature = "std"))]
        const HELD_BY_WITH: usize = 2;
        /// Busy-wait rounds before yielding to the scheduler.
        #[cfg(feature = "std")]
        const SPINS: u32 = 100;

        /// What takes the lock (it matters only without `std`: see the module docs).
        #[derive(Clone, Copy, PartialEq, Eq)]
        pub(super) enum Hold {
            /// One heap operation: runs no caller code.
            Op,
            /// A `with` closure: runs caller code.
            With,
        }

        pub(super) struct TryLock {
            owner: AtomicUsize,
        }

        /// Holding the lock; releases it when dropped (also while unwinding).
        pub(super) struct Guard<'a> {
            lock: &'a TryLock,
        }

        impl TryLock {
            pub(super) const fn new() -> Self {
                TryLock {
                    owner: AtomicUsize::new(FREE),
                }
            }

            /// Takes the lock, waiting while another thread holds it; `None` at once on
            /// re-entry (with `std`: this thread holds it already; without: a `with` closure
            /// holds it).
            #[inline]
            pub(super) fn lock(&self, hold: Hold) -> Option<Guard<'_>> {
                let me = token(hold);
                match self
                    .owner
                    .compare_exchange(FREE, me, Ordering::Acquire, Ordering::Relaxed)
                {
                    Ok(_) => Some(Guard { lock: self }),
                    Err(_) => self.lock_contended(me),
                }
            }

            #[cold]
            fn lock_contended(&self, me: usize) -> Option<Guard<'_>> {
                #[cfg(feature = "std")]
                let mut rounds = 0;
                loop {
                    let owner = self.owner.load(Ordering::Relaxed);
                    if is_reentry(owner, me) {
                        return None;
                    }
                    if owner == FREE
                        && self
                            .owner
                            .compare_exchange_weak(FREE, me, Ordering::Acquire, Ordering::Relaxed)
                            .is_ok()
                    {
                        return Some(Guard { lock: self });
                    }
                    #[cfg(feature = "std")]
                    if rounds < SPINS {
                        rounds += 1;
                    } else {
                        std::thread::yield_now();
                        continue;
                    }
                    core::hint::spin_loop();
                }
            }
        }

        impl Drop for Guard<'_> {
            #[inline]
            fn drop(&mut self) {
                self.lock.owner.store(FREE, Ordering::Release);
            }
        }

        /// This thread's token. A `const`-initialised thread-local without a destructor never
        /// allocates (std guarantees global allocators may use `thread_local!`).
        #[cfg(feature = "std")]
        #[inline]
        fn token(_: Hold) -> usize {
            std::thread_local! {
                static TOKEN: u8 = const { 0 };
            }
            TOKEN
                .try_with(|t| core::ptr::from_ref(t).addr())
                .unwrap_or(UNKNOWN)
        }

        /// What the holder stores: without threads, what kind of holder it is.
        #[cfg(not(feature = "std"))]
        #[inline]
        fn token(hold: Hold) -> usize {
            match hold {
                Hold::Op => HELD_BY_OP,
                Hold::With => HELD_BY_WITH,
            }
        }

        /// Whether `owner` holding the lock means the caller must not wait for it.
        #[cfg(feature = "std")]
        #[inline]
        fn is_reentry(owner: usize, me: usize) -> bool {
            // Only this thread ever stores `me`, so seeing it means we hold the lock.
            owner == me && me != UNKNOWN
        }

        /// Whether `owner` holding the lock means the caller must not wait for it.
        #[cfg(not(feature = "std"))]
        #[inline]
        fn is_reentry(owner: usize, _: usize) -> bool {
            // Maybe the caller's own closure: waiting could never end.
            owner == HELD_BY_WITH
        }
    }
}
