//! Resizing the newest block in place: giving its tail back, or growing it into the rest of the
//! page. Shared by the `allocator_api2` impl and [`ArenaVec`](crate::collections::ArenaVec), so
//! both move the bump pointer the same way (by address, keeping the page's provenance) and
//! both meet the budget on growth.

use core::ptr::NonNull;

use super::{Arena, ArenaError};

impl Arena {
    /// Whether `[ptr, ptr + size)` ends exactly at the bump pointer in the current page, so it
    /// may be given back or grown in place. Never for guarded arenas (the back guard follows).
    pub(crate) fn is_last(&self, ptr: NonNull<u8>, size: usize) -> bool {
        !(crate::poison::ENABLED && self.guarded)
            && ptr.as_ptr() as usize >= self.cursor.page_start().as_ptr() as usize
            && (ptr.as_ptr() as usize).checked_add(size)
                == Some(self.cursor.ptr().as_ptr() as usize)
    }

    /// Whether [`grow_last`](Self::grow_last) would grow `[ptr, ptr + old)` to `new` bytes in
    /// place (the budget aside): it is the newest block, aligned to `align`, and the page has
    /// room.
    #[inline]
    fn grows_in_place(&self, ptr: NonNull<u8>, old: usize, new: usize, align: usize) -> bool {
        let addr = ptr.as_ptr() as usize;
        old != 0
            && self.is_last(ptr, old)
            && addr.is_multiple_of(align)
            && new <= self.cursor.page_end().as_ptr() as usize - addr
    }

    /// The bytes `used()` grows by when the block `[ptr, ptr + old)` grows to `new` bytes:
    /// `new - old` in place, else `new` for the block it moves to (alignment padding aside).
    /// What a caller weighing the budget before growing (`ArenaVec`'s doubling) should count.
    pub(crate) fn growth_to(
        &self,
        ptr: NonNull<u8>,
        old: usize,
        new: usize,
        align: usize,
    ) -> usize {
        if self.grows_in_place(ptr, old, new, align) {
            new - old
        } else {
            new
        }
    }

    /// Grows the newest block `[ptr, ptr + old)` to `new` bytes in place and returns it with
    /// the page's provenance for the new size; `Ok(None)` when it is not the newest block, is
    /// not aligned to `align`, or the page has no room (the caller moves it). A growth that
    /// crosses the budget meets its policy: `Err` under `Fail` (the block is unchanged).
    pub(crate) fn grow_last(
        &self,
        ptr: NonNull<u8>,
        old: usize,
        new: usize,
        align: usize,
    ) -> Result<Option<NonNull<u8>>, ArenaError> {
        if !self.grows_in_place(ptr, old, new, align) {
            return Ok(None);
        }
        let addr = ptr.as_ptr() as usize;
        if new > self.cursor.end().as_ptr() as usize - addr {
            // Growing in place crosses the budget clamp: the policy decides.
            self.admit(new - old)?;
            // A `Warn` budget's warning runs user code (a logger, a report sink), which may
            // have allocated from this arena: then the block is no longer the newest and must
            // move rather than grow over what came after it. It may also have put on another
            // budget, whose clamp the growth may cross: then the block moves too, and that
            // budget decides the allocation it moves into.
            if !self.is_last(ptr, old) || new > self.cursor.end().as_ptr() as usize - addr {
                return Ok(None);
            }
        }
        // The grown block is handed out with the page's provenance, not the caller's, which
        // may cover only the old size.
        Ok(Some(
            self.cursor.move_to(addr + new, false).with_addr(ptr.addr()),
        ))
    }

    /// Gives the newest block `[ptr, ptr + size)` back (nothing happens if it is not the
    /// newest): the bump pointer moves back to `ptr` and the block stops counting as live.
    pub(crate) fn give_back_last(&self, ptr: NonNull<u8>, size: usize) {
        if size != 0 && self.is_last(ptr, size) {
            // The cursor moves back by address only: `ptr` may carry provenance for just this
            // block, and the cursor must keep the page's. It folds the peak in.
            self.cursor.move_to(ptr.as_ptr() as usize, true);
            // Usage fell: a lifted `Warn` budget re-arms once it is back under, as on a rewind.
            self.settle_budget();
        }
    }

    /// Shrinks the newest block `[ptr, ptr + old)` to `new` bytes, giving the tail back
    /// (nothing happens if it is not the newest). Shrunk to no bytes, the block is a zero-sized
    /// block at the bump pointer, as a zero-sized `try_alloc_layout` there is: all its bytes go
    /// back and it still counts as live.
    pub(crate) fn shrink_last(&self, ptr: NonNull<u8>, old: usize, new: usize) {
        if new < old && self.is_last(ptr, old) {
            // (the cursor folds the peak in before giving the tail back)
            self.cursor.move_to(ptr.as_ptr() as usize + new, false);
            self.settle_budget();
        }
    }
}

impl Arena {
    /// Takes over `len` values of `T` (which needs dropping) from a collection's block
    /// `[ptr, ptr + cap_bytes)`: registers their drop and returns where they are now. If the
    /// block is the newest and has (or can grow to) room for a drop record in front, the values
    /// move up behind the record in place (a `memmove`) and the spare tail is given back;
    /// otherwise they are moved into a fresh record-and-array allocation at the bump pointer,
    /// which keeps the drop list ordered by position (a record must not point below the values
    /// of a record after it: a rewind between them would free the later values' memory while
    /// their record stays linked).
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout) when the fresh allocation fails; the
    /// values are untouched at `ptr` then, still owned by the caller.
    ///
    /// # Safety
    ///
    /// - `[ptr, ptr + cap_bytes)` is a live block of this arena owned by the caller, and its
    ///   first `len > 0` values of `T` are initialised.
    /// - On `Ok`, the arena owns the values: the caller neither uses nor drops them except
    ///   through the returned pointer, and does not use the block.
    pub(crate) unsafe fn adopt_values<T: super::ArenaDrop + 'static>(
        &self,
        ptr: NonNull<T>,
        len: usize,
        cap_bytes: usize,
    ) -> Result<NonNull<T>, ArenaError> {
        use super::drop_list::DropRecord;
        use core::alloc::Layout;
        debug_assert!(len > 0 && core::mem::needs_drop::<T>());
        let overflow = ArenaError::SizeOverflow {
            elem_size: size_of::<T>(),
            count: len,
        };
        let array = Layout::array::<T>(len).map_err(|_| overflow)?;
        let (block, off) = Layout::new::<DropRecord>()
            .extend(array)
            .map_err(|_| overflow)?;
        let base = ptr.cast::<u8>();
        let in_place = if cap_bytes == 0
            || !base.addr().get().is_multiple_of(block.align())
            || !self.is_last(base, cap_bytes)
        {
            None
        } else if block.size() <= cap_bytes {
            self.shrink_last(base, cap_bytes, block.size());
            Some(base)
        } else {
            // (a budget refusing the growth sends the values to the fresh allocation, which
            // meets the budget again and reports it)
            self.grow_last(base, cap_bytes, block.size(), block.align())
                .ok()
                .flatten()
        };
        let (record, values) = match in_place {
            Some(start) => {
                // SAFETY: `[start, start + block.size())` is the caller's block, grown or shrunk
                // to exactly the record and the array; `off` is inside it. The values move up
                // by `off` bytes within it (`copy` allows the overlap).
                unsafe {
                    let values = start.add(off);
                    core::ptr::copy(start.cast::<T>().as_ptr(), values.cast::<T>().as_ptr(), len);
                    (start.cast::<DropRecord>(), values)
                }
            }
            None => {
                let (record, values) = self.alloc_with_record::<false>(array)?;
                // SAFETY: `values` is fresh memory for `len` values of `T`, so it does not
                // overlap the caller's block, whose first `len` values are initialised.
                unsafe {
                    core::ptr::copy_nonoverlapping(ptr.as_ptr(), values.cast::<T>().as_ptr(), len)
                };
                (record, values)
            }
        };
        // SAFETY: the record slot lies in the current page right before the `len` initialised
        // values (in place: the block is the newest of the current page; fresh: just bumped),
        // their end is the bump pointer or below it with nothing of a record after it, so the
        // list stays ordered; the arena owns the values from here on, and may drop them on
        // any thread (`T: ArenaDrop + 'static`).
        unsafe {
            self.push_drop::<T>(record, values);
            self.set_drop_len::<T>(record, len);
        }
        Ok(values.cast())
    }
}
