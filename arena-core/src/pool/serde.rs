//! Serialization of [`Pool`] and [`Handle`] (feature `serde`).
//!
//! A pool is written with everything that decides which handle the next insert returns: each used
//! slot's generation and value, the free list in order, the capacity and chunking, the generation
//! scheme (tag and first generation) and the counters. Reading it back gives a pool in which every
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
//! [`PoolDecodeError::OverLimit`], naming the limit. Declared sequence lengths are never trusted:
//! the slot and free lists grow as their elements actually arrive, so the only other memory
//! used is proportional to the elements present in the input (about twice their in-memory size
//! at worst, from `Vec` growth).
//!
//! A handle is written as `(index, generation)`; one with an even (never valid) generation is
//! refused.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::num::NonZeroU32;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, SerializeTuple, Serializer};

use super::chunks::Chunks;
use super::generation::Generations;
use super::slot::{NO_SLOT, Slot};
use super::{Handle, Pool};

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

const FIELDS: &[&str] = &[
    "generation_tag",
    "first_generation",
    "chunk",
    "capacity",
    "slots",
    "free_list",
    "peak_live",
    "inserts",
];

/// The used slots as a sequence of `(generation, Option<value>)`.
struct SlotsOut<'a, T>(&'a Pool<T>);

impl<T: Serialize> Serialize for SlotsOut<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pool = self.0;
        let mut seq = serializer.serialize_seq(Some(pool.high_water as usize))?;
        for index in 0..pool.high_water {
            let slot = pool.chunks.get(index).expect("index below high water");
            let value = slot.occupied().map(|(_, value)| value);
            seq.serialize_element(&(slot.generation(), value))?;
        }
        seq.end()
    }
}

/// The free list, head first.
struct FreeOut<'a, T>(&'a Pool<T>);

impl<T> Serialize for FreeOut<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pool = self.0;
        let mut seq = serializer.serialize_seq(Some(pool.free_len()))?;
        let mut index = pool.free_head;
        while index != NO_SLOT {
            seq.serialize_element(&index)?;
            let slot = pool
                .chunks
                .get(index)
                .expect("free-list entries are slot indexes");
            index = slot.next_free().expect("free-list entries are vacant");
        }
        seq.end()
    }
}

impl<T: Serialize> Serialize for Pool<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (tag, first) = self.generations.to_raw();
        let mut s = serializer.serialize_struct("Pool", FIELDS.len())?;
        s.serialize_field("generation_tag", &tag)?;
        s.serialize_field("first_generation", &first)?;
        s.serialize_field("chunk", &self.chunks.chunk_len())?;
        s.serialize_field("capacity", &self.chunks.capacity())?;
        s.serialize_field("slots", &SlotsOut(self))?;
        s.serialize_field("free_list", &FreeOut(self))?;
        s.serialize_field("peak_live", &self.peak_live)?;
        s.serialize_field("inserts", &self.inserts)?;
        s.end()
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
/// use arena_core::pool::{Pool, PoolSeed};
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
pub struct PoolSeed<T> {
    max_bytes: usize,
    input_len: usize,
    _type: PhantomData<fn() -> T>,
}

impl<T> PoolSeed<T> {
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

impl<T> Default for PoolSeed<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for PoolSeed<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for PoolSeed<T> {}

impl<T> fmt::Debug for PoolSeed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolSeed")
            .field("max_bytes", &self.max_bytes)
            .field("input_len", &self.input_len)
            .finish()
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for PoolSeed<T> {
    type Value = Pool<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Pool<T>, D::Error> {
        deserializer.deserialize_struct(
            "Pool",
            FIELDS,
            PoolVisitor {
                limit: self.limit(),
                _type: PhantomData,
            },
        )
    }
}

/// A pool as read, before validation.
struct Repr<T> {
    generation_tag: u32,
    first_generation: u32,
    chunk: Option<u32>,
    capacity: u32,
    slots: Vec<(u32, Option<T>)>,
    free_list: Vec<u32>,
    peak_live: u32,
    inserts: u64,
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

impl<T> Pool<T> {
    /// The number of slots on the free list.
    fn free_len(&self) -> usize {
        (self.high_water - self.len - self.retired) as usize
    }

    /// Checks what was read, without allocating the pool; returns the number of live values.
    fn validate(r: &Repr<T>, generations: Generations) -> Result<u32, PoolDecodeError> {
        use PoolDecodeError::*;
        if let Some(chunk) = r.chunk
            && (!chunk.is_power_of_two()
                || chunk > 1 << 31
                || r.capacity < chunk
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
        Ok(live)
    }

    /// The bytes of slot memory a pool of `capacity` slots in chunks of `chunk` takes.
    fn storage_bytes(capacity: u32, chunk: Option<u32>) -> Option<usize> {
        let slots = (capacity as usize).checked_mul(core::mem::size_of::<Slot<T>>())?;
        let blocks = chunk.map_or(1, |c| (capacity / c.max(1)) as usize);
        slots.checked_add(blocks.checked_mul(core::mem::size_of::<usize>())?)
    }

    /// Builds a pool from what was read, or says what is wrong with it. Allocates the slots only
    /// after every check passed and if they fit `limit` bytes.
    fn from_repr(r: Repr<T>, limit: usize) -> Result<Self, PoolDecodeError> {
        let generations = Generations::from_raw(r.generation_tag, r.first_generation).ok_or(
            PoolDecodeError::Scheme {
                tag: r.generation_tag,
                first: r.first_generation,
            },
        )?;
        let live = Self::validate(&r, generations)?;
        let bytes = Self::storage_bytes(r.capacity, r.chunk).unwrap_or(usize::MAX);
        if bytes > limit {
            return Err(PoolDecodeError::OverLimit {
                capacity: r.capacity,
                bytes,
                limit,
            });
        }
        let chunks = Chunks::with_layout(r.chunk, r.capacity, generations.first()).ok_or(
            PoolDecodeError::OutOfMemory {
                capacity: r.capacity,
            },
        )?;
        // Values go straight into the pool, counted as they arrive (nothing below can fail).
        let mut pool = Pool::from_parts(chunks, generations);
        let high_water = r.slots.len() as u32;
        for (index, (generation, value)) in (0..).zip(r.slots) {
            let slot = pool
                .chunks
                .get_mut(index)
                .expect("validated: below capacity");
            match value {
                Some(value) => {
                    slot.occupy(value, generation);
                    pool.len += 1;
                    pool.high_water = index + 1;
                }
                None => *slot = Slot::vacant(generation),
            }
        }
        let mut next = NO_SLOT;
        for &index in r.free_list.iter().rev() {
            let slot = pool
                .chunks
                .get_mut(index)
                .expect("validated: a listed slot");
            slot.set_next_free(next);
            next = index;
        }
        debug_assert_eq!(pool.len, live);
        pool.free_head = next;
        pool.high_water = high_water;
        pool.retired = high_water - live - r.free_list.len() as u32;
        pool.peak_live = r.peak_live.max(live);
        pool.inserts = r.inserts;
        Ok(pool)
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

struct PoolVisitor<T> {
    limit: usize,
    _type: PhantomData<T>,
}

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

impl<'de, T: Deserialize<'de>> Visitor<'de> for PoolVisitor<T> {
    type Value = Pool<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a serialized Pool")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pool<T>, A::Error> {
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
        };
        Pool::from_repr(repr, self.limit).map_err(de::Error::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pool<T>, A::Error> {
        let (mut tag, mut first, mut chunk, mut capacity) = (None, None, None, None);
        let (mut slots, mut free_list, mut peak, mut inserts) = (None, None, None, None);
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
        };
        Pool::from_repr(repr, self.limit).map_err(de::Error::custom)
    }
}

/// Validates the data before allocating anything for it, then allocates at most
/// [`DEFAULT_MAX_BYTES`] of slot memory (use [`PoolSeed`] for another limit); declared sequence
/// lengths are never trusted, so the rest of the memory used is proportional to the elements the
/// input actually holds. Refusals are [`PoolDecodeError`]s.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Pool<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        PoolSeed::new().deserialize(deserializer)
    }
}
