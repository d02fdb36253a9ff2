//! Debug guard bytes: [`poison::GUARD`] before and after each allocation of an arena built
//! [`with_guards`](super::Arena::with_guards), checked on reset, rewind and on demand.

use core::alloc::Layout;
use core::fmt;
use core::ptr::NonNull;

use super::marker::Pos;
use super::{Arena, ArenaError};
use crate::poison;

/// Guard bytes on each side of a guarded allocation.
pub(super) const GUARD_BYTES: usize = 8;

/// One guarded allocation, linked newest first through the arena's memory.
pub(super) struct GuardRecord {
    value: NonNull<u8>,
    size: usize,
    prev: Option<NonNull<GuardRecord>>,
    page: usize,
}

/// Which side of an allocation a damaged guard is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardSide {
    /// The guard before the allocation: something wrote below its start (an underrun).
    Front,
    /// The guard after the allocation: something wrote past its end (an overrun).
    Back,
}

/// A guard byte that no longer holds [`poison::GUARD`]: memory around an allocation was
/// overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardViolation {
    /// Offset of the allocation in the arena (see [`Arena::offset_of`]); for a
    /// [`GuardedHeap`](crate::heap::GuardedHeap), from the start of the heap's block space.
    pub offset: usize,
    /// Size of the allocation in bytes.
    pub size: usize,
    /// Which guard was damaged.
    pub side: GuardSide,
    /// Index of the first damaged byte inside that guard (0 = nearest the allocation).
    pub byte: usize,
    /// The value found there instead of `0xFE`.
    pub found: u8,
}

impl fmt::Display for GuardViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.side {
            GuardSide::Front => "before",
            GuardSide::Back => "after",
        };
        write!(
            f,
            "guard bytes {what} the {}-byte allocation at offset {} were overwritten (guard byte \
             {} is {:#04x}, expected {:#04x}): code wrote {} its allocation; find the write with \
             a watchpoint on that address",
            self.size,
            self.offset,
            self.byte,
            self.found,
            poison::GUARD,
            if self.side == GuardSide::Back {
                "past the end of"
            } else {
                "before the start of"
            },
        )
    }
}

impl core::error::Error for GuardViolation {}

impl Arena {
    /// Allocates `layout` with guard bytes on both sides and a record to find them again. A
    /// zero-sized layout (only [`Arena::try_alloc_layout`] passes one) has no bytes to guard:
    /// it gets a dangling aligned pointer and counts as a live allocation, as in an unguarded
    /// arena whose page cannot take it; it never takes a page or fails.
    #[cold]
    #[inline(never)]
    pub(super) fn alloc_guarded(&self, layout: Layout) -> Result<NonNull<u8>, ArenaError> {
        if layout.size() == 0 {
            self.cursor.count_alloc();
            return Ok(super::typed::dangling(layout.align()));
        }
        self.alloc_guarded_after(Layout::new::<()>(), layout)
            .map(|(_, value)| value)
    }

    /// [`alloc_guarded`](Arena::alloc_guarded) with `prefix` bytes (a drop record) at the start
    /// of the same block, before the front guard: one bump, so a refusal leaves nothing behind.
    /// Returns the block's start and the value.
    pub(super) fn alloc_guarded_after(
        &self,
        prefix: Layout,
        layout: Layout,
    ) -> Result<(NonNull<u8>, NonNull<u8>), ArenaError> {
        let guard = Layout::new::<[u8; GUARD_BYTES]>();
        let overflow = ArenaError::SizeOverflow {
            elem_size: layout.size(),
            count: 1,
        };
        let (front, _) = prefix.extend(guard).map_err(|_| overflow)?;
        let (block, value_off) = front.extend(layout).map_err(|_| overflow)?;
        let (block, _) = block.extend(guard).map_err(|_| overflow)?;
        let (block, rec_off) = block
            .extend(Layout::new::<GuardRecord>())
            .map_err(|_| overflow)?;
        let base = self.bump::<false>(block)?;
        // SAFETY: `block` covers the prefix, the front guard, the value, the back guard and the
        // record, at the offsets `Layout::extend` computed (the front guard ends at the value).
        unsafe {
            let value = base.add(value_off);
            value
                .sub(GUARD_BYTES)
                .write_bytes(poison::GUARD, GUARD_BYTES);
            value
                .add(layout.size())
                .write_bytes(poison::GUARD, GUARD_BYTES);
            let record = base.add(rec_off).cast::<GuardRecord>();
            record.write(GuardRecord {
                value,
                size: layout.size(),
                prev: self.guards.get(),
                page: self.cursor.page_index(),
            });
            self.guards.set(Some(record));
            self.cursor.count_alloc();
            Ok((base, value))
        }
    }

    /// Checks the guard bytes of every live guarded allocation and reports the first damaged
    /// one, newest allocation first. Always `Ok` for an arena without guards.
    ///
    /// # Errors
    ///
    /// The [`GuardViolation`] found.
    pub fn check_guards(&self) -> Result<(), GuardViolation> {
        match self.check_guards_from(Pos::MIN) {
            Some(v) => Err(v),
            None => Ok(()),
        }
    }

    /// Checks the guards of allocations at or after `pos`.
    pub(super) fn check_guards_from(&self, pos: Pos) -> Option<GuardViolation> {
        let mut next = self.guards.get();
        while let Some(rec_ptr) = next {
            // SAFETY: guard records are live until popped by `pop_guards_from`.
            let rec = unsafe { rec_ptr.as_ref() };
            if Pos::new(rec.page, rec_ptr.cast()) < pos {
                break;
            }
            // SAFETY: the `GUARD_BYTES` guards on both sides of a live record's value are
            // inside its block.
            let damaged = unsafe {
                damaged_guard(rec.value, rec.size, GUARD_BYTES, GUARD_BYTES, || {
                    self.offset_of(rec.value.as_ptr()).unwrap_or(0)
                })
            };
            if damaged.is_some() {
                return damaged;
            }
            next = rec.prev;
        }
        None
    }

    /// Unlinks the guard records at or after `pos`.
    pub(super) fn pop_guards_from(&self, pos: Pos) {
        while let Some(rec_ptr) = self.guards.get() {
            // SAFETY: as in `check_guards_from`.
            let rec = unsafe { rec_ptr.as_ref() };
            if Pos::new(rec.page, rec_ptr.cast()) < pos {
                break;
            }
            self.guards.set(rec.prev);
        }
    }
}

/// The first damaged guard byte around one guarded allocation of `size` bytes at `value`, with
/// `front` guard bytes before it and `back` after it: the back guard first (overruns are the
/// common bug), then the front one, each from the byte nearest the allocation. `offset` names
/// the allocation in the report (called only when a guard is damaged).
///
/// The one guard scanner of the crate: arenas ([`Arena::check_guards`]) and the guarded heap
/// ([`GuardedHeap`](crate::heap::GuardedHeap)) both call it.
///
/// # Safety
///
/// - The `front` bytes before `value` and the `back` bytes after `value + size` are inside one
///   live allocation of the caller's, readable, and written by nobody else during the call.
pub(crate) unsafe fn damaged_guard(
    value: NonNull<u8>,
    size: usize,
    front: usize,
    back: usize,
    offset: impl FnOnce() -> usize,
) -> Option<GuardViolation> {
    // SAFETY: the caller guarantees both ranges are readable bytes of its allocation.
    let (before, after) = unsafe {
        (
            core::slice::from_raw_parts(value.sub(front).as_ptr(), front),
            core::slice::from_raw_parts(value.add(size).as_ptr(), back),
        )
    };
    let (side, byte, found) = if let Some(i) = poison::first_mismatch(after, poison::GUARD) {
        (GuardSide::Back, i, after[i])
    } else {
        let i = before.iter().rev().position(|&b| b != poison::GUARD)?;
        (GuardSide::Front, i, before[front - 1 - i])
    };
    Some(GuardViolation {
        offset: offset(),
        size,
        side,
        byte,
        found,
    })
}
