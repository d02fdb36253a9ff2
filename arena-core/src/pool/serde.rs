//! Serialization of [`Pool`] and [`Handle`] (feature `serde`).
//!
//! A pool is written with everything that decides which handle the next insert returns: each used
//! slot's generation and value, the free list in order, the capacity and chunking, the generation
//! scheme (tag and first generation) and the counters. Reading it back gives a pool in which every
//! handle of the original is valid and the next inserts return the same handles, so replays and
//! lockstep simulations stay deterministic across a save and load (slotmap#104 is still open for
//! slotmap, which rebuilds its free list in a different order).
//!
//! Deserialization validates the data (generation parity against presence of a value, tags,
//! free-list entries in range, vacant and not repeated) and fails with a message rather than
//! building a pool that could hand out two values for one slot.
//!
//! A handle is written as `(index, generation)`; one with an even (never valid) generation is
//! refused.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use core::num::NonZeroU32;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
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

impl<T> Pool<T> {
    /// The number of slots on the free list.
    fn free_len(&self) -> usize {
        (self.high_water - self.len - self.retired) as usize
    }

    /// Builds a pool from what was read, or says what is wrong with it.
    fn from_repr(r: Repr<T>) -> Result<Self, alloc::string::String> {
        let generations = Generations::from_raw(r.generation_tag, r.first_generation)
            .ok_or("invalid generation_tag or first_generation")?;
        if let Some(len) = r.chunk
            && (!len.is_power_of_two() || r.capacity < len || !r.capacity.is_multiple_of(len))
        {
            return Err(format!(
                "capacity {} is not a whole number of chunks of {len} slots",
                r.capacity
            ));
        }
        let chunks = Chunks::with_layout(r.chunk, r.capacity, generations.first())
            .ok_or_else(|| format!("out of memory allocating {} slots", r.capacity))?;
        // Values go straight into the pool, counted as they arrive: if the data turns out to be
        // invalid further on, dropping the half-built pool drops them (no leak).
        let mut pool = Pool::from_parts(chunks, generations);
        if r.slots.len() > r.capacity as usize {
            return Err(format!(
                "{} slots listed for a capacity of {}",
                r.slots.len(),
                r.capacity
            ));
        }
        let high_water = r.slots.len() as u32;
        for (index, (generation, value)) in (0..).zip(r.slots) {
            let slot = pool.chunks.get_mut(index).expect("index below capacity");
            if !generations.owns(generation) {
                return Err(format!(
                    "slot {index}: generation {generation} has another pool's tag"
                ));
            }
            match value {
                Some(value) if generation & 1 == 1 => {
                    slot.occupy(value, generation);
                    pool.len += 1;
                    pool.high_water = index + 1;
                }
                None if generation & 1 == 0 => *slot = Slot::vacant(generation),
                _ => {
                    return Err(format!(
                        "slot {index}: generation {generation} has the wrong parity"
                    ));
                }
            }
        }
        let mut listed = vec![false; high_water as usize];
        let mut next = NO_SLOT;
        for &index in r.free_list.iter().rev() {
            let slot = pool.chunks.get_mut(index).filter(|_| index < high_water);
            let Some(slot) = slot.filter(|s| !s.is_occupied()) else {
                return Err(format!(
                    "free list: slot {index} is not a used, vacant slot"
                ));
            };
            if core::mem::replace(&mut listed[index as usize], true) {
                return Err(format!("free list: slot {index} appears twice"));
            }
            slot.set_next_free(next);
            next = index;
        }
        let len = pool.len;
        pool.free_head = next;
        pool.high_water = high_water;
        pool.retired = high_water - len - r.free_list.len() as u32;
        pool.peak_live = r.peak_live.max(len);
        if r.inserts < u64::from(len) {
            return Err(format!(
                "inserts {} is below the {len} live values",
                r.inserts
            ));
        }
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

struct PoolVisitor<T>(PhantomData<T>);

fn missing<E: de::Error, V>(value: Option<V>, name: &'static str) -> Result<V, E> {
    value.ok_or_else(|| E::missing_field(name))
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for PoolVisitor<T> {
    type Value = Pool<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a serialized Pool")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pool<T>, A::Error> {
        let mut read = 0;
        macro_rules! element {
            () => {{
                read += 1;
                seq.next_element()?
                    .ok_or_else(|| de::Error::invalid_length(read - 1, &self))?
            }};
        }
        let repr = Repr {
            generation_tag: element!(),
            first_generation: element!(),
            chunk: element!(),
            capacity: element!(),
            slots: element!(),
            free_list: element!(),
            peak_live: element!(),
            inserts: element!(),
        };
        Pool::from_repr(repr).map_err(de::Error::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pool<T>, A::Error> {
        let (mut tag, mut first, mut chunk, mut capacity) = (None, None, None, None);
        let (mut slots, mut free_list, mut peak, mut inserts) = (None, None, None, None);
        while let Some(key) = map.next_key()? {
            match key {
                Field::GenerationTag => tag = Some(map.next_value()?),
                Field::FirstGeneration => first = Some(map.next_value()?),
                Field::Chunk => chunk = Some(map.next_value()?),
                Field::Capacity => capacity = Some(map.next_value()?),
                Field::Slots => slots = Some(map.next_value()?),
                Field::FreeList => free_list = Some(map.next_value()?),
                Field::PeakLive => peak = Some(map.next_value()?),
                Field::Inserts => inserts = Some(map.next_value()?),
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
        Pool::from_repr(repr).map_err(de::Error::custom)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Pool<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("Pool", FIELDS, PoolVisitor(PhantomData))
    }
}
