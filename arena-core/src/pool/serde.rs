//! Serialization of [`Pool`] and [`Handle`] (feature `serde`).
//!
//! A pool is written with everything that decides which handle the next insert returns: each used
//! slot's generation and value, the free list in order, the capacity and chunking, the generation
//! scheme (tag and first generation), the counters, and the generation the first never-used
//! slot will take (past the first when handles issued for it were never filled). Reading it back gives a pool in which every
//! handle of the original is valid and the next inserts return the same handles, so replays and
//! lockstep simulations stay deterministic across a save and load (slotmap#104 is still open for
//! slotmap, which rebuilds its free list in a different order).
//!
//! Deserialization validates everything before it allocates the pool, and fails with a
//! [`PoolDecodeError`] (through the format's `custom` error, so its message says what is wrong)
//! rather than building a pool that could hand out two values for one slot or revive a stale
//! handle: every generation carries the pool's tag; a slot holds a value exactly when its
//! generation is odd; every used slot's generation is past the first one, except a retired
//! slot's, which is exactly the retired marker; the free list names only used, vacant,
//! non-retired slots, each once (so it has no cycle); `inserts` covers the live values; the
//! capacity is a whole number of chunks.
//!
//! **Memory bound.** The declared capacity is allocated only after all of that, and only if the
//! slot storage (`capacity x size_of::<Slot<T>>()`, plus the chunk table of a growable pool) fits
//! the limit: [`DEFAULT_MAX_BYTES`] (64 MiB) for the plain `Deserialize`, or what
//! [`PoolSeed`] sets (`max(max_bytes, 8 x input_len)`); a larger declared capacity is
//! [`PoolDecodeError::OverLimit`], naming the limit. An empty growable pool allocates nothing when
//! read, but its first insert allocates one chunk of the size the data chose: that chunk must fit
//! the limit too ([`PoolDecodeError::FirstChunkOverLimit`]). Declared sequence lengths are never
//! trusted: the slot and free lists grow as their elements actually arrive, so the only other
//! memory used is proportional to the elements present in the input (about twice their in-memory
//! size at worst, from `Vec` growth).
//!
//! A [`Handle`] is written as `(index, generation)`; one with an even (never valid) generation is
//! refused. A [`Handle32`] is written as its 32 bits ([`Handle32::to_bits`]); a pattern no handle
//! has is refused. A pool of [`Handle32`]s is written like any pool and must, on reading, fit
//! its handle: no tag, 12-bit generations, at most [`Handle32::MAX_CAPACITY`] used slots.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::num::NonZeroU32;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, SerializeTuple, Serializer};

use super::generation::Generations;
use super::key::{Key, PoolHandle};
use super::slot::Slot;
use super::slot_map::SlotMap;
use super::{Handle, Handle32, Pool};

impl<T> Serialize for Handle<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut t = serializer.serialize_tuple(2)?;
        t.serialize_element(&self.index())?;
        t.serialize_element(&self.generation().get())?;
        t.end()
    }
}

impl<'de, T> Deserialize<'de> for Handle<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (index, generation) = <(u32, u32)>::deserialize(deserializer)?;
        match NonZeroU32::new(generation) {
            Some(g) if generation & 1 == 1 => Ok(Handle::new(index, g)),
            _ => Err(de::Error::custom(format!(
                "handle generation {generation} is even; handle generations are always odd"
            ))),
        }
    }
}

impl<T> Serialize for Handle32<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(self.to_bits())
    }
}

impl<'de, T> Deserialize<'de> for Handle32<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bits = u32::deserialize(deserializer)?;
        Handle32::from_bits(bits).ok_or_else(|| {
            de::Error::custom(format!(
                "{bits:#x} is no Handle32: its generation (the low 12 bits) is even, or its index \
                 is the null handle's with another generation"
            ))
        })
    }
}

const FIELDS: &[&str] = &[
    "generation_tag",
    "first_generation",
    "chunk",
    "capacity",
    "slots",
    "free_list",
    "peak_live",
    "inserts",
    "fresh_generation",
];

/// Writes one used slot of a slot map as `(generation, Option<value>)`, the value made from the
/// slot's payload: the payload is the value for [`Pool`], a row index for
/// [`SoaPool`](crate::soa::SoaPool).
pub(crate) trait WriteSlot<P> {
    /// Writes slot `(generation, payload)` as one element of `seq`.
    fn write<S: SerializeSeq>(
        &self,
        seq: &mut S,
        generation: u32,
        payload: Option<&P>,
    ) -> Result<(), S::Error>;
}

/// The used slots as a sequence of `(generation, Option<value>)`.
struct SlotsOut<'a, P, W>(&'a SlotMap<P>, &'a W);

impl<P, W: WriteSlot<P>> Serialize for SlotsOut<'_, P, W> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let map = self.0;
        let mut seq = serializer.serialize_seq(Some(map.high_water() as usize))?;
        for (generation, payload) in map.used_slots() {
            self.1.write(&mut seq, generation, payload)?;
        }
        seq.end()
    }
}

/// A [`Pool`]'s payloads are its values.
struct Values;

impl<T: Serialize> WriteSlot<T> for Values {
    fn write<S: SerializeSeq>(
        &self,
        seq: &mut S,
        generation: u32,
        payload: Option<&T>,
    ) -> Result<(), S::Error> {
        seq.serialize_element(&(generation, payload))
    }
}

/// The free list, head first.
struct FreeOut<'a, P>(&'a SlotMap<P>);

impl<P> Serialize for FreeOut<'_, P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.free_len()))?;
        for index in self.0.free_list() {
            seq.serialize_element(&index)?;
        }
        seq.end()
    }
}

/// Writes a slot map as a struct named `name`, each used slot written by `slots`: the format of
/// [`Pool`] and [`SoaPool`](crate::soa::SoaPool).
pub(crate) fn serialize_slot_map<S: Serializer, P>(
    serializer: S,
    name: &'static str,
    map: &SlotMap<P>,
    slots: &impl WriteSlot<P>,
) -> Result<S::Ok, S::Error> {
    let (tag, first) = map.scheme();
    let (peak_live, inserts) = map.counters();
    let mut s = serializer.serialize_struct(name, FIELDS.len())?;
    s.serialize_field("generation_tag", &tag)?;
    s.serialize_field("first_generation", &first)?;
    s.serialize_field("chunk", &map.chunk_len())?;
    s.serialize_field("capacity", &map.storage_capacity())?;
    s.serialize_field("slots", &SlotsOut(map, slots))?;
    s.serialize_field("free_list", &FreeOut(map))?;
    s.serialize_field("peak_live", &peak_live)?;
    s.serialize_field("inserts", &inserts)?;
    s.serialize_field("fresh_generation", &map.fresh_generation())?;
    s.end()
}

impl<T: Serialize, H: PoolHandle<T>> Serialize for Pool<T, H> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_slot_map(serializer, "Pool", &self.slots, &Values)
    }
}

/// The slot storage the plain `Deserialize` of a [`Pool`] allocates at most: 64 MiB. Use
/// [`PoolSeed`] to set another limit.
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;

/// Why serialized pool data was refused. Nothing was allocated for the pool's slots before the
/// data was checked; the values read so far are dropped.
///
/// It reaches the caller through the format's error type (`serde::de::Error::custom`), whose
/// message is this type's `Display`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoolDecodeError {
    /// `generation_tag` / `first_generation` are not a generation scheme any pool uses.
    Scheme {
        /// The `generation_tag` read.
        tag: u32,
        /// The `first_generation` read.
        first: u32,
    },
    /// `capacity` is not a whole number of `chunk`-slot chunks (or the chunk size is not a power
    /// of two up to 2^31).
    ChunkLayout {
        /// The capacity read.
        capacity: u32,
        /// The chunk size read.
        chunk: u32,
    },
    /// The capacity, or the slots listed, are more than the pool's handle type can index
    /// ([`MAX_CAPACITY`](super::MAX_CAPACITY) for [`Handle`], [`Handle32::MAX_CAPACITY`]).
    OverHandleRange {
        /// The capacity read.
        capacity: u32,
        /// The most slots the handle type indexes.
        max: u32,
    },
    /// More slots are listed than the capacity holds.
    TooManySlots {
        /// Slots listed.
        listed: usize,
        /// The capacity read.
        capacity: u32,
    },
    /// A slot's generation carries another pool's tag.
    ForeignGeneration {
        /// The slot.
        slot: u32,
        /// Its generation.
        generation: u32,
    },
    /// A slot's generation is odd without a value, or even with one.
    Parity {
        /// The slot.
        slot: u32,
        /// Its generation.
        generation: u32,
        /// Whether a value was given.
        has_value: bool,
    },
    /// A used slot's generation is not past the first one (and, if vacant, not the retired
    /// marker): reusing it could reissue an old handle.
    EarlyGeneration {
        /// The slot.
        slot: u32,
        /// Its generation.
        generation: u32,
    },
    /// A free-list entry names no listed slot.
    FreeListOutOfRange {
        /// The entry.
        entry: u32,
        /// Slots listed.
        slots: usize,
    },
    /// A free-list entry names a slot that holds a value.
    FreeListOccupied {
        /// The slot.
        slot: u32,
    },
    /// A free-list entry names a retired slot, whose generations are used up.
    FreeListRetired {
        /// The slot.
        slot: u32,
    },
    /// A slot is on the free list twice (a cycle).
    FreeListRepeated {
        /// The slot.
        slot: u32,
    },
    /// A vacant slot is neither on the free list nor retired.
    Unaccounted {
        /// The slot.
        slot: u32,
        /// Its generation.
        generation: u32,
    },
    /// `inserts` is more than any pool can have made (2^63), so counting on would overflow.
    InsertsTooMany {
        /// The count read.
        inserts: u64,
    },
    /// `peak_live` is more than the capacity holds.
    PeakOverCapacity {
        /// The count read.
        peak_live: u32,
        /// The capacity read.
        capacity: u32,
    },
    /// `fresh_generation` is not a vacant generation of this pool's scheme at or past the
    /// first.
    FreshGeneration {
        /// The generation read.
        generation: u32,
    },
    /// `inserts` is below the number of live values.
    InsertsBelowLive {
        /// The count read.
        inserts: u64,
        /// Live values listed.
        live: u32,
    },
    /// The declared capacity needs more slot memory than the limit allows.
    OverLimit {
        /// The capacity read.
        capacity: u32,
        /// The bytes its slots would take.
        bytes: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The pool is empty (capacity 0) but growable, and one chunk, which its first insert
    /// allocates, needs more slot memory than the limit allows.
    FirstChunkOverLimit {
        /// The chunk size read.
        chunk: u32,
        /// The bytes one chunk's slots would take.
        bytes: usize,
        /// The limit in force.
        limit: usize,
    },
    /// A [`SoaPool`](crate::soa::SoaPool) slot names a row past the live values, or one another
    /// slot names too.
    Row {
        /// The slot.
        slot: u32,
        /// The row it names.
        row: u32,
    },
    /// The allocator refused the slot memory.
    OutOfMemory {
        /// The capacity read.
        capacity: u32,
    },
}

impl fmt::Display for PoolDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PoolDecodeError::*;
        f.write_str("invalid pool data: ")?;
        match *self {
            Scheme { tag, first } => write!(
                f,
                "generation_tag {tag:#x} with first_generation {first:#x} is not a generation \
                 scheme (tag bits, and an even first generation carrying them)"
            ),
            OverHandleRange { capacity, max } => write!(
                f,
                "a capacity of {capacity} slots is more than this pool's handle type indexes \
                 ({max} slots); load it into a pool with a wider handle"
            ),
            ChunkLayout { capacity, chunk } => write!(
                f,
                "capacity {capacity} is not a whole number of chunks of {chunk} slots (a power \
                 of two up to 2^31)"
            ),
            TooManySlots { listed, capacity } => {
                write!(f, "{listed} slots listed for a capacity of {capacity}")
            }
            ForeignGeneration { slot, generation } => write!(
                f,
                "slot {slot}: generation {generation:#x} has another pool's tag"
            ),
            Parity {
                slot,
                generation,
                has_value,
            } => {
                if has_value {
                    write!(
                        f,
                        "slot {slot}: generation {generation:#x} has the wrong parity: it is \
                         even but the slot holds a value (occupied generations are odd)"
                    )
                } else {
                    write!(
                        f,
                        "slot {slot}: generation {generation:#x} has the wrong parity: it is \
                         odd but the slot holds no value (vacant generations are even)"
                    )
                }
            }
            EarlyGeneration { slot, generation } => write!(
                f,
                "slot {slot}: generation {generation:#x} is not past the first generation, \
                 so reusing the slot could reissue an old handle"
            ),
            FreeListOutOfRange { entry, slots } => write!(
                f,
                "free list: entry {entry} is not a used, vacant slot: it names no slot (only \
                 {slots} slots are listed)"
            ),
            FreeListOccupied { slot } => {
                write!(
                    f,
                    "free list: slot {slot} is not a used, vacant slot: it is occupied (it \
                     holds a value)"
                )
            }
            FreeListRetired { slot } => write!(
                f,
                "free list: slot {slot} is retired (its generations are used up), so it must \
                 never be reused"
            ),
            FreeListRepeated { slot } => write!(
                f,
                "free list: slot {slot} appears twice (the list would have a cycle)"
            ),
            Unaccounted { slot, generation } => write!(
                f,
                "slot {slot} is vacant with generation {generation:#x} but is not on the free \
                 list and not marked retired"
            ),
            InsertsTooMany { inserts } => write!(
                f,
                "inserts {inserts} is more than any pool can have made (at most 2^63), so \
                 counting further inserts would overflow"
            ),
            PeakOverCapacity {
                peak_live,
                capacity,
            } => write!(
                f,
                "peak_live {peak_live} is more than the capacity of {capacity} slots holds"
            ),
            FreshGeneration { generation } => write!(
                f,
                "fresh_generation {generation:#x} is not a vacant generation of this pool at or \
                 past its first"
            ),
            InsertsBelowLive { inserts, live } => {
                write!(f, "inserts {inserts} is below the {live} live values")
            }
            OverLimit {
                capacity,
                bytes,
                limit,
            } => write!(
                f,
                "a capacity of {capacity} slots needs {bytes} bytes, over the limit of {limit} \
                 bytes; if the data is trusted, deserialize with PoolSeed::with_max_bytes"
            ),
            FirstChunkOverLimit {
                chunk,
                bytes,
                limit,
            } => write!(
                f,
                "the pool is empty, but its first insert allocates a chunk of {chunk} slots, \
                 which needs {bytes} bytes, over the limit of {limit} bytes; if the data is \
                 trusted, deserialize with PoolSeed::with_max_bytes"
            ),
            Row { slot, row } => write!(
                f,
                "slot {slot}: row {row} is past the live values or named by another slot too \
                 (each live value has its own row)"
            ),
            OutOfMemory { capacity } => {
                write!(f, "out of memory allocating {capacity} slots")
            }
        }
    }
}

impl core::error::Error for PoolDecodeError {}

/// Deserializes a [`Pool`] with a chosen limit on the slot memory it may allocate
/// (`serde::de::DeserializeSeed`). The plain `Deserialize` is `PoolSeed::new()`.
///
/// ```
/// use arena_kit::Pool;
/// use arena_kit::pool::PoolSeed;
/// use serde::de::DeserializeSeed;
///
/// let mut pool = Pool::with_capacity(1000);
/// pool.insert(7u64);
/// let json = serde_json::to_string(&pool).unwrap();
///
/// let mut de = serde_json::Deserializer::from_str(&json);
/// let small = PoolSeed::<u64>::with_max_bytes(1024).deserialize(&mut de);
/// assert!(small.unwrap_err().to_string().contains("over the limit of 1024 bytes"));
///
/// let mut de = serde_json::Deserializer::from_str(&json);
/// let seed = PoolSeed::<u64>::new().with_input_len(json.len());
/// assert_eq!(seed.deserialize(&mut de).unwrap().len(), 1);
/// ```
pub struct PoolSeed<T, H = Handle<T>> {
    max_bytes: usize,
    input_len: usize,
    _type: PhantomData<fn() -> (T, H)>,
}

impl<T, H> PoolSeed<T, H> {
    /// The default limit, [`DEFAULT_MAX_BYTES`].
    pub const fn new() -> Self {
        Self::with_max_bytes(DEFAULT_MAX_BYTES)
    }

    /// Allows up to `max_bytes` of slot memory.
    pub const fn with_max_bytes(max_bytes: usize) -> Self {
        PoolSeed {
            max_bytes,
            input_len: 0,
            _type: PhantomData,
        }
    }

    /// Tells the seed the input is `len` bytes long: the limit becomes at least `8 x len`, so
    /// data that is genuinely large (many slots listed) always loads.
    pub const fn with_input_len(mut self, len: usize) -> Self {
        self.input_len = len;
        self
    }

    /// The limit in force: `max(max_bytes, 8 x input_len)`.
    pub const fn limit(&self) -> usize {
        let scaled = self.input_len.saturating_mul(8);
        if scaled > self.max_bytes {
            scaled
        } else {
            self.max_bytes
        }
    }
}

impl<T, H> Default for PoolSeed<T, H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, H> Clone for PoolSeed<T, H> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, H> Copy for PoolSeed<T, H> {}

impl<T, H> fmt::Debug for PoolSeed<T, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolSeed")
            .field("max_bytes", &self.max_bytes)
            .field("input_len", &self.input_len)
            .finish()
    }
}

impl<'de, T: Deserialize<'de>, H: PoolHandle<T>> DeserializeSeed<'de> for PoolSeed<T, H> {
    type Value = Pool<T, H>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Pool<T, H>, D::Error> {
        let repr = deserialize_repr(deserializer, "Pool")?;
        Pool::from_repr(repr, self.limit()).map_err(de::Error::custom)
    }
}

/// A pool as read, before validation.
pub(crate) struct Repr<T> {
    generation_tag: u32,
    first_generation: u32,
    chunk: Option<u32>,
    capacity: u32,
    slots: Vec<(u32, Option<T>)>,
    free_list: Vec<u32>,
    peak_live: u32,
    inserts: u64,
    /// The generation of the first never-used slot (absent: the first generation).
    fresh_generation: Option<u32>,
}

/// A sequence read into a `Vec` that grows only as elements arrive: a declared length (a
/// format's size hint) is never used to preallocate.
struct Growing<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Growing<T> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<T>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Growing<T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element()? {
            v.push(x);
        }
        Ok(v)
    }
}

impl<T> Repr<T> {
    /// Checks what was read, without allocating the pool, for a pool whose handles index at most
    /// `max_slots` slots; returns the number of live values.
    fn validate(&self, generations: Generations, max_slots: u32) -> Result<u32, PoolDecodeError> {
        use PoolDecodeError::*;
        let r = self;
        // Only the last chunk may reach past the handle's range (as a growable pool's does).
        let first_unindexable = r.capacity - r.chunk.map_or(0, |c| c.min(r.capacity));
        if r.slots.len() > max_slots as usize
            || (r.capacity > max_slots && first_unindexable >= max_slots)
        {
            return Err(OverHandleRange {
                capacity: r.capacity,
                max: max_slots,
            });
        }
        if let Some(chunk) = r.chunk
            && (!chunk.is_power_of_two()
                || chunk > 1 << 31
                || (r.capacity != 0 && r.capacity < chunk)
                || !r.capacity.is_multiple_of(chunk))
        {
            return Err(ChunkLayout {
                capacity: r.capacity,
                chunk,
            });
        }
        if r.slots.len() > r.capacity as usize {
            return Err(TooManySlots {
                listed: r.slots.len(),
                capacity: r.capacity,
            });
        }
        let mut live = 0u32;
        for (slot, (generation, value)) in (0..).zip(&r.slots) {
            let generation = *generation;
            if !generations.owns(generation) {
                return Err(ForeignGeneration { slot, generation });
            }
            let has_value = value.is_some();
            if has_value != (generation & 1 == 1) {
                return Err(Parity {
                    slot,
                    generation,
                    has_value,
                });
            }
            if has_value {
                live += 1;
            }
            // Every listed slot was used: its generation moved past the first, unless it
            // retired (checked against the free list below).
            if !generations.is_after_first(generation) && generation != generations.retired() {
                return Err(EarlyGeneration { slot, generation });
            }
        }
        let mut listed = vec![false; r.slots.len()];
        for &entry in &r.free_list {
            let Some(&(generation, ref value)) = r.slots.get(entry as usize) else {
                return Err(FreeListOutOfRange {
                    entry,
                    slots: r.slots.len(),
                });
            };
            if value.is_some() {
                return Err(FreeListOccupied { slot: entry });
            }
            if !generations.is_after_first(generation) {
                return Err(FreeListRetired { slot: entry });
            }
            if core::mem::replace(&mut listed[entry as usize], true) {
                return Err(FreeListRepeated { slot: entry });
            }
        }
        for (slot, ((generation, value), &on_list)) in (0..).zip(r.slots.iter().zip(&listed)) {
            if value.is_none() && !on_list && *generation != generations.retired() {
                return Err(Unaccounted {
                    slot,
                    generation: *generation,
                });
            }
        }
        if r.inserts < u64::from(live) {
            return Err(InsertsBelowLive {
                inserts: r.inserts,
                live,
            });
        }
        if r.inserts > 1 << 63 {
            return Err(InsertsTooMany { inserts: r.inserts });
        }
        if r.peak_live > r.capacity {
            return Err(PeakOverCapacity {
                peak_live: r.peak_live,
                capacity: r.capacity,
            });
        }
        if let Some(fresh) = r.fresh_generation
            && fresh != generations.first()
            && !(fresh & 1 == 0 && generations.is_after_first(fresh))
        {
            return Err(FreshGeneration { generation: fresh });
        }
        Ok(live)
    }

    /// Validates what was read and builds the slot map, placing each value with `place` (which
    /// returns its payload), in slot order. Allocates only after every check passed and if the
    /// slots, plus `extra_per_slot` bytes a slot for the container's own storage, fit `limit`.
    /// `unit` is the bytes one value counts against a budget.
    pub(crate) fn into_slot_map<K: Key, P>(
        self,
        slot_bytes: usize,
        extra_per_slot: usize,
        limit: usize,
        unit: usize,
        kind: &'static str,
        mut place: impl FnMut(T) -> P,
    ) -> Result<SlotMap<P>, PoolDecodeError> {
        let generations = Generations::from_raw::<K>(self.generation_tag, self.first_generation)
            .ok_or(PoolDecodeError::Scheme {
                tag: self.generation_tag,
                first: self.first_generation,
            })?;
        self.validate(generations, K::MAX_SLOTS)?;
        let bytes = storage_bytes(
            self.capacity,
            self.chunk,
            slot_bytes.saturating_add(extra_per_slot),
        )
        .unwrap_or(usize::MAX);
        if bytes > limit {
            return Err(PoolDecodeError::OverLimit {
                capacity: self.capacity,
                bytes,
                limit,
            });
        }
        // An empty growable pool allocates nothing here, but its first insert allocates a whole
        // chunk of the size the data chose: that chunk must fit the limit too. (A pool with
        // slots holds at least one chunk, which the check above counted.)
        if let Some(chunk) = self.chunk.filter(|_| self.capacity == 0) {
            let bytes = storage_bytes(
                chunk,
                Some(chunk),
                slot_bytes.saturating_add(extra_per_slot),
            )
            .unwrap_or(usize::MAX);
            if bytes > limit {
                return Err(PoolDecodeError::FirstChunkOverLimit {
                    chunk,
                    bytes,
                    limit,
                });
            }
        }
        let slots = self
            .slots
            .into_iter()
            .map(|(generation, value)| (generation, value.map(&mut place)));
        SlotMap::restore(
            self.chunk,
            self.capacity,
            generations,
            slots,
            &self.free_list,
            self.peak_live,
            self.inserts,
            self.fresh_generation.unwrap_or(generations.first()),
            unit,
            kind,
            K::MAX_SLOTS,
        )
        .ok_or(PoolDecodeError::OutOfMemory {
            capacity: self.capacity,
        })
    }
}

impl<V> Repr<(u32, V)> {
    /// For payloads `(row, value)`: checks that the rows are exactly `0..live`, each once;
    /// returns `live`.
    pub(crate) fn check_rows(&self) -> Result<usize, PoolDecodeError> {
        let live = self.slots.iter().filter(|(_, v)| v.is_some()).count();
        let mut seen = vec![false; live];
        for (slot, (_, value)) in (0..).zip(&self.slots) {
            if let Some((row, _)) = value {
                match seen.get_mut(*row as usize) {
                    Some(seen) if !*seen => *seen = true,
                    _ => return Err(PoolDecodeError::Row { slot, row: *row }),
                }
            }
        }
        Ok(live)
    }
}

/// The bytes of a pool of `capacity` slots of `slot_bytes` each in chunks of `chunk`.
fn storage_bytes(capacity: u32, chunk: Option<u32>, slot_bytes: usize) -> Option<usize> {
    let slots = (capacity as usize).checked_mul(slot_bytes)?;
    let blocks = chunk.map_or(1, |c| (capacity / c.max(1)) as usize);
    slots.checked_add(blocks.checked_mul(core::mem::size_of::<usize>())?)
}

impl<T, H: PoolHandle<T>> Pool<T, H> {
    /// Builds a pool from what was read, or says what is wrong with it. Allocates the slots only
    /// after every check passed and if they fit `limit` bytes.
    fn from_repr(r: Repr<T>, limit: usize) -> Result<Self, PoolDecodeError> {
        let slot_bytes = core::mem::size_of::<Slot<T>>();
        r.into_slot_map::<H, _>(slot_bytes, 0, limit, size_of::<T>(), "Pool", |value| value)
            .map(Pool::from_slots)
    }
}

enum Field {
    GenerationTag,
    FirstGeneration,
    Chunk,
    Capacity,
    Slots,
    FreeList,
    PeakLive,
    Inserts,
    FreshGeneration,
    Unknown,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Pool field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "generation_tag" => Field::GenerationTag,
                    "first_generation" => Field::FirstGeneration,
                    "chunk" => Field::Chunk,
                    "capacity" => Field::Capacity,
                    "slots" => Field::Slots,
                    "free_list" => Field::FreeList,
                    "peak_live" => Field::PeakLive,
                    "inserts" => Field::Inserts,
                    "fresh_generation" => Field::FreshGeneration,
                    _ => Field::Unknown,
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Field, E> {
                match FIELDS.get(v as usize) {
                    Some(name) => self.visit_str(name),
                    None => Ok(Field::Unknown),
                }
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// Reads the serialized form of a pool (struct `name`), without validating it.
pub(crate) fn deserialize_repr<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
    name: &'static str,
) -> Result<Repr<T>, D::Error> {
    deserializer.deserialize_struct(name, FIELDS, ReprVisitor(PhantomData))
}

struct ReprVisitor<T>(PhantomData<T>);

fn missing<E: de::Error, V>(value: Option<V>, name: &'static str) -> Result<V, E> {
    value.ok_or_else(|| E::missing_field(name))
}

/// Stores a field's value, refusing a second one.
fn once<E: de::Error, V>(slot: &mut Option<V>, value: V, name: &'static str) -> Result<(), E> {
    if slot.replace(value).is_some() {
        return Err(E::duplicate_field(name));
    }
    Ok(())
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ReprVisitor<T> {
    type Value = Repr<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a serialized pool")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Repr<T>, A::Error> {
        let mut read = 0;
        macro_rules! element {
            ($seed:expr) => {{
                read += 1;
                seq.next_element_seed($seed)?
                    .ok_or_else(|| de::Error::invalid_length(read - 1, &self))?
            }};
            () => {
                element!(PhantomData)
            };
        }
        let repr = Repr {
            generation_tag: element!(),
            first_generation: element!(),
            chunk: element!(),
            capacity: element!(),
            slots: element!(Growing(PhantomData)),
            free_list: element!(Growing(PhantomData)),
            peak_live: element!(),
            inserts: element!(),
            // Optional at the end (written since pools spend the generations of handles
            // issued to a panicking `insert_with`).
            fresh_generation: seq.next_element()?,
        };
        Ok(repr)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Repr<T>, A::Error> {
        let (mut tag, mut first, mut chunk, mut capacity) = (None, None, None, None);
        let (mut slots, mut free_list, mut peak, mut inserts) = (None, None, None, None);
        let mut fresh = None;
        while let Some(key) = map.next_key()? {
            match key {
                Field::GenerationTag => once(&mut tag, map.next_value()?, "generation_tag")?,
                Field::FirstGeneration => once(&mut first, map.next_value()?, "first_generation")?,
                Field::Chunk => once(&mut chunk, map.next_value()?, "chunk")?,
                Field::Capacity => once(&mut capacity, map.next_value()?, "capacity")?,
                Field::Slots => once(
                    &mut slots,
                    map.next_value_seed(Growing(PhantomData))?,
                    "slots",
                )?,
                Field::FreeList => once(
                    &mut free_list,
                    map.next_value_seed(Growing(PhantomData))?,
                    "free_list",
                )?,
                Field::PeakLive => once(&mut peak, map.next_value()?, "peak_live")?,
                Field::Inserts => once(&mut inserts, map.next_value()?, "inserts")?,
                Field::FreshGeneration => {
                    once(&mut fresh, map.next_value()?, "fresh_generation")?;
                }
                Field::Unknown => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let repr = Repr {
            generation_tag: missing(tag, "generation_tag")?,
            first_generation: missing(first, "first_generation")?,
            chunk: chunk.unwrap_or(None),
            capacity: missing(capacity, "capacity")?,
            slots: missing(slots, "slots")?,
            free_list: missing(free_list, "free_list")?,
            peak_live: peak.unwrap_or(0),
            inserts: missing(inserts, "inserts")?,
            fresh_generation: fresh,
        };
        Ok(repr)
    }
}

/// Validates the data before allocating anything for it, then allocates at most
/// [`DEFAULT_MAX_BYTES`] of slot memory (use [`PoolSeed`] for another limit); declared sequence
/// lengths are never trusted, so the rest of the memory used is proportional to the elements the
/// input actually holds. Refusals are [`PoolDecodeError`]s.
impl<'de, T: Deserialize<'de>, H: PoolHandle<T>> Deserialize<'de> for Pool<T, H> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        PoolSeed::new().deserialize(deserializer)
    }
}
