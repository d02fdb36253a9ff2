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
//! - **Named columns** ([`named_columns::serialize`] / [`named_columns::deserialize`], for
//!   `#[serde(with = "arena_kit::soa::serde::named_columns")]`): a map from each column's name to
//!   its values, `{"id": [..], "pos.x": [..], "pos.y": [..]}` (a nested field's columns are
//!   `field.inner`). Keys may come in any order; an unknown, repeated or missing key and columns
//!   of unequal length are errors that name the column.
//!
//! Reading either column format needs the row to be `Deserialize` (as the row format does) and
//! [`PlainRow`](super::PlainRow): the columns set every field, private ones too, and the row's own
//! `Deserialize` (which may check them) does not run. Writing them needs `Serialize` and
//! `PlainRow` alike: the columns show every field, private ones too.

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
    use alloc::string::String;
    use alloc::vec::Vec;
    use core::fmt;
    use core::marker::PhantomData;

    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde::ser::{Serialize, SerializeMap, SerializeTuple, Serializer};

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
        /// Writes every column's first `len` values as one map entry each, keyed by the next
        /// name of `keys`.
        ///
        /// # Safety
        /// - rows `0..len` are initialised.
        unsafe fn write_named<M: SerializeMap>(
            self,
            len: usize,
            keys: &mut core::slice::Iter<'_, String>,
            out: &mut M,
        ) -> Result<(), M::Error>;
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
        /// Every column's values while a map is read: each column empty until its key comes.
        type Slots: Default;
        /// Reads the value of leaf column `leaf` (`< COUNT`) from `map` into its slot.
        fn read_slot<M: MapAccess<'de>>(
            slots: &mut Self::Slots,
            leaf: usize,
            map: &mut M,
        ) -> Result<(), M::Error>;
        /// The parts, once every slot was filled; `None` if one was not.
        fn finish_slots(slots: Self::Slots) -> Option<Self::Parts>;
    }

    /// Columns that know their names: the keys of the named format.
    pub trait NamedColumns: Columns {
        /// Appends the leaf columns' names to `out`: `prefix` followed by the name at
        /// `names[*index]` (which moves on), a nested field's as `field.inner`. `false` if
        /// `names` runs out (a hand-written `Soa` impl without [`Soa::FIELD_NAMES`]).
        fn leaf_names(
            names: &[&str],
            index: &mut usize,
            prefix: &str,
            out: &mut Vec<String>,
        ) -> bool;
    }

    impl NamedColumns for () {
        fn leaf_names(_: &[&str], _: &mut usize, _: &str, _: &mut Vec<String>) -> bool {
            true
        }
    }
    impl<F> NamedColumns for Col<F> {
        fn leaf_names(
            names: &[&str],
            index: &mut usize,
            prefix: &str,
            out: &mut Vec<String>,
        ) -> bool {
            let Some(name) = names.get(*index) else {
                return false;
            };
            *index += 1;
            out.push(format!("{prefix}{name}"));
            true
        }
    }
    impl<A: NamedColumns, B: NamedColumns> NamedColumns for (A, B) {
        fn leaf_names(
            names: &[&str],
            index: &mut usize,
            prefix: &str,
            out: &mut Vec<String>,
        ) -> bool {
            A::leaf_names(names, index, prefix, out) && B::leaf_names(names, index, prefix, out)
        }
    }
    impl<S: Soa> NamedColumns for Nested<S>
    where
        S::Columns: NamedColumns,
    {
        fn leaf_names(
            names: &[&str],
            index: &mut usize,
            prefix: &str,
            out: &mut Vec<String>,
        ) -> bool {
            let Some(name) = names.get(*index) else {
                return false;
            };
            *index += 1;
            let inner = format!("{prefix}{name}.");
            S::Columns::leaf_names(S::FIELD_NAMES, &mut 0, &inner, out)
        }
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
        unsafe fn write_named<M: SerializeMap>(
            self,
            _: usize,
            _: &mut core::slice::Iter<'_, String>,
            _: &mut M,
        ) -> Result<(), M::Error> {
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
        unsafe fn write_named<M: SerializeMap>(
            self,
            len: usize,
            keys: &mut core::slice::Iter<'_, String>,
            out: &mut M,
        ) -> Result<(), M::Error> {
            let key = keys.next().map_or("", String::as_str);
            // SAFETY: the caller guarantees rows `0..len` are initialised.
            out.serialize_entry(key, unsafe { self.slices(0, len) })
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
        unsafe fn write_named<M: SerializeMap>(
            self,
            len: usize,
            keys: &mut core::slice::Iter<'_, String>,
            out: &mut M,
        ) -> Result<(), M::Error> {
            // SAFETY: forwarded from the caller.
            unsafe {
                self.0.write_named(len, keys, out)?;
                self.1.write_named(len, keys, out)
            }
        }
    }
    /// Only for a nested row that is `Serialize` and [`PlainRow`](crate::soa::PlainRow) itself,
    /// as the outer row must be (the columns show private fields, which the row's own
    /// `Serialize` may leave out).
    impl<T: Soa + Serialize + crate::soa::PlainRow> SerColumns for Nested<T>
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
        unsafe fn write_named<M: SerializeMap>(
            self,
            len: usize,
            keys: &mut core::slice::Iter<'_, String>,
            out: &mut M,
        ) -> Result<(), M::Error> {
            // SAFETY: forwarded from the caller.
            unsafe { self.inner().write_named(len, keys, out) }
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
        type Slots = ();
        fn read_slot<M: MapAccess<'de>>(_: &mut (), _: usize, _: &mut M) -> Result<(), M::Error> {
            Ok(())
        }
        fn finish_slots((): ()) -> Option<()> {
            Some(())
        }
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
        type Slots = Option<Vec<F>>;
        fn read_slot<M: MapAccess<'de>>(
            slot: &mut Option<Vec<F>>,
            _: usize,
            map: &mut M,
        ) -> Result<(), M::Error> {
            *slot = Some(map.next_value()?);
            Ok(())
        }
        fn finish_slots(slot: Option<Vec<F>>) -> Option<Vec<F>> {
            slot
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
        type Slots = (A::Slots, B::Slots);
        fn read_slot<M: MapAccess<'de>>(
            slots: &mut Self::Slots,
            leaf: usize,
            map: &mut M,
        ) -> Result<(), M::Error> {
            if leaf < A::COUNT {
                A::read_slot(&mut slots.0, leaf, map)
            } else {
                B::read_slot(&mut slots.1, leaf - A::COUNT, map)
            }
        }
        fn finish_slots((a, b): Self::Slots) -> Option<Self::Parts> {
            Some((A::finish_slots(a)?, B::finish_slots(b)?))
        }
    }
    /// Only for a nested row that is `Deserialize` and [`PlainRow`](crate::soa::PlainRow) itself,
    /// as the outer row must be (a row whose fields keep an invariant may check them in a
    /// constructor its `Deserialize` calls, which the columns would skip).
    impl<'de, T: Soa + Deserialize<'de> + crate::soa::PlainRow> DeColumns<'de> for Nested<T>
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
        type Slots = <T::Columns as DeColumns<'de>>::Slots;
        fn read_slot<M: MapAccess<'de>>(
            slots: &mut Self::Slots,
            leaf: usize,
            map: &mut M,
        ) -> Result<(), M::Error> {
            <T::Columns as DeColumns<'de>>::read_slot(slots, leaf, map)
        }
        fn finish_slots(slots: Self::Slots) -> Option<Self::Parts> {
            <T::Columns as DeColumns<'de>>::finish_slots(slots)
        }
    }

    /// The rows of `parts`, or why not: columns of unequal length (`name(i)` names column `i`
    /// in the message).
    pub(super) fn assemble<'de, T>(
        mut parts: <T::Columns as DeColumns<'de>>::Parts,
        name: impl Fn(usize) -> alloc::string::String,
    ) -> Result<SoaVec<T>, alloc::string::String>
    where
        T: Soa,
        T::Columns: DeColumns<'de>,
    {
        let mut lens = Vec::new();
        <T::Columns as DeColumns<'de>>::lens(&parts, &mut |n| lens.push(n));
        let len = lens.first().copied().unwrap_or(0);
        if let Some((i, &other)) = lens.iter().enumerate().find(|&(_, &n)| n != len) {
            return Err(format!(
                "SoA columns have different lengths: {} has {len} values but {} has {other}; \
                 every column needs one value per row",
                name(0),
                name(i)
            ));
        }
        <T::Columns as DeColumns<'de>>::reverse(&mut parts);
        let mut v = SoaVec::with_capacity(len);
        // Bounded by the row count the columns agree on, checked before each row: a type with
        // no columns has no lengths (`len` is 0) and `pop_row` never runs dry.
        while v.len() < len {
            let Some(row) = <T::Columns as DeColumns<'de>>::pop_row(&mut parts) else {
                break;
            };
            v.push_raw(row);
        }
        Ok(v)
    }

    /// Writes `v` as a sequence of columns in field order.
    ///
    /// Only for rows that are `Serialize` and [`PlainRow`](crate::soa::PlainRow), as
    /// [`deserialize`] needs: the columns show every field, private ones too, including any the
    /// row's own `Serialize` leaves out.
    pub fn serialize<T, S>(v: &SoaVec<T>, serializer: S) -> Result<S::Ok, S::Error>
    where
        T: Soa + Serialize + crate::soa::PlainRow,
        T::Columns: SerColumns,
        S: Serializer,
    {
        let mut t = serializer.serialize_tuple(<T::Columns as SerColumns>::COUNT)?;
        // SAFETY: rows `0..len` of the vector are initialised.
        unsafe { v.as_soa_slice().columns().write_columns(v.len(), &mut t)? };
        t.end()
    }

    /// Reads a sequence of columns; fails if they do not all have the same length.
    ///
    /// Only for rows that are `Deserialize` and [`PlainRow`](crate::soa::PlainRow): the columns
    /// set every field, private ones too, and the row's own `Deserialize` does not run, so a row
    /// whose fields keep an invariant (checked by a constructor, or by a
    /// `#[serde(try_from = "..")]`) must not be built from input here.
    pub fn deserialize<'de, T, D>(deserializer: D) -> Result<SoaVec<T>, D::Error>
    where
        T: Soa + Deserialize<'de> + crate::soa::PlainRow,
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
                let parts = <T::Columns as DeColumns<'de>>::read_columns(&mut seq, &mut index)?;
                assemble::<T>(parts, |i| format!("column {i}")).map_err(de::Error::custom)
            }
        }
        let count = <T::Columns as DeColumns<'de>>::COUNT;
        deserializer.deserialize_tuple(count, Cols(PhantomData))
    }
}

/// The named column format: `#[serde(with = "arena_kit::soa::serde::named_columns")]`. A map from
/// each column's name to its values, the shape soa_derive writes:
///
/// ```
/// use arena_kit::{Soa, SoaVec};
///
/// #[derive(Soa, serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// #[soa(plain)] // any coordinates make a valid `Pos`: rows may go column by column
/// struct Pos { x: f32, y: f32 }
///
/// #[derive(Soa, serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// struct Mob { pub id: u32, #[soa(nested)] pub pos: Pos } // every field `pub`: plain already
///
/// use arena_kit::soa::serde::named_columns;
/// use serde_json::json;
///
/// let mobs: SoaVec<Mob> = [Mob { id: 7, pos: Pos { x: 1.0, y: 2.0 } }].into();
/// let saved = named_columns::serialize(&mobs, serde_json::value::Serializer).unwrap();
/// assert_eq!(saved, json!({ "id": [7], "pos.x": [1.0], "pos.y": [2.0] }));
///
/// // Keys in any order; a missing or unknown column is an error naming it.
/// let back: SoaVec<Mob> =
///     named_columns::deserialize(json!({ "pos.y": [2.0], "id": [7], "pos.x": [1.0] })).unwrap();
/// assert_eq!(back.into_vec(), [Mob { id: 7, pos: Pos { x: 1.0, y: 2.0 } }]);
/// let err = named_columns::deserialize::<Mob, _>(json!({ "id": [7], "pos.x": [1.0] })).unwrap_err();
/// assert!(err.to_string().contains("`pos.y` is missing"), "{err}");
/// ```
///
/// In a struct: `#[serde(with = "arena_kit::soa::serde::named_columns")] mobs: SoaVec<Mob>`.
///
/// Allocation is bounded by the input: each column is read as serde reads a `Vec` (a declared
/// length is trusted only up to 1 MiB of values), at most one column per known name is read, and
/// the vector is allocated only once every column is present and the lengths agree.
pub mod named_columns {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;
    use core::fmt;
    use core::marker::PhantomData;

    use serde::de::{self, Deserializer, MapAccess, Visitor};
    use serde::ser::{SerializeMap, Serializer};

    use super::columns::{DeColumns, NamedColumns, SerColumns, assemble};
    use crate::soa::{Soa, SoaVec};

    /// The leaf columns' names of `T`, or why it has none to give.
    fn keys<T: Soa>(count: usize) -> Result<Vec<String>, String>
    where
        T::Columns: NamedColumns,
    {
        let mut out = Vec::with_capacity(count);
        let complete = T::Columns::leaf_names(T::FIELD_NAMES, &mut 0, "", &mut out);
        if complete && out.len() == count {
            Ok(out)
        } else {
            Err(format!(
                "`{}` does not name its fields (Soa::FIELD_NAMES), so it has no named column \
                 format; derive Soa or set FIELD_NAMES, or use the positional `columns` format",
                core::any::type_name::<T>()
            ))
        }
    }

    /// Writes `v` as a map from each column's name to its values.
    ///
    /// Only for rows that are `Serialize` and [`PlainRow`](crate::soa::PlainRow), as
    /// [`columns::serialize`](super::columns::serialize).
    pub fn serialize<T, S>(v: &SoaVec<T>, serializer: S) -> Result<S::Ok, S::Error>
    where
        T: Soa + serde::Serialize + crate::soa::PlainRow,
        T::Columns: SerColumns + NamedColumns,
        S: Serializer,
    {
        let count = <T::Columns as SerColumns>::COUNT;
        let keys = keys::<T>(count).map_err(serde::ser::Error::custom)?;
        let mut map = serializer.serialize_map(Some(count))?;
        // SAFETY: rows `0..len` of the vector are initialised.
        unsafe {
            v.as_soa_slice()
                .columns()
                .write_named(v.len(), &mut keys.iter(), &mut map)?
        };
        map.end()
    }

    /// Reads a map from column names to values: every column exactly once, in any order, all of
    /// one length. Only for rows that are `Deserialize` and [`PlainRow`](crate::soa::PlainRow),
    /// as [`columns::deserialize`](super::columns::deserialize).
    pub fn deserialize<'de, T, D>(deserializer: D) -> Result<SoaVec<T>, D::Error>
    where
        T: Soa + serde::Deserialize<'de> + crate::soa::PlainRow,
        T::Columns: DeColumns<'de> + NamedColumns,
        D: Deserializer<'de>,
    {
        struct Named<T>(PhantomData<T>);
        impl<'de, T: Soa> Visitor<'de> for Named<T>
        where
            T::Columns: DeColumns<'de> + NamedColumns,
        {
            type Value = SoaVec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a map of {} named columns",
                    <T::Columns as DeColumns<'de>>::COUNT
                )
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<SoaVec<T>, M::Error> {
                let count = <T::Columns as DeColumns<'de>>::COUNT;
                let keys = keys::<T>(count).map_err(de::Error::custom)?;
                let mut seen = alloc::vec![false; count];
                let mut slots = <<T::Columns as DeColumns<'de>>::Slots>::default();
                while let Some(key) = map.next_key::<String>()? {
                    let Some(leaf) = keys.iter().position(|k| *k == key) else {
                        return Err(de::Error::custom(format!(
                            "unknown SoA column `{key}`; the columns are {}",
                            keys.join(", ")
                        )));
                    };
                    if core::mem::replace(&mut seen[leaf], true) {
                        return Err(de::Error::custom(format!(
                            "SoA column `{key}` appears twice; give each column once"
                        )));
                    }
                    <T::Columns as DeColumns<'de>>::read_slot(&mut slots, leaf, &mut map)?;
                }
                if let Some(missing) = seen.iter().position(|s| !s) {
                    return Err(de::Error::custom(format!(
                        "SoA column `{}` is missing; every column needs its values",
                        keys[missing]
                    )));
                }
                let parts = <T::Columns as DeColumns<'de>>::finish_slots(slots)
                    .ok_or_else(|| de::Error::custom("a SoA column is missing"))?;
                assemble::<T>(parts, |i| format!("`{}`", keys[i])).map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_map(Named(PhantomData))
    }
}
