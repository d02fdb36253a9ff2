//! Serde support (feature `serde`) in two formats.
//!
//! - **Rows** (the `Serialize`/`Deserialize` impls of [`SoaVec`]): a sequence of rows, the same
//!   shape as a `Vec<T>`. Serializing writes each row's [`Soa::Ref`] view, so derive `Serialize`
//!   on the views with `#[soa(derive(Serialize))]`; deserializing reads `T`.
//! - **Columns** ([`columns::serialize`] / [`columns::deserialize`], for
//!   `#[serde(with = "arena_kit::soa::serde::columns")]`): a sequence of columns in field order,
//!   each a sequence of values. Columns of unequal length are an error, never a short or
//!   misaligned vector. A type with no columns at all is written as an empty sequence, which
//!   carries no row count: it reads back as an empty vector.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use super::{Soa, SoaVec};

impl<T: Soa> Serialize for SoaVec<T>
where
    for<'x> T::Ref<'x>: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for row in self.iter() {
            seq.serialize_element(&row)?;
        }
        seq.end()
    }
}

impl<'de, T: Soa + Deserialize<'de>> Deserialize<'de> for SoaVec<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Rows<T>(PhantomData<T>);
        impl<'de, T: Soa + Deserialize<'de>> Visitor<'de> for Rows<T> {
            type Value = SoaVec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence of rows")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SoaVec<T>, A::Error> {
                let mut v = SoaVec::new();
                // Trust a declared length only up to 4096 rows or 1 MiB of columns, whichever
                // is less (as serde's `Vec` does): a hostile length must not allocate gigabytes.
                let row_bytes = super::block_layout::<T>(1).map_or(1, |l| l.size().max(1));
                let trusted = (1 << 20) / row_bytes;
                v.reserve(seq.size_hint().unwrap_or(0).min(4096).min(trusted));
                while let Some(row) = seq.next_element()? {
                    v.push(row);
                }
                Ok(v)
            }
        }
        deserializer.deserialize_seq(Rows(PhantomData))
    }
}

/// One used slot of a [`SoaPool`](super::SoaPool): `(generation, Option<(row, row view)>)`.
struct PoolRows<'a, T: Soa>(&'a SoaVec<T>);

impl<T: Soa> crate::pool::serde::WriteSlot<u32> for PoolRows<'_, T>
where
    for<'x> T::Ref<'x>: Serialize,
{
    fn write<S: SerializeSeq>(
        &self,
        seq: &mut S,
        generation: u32,
        row: Option<&u32>,
    ) -> Result<(), S::Error> {
        let value = row.map(|&row| (row, self.0.get(row as usize).expect("a live row")));
        seq.serialize_element(&(generation, value))
    }
}

/// The [`Pool`](crate::pool::Pool) format, each live value written as `(row, row view)`: the
/// handle map (generations, free-list order, counters) and the row order both survive a round
/// trip, so every handle stays valid, the next inserts return the same handles and the columns
/// list the values in the same order. Derive `Serialize` on the views with
/// `#[soa(derive(Serialize))]`.
impl<T: Soa> Serialize for super::SoaPool<T>
where
    for<'x> T::Ref<'x>: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (map, values) = self.serde_parts();
        crate::pool::serde::serialize_slot_map(serializer, "SoaPool", map, &PoolRows(values))
    }
}

/// Validated as a [`Pool`](crate::pool::Pool) is (a tampered free list cannot revive a stale
/// handle), and the rows must be exactly the live values' `0..len`. Nothing is allocated for the
/// slots or the columns before every check passed, and then at most
/// [`DEFAULT_MAX_BYTES`](crate::pool::DEFAULT_MAX_BYTES); refusals are
/// [`PoolDecodeError`](crate::pool::PoolDecodeError)s.
impl<'de, T: Soa + Deserialize<'de>> Deserialize<'de> for super::SoaPool<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = crate::pool::serde::deserialize_repr::<D, (u32, T)>(deserializer, "SoaPool")?;
        super::SoaPool::from_repr(repr, crate::pool::DEFAULT_MAX_BYTES)
            .map_err(serde::de::Error::custom)
    }
}

/// The column format: `#[serde(with = "arena_kit::soa::serde::columns")]`.
pub mod columns {
    use alloc::format;
    use alloc::vec::Vec;
    use core::fmt;
    use core::marker::PhantomData;

    use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
    use serde::ser::{Serialize, SerializeTuple, Serializer};

    use crate::soa::{Col, Columns, Nested, Soa, SoaVec};

    /// Columns whose values can be serialized, one sequence per column.
    pub trait SerColumns: Columns {
        /// How many leaf columns there are.
        const COUNT: usize;
        /// Writes every column's first `len` values as one element each.
        ///
        /// # Safety
        /// - rows `0..len` are initialised.
        unsafe fn write_columns<S: SerializeTuple>(
            self,
            len: usize,
            out: &mut S,
        ) -> Result<(), S::Error>;
    }

    /// Columns whose values can be deserialized from one sequence per column.
    pub trait DeColumns<'de>: Columns {
        /// How many leaf columns there are.
        const COUNT: usize;
        /// Every column's values, still separate.
        type Parts;
        /// Reads the next columns from `seq`; `index` counts columns read so far.
        fn read_columns<A: SeqAccess<'de>>(
            seq: &mut A,
            index: &mut usize,
        ) -> Result<Self::Parts, A::Error>;
        /// Calls `f` with each column's length, in order.
        fn lens(parts: &Self::Parts, f: &mut dyn FnMut(usize));
        /// Takes the next row's column values out of the parts (front first, after reversing
        /// them).
        fn pop_row(parts: &mut Self::Parts) -> Option<Self::Raw>;
        /// Reverses every column, so `pop_row` yields rows front first.
        fn reverse(parts: &mut Self::Parts);
    }

    impl SerColumns for () {
        const COUNT: usize = 0;
        unsafe fn write_columns<S: SerializeTuple>(
            self,
            _: usize,
            _: &mut S,
        ) -> Result<(), S::Error> {
            Ok(())
        }
    }
    impl<F: Serialize> SerColumns for Col<F> {
        const COUNT: usize = 1;
        unsafe fn write_columns<S: SerializeTuple>(
            self,
            len: usize,
            out: &mut S,
        ) -> Result<(), S::Error> {
            // SAFETY: the caller guarantees rows `0..len` are initialised.
            out.serialize_element(unsafe { self.slices(0, len) })
        }
    }
    impl<A: SerColumns, B: SerColumns> SerColumns for (A, B) {
        const COUNT: usize = A::COUNT + B::COUNT;
        unsafe fn write_columns<S: SerializeTuple>(
            self,
            len: usize,
            out: &mut S,
        ) -> Result<(), S::Error> {
            // SAFETY: forwarded from the caller.
            unsafe {
                self.0.write_columns(len, out)?;
                self.1.write_columns(len, out)
            }
        }
    }
    impl<T: Soa> SerColumns for Nested<T>
    where
        T::Columns: SerColumns,
    {
        const COUNT: usize = <T::Columns as SerColumns>::COUNT;
        unsafe fn write_columns<S: SerializeTuple>(
            self,
            len: usize,
            out: &mut S,
        ) -> Result<(), S::Error> {
            // SAFETY: forwarded from the caller.
            unsafe { self.inner().write_columns(len, out) }
        }
    }

    impl<'de> DeColumns<'de> for () {
        const COUNT: usize = 0;
        type Parts = ();
        fn read_columns<A: SeqAccess<'de>>(_: &mut A, _: &mut usize) -> Result<(), A::Error> {
            Ok(())
        }
        fn lens(_: &(), _: &mut dyn FnMut(usize)) {}
        fn pop_row(_: &mut ()) -> Option<()> {
            Some(())
        }
        fn reverse(_: &mut ()) {}
    }
    impl<'de, F: Deserialize<'de>> DeColumns<'de> for Col<F> {
        const COUNT: usize = 1;
        type Parts = Vec<F>;
        fn read_columns<A: SeqAccess<'de>>(
            seq: &mut A,
            index: &mut usize,
        ) -> Result<Vec<F>, A::Error> {
            let col = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(*index, &"one sequence per column"))?;
            *index += 1;
            Ok(col)
        }
        fn lens(parts: &Vec<F>, f: &mut dyn FnMut(usize)) {
            f(parts.len());
        }
        fn pop_row(parts: &mut Vec<F>) -> Option<F> {
            parts.pop()
        }
        fn reverse(parts: &mut Vec<F>) {
            parts.reverse();
        }
    }
    impl<'de, A: DeColumns<'de>, B: DeColumns<'de>> DeColumns<'de> for (A, B) {
        const COUNT: usize = A::COUNT + B::COUNT;
        type Parts = (A::Parts, B::Parts);
        fn read_columns<S: SeqAccess<'de>>(
            seq: &mut S,
            index: &mut usize,
        ) -> Result<Self::Parts, S::Error> {
            let a = A::read_columns(seq, index)?;
            Ok((a, B::read_columns(seq, index)?))
        }
        fn lens(parts: &Self::Parts, f: &mut dyn FnMut(usize)) {
            A::lens(&parts.0, f);
            B::lens(&parts.1, f);
        }
        fn pop_row(parts: &mut Self::Parts) -> Option<Self::Raw> {
            let a = A::pop_row(&mut parts.0)?;
            Some((a, B::pop_row(&mut parts.1)?))
        }
        fn reverse(parts: &mut Self::Parts) {
            A::reverse(&mut parts.0);
            B::reverse(&mut parts.1);
        }
    }
    impl<'de, T: Soa> DeColumns<'de> for Nested<T>
    where
        T::Columns: DeColumns<'de>,
    {
        const COUNT: usize = <T::Columns as DeColumns<'de>>::COUNT;
        type Parts = <T::Columns as DeColumns<'de>>::Parts;
        fn read_columns<A: SeqAccess<'de>>(
            seq: &mut A,
            index: &mut usize,
        ) -> Result<Self::Parts, A::Error> {
            <T::Columns as DeColumns<'de>>::read_columns(seq, index)
        }
        fn lens(parts: &Self::Parts, f: &mut dyn FnMut(usize)) {
            <T::Columns as DeColumns<'de>>::lens(parts, f);
        }
        fn pop_row(parts: &mut Self::Parts) -> Option<Self::Raw> {
            <T::Columns as DeColumns<'de>>::pop_row(parts)
        }
        fn reverse(parts: &mut Self::Parts) {
            <T::Columns as DeColumns<'de>>::reverse(parts);
        }
    }

    /// Writes `v` as a sequence of columns in field order.
    pub fn serialize<T, S>(v: &SoaVec<T>, serializer: S) -> Result<S::Ok, S::Error>
    where
        T: Soa,
        T::Columns: SerColumns,
        S: Serializer,
    {
        let mut t = serializer.serialize_tuple(<T::Columns as SerColumns>::COUNT)?;
        // SAFETY: rows `0..len` of the vector are initialised.
        unsafe { v.as_soa_slice().columns().write_columns(v.len(), &mut t)? };
        t.end()
    }

    /// Reads a sequence of columns; fails if they do not all have the same length.
    pub fn deserialize<'de, T, D>(deserializer: D) -> Result<SoaVec<T>, D::Error>
    where
        T: Soa,
        T::Columns: DeColumns<'de>,
        D: Deserializer<'de>,
    {
        struct Cols<T>(PhantomData<T>);
        impl<'de, T: Soa> Visitor<'de> for Cols<T>
        where
            T::Columns: DeColumns<'de>,
        {
            type Value = SoaVec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a sequence of {} columns",
                    <T::Columns as DeColumns<'de>>::COUNT
                )
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SoaVec<T>, A::Error> {
                let mut index = 0;
                let mut parts = <T::Columns as DeColumns<'de>>::read_columns(&mut seq, &mut index)?;
                let mut lens = Vec::new();
                <T::Columns as DeColumns<'de>>::lens(&parts, &mut |n| lens.push(n));
                let len = lens.first().copied().unwrap_or(0);
                if let Some((i, &other)) = lens.iter().enumerate().find(|&(_, &n)| n != len) {
                    return Err(de::Error::custom(format!(
                        "SoA columns have different lengths: column 0 has {len} values but \
                         column {i} has {other}; every column needs one value per row"
                    )));
                }
                <T::Columns as DeColumns<'de>>::reverse(&mut parts);
                let mut v = SoaVec::with_capacity(len);
                // Bounded by the row count the columns agree on, checked before each row: a type
                // with no columns has no lengths (`len` is 0) and `pop_row` never runs dry.
                while v.len() < len {
                    let Some(row) = <T::Columns as DeColumns<'de>>::pop_row(&mut parts) else {
                        break;
                    };
                    v.push_raw(row);
                }
                Ok(v)
            }
        }
        let count = <T::Columns as DeColumns<'de>>::COUNT;
        deserializer.deserialize_tuple(count, Cols(PhantomData))
    }
}
