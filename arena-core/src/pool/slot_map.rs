//! [`SlotMap<P>`]: the one generational-handle core under [`Pool<T>`](super::Pool) (payload: the
//! value) and [`SoaPool<T>`](crate::soa::SoaPool) (payload: the value's row in the columns).
//!
//! Its insert ([`claim`](SlotMap::claim) + [`Claim::commit`]), remove and lookup are the only code
//! that touches generations, the debug pool tag (the foreign-handle check), the free list and the
//! budget; the containers built on it add storage and nothing else, the way slotmap's `SlotMap`
//! and `DenseSlotMap` share one `KeyData`. Each operation has one inlined path (block 0, the
//! whole of a fixed pool) and the bookkeeping of a filled or freed slot is written once
//! ([`Ledger::occupy`], [`Ledger::release`]).
//!
//! **No call that returns on the paths of remove and get.** Their rarer paths (later chunks, a
//! retiring slot, a miss) are inlined too, behind [`cold_path`](crate::cold_path) hints; what they
//! call out of line only panics (in release builds: with debug checks on, a miss also calls out to
//! adopt an untagged handle). A call that returns, even one the loop never takes, makes the
//! compiler keep the caller's loop state in the few registers a call preserves, and the rest on
//! the stack. With the chunk-table lookups of `remove` and `get`, `retire_one` and the tagged-handle
//! test out of line, the benches' loop of remove + insert + get at 1,000 live 64-byte values
//! (`pool-churn-64-1k`) reloaded two of its own pointers from the stack on every step: 76
//! instructions against 74 for slotmap's `SlotMap`, and 1.10-1.11 of its time. Inlined: 73
//! instructions, 0.96-1.00 of the time.
//! The insert keeps its out-of-line path (never-used slots, growth, a budget, and later chunks'
//! free-list heads: inlined, those cost the block-0 path 3 more instructions per step).
//!
//! **The free list holds vacant slots only.** The inserts take its head (or a never-used slot,
//! vacant since its chunk was made) without checking that it is vacant. Every writer keeps this:
//! [`Ledger::release`] links a slot it has just vacated (a retired slot is linked nowhere),
//! [`Ledger::unlink`] moves the head to the link read from the vacant head, and `restore` links
//! only the slots deserialization checked are vacant (`FreeListOccupied` refuses the others).
//!
//! **Budgets.** A budget counts live values × the value size (`Usage::current`). The inlined
//! insert takes only block-0 free-list heads below `fast_end`, and `fast_end` is block 0's length
//! only while reusing any free slot keeps usage within the budget (the slots in play, live or
//! free, fit it) and no `Warn` budget is lifted; otherwise it is 0 and every insert takes the
//! out-of-line path, which checks the budget. The hot path compares against `fast_end` instead of
//! block 0's length: a budget costs it nothing.

use core::num::NonZeroU32;

use super::chunks::Chunks;
use super::generation::Generations;
use super::key::{Key, make};
use super::slot::{Content, NO_SLOT, Slot};
use super::{PoolCapacityError, PoolReserveError, PoolStats};
use crate::tags::{BudgetExceeded, BudgetGate, PageTag};

/// Why an insert found no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Every slot is live or retired and the map cannot grow.
    Full,
    /// The budget (under `Policy::Fail`) refused one more value.
    OverBudget(BudgetExceeded),
}

/// The counters and links of a slot map: everything but the slot memory, so that a slot borrowed
/// from the chunks and the ledger can be written at once.
#[derive(Clone, Copy)]
struct Ledger {
    /// Head of the free list (`NO_SLOT` = empty).
    free_head: u32,
    /// Slots `high_water..capacity` were never used and are not on the free list.
    high_water: u32,
    /// The vacant generation of slot `high_water`, the next never-used slot to be filled: the
    /// first, unless a handle for it was issued and never filled ([`SlotMap::forfeit`]), which
    /// spends generations without writing the slot or bringing it into play.
    next_fresh: u32,
    generations: Generations,
    peak_live: u32,
    /// Values inserted over the map's life.
    inserts: u64,
    /// Values removed over the map's life. The live count is `inserts - removes`
    /// ([`len`](Self::len)): an insert and a remove each bump one counter, and neither writes a
    /// count the other reads back.
    removes: u64,
    retired: u32,
    /// Free-list heads below this are claimed by the inlined insert path (see the module docs):
    /// block 0's length, or 0 while a budget must be checked on every insert.
    fast_end: u32,
    /// Slots in play (live or free, `high_water - retired`) below which a never-used slot can be
    /// taken without consulting the budget: every slot in play fits an armed budget, so neither
    /// the insert nor `fast_end` can go past it. `u32::MAX` without a budget, 0 while a `Warn`
    /// budget is lifted.
    fresh_in_play: u32,
    budget: Option<BudgetGate>,
    /// The tag new chunks are charged to (set by a `Tracked` wrapper); read only when growing.
    page_tag: PageTag,
    /// The bytes one value counts against the budget.
    unit: usize,
    /// The container's name, for the messages of a refused insert (`"Pool"`, `"SoaPool"`).
    kind: &'static str,
    /// The most slots the handle type can index ([`Key::MAX_SLOTS`]): no slot at or above it is
    /// ever handed out, even where the last chunk reaches past it.
    max_slots: u32,
    /// The name and tag a `Tracked` wrapper put on the map: its inserts and removes are
    /// reported to the profiler sink as `Alloc`/`Free` of one slot (`unit` bytes).
    #[cfg(feature = "profiler")]
    profiler: Option<crate::tags::ProfilerLabel>,
}

/// The generational slot map shared by `Pool` and `SoaPool`.
pub(crate) struct SlotMap<P> {
    chunks: Chunks<P>,
    ledger: Ledger,
}

/// A vacant slot chosen for the next insert, not yet filled: [`SlotMap::claim`]. Its handle is
/// known ([`issue_handle`](Claim::issue_handle)) before the payload is made. Dropping a claim
/// whose handle was never issued changes nothing (but the capacity, if the map grew to find the
/// slot); dropping one whose handle was issued (`insert_with`'s closure panicked, or the value
/// could not be stored) spends that handle's generation ([`SlotMap::forfeit`]), so the handle
/// never names a value, this one or a later one.
pub(crate) struct Claim<'a, P> {
    map: &'a mut SlotMap<P>,
    index: u32,
    slot: *mut Slot<P>,
    /// The slot is the free-list head (else the first never-used slot).
    from_free: bool,
    /// Its handle was handed out: dropped without a payload, the claim spends its generation.
    issued: bool,
}

/// A slot the out-of-line insert path claimed, as two words so that it comes back in two
/// registers: the pointer, and the index with the odd generation the slot takes. A three-field
/// return goes through memory, and the inlined insert's loop then keeps a pointer to that
/// memory at hand (one more instruction per insert even when the path is not taken).
struct Linked<P>(*mut Slot<P>, u64);

impl<P> Linked<P> {
    #[inline(always)]
    fn pack((slot, index, generation): (*mut Slot<P>, u32, NonZeroU32)) -> Self {
        Linked(slot, u64::from(index) | u64::from(generation.get()) << 32)
    }

    #[inline(always)]
    fn unpack(self) -> (*mut Slot<P>, u32, NonZeroU32) {
        let generation = NonZeroU32::new((self.1 >> 32) as u32).expect("an odd generation");
        (self.0, self.1 as u32, generation)
    }
}

/// Converts a requested slot count to `u32`, or says why not (more than `max`).
fn slot_count(requested: usize, max: u32) -> Result<u32, PoolCapacityError> {
    u32::try_from(requested)
        .ok()
        .filter(|&n| n <= max)
        .ok_or(PoolCapacityError::TooManySlots {
            requested,
            max: max as usize,
        })
}

impl Ledger {
    fn new(
        generations: Generations,
        fast_end: u32,
        unit: usize,
        kind: &'static str,
        max_slots: u32,
    ) -> Self {
        Ledger {
            free_head: NO_SLOT,
            high_water: 0,
            next_fresh: generations.first(),
            generations,
            peak_live: 0,
            inserts: 0,
            removes: 0,
            retired: 0,
            fast_end,
            fresh_in_play: u32::MAX,
            budget: None,
            page_tag: PageTag::NONE,
            unit,
            kind,
            max_slots,
            #[cfg(feature = "profiler")]
            profiler: None,
        }
    }

    /// Reports the insert into `slot` (done: the ledger is consistent if the sink panics).
    #[cfg(feature = "profiler")]
    #[inline]
    #[track_caller]
    fn report_alloc<P>(&self, slot: *const Slot<P>) {
        crate::tags::profiler::alloc(self.profiler, slot.addr(), self.unit);
    }

    /// Reports the remove from `slot` (done, as for `report_alloc`).
    #[cfg(feature = "profiler")]
    #[inline]
    fn report_free<P>(&self, slot: *const Slot<P>) {
        crate::tags::profiler::free(self.profiler, slot.addr(), self.unit);
    }

    /// Live values: never more than the slots, so it fits a `u32`.
    #[inline(always)]
    fn len(&self) -> u32 {
        (self.inserts - self.removes) as u32
    }

    /// Bytes the live values count against a budget.
    fn current(&self) -> usize {
        (self.len() as usize).saturating_mul(self.unit)
    }

    /// The bookkeeping of filling vacant `slot`, written once for every insert: the value goes
    /// in with the next odd generation, then [`unlink`](Self::unlink).
    ///
    /// # Safety
    /// `slot` is vacant: the free-list head or a never-used slot (see the module docs).
    #[inline(always)]
    #[cfg_attr(feature = "profiler", track_caller)]
    unsafe fn occupy<P>(&mut self, slot: &mut Slot<P>, payload: P, from_free: bool) -> NonZeroU32 {
        let (generation, next) = if from_free {
            // SAFETY: the caller guarantees the slot is vacant.
            unsafe { slot.occupy_vacant(payload) }
        } else {
            // SAFETY: `slot` is a live `&mut` to an initialized slot of the map, and the
            // pointer derived from it is read before that reference writes again.
            let generation = Generations::occupy(unsafe { self.fresh_generation(slot) });
            // SAFETY: the caller guarantees the slot is vacant.
            unsafe { slot.occupy_fresh(payload, generation) };
            (generation, NO_SLOT)
        };
        self.unlink(from_free, next);
        #[cfg(feature = "profiler")]
        self.report_alloc(slot);
        generation
    }

    /// The generation of never-used `slot` (the one at `high_water`), known without reading it:
    /// the first, or the one after those its forfeited claims spent (`next_fresh`). Every
    /// writer of the slots past `high_water` writes vacant slots of the first generation (or
    /// leaves a fresh page's zeroes where the first is 0), and nothing links them anywhere.
    /// Debug builds read the slot to check.
    ///
    /// # Safety
    /// `slot` points to an initialized slot of the map, valid for reads, that no `&mut` is used
    /// to write meanwhile (a `&mut` the pointer was derived from may be live).
    #[inline(always)]
    unsafe fn fresh_generation<P>(&self, slot: *const Slot<P>) -> u32 {
        #[cfg(debug_assertions)]
        {
            // SAFETY: guaranteed by the caller.
            let stored = unsafe { Slot::generation_raw(slot) };
            assert_eq!(
                stored,
                self.generations.first(),
                "a never-used slot holds the first generation"
            );
        }
        #[cfg(not(debug_assertions))]
        let _ = slot;
        self.next_fresh
    }

    /// The counters of an insert into a slot that was the free-list head (whose link was `next`)
    /// or the first never-used slot.
    #[inline(always)]
    fn unlink(&mut self, from_free: bool, next: u32) {
        self.inserts += 1;
        if from_free {
            self.free_head = next;
        } else {
            self.high_water += 1;
            self.next_fresh = self.generations.first();
            // The peak can only be passed here. A never-used slot is taken only when the free
            // list is empty, and then every slot in play (`high_water - retired`) is live, so
            // this `len` is the number in play. Later, `high_water` stays and `retired` only
            // grows, so no insert from the free list can pass it. Keeping the peak here leaves
            // the free-list insert (the steady state) without a compare.
            self.peak_live = self.peak_live.max(self.len());
        }
    }

    /// The bookkeeping of emptying occupied `slot` (`index`), written once for every remove: the
    /// slot goes to the front of the free list, or retires if its generations are used up
    /// ([`retire_one`](Self::retire_one): after 2^30 uses of a slot in an untagged `Handle`
    /// pool, fewer with a debug build's tag, `Handle32` or a generation budget). Both ends meet
    /// before the value is taken, so it is moved out in one place and the inlined remove path
    /// copies it once.
    ///
    /// # Safety
    /// `slot` is occupied.
    #[inline(always)]
    unsafe fn release<P>(&mut self, slot: &mut Slot<P>, index: u32) -> P {
        let (vacant, next, head) = match self.generations.vacate(slot.generation()) {
            Some(vacant) => (vacant, self.free_head, index),
            None => self.retire_one(),
        };
        // SAFETY: the caller guarantees the slot is occupied; `vacant` is even (the successor of
        // an odd generation, or the retired one).
        let payload = unsafe { slot.vacate(vacant, next) };
        self.free_head = head;
        self.removes += 1;
        #[cfg(feature = "profiler")]
        self.report_free(slot);
        payload
    }

    /// The retiring end of [`release`](Self::release): counts the slot as retired and returns
    /// what it takes instead of a free-list place: the retired generation (even, matched by no
    /// handle), no link, and the free-list head unchanged. The slot is never reused, so no handle
    /// can alias. Inline behind a cold hint, like every rare path of a remove (see the module
    /// docs).
    #[inline(always)]
    fn retire_one(&mut self) -> (u32, u32, u32) {
        crate::cold_path();
        self.retired += 1;
        (self.generations.retired(), NO_SLOT, self.free_head)
    }

    /// Lets one more value in under the budget, or says why not (the policy runs here).
    #[track_caller]
    fn admit(&mut self) -> Result<(), BudgetExceeded> {
        let current = self.current();
        let unit = self.unit;
        let Some(gate) = &mut self.budget else {
            return Ok(());
        };
        // Removes do not settle (the remove path stays free of budget code): usage only matters
        // here, where it would grow.
        gate.settle(current);
        if gate.allows(current, unit) {
            Ok(())
        } else {
            gate.exceeded(current, unit)
        }
    }

    /// Recomputes `fast_end` for a block 0 of `first_len` slots, counting `extra` more slots in
    /// play (live or free) than now: reusing any free slot must keep usage within an armed
    /// budget.
    fn refresh_fast_end(&mut self, first_len: u32, extra: u32) {
        let (safe, fresh_in_play) = match &self.budget {
            None => (true, u32::MAX),
            Some(gate) => {
                let bytes = gate.budget().bytes;
                let armed = gate.limit() == bytes;
                let in_play = (self.high_water - self.retired + extra) as usize;
                // Slots whose values together fit the budget (a zero-sized value fits any).
                let fit = bytes.checked_div(self.unit).unwrap_or(usize::MAX);
                (
                    armed && in_play.saturating_mul(self.unit) <= bytes,
                    if armed {
                        u32::try_from(fit).unwrap_or(u32::MAX)
                    } else {
                        0
                    },
                )
            }
        };
        self.fast_end = if safe { first_len } else { 0 };
        self.fresh_in_play = fresh_in_play;
    }
}

impl<P> SlotMap<P> {
    /// A map handing out `K`s of `capacity` slots (fixed), or of one chunk of `1 << shift` slots
    /// growing by more of the same; each slot holds at most `generation_budget` values in its
    /// life. `unit` is the bytes one value counts against a budget.
    pub(crate) fn build<K: Key>(
        capacity: usize,
        shift: Option<u32>,
        generation_budget: Option<u32>,
        unit: usize,
        kind: &'static str,
    ) -> Result<Self, PoolCapacityError> {
        let count = slot_count(capacity, K::MAX_SLOTS)?;
        let generations = Generations::for_new_pool::<K>(generation_budget);
        let chunks = match shift {
            None => Chunks::fixed(count, generations.first()),
            Some(shift) => Chunks::growable(shift, generations.first()),
        }
        .ok_or(PoolCapacityError::OutOfMemory {
            requested: capacity,
        })?;
        Ok(Self::from_chunks(
            chunks,
            generations,
            unit,
            kind,
            K::MAX_SLOTS,
        ))
    }

    /// A growable map handing out `K`s, of chunks of `1 << shift` slots, that allocates nothing
    /// until the first insert (or [`reserve`](Self::reserve)).
    pub(crate) fn lazy<K: Key>(shift: u32, unit: usize, kind: &'static str) -> Self {
        let generations = Generations::for_new_pool::<K>(None);
        let chunks = Chunks::lazy(shift).expect("an empty block allocates nothing");
        Self::from_chunks(chunks, generations, unit, kind, K::MAX_SLOTS)
    }

    /// Makes room for `additional` more values without further allocation: free and never-used
    /// slots count; a growable map adds whole chunks. On failure nothing changed.
    pub(crate) fn reserve(&mut self, additional: usize) -> Result<(), PoolReserveError> {
        let l = &self.ledger;
        let in_use = l.len() + l.retired;
        let available = (self.capacity() - in_use) as usize;
        if additional <= available {
            return Ok(());
        }
        if self.chunks.chunk_len().is_none() {
            return Err(PoolReserveError::NotGrowable {
                additional,
                available,
            });
        }
        let too_many = PoolReserveError::TooManySlots {
            additional,
            in_use: in_use as usize,
            max: l.max_slots as usize,
        };
        let slots = (in_use as usize)
            .checked_add(additional)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| n <= l.max_slots)
            .ok_or(too_many.clone())?;
        let target = self.chunks.capacity_for(slots).ok_or(too_many)?;
        let first_len = self.chunks.first_len();
        let first = self.ledger.generations.first();
        let grown = self
            .ledger
            .page_tag
            .charged(|| self.chunks.grow_to(target, first));
        if !grown {
            return Err(PoolReserveError::OutOfMemory {
                additional,
                slots: (target - self.chunks.capacity()) as usize,
            });
        }
        if self.chunks.first_len() != first_len {
            self.ledger.refresh_fast_end(self.chunks.first_len(), 0);
        }
        Ok(())
    }

    /// Frees the chunks of a growable map that no value was ever in (those past the highest slot
    /// ever used); returns the number of slots freed. Slots that held a value keep their memory,
    /// and with it their generations.
    pub(crate) fn shrink_to_fit(&mut self) -> u32 {
        let freed = self.chunks.release_unused(self.ledger.high_water);
        if freed != 0 {
            self.ledger.refresh_fast_end(self.chunks.first_len(), 0);
        }
        freed
    }

    fn from_chunks(
        chunks: Chunks<P>,
        generations: Generations,
        unit: usize,
        kind: &'static str,
        max_slots: u32,
    ) -> Self {
        let fast_end = chunks.first_len();
        SlotMap {
            chunks,
            ledger: Ledger::new(generations, fast_end, unit, kind, max_slots),
        }
    }

    /// Live values.
    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.ledger.len()
    }

    /// Slots (for a growable map, allocated so far).
    #[inline]
    pub(crate) fn capacity(&self) -> u32 {
        // Only the last chunk of a `Handle32` map can reach past its slot limit.
        self.chunks.capacity().min(self.ledger.max_slots)
    }

    /// The slots allocated, the part past the handle type's range included (what serialization
    /// writes, so the chunk layout reads back as it was).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn storage_capacity(&self) -> u32 {
        self.chunks.capacity()
    }

    /// The chunk size, if growable.
    pub(crate) fn chunk_len(&self) -> Option<u32> {
        self.chunks.chunk_len()
    }

    /// Slots at or above this were never used.
    #[inline]
    pub(crate) fn high_water(&self) -> u32 {
        self.ledger.high_water
    }

    /// The slot memory, for the iterators.
    #[inline]
    pub(crate) fn chunks(&self) -> &Chunks<P> {
        &self.chunks
    }

    /// The slot memory mutably, for the iterators (they never change a generation).
    #[inline]
    pub(crate) fn chunks_mut(&mut self) -> &mut Chunks<P> {
        &mut self.chunks
    }

    /// The counters.
    pub(crate) fn stats(&self) -> PoolStats {
        let l = &self.ledger;
        PoolStats {
            len: l.len() as usize,
            capacity: self.capacity() as usize,
            peak_live: l.peak_live as usize,
            inserts: l.inserts,
            removes: l.removes,
            retired: l.retired as usize,
            blocks: self.chunks.blocks(),
        }
    }

    /// The budget, settled: a lifted `Warn` budget reads as armed again once usage is back
    /// under (removes settle lazily, on the next insert).
    pub(crate) fn budget(&self) -> Option<BudgetGate> {
        let mut gate = self.ledger.budget?;
        gate.settle(self.ledger.current());
        Some(gate)
    }

    /// [`Budgeted::budget_stamp`](crate::tags::Budgeted::budget_stamp): the stored gate's stamp,
    /// read without settling it.
    #[inline(always)]
    pub(crate) fn budget_stamp(&self) -> usize {
        self.ledger.budget.as_ref().map_or(0, BudgetGate::stamp)
    }

    /// Charges the chunks taken from now on to `tag`.
    pub(crate) fn charge_pages_to(&mut self, tag: PageTag) {
        self.ledger.page_tag = tag;
    }

    /// Puts the profiler label on (see `Ledger::profiler`), the one path of every label change,
    /// the drop's included. The values live when the label changes are freed under the old
    /// label, the old label ends (`PoolEnd`), and they are allocated under the new one, so every
    /// `Free` matches an `Alloc` and nothing comes under the old label after its end.
    #[cfg(feature = "profiler")]
    pub(crate) fn set_profiler_label(&mut self, label: Option<crate::tags::ProfilerLabel>) {
        let old = core::mem::replace(&mut self.ledger.profiler, label);
        if old == label {
            return;
        }
        let unit = self.ledger.unit;
        if old.is_some() {
            self.each_live_slot(|at| crate::tags::profiler::free(old, at, unit));
        }
        crate::tags::profiler::pool_end(old);
        if label.is_some() {
            self.each_live_slot(|at| crate::tags::profiler::alloc_block(label, at, unit));
        }
    }

    /// `f(address)` for each occupied slot, in index order.
    #[cfg(feature = "profiler")]
    fn each_live_slot(&self, mut f: impl FnMut(usize)) {
        for index in 0..self.ledger.high_water {
            let slot = self.chunks.get(index).expect("index below high water");
            if slot.occupied().is_some() {
                f(core::ptr::from_ref(slot).addr());
            }
        }
    }

    /// Sets or removes the budget.
    pub(crate) fn set_budget(&mut self, gate: Option<BudgetGate>) {
        self.ledger.budget = gate.map(BudgetGate::ensure_stamped);
        self.ledger.refresh_fast_end(self.chunks.first_len(), 0);
    }

    /// The free-list head and its index, if the insert may take it without the slow path: a
    /// head in block 0 below `fast_end` (one compare, inline), or, while `fast_end` is not 0 (no
    /// budget needs checking), a head in a later chunk of a growable map (the chunk table, one
    /// short call). `None` sends the insert down the slow path. The pointer is to a vacant slot
    /// of this map.
    #[inline(always)]
    fn inline_head(&self) -> Option<(*mut Slot<P>, u32)> {
        let index = self.ledger.free_head;
        if index < self.ledger.fast_end {
            // SAFETY: `fast_end` is 0 or block 0's length, so `index` is a slot of block 0.
            return Some((unsafe { self.chunks.ptr_in_first_unchecked(index) }, index));
        }
        crate::cold_path();
        if index != NO_SLOT {
            return self.head_past_first();
        }
        None
    }

    /// The free-list head of [`inline_head`](Self::inline_head) past block 0, through the
    /// chunk table. Out of line, unlike the later-chunk paths of `remove` and `get`: inlined, the
    /// two heads' slot addresses merge into one computation that block 0's path pays for (73 ->
    /// 76 instructions per remove + insert + get of 64-byte values; `SoaPool` churn 134 -> 140).
    #[inline(never)]
    fn head_past_first(&self) -> Option<(*mut Slot<P>, u32)> {
        let index = self.ledger.free_head;
        if self.ledger.fast_end == 0 {
            return None;
        }
        Some((self.chunks.ptr_in_rest(index)?, index))
    }

    /// Spends the generation of a claimed slot whose handle was handed out but which was never
    /// filled (`insert_with`'s closure panicked, or the value could not be stored), so that the
    /// handle never names a value. The slot stays vacant, in the same place (the free-list head,
    /// or the first never-used slot, whose next generation the ledger keeps: `next_fresh`), and
    /// nothing is counted as inserted or removed. A slot whose last generation that spends
    /// retires, as a remove would retire it ([`Ledger::retire_one`]).
    ///
    /// # Safety
    /// `slot` points to slot `index` of this map, vacant: the free-list head if `from_free`, else
    /// the first never-used slot.
    #[cold]
    #[inline(never)]
    unsafe fn forfeit(&mut self, slot: *mut Slot<P>, index: u32, from_free: bool) {
        let l = &mut self.ledger;
        let vacant = if from_free {
            // SAFETY: guaranteed by the caller; the map is borrowed mutably, so nothing else
            // references the slot.
            unsafe { Slot::generation_raw(slot) }
        } else {
            // SAFETY: as above.
            unsafe { l.fresh_generation(slot) }
        };
        let next = l.generations.vacate(Generations::occupy(vacant).get());
        match (next, from_free) {
            // The head keeps its place and link; never-used, the slot stays unwritten.
            (Some(next), true) => {
                // SAFETY: as above.
                unsafe { (*slot).respend(next) }
            }
            (Some(next), false) => l.next_fresh = next,
            (None, _) => {
                // Retires: off the free list (its head is this slot), or out of the never-used
                // range, counted in play and retired at once (so no count of slots in play
                // changes, and the peak's reasoning in `Ledger::unlink` holds).
                // SAFETY: as above.
                let slot = unsafe { &mut *slot };
                if from_free {
                    debug_assert_eq!(l.free_head, index);
                    l.free_head = slot.next_free().unwrap_or(NO_SLOT);
                } else {
                    debug_assert_eq!(l.high_water, index);
                    l.high_water += 1;
                    l.next_fresh = l.generations.first();
                }
                let (retired, no_link, _) = l.retire_one();
                slot.respend(retired);
                slot.set_next_free(no_link);
            }
        }
    }

    /// Chooses the slot the next insert fills, growing the map if it must; or says why there is
    /// none (full, or over a `Fail` budget), with nothing changed. The block-0 free-list head is
    /// taken inline; everything else is out of line.
    ///
    /// # Panics
    /// Over a budget with `Policy::Panic`.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn claim(&mut self) -> Result<Claim<'_, P>, Refusal> {
        if let Some((slot, index)) = self.inline_head() {
            return Ok(Claim {
                map: self,
                index,
                slot,
                from_free: true,
                issued: false,
            });
        }
        let (slot, index, from_free) = self.claim_slow()?;
        Ok(Claim {
            map: self,
            index,
            slot,
            from_free,
            issued: false,
        })
    }

    /// [`claim`](Self::claim), panicking if there is no slot: the refusal never reaches the
    /// inlined code.
    ///
    /// # Panics
    /// If the map is full or over a `Fail` or `Panic` budget.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn claim_or_panic(&mut self) -> Claim<'_, P> {
        if let Some((slot, index)) = self.inline_head() {
            return Claim {
                map: self,
                index,
                slot,
                from_free: true,
                issued: false,
            };
        }
        let (slot, index, from_free) = self.claim_slow_or_panic();
        Claim {
            map: self,
            index,
            slot,
            from_free,
            issued: false,
        }
    }

    #[inline(never)]
    #[track_caller]
    fn claim_slow_or_panic(&mut self) -> (*mut Slot<P>, u32, bool) {
        match self.find_slot() {
            Ok(claimed) => claimed,
            Err(refusal) => self.refused(refusal),
        }
    }

    /// Inserts `payload` and returns its handle, panicking if there is no slot. For payloads that exist before the slot is chosen: the
    /// out-of-line path does the bookkeeping and hands back only the slot, so neither the
    /// payload nor a refusal crosses the call and the inlined code stays small.
    ///
    /// # Panics
    /// If the map is full or over a `Fail` or `Panic` budget.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn insert_or_panic<K: Key>(&mut self, payload: P) -> K {
        if let Some((slot, index)) = self.inline_head() {
            // SAFETY: `inline_head` gives a pointer to a slot of this map, which is borrowed
            // mutably, so this is the only reference to it; it is the free-list head, so vacant
            // (see the module docs).
            let generation = unsafe { self.ledger.occupy(&mut *slot, payload, true) };
            return make::<K>(index, generation);
        }
        crate::cold_path();
        let (slot, index, generation) = Linked::unpack(self.claim_slow_linked());
        // SAFETY: `claim_slow_linked` returns a pointer to a vacant slot of this map (blocks
        // never move), which is borrowed mutably, so this is the only reference to it.
        unsafe { (*slot).occupy_fresh(payload, generation) };
        #[cfg(feature = "profiler")]
        self.ledger.report_alloc(slot);
        make::<K>(index, generation)
    }

    /// As [`insert_or_panic`](Self::insert_or_panic), but hands the payload back with the
    /// reason if there is no slot (nothing changed then).
    ///
    /// # Panics
    /// Over a budget with `Policy::Panic`.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn try_insert<K: Key>(&mut self, payload: P) -> Result<K, (P, Refusal)> {
        if let Some((slot, index)) = self.inline_head() {
            // SAFETY: as in `insert_or_panic`.
            let generation = unsafe { self.ledger.occupy(&mut *slot, payload, true) };
            return Ok(make::<K>(index, generation));
        }
        match self.try_claim_slow_linked() {
            Ok((slot, index, generation)) => {
                // SAFETY: as in `insert_or_panic`.
                unsafe { (*slot).occupy_fresh(payload, generation) };
                #[cfg(feature = "profiler")]
                self.ledger.report_alloc(slot);
                Ok(make::<K>(index, generation))
            }
            Err(refusal) => Err((payload, refusal)),
        }
    }

    /// The out-of-line path of [`try_insert`](Self::try_insert).
    #[inline(never)]
    #[track_caller]
    fn try_claim_slow_linked(&mut self) -> Result<(*mut Slot<P>, u32, NonZeroU32), Refusal> {
        let found = self.find_slot()?;
        Ok(self.link(found))
    }

    /// The insert's bookkeeping ([`Ledger::unlink`]) for a slot [`find_slot`](Self::find_slot)
    /// chose, and the odd generation the slot takes; the caller moves the payload in at once
    /// ([`Slot::occupy_fresh`]). A never-used slot is not read (see `occupy_fresh`): its
    /// generation is the map's first, and it is on no list.
    #[inline(always)]
    fn link(
        &mut self,
        (slot, index, from_free): (*mut Slot<P>, u32, bool),
    ) -> (*mut Slot<P>, u32, NonZeroU32) {
        let (next, vacant) = if from_free {
            // SAFETY: `find_slot` returns a pointer to an initialized slot of this map, which is
            // borrowed mutably; the reference ends here.
            let slot = unsafe { &*slot };
            let next = slot.next_free().expect("a claimed slot is vacant");
            (next, slot.generation())
        } else {
            // SAFETY: `find_slot` returns a pointer to an initialized slot of this map, which
            // is borrowed mutably; nothing references the slot.
            (NO_SLOT, unsafe { self.ledger.fresh_generation(slot) })
        };
        self.ledger.unlink(from_free, next);
        (slot, index, Generations::occupy(vacant))
    }

    /// The out-of-line path of [`insert_or_panic`](Self::insert_or_panic): chooses the slot and
    /// does the insert's bookkeeping ([`Ledger::unlink`]); the caller moves the payload in at
    /// once (nothing can fail in between).
    #[inline(never)]
    #[track_caller]
    fn claim_slow_linked(&mut self) -> Linked<P> {
        match self.find_slot() {
            Ok(claimed) => Linked::pack(self.link(claimed)),
            Err(refusal) => self.refused(refusal),
        }
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn refused(&self, refusal: Refusal) -> ! {
        let capacity = self.capacity() as usize;
        super::refused(self.ledger.kind, "insert", capacity, refusal)
    }

    /// The out-of-line insert path of [`claim`](Self::claim).
    #[inline(never)]
    #[track_caller]
    fn claim_slow(&mut self) -> Result<(*mut Slot<P>, u32, bool), Refusal> {
        self.find_slot()
    }

    /// What every out-of-line insert path does: the budget (out of line again), free-list
    /// heads past block 0, never-used slots, growth, a full map. Returns the slot, its index and
    /// whether it is the free-list head; changes nothing but the capacity (and a `Warn`
    /// budget's state).
    #[inline(always)]
    #[track_caller]
    fn find_slot(&mut self) -> Result<(*mut Slot<P>, u32, bool), Refusal> {
        let l = &self.ledger;
        // A never-used slot that keeps every slot in play within an armed budget needs no
        // policy and keeps `fast_end` safe: the common fill of a budgeted pool stays here.
        if l.budget.is_some()
            && (l.free_head != NO_SLOT || l.high_water - l.retired >= l.fresh_in_play)
        {
            return self.find_slot_budgeted();
        }
        self.next_slot().ok_or(Refusal::Full)
    }

    /// [`find_slot`](Self::find_slot) under a budget: a map that is full and cannot grow
    /// refuses first (the insert cannot happen, so no policy runs: a `Panic` budget does not
    /// panic, a `Warn` budget is not crossed); then the policy runs, before any growth, and
    /// `fast_end` is recomputed for the slots in play once this one is filled (dropping the
    /// claim only leaves fewer in play than assumed, which keeps `fast_end` safe).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn find_slot_budgeted(&mut self) -> Result<(*mut Slot<P>, u32, bool), Refusal> {
        if self.full_for_good() {
            return Err(Refusal::Full);
        }
        self.ledger.admit().map_err(Refusal::OverBudget)?;
        let found = self.next_slot().ok_or(Refusal::Full)?;
        let in_play = u32::from(!found.2);
        self.ledger
            .refresh_fast_end(self.chunks.first_len(), in_play);
        Ok(found)
    }

    /// Whether [`next_slot`](Self::next_slot) is sure to find nothing: no free slot, no
    /// never-used one, and a map that cannot grow (a fixed one, or one at its most slots or at
    /// the index limit). A growth the system allocator refuses is not foreseen.
    fn full_for_good(&self) -> bool {
        let l = &self.ledger;
        l.free_head == NO_SLOT
            && l.high_water >= self.capacity()
            && !self.chunks.can_grow(l.max_slots)
    }

    /// The free-list head, else the first never-used slot, growing the map if there is none;
    /// `None` if full.
    #[inline(always)]
    fn next_slot(&mut self) -> Option<(*mut Slot<P>, u32, bool)> {
        let l = &self.ledger;
        let (index, from_free) = if l.free_head != NO_SLOT {
            (l.free_head, true)
        } else if l.high_water < self.capacity() || self.grow() {
            (self.ledger.high_water, false)
        } else {
            return None;
        };
        let slot = self
            .chunks
            .ptr(index)
            .expect("a free or never-used slot index");
        Some((slot, index, from_free))
    }

    /// Adds a chunk; `false` if the map cannot grow. A chunk that lands in block 0 (a lazy
    /// map's first, or any that block 0 grows by in place) is served by the inlined paths:
    /// `fast_end` is recomputed for it, counting the slot the caller is about to fill.
    fn grow(&mut self) -> bool {
        let first_len = self.chunks.first_len();
        if !self.chunks.can_grow(self.ledger.max_slots) {
            return false;
        }
        // An insert writes the first new slot next: its pages may as well be resident now.
        let first = self.ledger.generations.first();
        let grown = self
            .ledger
            .page_tag
            .charged(|| self.chunks.grow(first, true));
        if !grown {
            return false;
        }
        if self.chunks.first_len() != first_len {
            self.ledger.refresh_fast_end(self.chunks.first_len(), 1);
        }
        true
    }

    /// The payload of the occupied slot `handle` names, or `None` (stale, or, caught in debug
    /// builds with a panic, from another map). All inline: block 0 is a bounds check and a
    /// generation compare, a later chunk of a growable map adds the chunk table's entry.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn get<K: Key>(&self, handle: K) -> Option<&P> {
        let Some(slot) = self.chunks.get_in_first(handle.index()) else {
            crate::cold_path();
            return self.get_past_first(handle);
        };
        if let Some(payload) = slot.get(handle.generation()) {
            return Some(payload);
        }
        crate::cold_path();
        let adopted = self.miss(handle)?;
        self.get_adopted(adopted)
    }

    /// [`get`](Self::get) past block 0: the chunk table, and the miss. Inline, so that `get` makes
    /// no call that returns (see the module docs).
    #[inline(always)]
    #[track_caller]
    fn get_past_first<K: Key>(&self, handle: K) -> Option<&P> {
        if let Some(slot) = self.chunks.ptr_in_rest(handle.index()) {
            // SAFETY: `ptr_in_rest` gives a pointer to an initialized slot owned by `self`; the
            // shared borrow of `self` keeps writers away.
            if let Some(payload) = unsafe { &*slot }.get(handle.generation()) {
                return Some(payload);
            }
        }
        let adopted = self.miss(handle)?;
        self.get_adopted(adopted)
    }

    /// [`get`](Self::get) of a handle [`miss`](Self::miss) gave this map's tag.
    #[cold]
    #[inline(never)]
    fn get_adopted<K: Key>(&self, handle: K) -> Option<&P> {
        self.chunks.get(handle.index())?.get(handle.generation())
    }

    /// [`get`](Self::get), mutably.
    #[inline]
    #[track_caller]
    pub(crate) fn get_mut<K: Key>(&mut self, handle: K) -> Option<&mut P> {
        if let Some(slot) = self.chunks.ptr(handle.index()) {
            // SAFETY: `ptr` gives a pointer to an initialized slot of this map, which is borrowed
            // mutably; the reference is returned (tied to that borrow) or dead before the map
            // is used again below.
            if let Some(payload) = unsafe { &mut *slot }.get_mut(handle.generation()) {
                return Some(payload);
            }
        }
        let adopted = self.miss(handle)?;
        self.chunks
            .get_mut(adopted.index())?
            .get_mut(adopted.generation())
    }

    /// A lookup failed: the handle is stale (`None`), or (caught here, with a panic) from another
    /// tagged map, or untagged in a tagged map: then it comes back with this map's tag, to look
    /// up again (see [`Generations::check_foreign`]). `#[inline]`, and the compiler inlines it
    /// (in release builds it is the constant `None`); `#[inline(always)]` on it and on
    /// `check_foreign` measured worse, `pool-churn-64` 73 -> 97 instructions per step.
    #[inline]
    #[track_caller]
    fn miss<K: Key>(&self, handle: K) -> Option<K> {
        self.ledger.generations.check_foreign(handle)
    }

    /// Removes the payload `handle` names, or `None` if it is not live (a double free does
    /// nothing). The slot is found inline (block 0, or the chunk table of a growable map; a
    /// miss's adoption, in debug builds only, out of line); the one inlined [`Ledger::release`]
    /// moves the payload out once.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn remove<K: Key>(&mut self, handle: K) -> Option<P> {
        let index = handle.index();
        let (slot, index) = match self.chunks.ptr_in_first(index) {
            // SAFETY: `ptr_in_first` gives a pointer to an initialized slot of this map; no
            // reference to it exists while the map is borrowed mutably here.
            Some(slot) if unsafe { Slot::generation_raw(slot) } == handle.generation().get() => {
                (slot, index)
            }
            // Inline, so that without debug checks the compiler sees the constant `None`.
            Some(_) => {
                crate::cold_path();
                self.locate_adopted(self.miss(handle)?)?
            }
            None => {
                crate::cold_path();
                self.locate_past_first(handle)?
            }
        };
        // SAFETY: `slot` points to a slot of this map (blocks never move; the map is borrowed
        // mutably, and no other reference to the slot is alive) whose generation equals a
        // handle's, which is odd: the slot is occupied.
        Some(unsafe { self.ledger.release(&mut *slot, index) })
    }

    /// The slot of [`remove`](Self::remove) past block 0 (a growable map's later chunks): its
    /// pointer and index if `handle`, or the handle [`miss`](Self::miss) adopts, names a live
    /// value. Inline, so that `remove` makes no call that returns (see the module docs); the
    /// chunk table reads block 0's length afresh ([`Chunks::ptr_in_rest`]), which keeps the two
    /// paths from sharing work that block 0's path would pay for.
    #[inline(always)]
    #[track_caller]
    fn locate_past_first<K: Key>(&self, handle: K) -> Option<(*mut Slot<P>, u32)> {
        let index = handle.index();
        if let Some(slot) = self.chunks.ptr_in_rest(index)
            // SAFETY: `ptr_in_rest` gives a pointer to an initialized slot of this map; no
            // `&mut` to it exists while `self` is borrowed.
            && unsafe { Slot::generation_raw(slot) } == handle.generation().get()
        {
            return Some((slot, index));
        }
        self.locate_adopted(self.miss(handle)?)
    }

    /// The slot of [`remove`](Self::remove) for a handle [`miss`](Self::miss) gave this map's
    /// tag, if that names a live value.
    #[cold]
    #[inline(never)]
    fn locate_adopted<K: Key>(&self, adopted: K) -> Option<(*mut Slot<P>, u32)> {
        let index = adopted.index();
        let slot = self.chunks.ptr(index)?;
        // SAFETY: `ptr` gives a pointer to an initialized slot of this map; no `&mut` to it
        // exists while `self` is borrowed.
        let generation = unsafe { Slot::generation_raw(slot) };
        (generation == adopted.generation().get()).then_some((slot, index))
    }

    /// The handle of occupied slot `index`, or `None` if it is vacant or out of range.
    #[inline]
    pub(crate) fn handle_at<K: Key>(&self, index: u32) -> Option<K> {
        let (generation, _) = self.chunks.get(index)?.occupied()?;
        Some(make::<K>(index, generation))
    }

    /// The payload of slot `index`, which the caller knows is occupied, mutably: no vacancy
    /// test (`SoaPool`'s remove fixes the moved row's slot with it, the row's back link naming
    /// a live slot by the pool's invariant). Block 0 (every slot of a fixed map) is looked at
    /// inline, one compare; a later chunk out of line (unlike [`remove`](Self::remove)'s, which
    /// is inline: here that cost `SoaPool` churn 4 instructions, 134 -> 138).
    ///
    /// # Safety
    /// Slot `index` exists and is occupied.
    #[inline(always)]
    pub(crate) unsafe fn occupied_payload_mut(&mut self, index: u32) -> &mut P {
        let slot = match self.chunks.ptr_in_first(index) {
            Some(slot) => slot,
            None => {
                crate::cold_path();
                let slot = self.slot_past_first_mut(index);
                debug_assert!(slot.is_some(), "slot {index} exists");
                // SAFETY: the caller guarantees slot `index` exists.
                unsafe { slot.unwrap_unchecked() }
            }
        };
        debug_assert!(
            // SAFETY: `slot` points to an initialized slot of this map.
            unsafe { &*slot }.is_occupied(),
            "slot {index} is occupied"
        );
        // SAFETY: `slot` points to an initialized slot of this map, occupied (guaranteed by the
        // caller), so its value is initialized; the map is borrowed mutably, so this is the only
        // reference to it.
        unsafe { &mut *Slot::value_raw(slot) }
    }

    /// Slot `index` past block 0, for [`occupied_payload_mut`](Self::occupied_payload_mut): out
    /// of line.
    #[inline(never)]
    fn slot_past_first_mut(&mut self, index: u32) -> Option<&mut Slot<P>> {
        self.chunks.get_mut(index)
    }

    /// Removes the payload of occupied slot `index`.
    ///
    /// # Panics
    /// If the slot is vacant: the caller's bookkeeping is broken.
    #[inline]
    pub(crate) fn remove_at(&mut self, index: u32) -> P {
        let slot = self
            .chunks
            .get_mut(index)
            .expect("remove_at on a slot index");
        assert!(slot.is_occupied(), "remove_at on a vacant slot");
        // SAFETY: just checked: the slot is occupied.
        unsafe { self.ledger.release(slot, index) }
    }

    /// Keeps the payloads for which `keep` returns `true`; the others are removed and passed to
    /// `removed` (in slot order).
    pub(crate) fn retain<K: Key>(
        &mut self,
        mut keep: impl FnMut(K, &mut P) -> bool,
        mut removed: impl FnMut(P),
    ) {
        // Removing changes neither: no slot past `high_water` is ever occupied.
        let (live, end) = (self.ledger.len(), self.ledger.high_water);
        let (mut seen, mut index) = (0, 0);
        while seen < live && index < end {
            let slot = self.chunks.get_mut(index).expect("index below high water");
            if let Some((generation, payload)) = slot.occupied_mut() {
                seen += 1;
                if !keep(make::<K>(index, generation), payload) {
                    // The slot was just seen occupied: release it in place (the payload leaves
                    // the map before `removed`, user code, runs).
                    // SAFETY: `occupied_mut` returned the payload: the slot is occupied.
                    removed(unsafe { self.ledger.release(slot, index) });
                }
            }
            index += 1;
        }
    }

    /// The first occupied slot in `*front..back`, removed: `(handle, payload)`; `*front` moves
    /// past it. Used by the draining iterators.
    pub(crate) fn take_front<K: Key>(&mut self, front: &mut u32, back: u32) -> Option<(K, P)> {
        while self.ledger.len() > 0 && *front < back {
            let at = *front;
            *front += 1;
            if let Some(handle) = self.handle_at(at) {
                return Some((handle, self.remove_at(at)));
            }
        }
        None
    }

    /// The last occupied slot in `front..*back`, removed; `*back` moves down to it.
    pub(crate) fn take_back<K: Key>(&mut self, front: u32, back: &mut u32) -> Option<(K, P)> {
        while self.ledger.len() > 0 && front < *back {
            *back -= 1;
            let at = *back;
            if let Some(handle) = self.handle_at(at) {
                return Some((handle, self.remove_at(at)));
            }
        }
        None
    }

    /// Mutable references to the payloads of `N` distinct live handles, or `None` if any is
    /// stale or two are equal. Each slot is marked while checking, so a repeat fails its compare.
    #[track_caller]
    pub(crate) fn get_disjoint_mut<K: Key, const N: usize>(
        &mut self,
        handles: [K; N],
    ) -> Option<[&mut P; N]> {
        let generations = self.ledger.generations;
        let handles = handles.map(|handle| generations.adopted(handle));
        let mut slots = [core::ptr::null_mut::<Slot<P>>(); N];
        let mut claimed = 0;
        for (i, handle) in handles.iter().enumerate() {
            let Some(slot) = self.chunks.ptr(handle.index()) else {
                break;
            };
            // SAFETY: `ptr` gives a pointer to an initialized slot of this map, which we borrow
            // mutably; no reference to any slot exists during this loop.
            if unsafe { Slot::generation_raw(slot) } != handle.generation().get() {
                break;
            }
            // SAFETY: as above; every claimed slot is flipped back in the loop below.
            unsafe { Slot::flip_raw(slot) };
            slots[i] = slot;
            claimed += 1;
        }
        for &slot in &slots[..claimed] {
            // SAFETY: flipping back the slots claimed above, still unreferenced.
            unsafe { Slot::flip_raw(slot) };
        }
        if claimed < N {
            self.miss(handles[claimed]);
            return None;
        }
        // SAFETY: every pointer is to a distinct (a repeat would have failed the compare after
        // the flip) occupied slot (its generation equals an odd handle generation) of this map,
        // which stays mutably borrowed for the lifetime of the references.
        Some(slots.map(|slot| unsafe { &mut *Slot::value_raw(slot) }))
    }

    /// Removes (and drops) every payload.
    pub(crate) fn clear(&mut self) {
        self.retain(|_: super::Handle<()>, _| false, drop);
    }

    /// A copy with the same slots, generations, free list, counters and budget, each payload
    /// made by `copy` (in slot order). If `copy` panics, the partial copy drops what it made.
    ///
    /// # Panics
    /// If the slot memory cannot be allocated.
    pub(crate) fn clone_with(&self, mut copy: impl FnMut(&P) -> P) -> Self {
        let generations = self.ledger.generations;
        let chunks = Chunks::with_layout(
            self.chunks.chunk_len(),
            self.chunks.capacity(),
            generations.first(),
        )
        .unwrap_or_else(|| {
            panic!(
                "Pool::clone: out of memory for {} slots",
                self.chunks.capacity()
            )
        });
        let l = &self.ledger;
        let mut out = Self::from_chunks(chunks, generations, l.unit, l.kind, l.max_slots);
        for index in 0..self.ledger.high_water {
            let from = self.chunks.get(index).expect("index below high water");
            let to = out.chunks.get_mut(index).expect("same capacity");
            match from.content() {
                Content::Occupied(payload) => {
                    to.occupy(copy(payload), from.generation());
                    // Counted as it goes, so a panicking `copy` leaves a map whose owner drops
                    // what was copied so far.
                    out.ledger.inserts += 1;
                    out.ledger.high_water = index + 1;
                }
                Content::Vacant(next) => {
                    *to = Slot::vacant(from.generation());
                    to.set_next_free(next);
                }
            }
        }
        out.ledger = self.ledger;
        // The copy's block 0 need not be as long as this one's (this one may have grown in place
        // where the copy could reserve no range, or the other way round): `fast_end` is the
        // copy's own, or the inline insert would take a head past its block 0.
        out.ledger.refresh_fast_end(out.chunks.first_len(), 0);
        // The copy's slots were never reported: it raises nothing until it is labelled itself.
        #[cfg(feature = "profiler")]
        {
            out.ledger.profiler = None;
        }
        out
    }

    /// The free list, head first (serialization keeps its order).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn free_list(&self) -> impl Iterator<Item = u32> + '_ {
        let mut index = self.ledger.free_head;
        core::iter::from_fn(move || {
            if index == NO_SLOT {
                return None;
            }
            let at = index;
            let slot = self
                .chunks
                .get(at)
                .expect("free-list entries are slot indexes");
            index = slot.next_free().expect("free-list entries are vacant");
            Some(at)
        })
    }

    /// The number of slots on the free list.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn free_len(&self) -> usize {
        let l = &self.ledger;
        (l.high_water - l.len() - l.retired) as usize
    }

    /// The used slots (`0..high_water`) as `(generation, payload if occupied)`.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn used_slots(&self) -> impl Iterator<Item = (u32, Option<&P>)> + '_ {
        (0..self.ledger.high_water).map(|index| {
            let slot = self.chunks.get(index).expect("index below high water");
            (slot.generation(), slot.occupied().map(|(_, p)| p))
        })
    }

    /// The generation scheme's raw parts `(tag_bits, first)`.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn scheme(&self) -> (u32, u32) {
        self.ledger.generations.to_raw()
    }

    /// The vacant generation the first never-used slot will take its value from.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn fresh_generation(&self) -> u32 {
        self.ledger.next_fresh
    }

    /// `(peak_live, inserts)`.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn counters(&self) -> (u32, u64) {
        (self.ledger.peak_live, self.ledger.inserts)
    }

    /// Rebuilds a map from serialized parts that [`validate`](super::serde) accepted: `slots` are
    /// the used slots' `(generation, payload)`, `free_list` head first. Payloads are placed as they
    /// come; `None` if out of memory or the layout is impossible (nothing placed then).
    #[cfg(feature = "serde")]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn restore(
        chunk: Option<u32>,
        capacity: u32,
        generations: Generations,
        slots: impl IntoIterator<Item = (u32, Option<P>)>,
        free_list: &[u32],
        peak_live: u32,
        inserts: u64,
        fresh_generation: u32,
        unit: usize,
        kind: &'static str,
        max_slots: u32,
    ) -> Option<Self> {
        let chunks = Chunks::with_layout(chunk, capacity, generations.first())?;
        let mut map = Self::from_chunks(chunks, generations, unit, kind, max_slots);
        let mut used = 0;
        for (index, (generation, payload)) in (0..).zip(slots) {
            let slot = map
                .chunks
                .get_mut(index)
                .expect("validated: below capacity");
            used = index + 1;
            match payload {
                Some(payload) => {
                    slot.occupy(payload, generation);
                    // Counted as placed, so a panic partway leaves a map that drops them.
                    map.ledger.inserts += 1;
                    map.ledger.high_water = index + 1;
                }
                None => *slot = Slot::vacant(generation),
            }
        }
        let mut next = NO_SLOT;
        for &index in free_list.iter().rev() {
            let slot = map.chunks.get_mut(index).expect("validated: a listed slot");
            slot.set_next_free(next);
            next = index;
        }
        let l = &mut map.ledger;
        let live = l.len();
        l.free_head = next;
        l.high_water = used;
        l.retired = used - live - free_list.len() as u32;
        // Every slot in play (live or free) was live at once when the last never-used slot was
        // taken (see `Ledger::unlink`), which is what lets inserts from the free list skip the
        // peak; data saying less is raised to that.
        l.peak_live = peak_live.max(live + free_list.len() as u32);
        // Validated: `inserts` covers the live values.
        l.inserts = inserts;
        l.removes = inserts - u64::from(live);
        l.next_fresh = fresh_generation;
        Some(map)
    }
}

impl<'a, P> Claim<'a, P> {
    /// The index of the claimed slot.
    #[inline(always)]
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// The handle the payload will have, to hand to user code before the payload exists: from
    /// now on, dropping the claim without [`commit`](Claim::commit) spends the handle's
    /// generation (see [`SlotMap::forfeit`]).
    #[inline(always)]
    pub(crate) fn issue_handle<K: Key>(&mut self) -> K {
        self.issued = true;
        self.handle()
    }

    /// The handle the payload will have. A never-used slot is not read (see
    /// [`Ledger::fresh_generation`]).
    #[inline(always)]
    fn handle<K: Key>(&self) -> K {
        let vacant = if self.from_free {
            // SAFETY: `slot` points to slot `index` of the map this claim borrows mutably;
            // nothing references it.
            unsafe { Slot::generation_raw(self.slot) }
        } else {
            // SAFETY: as above.
            unsafe { self.map.ledger.fresh_generation(self.slot) }
        };
        make::<K>(self.index, Generations::occupy(vacant))
    }

    /// Fills the claimed slot with `payload` and returns its handle.
    ///
    /// # Panics
    /// In debug builds, if the slot is not vacant: the bookkeeping is broken.
    #[inline(always)]
    pub(crate) fn commit<K: Key>(mut self, payload: P) -> K {
        // Filled: nothing to spend when the claim is dropped below.
        self.issued = false;
        // SAFETY: `slot` points to an initialized slot of the map (blocks never move), which
        // this claim borrows mutably, so this is the only reference to it.
        let slot = unsafe { &mut *self.slot };
        // SAFETY: a claim is made for the free-list head or a never-used slot, both vacant, and
        // borrows the map mutably, so nothing has filled it since.
        let generation = unsafe { self.map.ledger.occupy(slot, payload, self.from_free) };
        make::<K>(self.index, generation)
    }
}

/// A claim whose handle was issued and which was never filled spends the handle's generation.
impl<P> Drop for Claim<'_, P> {
    #[inline]
    fn drop(&mut self) {
        if self.issued {
            // SAFETY: `slot` points to the claimed slot of the map this claim borrows mutably
            // (blocks never move), vacant and unfilled since the claim was made.
            unsafe { self.map.forfeit(self.slot, self.index, self.from_free) };
        }
    }
}

/// Drops the live payloads; if one's drop panics, the ones after it are still dropped (as `Vec`
/// does; a second panic aborts, as there). The slot memory is freed by [`Chunks`].
impl<P> Drop for SlotMap<P> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<P>() {
            /// Goes on clearing while unwinding from a payload's panicking drop (and then takes
            /// the label off, as below).
            struct ClearRest<'m, P>(&'m mut SlotMap<P>);
            impl<P> Drop for ClearRest<'_, P> {
                fn drop(&mut self) {
                    self.0.clear();
                    #[cfg(feature = "profiler")]
                    self.0.set_profiler_label(None);
                }
            }
            let rest = ClearRest(self);
            rest.0.clear();
            core::mem::forget(rest);
        }
        // The label goes with the map (its `PoolEnd`). Values with no destructor are not removed
        // one by one: to the profiler, they are freed here, all of them.
        #[cfg(feature = "profiler")]
        self.set_profiler_label(None);
    }
}
