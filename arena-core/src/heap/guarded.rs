//! [`GuardedHeap`]: the arena's guard bytes for a [`FreeListHeap`].

use alloc::collections::BTreeMap;
use core::alloc::Layout;
use core::ops::Deref;
use core::ptr::NonNull;

use super::{FreeError, FreeListHeap, MAX_ALIGN, RequestError};
use crate::arena::{GuardViolation, damaged_guard};
use crate::poison;
use crate::tags::{BudgetGate, Budgeted, MemoryUsage, Usage};

/// Guard bytes on each side of a guarded heap allocation.
const GUARD_BYTES: usize = 8;

/// A [`FreeListHeap`] whose allocations carry [`poison::GUARD`] bytes on both sides, checked on
/// free and by [`check_guards`](GuardedHeap::check_guards). Only effective when
/// [`poison::ENABLED`] (debug builds or the `debug-checks` feature); otherwise it is the plain
/// heap plus an empty map. New memory reads [`poison::FRESH`] and freed memory
/// [`poison::FREED`], as the heap fills them.
///
/// Each guarded allocation costs 16 guard bytes (more when its alignment exceeds 8) in the heap
/// and one entry in a side map, so it is a debug layer, not a release default. Wrap it in
/// [`Tracked`](crate::tags::Tracked) to get reports that name the allocator and tag (it is
/// re-exported as `arena_kit::tags::GuardedHeap` too).
///
/// A budget set on it ([`Budgeted`]) is the wrapped heap's, and counts the guard bytes.
///
/// ```
/// use core::alloc::Layout;
/// use arena_kit::FreeListHeap;
/// use arena_kit::heap::GuardedHeap;
///
/// let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(1024));
/// let p = heap.alloc(Layout::new::<[u32; 3]>());
/// let q = heap.try_alloc(Layout::new::<u64>()).unwrap();
/// assert!(heap.check_guards().is_ok());
/// heap.free(p).unwrap();
/// heap.free(q).unwrap();
/// ```
///
/// # Variance
///
/// Covariant in `'buf`, like the [`FreeListHeap`](crate::heap::FreeListHeap) it wraps.
pub struct GuardedHeap<'buf> {
    heap: FreeListHeap<'buf>,
    /// Live guarded allocations: value address -> (value, front bytes before it in its block,
    /// size).
    live: BTreeMap<usize, Guarded>,
}

/// One live guarded allocation.
#[derive(Clone, Copy)]
struct Guarded {
    value: NonNull<u8>,
    front: usize,
    size: usize,
}

// SAFETY: the `NonNull`s in `live` (which make this not `Send` automatically) point into the
// region of `heap`, which moves with it and is `Send`; they are dereferenced only by this
// `GuardedHeap`'s own methods (reading guard bytes inside live blocks), never shared
// with another owner, so sending the whole heap sends everything they reach.
unsafe impl Send for GuardedHeap<'_> {}
// SAFETY: `&self` methods read the wrapped heap (which is `Sync`: they never write) and, in
// `check_guards`, the guard bytes around live guarded allocations, through the `NonNull`s in
// `live`. Nothing writes those bytes while a `&GuardedHeap` exists: this type writes them only
// in `&mut self` methods, and a block's owner may write only its value's `size` bytes, never
// the guards beside them (writing there is the overrun the guards detect, already undefined
// behaviour in the owner's `unsafe` code). So shared references on several threads only read
// memory no one writes meanwhile.
unsafe impl Sync for GuardedHeap<'_> {}

impl<'buf> GuardedHeap<'buf> {
    /// Guards `heap`'s future allocations. Blocks `heap` handed out before stay the caller's,
    /// without guards: [`free`](Self::free) frees them as the heap does.
    pub fn new(heap: FreeListHeap<'buf>) -> Self {
        GuardedHeap {
            heap,
            live: BTreeMap::new(),
        }
    }

    /// [`FreeListHeap::alloc`], with guard bytes before and after the allocation.
    ///
    /// # Panics
    ///
    /// When [`try_alloc`](Self::try_alloc) would return an error, with that error's text; also
    /// over a [`Policy::Panic`](crate::tags::Policy::Panic) budget.
    #[track_caller]
    pub fn alloc(&mut self, layout: Layout) -> NonNull<u8> {
        match self.try_alloc(layout) {
            Ok(p) => p,
            Err(e) => panic!("GuardedHeap::alloc: {e}"),
        }
    }

    /// [`FreeListHeap::try_alloc`], with guard bytes before and after the allocation.
    ///
    /// # Errors
    ///
    /// As [`FreeListHeap::try_alloc`] (the request is 16 or more bytes larger, and a budget
    /// counts the guards); nothing changes.
    ///
    /// # Panics
    ///
    /// Over a [`Policy::Panic`](crate::tags::Policy::Panic) budget.
    #[track_caller]
    pub fn try_alloc(&mut self, layout: Layout) -> Result<NonNull<u8>, RequestError> {
        if !poison::ENABLED || layout.size() == 0 {
            // (A zero-size request is refused by the heap, guards or not: the guards' bytes
            // must not make it succeed only in debug builds.)
            return self.heap.try_alloc(layout);
        }
        if layout.align() > MAX_ALIGN {
            // Refused as the heap refuses it: the guards in front of such an alignment could
            // make the block's layout overflow, which would name the wrong reason (`TooLarge`).
            return Err(RequestError::AlignmentTooLarge {
                align: layout.align(),
                max: MAX_ALIGN,
            });
        }
        let front = GUARD_BYTES.next_multiple_of(layout.align());
        let too_large = RequestError::TooLarge {
            requested: layout.size(),
            capacity: self.heap.capacity(),
        };
        let total = front
            .checked_add(layout.size())
            .and_then(|n| n.checked_add(GUARD_BYTES))
            .ok_or_else(|| too_large.clone())?;
        let outer = Layout::from_size_align(total, layout.align()).map_err(|_| too_large)?;
        let base = self.heap.try_alloc(outer)?;
        // SAFETY: the block holds `front + size + GUARD_BYTES` bytes from `base`.
        let value = unsafe {
            base.write_bytes(poison::GUARD, front);
            let value = base.add(front);
            value
                .add(layout.size())
                .write_bytes(poison::GUARD, GUARD_BYTES);
            value
        };
        let record = Guarded {
            value,
            front,
            size: layout.size(),
        };
        self.live.insert(value.as_ptr().addr(), record);
        Ok(value)
    }

    /// Checks the allocation's guards, then frees it.
    ///
    /// # Errors
    ///
    /// As [`FreeListHeap::free`]: `ptr` is not a live allocation of this heap (the start of a
    /// guarded allocation's block is not one either); and
    /// [`FreeError::GuardDamaged`] when a guard byte of the allocation was overwritten (the
    /// allocation then stays live, so the damage can be inspected;
    /// [`free_despite_guards`](Self::free_despite_guards) frees it). Nothing changes on error.
    pub fn free(&mut self, ptr: NonNull<u8>) -> Result<(), FreeError> {
        let Some(&record) = self.live.get(&(ptr.as_ptr().addr())) else {
            return self.free_unguarded(ptr);
        };
        if let Some(v) = check_one(&self.heap, record) {
            return Err(FreeError::GuardDamaged(v));
        }
        self.release(ptr, record)
    }

    /// Frees the allocation at `ptr` whatever its guards hold, and returns the damage found in
    /// them, if any: for an allocation [`free`](Self::free) refused with
    /// [`FreeError::GuardDamaged`], once the damage has been looked at (otherwise it could never
    /// be freed). The block's own tags are still checked, as every free checks them.
    ///
    /// ```
    /// use arena_kit::heap::{FreeError, FreeListHeap, GuardedHeap};
    /// use core::alloc::Layout;
    ///
    /// let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(4096));
    /// let p = heap.alloc(Layout::new::<[u8; 16]>());
    /// if arena_kit::poison::ENABLED {
    ///     // A bug writes one byte past the end: with guards on, onto the guard there.
    ///     // SAFETY: with guards on, the guard bytes after the 16 bytes are in the block.
    ///     unsafe { p.as_ptr().add(16).write(0) };
    ///     assert!(matches!(heap.free(p), Err(FreeError::GuardDamaged(_))));
    ///     let damage = heap.free_despite_guards(p).unwrap().expect("the overrun");
    ///     assert_eq!(damage.size, 16);
    /// } else {
    ///     assert_eq!(heap.free_despite_guards(p).unwrap(), None);
    /// }
    /// assert_eq!(heap.stats().live_blocks, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`free`](Self::free), but never [`FreeError::GuardDamaged`]; nothing changes on error.
    pub fn free_despite_guards(
        &mut self,
        ptr: NonNull<u8>,
    ) -> Result<Option<GuardViolation>, FreeError> {
        let Some(&record) = self.live.get(&(ptr.as_ptr().addr())) else {
            return self.free_unguarded(ptr).map(|()| None);
        };
        let damage = check_one(&self.heap, record);
        self.release(ptr, record)?;
        Ok(damage)
    }

    /// Frees `ptr`, which is not a live guarded allocation, as the heap frees it, or says why
    /// not. Every guarded allocation sits `front` bytes inside its block, so a guarded block's
    /// own start (the first byte of a front guard) is never an allocation and must not reach
    /// `heap.free`: that would free the block under a value that stays registered here. Any
    /// other live block start is a block the heap handed out before it was guarded: the
    /// caller's, without guards, freed as the heap frees it. The heap names every other error
    /// (double free, foreign, interior).
    fn free_unguarded(&mut self, ptr: NonNull<u8>) -> Result<(), FreeError> {
        // Without guards, the heap's blocks are the allocations, and it checks the pointer.
        if poison::ENABLED && self.guarded_block_start(ptr) {
            return Err(self.heap.not_an_allocation(ptr));
        }
        self.heap.free(ptr)
    }

    /// Gives the block under guarded allocation `record` (at `ptr`) back to the heap, then
    /// forgets the record; on an error the record stays, as it was.
    fn release(&mut self, ptr: NonNull<u8>, record: Guarded) -> Result<(), FreeError> {
        // SAFETY: `record.value` is a live guarded allocation, `front` bytes after its block's
        // start, so the subtraction stays inside the block.
        self.heap.free(unsafe { record.value.sub(record.front) })?;
        self.live.remove(&(ptr.as_ptr().addr()));
        Ok(())
    }

    /// Whether `ptr` is the start of the block under a live guarded allocation. Blocks do not
    /// overlap and a guarded value lies inside its block, so the only candidate is the first
    /// guarded value above `ptr`.
    fn guarded_block_start(&self, ptr: NonNull<u8>) -> bool {
        let addr = ptr.as_ptr().addr();
        self.live
            .range(addr.saturating_add(1)..)
            .next()
            .is_some_and(|(&value, r)| value - r.front == addr)
    }

    /// Checks the guards of every live allocation, lowest address first.
    ///
    /// # Errors
    ///
    /// The first damaged guard; `offset` in it is the allocation's offset from the start of the
    /// heap's block space, as in [`FreeError::NotAllocated`](super::FreeError::NotAllocated).
    pub fn check_guards(&self) -> Result<(), GuardViolation> {
        self.live
            .values()
            .find_map(|&r| check_one(&self.heap, r))
            .map_or(Ok(()), Err)
    }
}

/// The first damaged guard byte around a live guarded allocation of `heap`, if any; `offset`
/// in it is the allocation's offset from the start of the heap's block space.
fn check_one(heap: &FreeListHeap<'_>, r: Guarded) -> Option<GuardViolation> {
    // SAFETY: `r` is a live guarded allocation: `front` guard bytes before it and `GUARD_BYTES`
    // after its `size` bytes are inside its block, which only this heap's owner reaches (and
    // `&self` or `&mut self` is held, so nothing writes meanwhile).
    unsafe {
        damaged_guard(r.value, r.size, r.front, GUARD_BYTES, || {
            heap.block_space_offset(r.value.as_ptr().addr())
        })
    }
}

/// The heap's usage, guard bytes included (they are memory the heap holds for this user).
impl MemoryUsage for GuardedHeap<'_> {
    fn usage(&self) -> Usage {
        self.heap.usage()
    }

    fn reports_leaks(&self) -> bool {
        true
    }
}

/// The wrapped heap's budget: it counts the guard bytes, and
/// [`try_alloc`](GuardedHeap::try_alloc) returns [`RequestError::OverBudget`] over a `Fail` one.
impl Budgeted for GuardedHeap<'_> {
    fn budget(&self) -> Option<BudgetGate> {
        self.heap.budget()
    }

    fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.heap.set_budget(gate);
    }

    #[inline(always)]
    fn budget_stamp(&self) -> usize {
        self.heap.budget_stamp()
    }

    /// The wrapped heap's events: each block with its guard bytes, as the heap holds it.
    #[cfg(feature = "profiler")]
    fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        self.heap.set_profiler_label(label);
    }
}

/// Reading a guarded heap is reading the heap (stats, memory map, consistency check).
impl<'buf> Deref for GuardedHeap<'buf> {
    type Target = FreeListHeap<'buf>;
    fn deref(&self) -> &FreeListHeap<'buf> {
        &self.heap
    }
}
