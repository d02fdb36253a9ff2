//! Generation numbers: how a slot's generation counts, retires, and (in debug builds) carries the
//! tag of the pool that owns it.
//!
//! A slot's generation is even while the slot is vacant and odd while it holds a value; a handle
//! stores the odd generation it was created with. The layouts of [`Handle`](super::Handle) pools are told apart
//! by bit 31; [`Handle32`](super::Handle32) pools use 12 counter bits and are never tagged:
//!
//! | bit 31 | bits 24..=30 | counter bits | occupations per slot |
//! | --- | --- | --- | --- |
//! | 0 (untagged, release builds) | counter | 0..=30 | 2^30 |
//! | 1 (tagged, debug builds) | pool tag (0..=127) | 0..=23 | 2^23 |
//! | 0 ([`Handle32`](super::Handle32) pools) | 0 | 0..=11 | 2^11 |
//!
//! When an occupied slot's counter is all ones, removing its value *retires* the slot instead of
//! wrapping the counter to a value an old handle may still hold: the slot never takes a value
//! again. A tagged pool knows its tag, so on a lookup that misses it can tell a handle from
//! another pool (different tag) from a merely stale one, and panic with a clear message instead of
//! returning another pool's value. The tag costs nothing on the hit path: generations of
//! different pools differ, so the ordinary generation compare already fails.

use core::num::NonZeroU32;

use super::key::{Key, make};

/// Bit 31: set in the generations of tagged (debug-build) pools.
const TAGGED: u32 = 1 << 31;
/// Bits 24..=31: the tagged flag and the 7-bit pool tag.
const TAG_FIELD: u32 = 0xFF00_0000;
const TAG_SHIFT: u32 = 24;
/// Counter bits of a tagged generation.
const TAGGED_COUNTER: u32 = 0x00FF_FFFF;
/// Counter bits of an untagged generation of a [`Handle`](super::Handle) pool.
pub(crate) const UNTAGGED_COUNTER: u32 = 0x7FFF_FFFF;

/// The pool tag stored in a raw generation, if it is tagged.
pub(crate) const fn tag_of(raw: u32) -> Option<u8> {
    if raw & TAGGED != 0 {
        Some(((raw >> TAG_SHIFT) & 0x7F) as u8)
    } else {
        None
    }
}

/// The generation with pool tag `tag` (0..=127) and `counter`, or `None` if the counter does
/// not fit a tagged generation's 24 bits (no debug-build pool has such a generation): how an
/// untagged handle ([`Handle::from_bits`](super::Handle::from_bits)) is adopted by a tagged pool
/// or side table.
pub(crate) const fn tagged(counter: u32, tag: u8) -> Option<NonZeroU32> {
    if counter > TAGGED_COUNTER {
        return None;
    }
    NonZeroU32::new(TAGGED | ((tag as u32 & 0x7F) << TAG_SHIFT) | counter)
}

/// The counter part of a raw generation (the whole value if untagged).
pub(crate) const fn counter_of(raw: u32) -> u32 {
    if raw & TAGGED != 0 {
        raw & TAGGED_COUNTER
    } else {
        raw
    }
}

/// The generation scheme of one pool: its tag bits (zero if untagged), the vacant generation
/// new slots start at and the counter bits. `Copy`, three words; shared by every pool kind, for
/// every handle type ([`Key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Generations {
    /// `0`, or `TAGGED | tag << 24`.
    tag_bits: u32,
    /// The (even) generation of a slot that was never used.
    first: u32,
    /// The counter bits of this layout ([`counter_mask`](Self::counter_mask)), kept so that
    /// `vacate` on the remove path is one `and` and one compare; every other bit of a generation
    /// this pool made equals `tag_bits`.
    mask: u32,
}

impl Generations {
    /// The scheme for a new pool handing out `K`s: tagged with a fresh tag when debug checks are
    /// on ([`poison::ENABLED`](crate::poison::ENABLED)) and `K` has room for a tag, untagged
    /// otherwise; each slot can hold `budget` values in its life (clamped to `1..=` the layout's
    /// maximum; `None` = maximum).
    pub(crate) fn for_new_pool<K: Key>(budget: Option<u32>) -> Self {
        let tag_bits = if crate::poison::ENABLED && K::TAGGED_IN_DEBUG {
            TAGGED | (next_tag() << TAG_SHIFT)
        } else {
            0
        };
        let scheme = Self::with_parts::<K>(tag_bits, tag_bits);
        let budget = budget.unwrap_or(u32::MAX).clamp(1, scheme.max_budget());
        // Occupied counters run first+1, first+3, ..., mask: (mask + 1 - first) / 2 values.
        let first = scheme.counter_mask() + 1 - 2 * budget;
        Self::with_parts::<K>(tag_bits, tag_bits | first)
    }

    const fn with_parts<K: Key>(tag_bits: u32, first: u32) -> Self {
        let mask = if tag_bits & TAGGED != 0 {
            TAGGED_COUNTER
        } else {
            K::COUNTER_MASK
        };
        Generations {
            tag_bits,
            first,
            mask,
        }
    }

    /// Rebuilds the scheme of a pool of `K`s from its raw parts (deserialization), or `None` if
    /// they are inconsistent (a tag where `K` has no room for one, a first generation outside
    /// the layout's counter bits, or odd).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn from_raw<K: Key>(tag_bits: u32, first: u32) -> Option<Self> {
        let valid_tag = tag_bits == 0
            || (K::TAGGED_IN_DEBUG && tag_bits & TAGGED != 0 && tag_bits & !TAG_FIELD == 0);
        let scheme = Self::with_parts::<K>(tag_bits, first);
        (valid_tag && scheme.owns(first) && first & 1 == 0).then_some(scheme)
    }

    /// The raw parts: `(tag_bits, first)`.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) const fn to_raw(self) -> (u32, u32) {
        (self.tag_bits, self.first)
    }

    /// This pool's tag, if tagged.
    pub(crate) const fn tag(self) -> Option<u8> {
        tag_of(self.tag_bits)
    }

    const fn counter_mask(self) -> u32 {
        self.mask
    }

    /// The most values one slot can hold in its life under this layout.
    pub(crate) const fn max_budget(self) -> u32 {
        (self.counter_mask() >> 1) + 1
    }

    /// The generation a never-used slot starts with (even).
    #[inline]
    pub(crate) const fn first(self) -> u32 {
        self.first
    }

    /// The generation a vacant slot takes when it receives a value.
    #[inline]
    pub(crate) const fn occupy(vacant: u32) -> NonZeroU32 {
        match NonZeroU32::new(vacant | 1) {
            Some(g) => g,
            None => unreachable!(),
        }
    }

    /// The generation an occupied slot takes when its value leaves, or `None` if the counter is
    /// exhausted and the slot must retire.
    ///
    /// The counter is all ones exactly when adding one clears every counter bit (the carry
    /// leaves them for the bit above), so the test is made on the sum, which is also the answer:
    /// one add and one test on the remove path.
    #[inline]
    pub(crate) const fn vacate(self, occupied: u32) -> Option<u32> {
        let next = occupied.wrapping_add(1);
        if next & self.counter_mask() == 0 {
            None
        } else {
            Some(next)
        }
    }

    /// The generation of a retired slot: even, so no handle matches it.
    #[inline]
    pub(crate) const fn retired(self) -> u32 {
        self.tag_bits
    }

    /// Whether `raw` has this scheme's tag and a counter past the first (vacant) generation:
    /// the generation of a slot that was used at least once and is not retired.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) const fn is_after_first(self, raw: u32) -> bool {
        self.owns(raw) && raw & self.mask > self.first & self.mask
    }

    /// Whether a raw generation has this scheme's tag bits and nothing outside its counter bits
    /// (a slot or handle of this pool). For a tagged scheme the bits outside the counter are the
    /// tag field, for an untagged [`Handle`](super::Handle) scheme bit 31, for a
    /// [`Handle32`](super::Handle32) scheme the 20 bits above the 12-bit counter.
    pub(crate) const fn owns(self, raw: u32) -> bool {
        raw & !self.mask == self.tag_bits
    }

    /// Called when a lookup with `handle` missed: a stale handle just misses (`None`), but one
    /// whose generation carries another pool's tag panics, naming both tags. Only tagged
    /// (debug-build) pools, and untagged pools shown a tagged handle, can tell. An untagged
    /// handle shown a tagged pool ([`Handle::from_bits`](super::Handle::from_bits), [`Handle::null`](super::Handle::null)) is not foreign: it
    /// comes back with this pool's tag, for the caller to look up again.
    ///
    /// Without debug checks ([`poison::ENABLED`](crate::poison::ENABLED) off) pools are untagged
    /// and so are their handles: nothing needs adopting, and the answer is always `None`, a
    /// constant the compiler folds into the lookups (returning an adopted handle there instead
    /// measured 6 more instructions per remove + insert + get in release builds). A tagged pool
    /// loaded from a debug build's data then misses untagged handles instead of adopting them.
    #[inline]
    #[track_caller]
    pub(crate) fn check_foreign<K: Key>(self, handle: K) -> Option<K> {
        if self.owns(handle.generation().get()) {
            None
        } else if crate::poison::ENABLED {
            self.adopt(handle)
        } else {
            self.refuse_tagged(handle);
            None
        }
    }

    /// Panics if `handle` is tagged (another pool's, as it is not this one's). Inline, with only
    /// the panic out of line: a stale handle's lookup makes no call that returns (see the
    /// `slot_map` module docs).
    #[inline(always)]
    #[track_caller]
    fn refuse_tagged<K: Key>(self, handle: K) {
        if handle.generation().get() & TAGGED != 0 {
            self.foreign_handle(handle);
        }
    }

    /// `handle` with this pool's tag, if it is untagged and this pool tagged (and its counter
    /// fits a tagged one: otherwise no slot can match, `None`); else it is foreign: panics.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn adopt<K: Key>(self, handle: K) -> Option<K> {
        let raw = handle.generation().get();
        if self.tag_bits & TAGGED == 0 || raw & TAGGED != 0 {
            self.foreign_handle(handle);
        }
        let generation = tagged(raw, self.tag()?)?;
        Some(make::<K>(handle.index(), generation))
    }

    /// `handle` as this pool's: [`check_foreign`](Self::check_foreign)'s adopted handle, or the
    /// handle itself (owned, or stale).
    #[track_caller]
    pub(crate) fn adopted<K: Key>(self, handle: K) -> K {
        self.check_foreign(handle).unwrap_or(handle)
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn foreign_handle<K: Key>(self, handle: K) -> ! {
        let ty = K::value_type_name();
        match (tag_of(handle.generation().get()), self.tag()) {
            (theirs, Some(ours)) => panic!(
                "{handle:?} was made by a different pool of {ty} (tag {theirs:?}) than this one \
                 (tag {ours}); a handle is only valid in the pool that returned it"
            ),
            (_, None) => panic!(
                "{handle:?} was made by a debug-build pool of {ty}, not this one; a handle is \
                 only valid in the pool that returned it"
            ),
        }
    }
}

/// Hands out tags 0..=127 round robin: two pools alive at once share a tag only if 128 pools
/// were created between them.
#[cfg(target_has_atomic = "32")]
fn next_tag() -> u32 {
    use core::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed) & 0x7F
}

#[cfg(not(target_has_atomic = "32"))]
fn next_tag() -> u32 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::{Handle, Handle32};

    #[test]
    fn budget_counts_occupations_then_retires() {
        for budget in [1, 2, 5] {
            let g = Generations::for_new_pool::<Handle<()>>(Some(budget));
            let mut vacant = g.first();
            let mut uses = 0;
            loop {
                let occupied = Generations::occupy(vacant).get();
                assert!(g.owns(occupied));
                uses += 1;
                match g.vacate(occupied) {
                    Some(next) => vacant = next,
                    None => break,
                }
            }
            assert_eq!(uses, budget);
        }
    }

    /// `vacate` tests the sum for the carry; the rule it implements is "retire when the counter
    /// bits are all ones", checked here for each layout at every occupied counter near the ends
    /// (every one for `Handle32`), tag bits included.
    #[test]
    fn vacate_retires_exactly_when_the_counter_is_all_ones() {
        let layouts = [
            Generations::with_parts::<Handle<()>>(0, 0),
            Generations::with_parts::<Handle<()>>(TAGGED | (127 << TAG_SHIFT), 0),
            Generations::with_parts::<Handle32<()>>(0, 0),
        ];
        for g in layouts {
            let mask = g.counter_mask();
            // Both ends of the counter (short ones under Miri, which interprets every step).
            let span = if cfg!(miri) { 0x3F } else { 0x1FFF };
            let counters = (1..=mask.min(span)).chain(mask.saturating_sub(span)..=mask);
            for counter in counters.filter(|c| c & 1 == 1) {
                let occupied = g.tag_bits | counter;
                let expected = (counter != mask).then(|| occupied + 1);
                assert_eq!(g.vacate(occupied), expected, "{occupied:#x}");
            }
        }
    }

    #[test]
    fn full_budget_starts_at_counter_zero() {
        let g = Generations::for_new_pool::<Handle<()>>(None);
        assert_eq!(counter_of(g.first()), 0);
        assert_eq!(
            g.max_budget(),
            if crate::poison::ENABLED {
                1 << 23
            } else {
                1 << 30
            }
        );
    }

    #[test]
    fn raw_round_trip_and_rejects_nonsense() {
        let g = Generations::for_new_pool::<Handle<()>>(Some(3));
        let (t, f) = g.to_raw();
        assert_eq!(Generations::from_raw::<Handle<()>>(t, f), Some(g));
        assert_eq!(Generations::from_raw::<Handle<()>>(t, f | 1), None);
        assert_eq!(Generations::from_raw::<Handle<()>>(0x1234, 0), None);
    }

    #[test]
    fn tagged_composes_what_tag_of_and_counter_of_take_apart() {
        let g = tagged(3, 5).unwrap().get();
        assert_eq!((tag_of(g), counter_of(g)), (Some(5), 3));
        assert_eq!(
            counter_of(tagged(TAGGED_COUNTER, 127).unwrap().get()),
            TAGGED_COUNTER
        );
        assert_eq!(tagged(TAGGED_COUNTER + 1, 0), None, "past 24 counter bits");
    }

    #[test]
    fn a_handle32_scheme_has_2048_lives_per_slot_and_no_tag() {
        let g = Generations::for_new_pool::<Handle32<()>>(None);
        assert_eq!((g.tag(), g.max_budget(), g.first()), (None, 2048, 0));
        assert!(g.owns(0xFFF) && !g.owns(0x1000) && !g.owns(TAGGED | 1));
        assert_eq!(
            g.vacate(0xFFF),
            None,
            "the last odd counter retires the slot"
        );
        assert_eq!(g.vacate(0xFFD), Some(0xFFE));
        let (t, f) = g.to_raw();
        assert_eq!(Generations::from_raw::<Handle32<()>>(t, f), Some(g));
        // A tag, or a first generation past 12 bits, is no Handle32 scheme.
        assert_eq!(Generations::from_raw::<Handle32<()>>(TAGGED, 0), None);
        assert_eq!(Generations::from_raw::<Handle32<()>>(0, 0x1000), None);
        let budgeted = Generations::for_new_pool::<Handle32<()>>(Some(3));
        assert_eq!(budgeted.first(), 0x1000 - 6);
    }
}
