//! The heap block behind `SoaVec` and `SoaPool`: every column of `cap` rows in one allocation.

use alloc::alloc::{alloc, dealloc, handle_alloc_error, realloc};
use core::alloc::Layout;
use core::marker::PhantomData;

use super::{Columns, Soa, SoaAllocError, block_layout, dangling, place, row_is_zst};

/// Blocks at least this large grow in place with `realloc` (see [`RawSoa::try_realloc`]). Tiny
/// under Miri, so the tests' small vectors take both paths.
const REMAP_BYTES: usize = if cfg!(miri) { 64 } else { 256 * 1024 };

/// One allocation holding `cap` rows of every column of `T`. Owns the memory, not the values: the
/// owner tracks which rows are initialised and drops them.
pub(crate) struct RawSoa<T: Soa> {
    pub(crate) cols: T::Columns,
    base: *mut u8,
    cap: usize,
    _marker: PhantomData<T>,
}

impl<T: Soa> RawSoa<T> {
    /// No allocation: capacity 0, or unbounded when a row occupies no memory.
    pub(crate) fn new() -> Self {
        let align = block_layout::<T>(0).map_or(1, |l| l.align());
        let base = dangling(align);
        let cap = if row_is_zst::<T>() { usize::MAX } else { 0 };
        RawSoa {
            cols: place::<T>(base, cap),
            base,
            cap,
            _marker: PhantomData,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// The block's address and size in bytes (size 0: no block).
    #[cfg(feature = "profiler")]
    pub(crate) fn block(&self) -> (usize, usize) {
        let size = block_layout::<T>(self.cap).map_or(0, |l| l.size());
        (self.base.addr(), size)
    }

    /// Allocates a block for `cap` rows (`self` must be the unallocated one from `new`).
    pub(crate) fn try_with_capacity(cap: usize) -> Result<Self, SoaAllocError> {
        let mut raw = Self::new();
        if cap > raw.cap {
            // SAFETY: no row is initialised yet.
            unsafe { raw.try_realloc(cap, 0)? };
        }
        Ok(raw)
    }

    /// Makes room for at least `len + additional` rows, growing geometrically.
    ///
    /// # Safety
    /// - rows `0..len` are exactly the initialised ones.
    pub(crate) unsafe fn try_reserve(
        &mut self,
        len: usize,
        additional: usize,
        exact: bool,
    ) -> Result<(), SoaAllocError> {
        let required = len
            .checked_add(additional)
            .ok_or(SoaAllocError::CapacityOverflow { rows: usize::MAX })?;
        if required <= self.cap {
            return Ok(());
        }
        let new_cap = if exact {
            required
        } else {
            required.max(self.cap.saturating_mul(2)).max(4)
        };
        // SAFETY: forwarded from the caller.
        unsafe { self.try_realloc(new_cap, len) }
    }

    /// Resizes the block to `new_cap` rows (`len <= new_cap`), keeping the first `len` rows. On
    /// error nothing changes.
    ///
    /// A small block is copied into a new one, each column once. A large block (at least
    /// [`REMAP_BYTES`]) grows with `realloc`, which system allocators serve by remapping pages
    /// rather than copying them, then every column but the first moves up to its new offset
    /// once, last column first; measured on glibc, that halves the page faults of growth.
    ///
    /// # Safety
    /// - rows `0..len` are exactly the initialised ones, and `len <= new_cap`.
    pub(crate) unsafe fn try_realloc(
        &mut self,
        new_cap: usize,
        len: usize,
    ) -> Result<(), SoaAllocError> {
        let layout = block_layout::<T>(new_cap)?;
        let old = block_layout::<T>(self.cap)?;
        if new_cap > self.cap && old.size() >= REMAP_BYTES {
            // SAFETY: `base` was allocated with `old`, whose alignment `layout` shares (it does
            // not depend on the row count); the new size is larger, so non-zero.
            let p = unsafe { realloc(self.base, old, layout.size()) };
            if p.is_null() {
                return Err(SoaAllocError::OutOfMemory {
                    size: layout.size(),
                    align: layout.align(),
                });
            }
            let moved = place::<T>(p, self.cap);
            let cols = place::<T>(p, new_cap);
            // SAFETY: the block at `p` holds the old placement's bytes; every column's new
            // offset is at or after its old one and the new placement fits the new size.
            unsafe { T::Columns::shift_up(moved, cols, len) };
            self.cols = cols;
            self.base = p;
            self.cap = new_cap;
            return Ok(());
        }
        let base = if layout.size() == 0 {
            dangling(layout.align())
        } else {
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc(layout) };
            if p.is_null() {
                return Err(SoaAllocError::OutOfMemory {
                    size: layout.size(),
                    align: layout.align(),
                });
            }
            p
        };
        let cols = place::<T>(base, new_cap);
        // SAFETY: both blocks hold at least `len` rows; they do not overlap; the old rows are
        // given up to the new block.
        unsafe { T::Columns::copy(self.cols, 0, cols, 0, len) };
        self.free();
        self.cols = cols;
        self.base = base;
        self.cap = new_cap;
        Ok(())
    }

    /// Frees the block (the values must already be dropped or moved out).
    fn free(&mut self) {
        if let Ok(layout) = block_layout::<T>(self.cap)
            && layout.size() != 0
        {
            // SAFETY: `base` was allocated with this layout (`cap` is unchanged since).
            unsafe { dealloc(self.base, layout) };
        }
    }
}

impl<T: Soa> Drop for RawSoa<T> {
    fn drop(&mut self) {
        self.free();
    }
}

/// Allocates `layout` or diverges the way `Vec` does.
pub(crate) fn unwrap_alloc<R>(r: Result<R, SoaAllocError>) -> R {
    match r {
        Ok(v) => v,
        Err(SoaAllocError::OutOfMemory { size, align }) => {
            handle_alloc_error(Layout::from_size_align(size, align).unwrap_or(Layout::new::<u8>()))
        }
        Err(e @ SoaAllocError::CapacityOverflow { .. }) => panic!("{e}"),
    }
}

/// Reorders rows `0..order.len()` of `cols` so that row `k` becomes the old row `order[k]`.
///
/// # Safety
/// - `order` is a permutation of `0..order.len()` and those rows of `cols` are initialised and
///   exclusively borrowed.
pub(crate) unsafe fn permute<T: Soa>(cols: T::Columns, order: &[usize]) {
    let len = order.len();
    if len < 2 {
        return;
    }
    let scratch = unwrap_alloc(RawSoa::<T>::try_with_capacity(len));
    // SAFETY: every row of `cols` is moved to `scratch` exactly once (a permutation), then all of
    // them back; no user code runs in between, so nothing can observe the moved-from state.
    unsafe {
        T::Columns::gather(cols, scratch.cols, order);
        T::Columns::copy(scratch.cols, 0, cols, 0, len);
    }
}
