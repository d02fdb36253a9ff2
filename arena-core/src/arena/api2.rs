//! `allocator_api2::alloc::Allocator` for `&Arena` (the 0.2 line hashbrown and bumpalo use), so
//! `allocator_api2::vec::Vec<T, &Arena>` and `hashbrown::HashMap<K, V, S, &Arena>` allocate from
//! an arena.
//!
//! It is implemented for `&Arena`, not `Arena`: a collection that owned its arena could expose it
//! mutably and call the safe [`Arena::reset`] while its own elements are still in it
//! (bump-scope#137). With `&Arena` the borrow checker forbids the reset.
//!
//! ```
//! use allocator_api2::vec::Vec;
//! use arena_kit::Arena;
//! use hashbrown::{DefaultHashBuilder, HashMap};
//!
//! let mut arena = Arena::chained(4096);
//! {
//!     let mut v: Vec<u32, &Arena> = Vec::new_in(&arena);
//!     v.extend(0..100);
//!     let mut names = HashMap::with_hasher_in(DefaultHashBuilder::default(), &arena);
//!     names.insert("player", 1);
//!     assert_eq!(v.iter().sum::<u32>(), 4950);
//!     assert_eq!(names["player"], 1);
//! }
//! arena.reset(); // fine: the collections are gone
//! ```
//!
//! Freeing or shrinking the newest allocation gives its bytes back, and growing it extends it in
//! place, so a lone growing `Vec` does not waste the arena. Other frees are no-ops until reset.
//! A zero-sized block is handed out as [`Arena::try_alloc_layout`] hands one out (it never
//! fails or takes a page, and may take alignment padding); freeing it gives nothing back.
//! Shrinking the newest block to no bytes gives all its bytes back; it stays a live zero-sized
//! block until a reset or rewind.

use core::alloc::Layout;
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator};

use super::Arena;

impl Arena {
    /// `grow` by allocating a new block, copying the old one into it and giving the old one back.
    ///
    /// # Safety
    ///
    /// As for [`Allocator::grow`]: `ptr` is a live block of this arena of layout `old`, and
    /// `new.size() >= old.size()`.
    unsafe fn grow_by_moving(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        let fresh = self.allocate(new)?;
        // SAFETY: the old block holds `old.size()` initialised bytes and is not the new block
        // (fresh memory), which is at least as large; the old block is live and of `old`.
        unsafe {
            fresh.cast::<u8>().copy_from_nonoverlapping(ptr, old.size());
            self.deallocate(ptr, old);
        }
        Ok(fresh)
    }
}

// SAFETY: memory returned by `allocate` is fresh (nothing else was handed those bytes since the
// last reset or rewind) and stays valid while the `&Arena` borrow (and so every copy of this
// allocator) lives: the arena can only be reset, rewound or dropped through `&mut Arena` or by
// value. `deallocate`, `grow` and `shrink` move the bump pointer only when the block is the
// newest allocation of the current page (so the bytes given back belong to no other block), and
// only by address: the cursor keeps the page's provenance, so later blocks are valid for their
// whole size whatever provenance the caller's pointer had. A block grown in place is returned
// with the page's provenance for its new size.
unsafe impl Allocator for &Arena {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let ptr = self.try_alloc_layout(layout).map_err(|_| AllocError)?;
        Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        self.give_back_last(ptr, layout.size());
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        match self.grow_last(ptr, old.size(), new.size(), new.align()) {
            Ok(Some(start)) => Ok(NonNull::slice_from_raw_parts(start, new.size())),
            Err(_) => Err(AllocError),
            // SAFETY: as for `grow`.
            Ok(None) => unsafe { self.grow_by_moving(ptr, old, new) },
        }
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if !(ptr.as_ptr() as usize).is_multiple_of(new.align()) {
            let fresh = self.allocate(new)?;
            // SAFETY: `new.size() <= old.size()` bytes are initialised in the old block.
            unsafe { fresh.cast::<u8>().copy_from_nonoverlapping(ptr, new.size()) };
            return Ok(fresh);
        }
        self.shrink_last(ptr, old.size(), new.size());
        Ok(NonNull::slice_from_raw_parts(ptr, new.size()))
    }
}
