//! [`Slot<T>`]: one cell of a pool, holding either a value or the link to the next free slot.
//!
//! The value and the free-list link share the same bytes (a `union`, as in a classic pool where a
//! free block's first bytes store the next pointer, and as in slotmap). Which one is there is told
//! by the generation beside it: odd = value, even = link. All the `unsafe` of reading the union is
//! here, behind accessors that check the generation first; the pool is written against them.

use core::mem::{self, ManuallyDrop};
use core::num::NonZeroU32;
use core::ptr;

use crate::poison;

/// End of the free list (and "no link" in a slot that is not on it).
pub(crate) const NO_SLOT: u32 = u32::MAX;

union Cell<T> {
    value: ManuallyDrop<T>,
    next_free: u32,
}

/// A value, or (while vacant) the index of the next free slot.
pub(crate) struct Slot<T> {
    cell: Cell<T>,
    /// Odd while `cell.value` is initialized; even while `cell.next_free` is.
    generation: u32,
}

/// What a slot holds, read safely.
pub(crate) enum Content<'a, T> {
    /// A live value.
    Occupied(&'a T),
    /// A free slot and its free-list link.
    Vacant(u32),
}

impl<T> Slot<T> {
    /// A vacant slot with generation `generation` (even) and no link.
    pub(crate) const fn vacant(generation: u32) -> Self {
        debug_assert!(generation & 1 == 0);
        Slot {
            cell: Cell { next_free: NO_SLOT },
            generation,
        }
    }

    /// The slot's generation: odd while occupied.
    #[inline]
    pub(crate) const fn generation(&self) -> u32 {
        self.generation
    }

    /// Whether the slot holds a value.
    #[inline]
    pub(crate) const fn is_occupied(&self) -> bool {
        self.generation & 1 == 1
    }

    /// The slot's content.
    #[inline]
    pub(crate) fn content(&self) -> Content<'_, T> {
        if self.is_occupied() {
            // SAFETY: an odd generation means `value` is the initialized field.
            Content::Occupied(unsafe { &self.cell.value })
        } else {
            // SAFETY: an even generation means `next_free` is the initialized field.
            Content::Vacant(unsafe { self.cell.next_free })
        }
    }

    /// The value, if the slot is occupied with exactly this (handle's) generation. A handle's
    /// generation is odd (every way to make one keeps it odd: `from_parts`, `from_bits`,
    /// deserialization, `null`), so equality alone proves the slot is occupied: one compare, as
    /// in slotmap.
    #[inline]
    pub(crate) fn get(&self, generation: NonZeroU32) -> Option<&T> {
        debug_assert!(generation.get() & 1 == 1);
        if self.generation == generation.get() {
            // SAFETY: the slot's generation equals a handle generation, which is odd, so the
            // slot is occupied and `value` is initialized.
            Some(unsafe { &self.cell.value })
        } else {
            None
        }
    }

    /// The value mutably, if the slot is occupied with exactly this (handle's) generation.
    #[inline]
    pub(crate) fn get_mut(&mut self, generation: NonZeroU32) -> Option<&mut T> {
        debug_assert!(generation.get() & 1 == 1);
        if self.generation == generation.get() {
            // SAFETY: as in `get`: equal to an odd handle generation means occupied.
            Some(unsafe { &mut self.cell.value })
        } else {
            None
        }
    }

    /// The (odd, so non-zero: a handle's) generation and the value, if occupied.
    #[inline]
    pub(crate) fn occupied(&self) -> Option<(NonZeroU32, &T)> {
        match (self.content(), NonZeroU32::new(self.generation)) {
            (Content::Occupied(v), Some(generation)) => Some((generation, v)),
            _ => None,
        }
    }

    /// The generation and the value mutably, if occupied.
    #[inline]
    pub(crate) fn occupied_mut(&mut self) -> Option<(NonZeroU32, &mut T)> {
        match NonZeroU32::new(self.generation) {
            Some(generation) if self.is_occupied() => {
                // SAFETY: the generation is odd, so `value` is initialized.
                Some((generation, unsafe { &mut self.cell.value }))
            }
            _ => None,
        }
    }

    /// The free-list link of a vacant slot (`None` if occupied).
    #[inline]
    pub(crate) fn next_free(&self) -> Option<u32> {
        match self.content() {
            Content::Vacant(next) => Some(next),
            Content::Occupied(_) => None,
        }
    }

    /// Re-links a vacant slot. Does nothing to an occupied one (and asserts in debug builds).
    #[inline]
    pub(crate) fn set_next_free(&mut self, next: u32) {
        debug_assert!(!self.is_occupied());
        if !self.is_occupied() {
            self.cell.next_free = next;
        }
    }

    /// Puts `value` into a vacant slot with the (odd) `generation`.
    ///
    /// # Panics
    /// If the slot is occupied or `generation` is even: the pool's bookkeeping is broken.
    #[inline]
    pub(crate) fn occupy(&mut self, value: T, generation: u32) {
        assert!(
            !self.is_occupied() && generation & 1 == 1,
            "pool slot bookkeeping broken"
        );
        self.cell.value = ManuallyDrop::new(value);
        self.generation = generation;
    }

    /// Puts `value` into this vacant slot with the odd `generation`, without reading the slot:
    /// for a caller that already took what it needed from it (a free-list head's link and
    /// generation) or knows it (a never-used slot is vacant, of the map's first generation,
    /// linked nowhere). Not reading matters where the slot's page is fresh from the system: a
    /// read would map the shared zero page and the write then fault a second time to replace
    /// it, two page faults per page where one will do.
    ///
    /// # Safety
    /// The slot holds no value (its generation is even).
    #[inline(always)]
    pub(crate) unsafe fn occupy_fresh(&mut self, value: T, generation: NonZeroU32) {
        debug_assert!(!self.is_occupied(), "pool slot bookkeeping broken");
        self.cell.value = ManuallyDrop::new(value);
        self.generation = generation.get();
    }

    /// Puts `value` into this vacant slot with the next odd generation; returns that generation
    /// and the slot's old free-list link. The caller knows the slot is vacant (the slot map's
    /// free-list invariant), so the check is a debug assertion.
    ///
    /// # Safety
    /// The slot is vacant (its generation is even).
    #[inline(always)]
    pub(crate) unsafe fn occupy_vacant(&mut self, value: T) -> (NonZeroU32, u32) {
        debug_assert!(!self.is_occupied(), "pool slot bookkeeping broken");
        // SAFETY: the caller guarantees the generation is even, so `next_free` is the
        // initialized field.
        let next = unsafe { self.cell.next_free };
        let generation = super::generation::Generations::occupy(self.generation);
        self.cell.value = ManuallyDrop::new(value);
        self.generation = generation.get();
        (generation, next)
    }

    /// Takes the value out of an occupied slot, leaving it vacant with the (even) `generation`
    /// and link `next_free`. In debug builds the value's bytes are overwritten with
    /// [`poison::FREED`] first. The caller knows the slot is occupied (the remove path, from its
    /// generation compare), so the checks are debug assertions.
    ///
    /// # Safety
    /// - the slot is occupied (its generation is odd);
    /// - `generation` is even, so the value is never read again.
    #[inline(always)]
    pub(crate) unsafe fn vacate(&mut self, generation: u32, next_free: u32) -> T {
        debug_assert!(self.is_occupied() && generation & 1 == 0);
        // SAFETY: the caller guarantees the generation is odd, so `value` is initialized; it
        // becomes the even `generation` below, so the value is never read again.
        let value = unsafe { ManuallyDrop::take(&mut self.cell.value) };
        if poison::ENABLED {
            // SAFETY: the cell is `size_of::<Cell<T>>()` bytes owned by this slot and holds no
            // live value any more; any byte pattern is fine before `next_free` is written.
            unsafe {
                ptr::write_bytes(
                    (&raw mut self.cell).cast::<u8>(),
                    poison::FREED,
                    mem::size_of::<Cell<T>>(),
                );
            }
        }
        self.cell.next_free = next_free;
        self.generation = generation;
        value
    }

    /// Gives a vacant slot the (even) `generation`, keeping its free-list link: a generation
    /// spent without a value ([`Claim`](super::slot_map::Claim)'s forfeit). Does nothing to an
    /// occupied slot or with an odd generation (and asserts in debug builds).
    #[inline]
    pub(crate) fn respend(&mut self, generation: u32) {
        debug_assert!(!self.is_occupied() && generation & 1 == 0);
        if !self.is_occupied() && generation & 1 == 0 {
            self.generation = generation;
        }
    }

    /// Reads the generation through a raw pointer, without creating a reference to the slot.
    ///
    /// # Safety
    /// - `slot` points to a live, initialized `Slot<T>`;
    /// - no `&mut` to that slot's generation is in use, other than one `slot` was derived from
    ///   (which does not write while the pointer is read).
    #[inline]
    pub(crate) unsafe fn generation_raw(slot: *const Self) -> u32 {
        // SAFETY: the caller guarantees `slot` is valid for reads.
        unsafe { (*slot).generation }
    }

    /// Flips the occupied bit through a raw pointer (used to mark a slot as claimed while
    /// checking handles for repeats; flipped back before anyone reads the slot).
    ///
    /// # Safety
    /// - `slot` points to a live `Slot<T>` that nobody else references right now;
    /// - the caller flips it back before the slot is used again.
    #[inline]
    pub(crate) unsafe fn flip_raw(slot: *mut Self) {
        // SAFETY: the caller guarantees `slot` is valid and unaliased.
        unsafe { (*slot).generation ^= 1 }
    }

    /// A pointer to the value of an occupied slot, without creating a reference to the slot.
    ///
    /// # Safety
    /// - `slot` points to a live `Slot<T>` whose generation is odd.
    #[inline]
    pub(crate) unsafe fn value_raw(slot: *mut Self) -> *mut T {
        // SAFETY: the caller guarantees `slot` is valid; `&raw mut` creates no reference, and
        // `ManuallyDrop<T>` has the layout of `T`.
        unsafe { (&raw mut (*slot).cell.value).cast::<T>() }
    }
}
