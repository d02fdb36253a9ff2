//! Serialization of the side tables, [`SecondaryPool`] and [`SparseSecondaryPool`] (feature
//! `serde`).
//!
//! Both are written the same way: a sequence of `(handle, value)` pairs in slot order, each
//! handle as `(index, generation)` like a [`Handle`] on its own. Either table reads what either
//! wrote. A table does not store what a removed entry's generation was, so nothing else is
//! needed to rebuild it.
//!
//! Reading validates each entry as it arrives and fails with a [`SecondaryDecodeError`] (through
//! the format's `custom` error): a handle with an even generation (never valid) is refused, as
//! for [`Handle`]; two entries for one slot index (a repeated handle, or two generations of one
//! slot) are refused; so are an entry whose generation carries another pool's tag than the first
//! entry's, and one for slot index `u32::MAX` (a null handle, which a table never stores).
//!
//! **Memory bound.** A declared sequence length is never trusted. The sparse table grows with
//! the entries present. The dense table is as long as its highest slot index, which the input
//! chooses: a single entry for index 4,000,000,000 would need gigabytes, so the slots may take at
//! most a limit ([`DEFAULT_MAX_BYTES`](super::DEFAULT_MAX_BYTES), 64 MiB, for the plain
//! `Deserialize`; what [`SecondaryPoolSeed`] sets otherwise), checked before growing, and an
//! entry past it is [`SecondaryDecodeError::OverLimit`]. Growth doubles but never past the limit.

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use super::secondary::{NO_SLOT, Owner, Stored};
use super::{DEFAULT_MAX_BYTES, Handle, SecondaryPool};

/// Why serialized side-table data was refused. The values read so far are dropped.
///
/// It reaches the caller through the format's error type (`serde::de::Error::custom`), whose
/// message is this type's `Display`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecondaryDecodeError {
    /// Two entries name the same slot index.
    DuplicateSlot {
        /// The slot index.
        index: u32,
    },
    /// An entry's slot index is `u32::MAX`, which no pool has (a null handle).
    NoSlot {
        /// The entry's generation.
        generation: u32,
    },
    /// An entry's generation carries another pool's tag than the first entry's.
    ForeignGeneration {
        /// The entry's slot index.
        index: u32,
        /// Its generation.
        generation: u32,
    },
    /// A dense table would need more slot memory than the limit to reach this index.
    OverLimit {
        /// The slot index.
        index: u32,
        /// The bytes of the slots up to it.
        bytes: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The allocator refused the memory for this entry.
    OutOfMemory {
        /// The entry's slot index.
        index: u32,
    },
}

impl fmt::Display for SecondaryDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid side-table data: ")?;
        match *self {
            SecondaryDecodeError::DuplicateSlot { index } => write!(
                f,
                "two entries for slot index {index} (a repeated handle, or two generations of \
                 one slot); a side table holds at most one value per slot"
            ),
            SecondaryDecodeError::NoSlot { generation } => write!(
                f,
                "an entry has slot index u32::MAX (generation {generation:#x}), which no pool has: \
                 a null handle names no value"
            ),
            SecondaryDecodeError::ForeignGeneration { index, generation } => write!(
                f,
                "the entry for slot index {index} has generation {generation:#x}, whose pool tag \
                 differs from the first entry's; a side table holds the handles of one pool"
            ),
            SecondaryDecodeError::OverLimit {
                index,
                bytes,
                limit,
            } => write!(
                f,
                "slot index {index} needs {bytes} bytes of dense slots, over the limit of {limit} \
                 bytes; if the data is trusted, deserialize with SecondaryPoolSeed::with_max_bytes, \
                 or use a SparseSecondaryPool"
            ),
            SecondaryDecodeError::OutOfMemory { index } => {
                write!(f, "out of memory storing the entry for slot index {index}")
            }
        }
    }
}

impl core::error::Error for SecondaryDecodeError {}

/// Writes `(handle, value)` pairs in the order given.
fn serialize_entries<'a, S: Serializer, T: 'a, V: Serialize + 'a>(
    serializer: S,
    len: usize,
    entries: impl Iterator<Item = (Handle<T>, &'a V)>,
) -> Result<S::Ok, S::Error> {
    let mut seq = serializer.serialize_seq(Some(len))?;
    for entry in entries {
        seq.serialize_element(&entry)?;
    }
    seq.end()
}

/// The entries in slot order.
impl<T, V: Serialize> Serialize for SecondaryPool<T, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_entries(serializer, self.len(), self.iter())
    }
}

/// Where the entries read go, checked one by one.
trait Sink<T, V> {
    fn put(&mut self, handle: Handle<T>, value: V) -> Result<(), SecondaryDecodeError>;
}

/// Reads a sequence of `(handle, value)` into a sink, one element at a time.
struct Entries<T, V, K>(K, PhantomData<fn() -> (T, V)>);

impl<'de, T, V: Deserialize<'de>, K: Sink<T, V>> Visitor<'de> for Entries<T, V, K> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of (handle, value) pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<K, A::Error> {
        while let Some((handle, value)) = seq.next_element::<(Handle<T>, V)>()? {
            self.0.put(handle, value).map_err(de::Error::custom)?;
        }
        Ok(self.0)
    }
}

fn read_into<'de, D: Deserializer<'de>, T, V: Deserialize<'de>, K: Sink<T, V>>(
    deserializer: D,
    sink: K,
) -> Result<K, D::Error> {
    deserializer.deserialize_seq(Entries(sink, PhantomData))
}

/// The entry must name a slot and carry the first entry's pool tag.
fn check_entry<T>(owner: &mut Owner, handle: Handle<T>) -> Result<(), SecondaryDecodeError> {
    let generation = handle.generation().get();
    if handle.index() == NO_SLOT {
        Err(SecondaryDecodeError::NoSlot { generation })
    } else if owner.accepts(generation) {
        Ok(())
    } else {
        Err(SecondaryDecodeError::ForeignGeneration {
            index: handle.index(),
            generation,
        })
    }
}

/// A dense table as it is read: never longer than `limit` bytes of slots.
struct Dense<V> {
    slots: Vec<Option<Stored<V>>>,
    len: usize,
    owner: Owner,
    limit: usize,
}

impl<V> Dense<V> {
    const SLOT: usize = size_of::<Option<Stored<V>>>();
}

impl<T, V> Sink<T, V> for Dense<V> {
    fn put(&mut self, handle: Handle<T>, value: V) -> Result<(), SecondaryDecodeError> {
        check_entry(&mut self.owner, handle)?;
        let index = handle.index();
        let i = index as usize;
        if i >= self.slots.len() {
            let max_slots = self.limit / Self::SLOT;
            if i >= max_slots {
                return Err(SecondaryDecodeError::OverLimit {
                    index,
                    bytes: (i + 1).saturating_mul(Self::SLOT),
                    limit: self.limit,
                });
            }
            // Doubling for amortized growth, but never past the limit.
            let want = (i + 1)
                .max(self.slots.capacity().saturating_mul(2))
                .min(max_slots);
            if want > self.slots.capacity() {
                self.slots
                    .try_reserve_exact(want - self.slots.len())
                    .map_err(|_| SecondaryDecodeError::OutOfMemory { index })?;
            }
            self.slots.resize_with(i + 1, || None);
        }
        let slot = &mut self.slots[i];
        if slot.is_some() {
            return Err(SecondaryDecodeError::DuplicateSlot { index });
        }
        *slot = Some(Stored::new(handle, value));
        self.len += 1;
        Ok(())
    }
}

/// Deserializes a [`SecondaryPool`] with a chosen limit on the memory its slots may take
/// (`serde::de::DeserializeSeed`). The plain `Deserialize` is `SecondaryPoolSeed::new()`.
///
/// ```
/// use arena_kit::Pool;
/// use arena_kit::pool::{SecondaryPool, SecondaryPoolSeed};
/// use serde::de::DeserializeSeed;
///
/// let mut pool = Pool::with_capacity(1000);
/// let handles: Vec<_> = (0..1000).map(|i| pool.insert(i)).collect();
/// let mut side = SecondaryPool::new();
/// side.insert(handles[999], 7u64);
/// let json = serde_json::to_string(&side).unwrap();
///
/// let mut de = serde_json::Deserializer::from_str(&json);
/// let small = SecondaryPoolSeed::<u32, u64>::with_max_bytes(1024).deserialize(&mut de);
/// assert!(small.unwrap_err().to_string().contains("over the limit of 1024 bytes"));
///
/// let back: SecondaryPool<u32, u64> = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, side);
/// ```
pub struct SecondaryPoolSeed<T, V> {
    max_bytes: usize,
    _type: PhantomData<fn() -> (T, V)>,
}

impl<T, V> SecondaryPoolSeed<T, V> {
    /// The default limit, [`DEFAULT_MAX_BYTES`].
    pub const fn new() -> Self {
        Self::with_max_bytes(DEFAULT_MAX_BYTES)
    }

    /// Allows up to `max_bytes` of slot memory.
    pub const fn with_max_bytes(max_bytes: usize) -> Self {
        SecondaryPoolSeed {
            max_bytes,
            _type: PhantomData,
        }
    }

    /// The limit in force.
    pub const fn limit(&self) -> usize {
        self.max_bytes
    }
}

impl<T, V> Default for SecondaryPoolSeed<T, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, V> Clone for SecondaryPoolSeed<T, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, V> Copy for SecondaryPoolSeed<T, V> {}

impl<T, V> fmt::Debug for SecondaryPoolSeed<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecondaryPoolSeed")
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

impl<'de, T, V: Deserialize<'de>> DeserializeSeed<'de> for SecondaryPoolSeed<T, V> {
    type Value = SecondaryPool<T, V>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let sink = Dense {
            slots: Vec::new(),
            len: 0,
            owner: Owner::default(),
            limit: self.max_bytes,
        };
        let d = read_into::<D, T, V, _>(deserializer, sink)?;
        Ok(SecondaryPool::from_parts(d.slots, d.len, d.owner))
    }
}

/// Checks every entry as it arrives and allocates at most [`DEFAULT_MAX_BYTES`] of slots (use
/// [`SecondaryPoolSeed`] for another limit); refusals are [`SecondaryDecodeError`]s.
impl<'de, T, V: Deserialize<'de>> Deserialize<'de> for SecondaryPool<T, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        SecondaryPoolSeed::new().deserialize(deserializer)
    }
}

#[cfg(feature = "std")]
mod sparse {
    use core::hash::BuildHasher;
    use std::collections::HashMap;

    use super::*;
    use crate::pool::SparseSecondaryPool;

    /// The entries in slot order (not the map's), so equal tables write equal bytes.
    impl<T, V: Serialize, S: BuildHasher> Serialize for SparseSecondaryPool<T, V, S> {
        fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
            let mut entries: Vec<(u32, &Stored<V>)> =
                self.map().iter().map(|(&i, s)| (i, s)).collect();
            entries.sort_unstable_by_key(|&(i, _)| i);
            let entries = entries
                .into_iter()
                .map(|(i, s)| (s.handle::<T>(i), &s.value));
            serialize_entries(serializer, self.len(), entries)
        }
    }

    struct Sparse<V, S> {
        map: HashMap<u32, Stored<V>, S>,
        owner: Owner,
    }

    impl<T, V, S: BuildHasher> Sink<T, V> for Sparse<V, S> {
        fn put(&mut self, handle: Handle<T>, value: V) -> Result<(), SecondaryDecodeError> {
            check_entry(&mut self.owner, handle)?;
            let index = handle.index();
            if self.map.contains_key(&index) {
                return Err(SecondaryDecodeError::DuplicateSlot { index });
            }
            self.map
                .try_reserve(1)
                .map_err(|_| SecondaryDecodeError::OutOfMemory { index })?;
            self.map.insert(index, Stored::new(handle, value));
            Ok(())
        }
    }

    /// Checks every entry as it arrives; memory grows with the entries present, whatever their
    /// indexes. Refusals are [`SecondaryDecodeError`]s.
    impl<'de, T, V: Deserialize<'de>, S: BuildHasher + Default> Deserialize<'de>
        for SparseSecondaryPool<T, V, S>
    {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let sink = Sparse {
                map: HashMap::with_hasher(S::default()),
                owner: Owner::default(),
            };
            let s = read_into::<D, T, V, _>(deserializer, sink)?;
            Ok(SparseSecondaryPool::from_parts(s.map, s.owner))
        }
    }
}
