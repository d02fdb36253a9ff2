//! `Serialize` for [`StructLayout`], [`FieldLayout`], [`EnumLayout`] and its
//! [`VariantLayout`]s (the `serde` feature), so tools read a layout as JSON or any other format
//! serde writes; with `std`, the snapshot's
//! [`Row`](super::snapshot::Row) and [`Snapshot`](super::snapshot::Snapshot) too.
//!
//! A layout is written with what its methods compute beside its parts, so a tool needs no
//! layout arithmetic of its own; the representation is its text (`repr(C, packed(2))`). There
//! is no `Deserialize`: a layout's names are `&'static str`, and a layout read back would not
//! describe a type of the reading program.
//!
//! ```
//! use arena_kit::{HasLayout, Layout};
//!
//! #[derive(Layout)]
//! #[repr(C)]
//! struct Enemy { alive: bool, health: f64 }
//!
//! let json = serde_json::to_value(Enemy::LAYOUT).unwrap();
//! assert_eq!(json["size"], 16);
//! assert_eq!(json["padding"], 7);
//! assert_eq!(json["fields"][1]["offset"], 8);
//! assert_eq!(json["best_order"], serde_json::json!(["health", "alive"]));
//! ```

use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::{EnumLayout, FieldLayout, FieldOrder, StructLayout, TagLayout, VariantLayout};

/// `{"name":..,"ty":..,"offset":..,"size":..,"align":..}`.
impl Serialize for FieldLayout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("FieldLayout", 5)?;
        s.serialize_field("name", self.name)?;
        s.serialize_field("ty", self.ty)?;
        s.serialize_field("offset", &self.offset)?;
        s.serialize_field("size", &self.size)?;
        s.serialize_field("align", &self.align)?;
        s.end()
    }
}

/// Field names in an order.
struct Names<'a>(FieldOrder<'a>);

impl Serialize for Names<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let order = self.0.clone();
        let mut seq = serializer.serialize_seq(Some(order.len()))?;
        for f in order {
            seq.serialize_element(f.name)?;
        }
        seq.end()
    }
}

/// `{"name":..,"repr":"repr(C)","size":..,"align":..,"fields_size":..,"padding":..,
/// "min_size":..,"savings":..,"soa_size":..,"fields":[..],"best_order":[names]}`, fields in
/// declaration order.
impl Serialize for StructLayout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("StructLayout", 11)?;
        s.serialize_field("name", self.name())?;
        s.serialize_field("repr", &Display(self.repr()))?;
        s.serialize_field("size", &self.size())?;
        s.serialize_field("align", &self.align())?;
        s.serialize_field("fields_size", &self.fields_size())?;
        s.serialize_field("padding", &self.padding())?;
        s.serialize_field("min_size", &self.min_size())?;
        s.serialize_field("savings", &self.savings())?;
        s.serialize_field("soa_size", &self.soa_size())?;
        s.serialize_field("fields", self.fields())?;
        s.serialize_field("best_order", &Names(self.best_order()))?;
        s.end()
    }
}

/// `{"name":..,"size":..,"align":..,"fields_size":..,"padding":..,"boxed_size":..,
/// "fields":[..]}`; field offsets are from the enum's start, and 0 where
/// [`EnumLayout::offsets_known`] is false.
impl Serialize for VariantLayout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("VariantLayout", 7)?;
        s.serialize_field("name", self.name)?;
        s.serialize_field("size", &self.size)?;
        s.serialize_field("align", &self.align)?;
        s.serialize_field("fields_size", &self.fields_size())?;
        s.serialize_field("padding", &self.padding())?;
        s.serialize_field("boxed_size", &self.boxed_size)?;
        s.serialize_field("fields", self.fields)?;
        s.end()
    }
}

/// `{"kind":"explicit"|"inferred"|"niche"|"none","bytes":..}`.
impl Serialize for TagLayout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let kind = match self {
            TagLayout::Explicit { .. } => "explicit",
            TagLayout::Inferred { .. } => "inferred",
            TagLayout::Niche => "niche",
            TagLayout::None => "none",
        };
        let mut s = serializer.serialize_struct("TagLayout", 2)?;
        s.serialize_field("kind", kind)?;
        s.serialize_field("bytes", &self.bytes())?;
        s.end()
    }
}

/// `{"name":..,"repr":"repr(u8)","size":..,"align":..,"tag":{..},"padding":..,
/// "offsets_known":..,"largest":"Variant"|null,"spread":..,"best_size":..,
/// "boxing_hint":{"variant":..,"size":..}|null,"variants":[..]}`.
impl Serialize for EnumLayout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("EnumLayout", 12)?;
        s.serialize_field("name", self.name())?;
        s.serialize_field("repr", &Display(EnumReprText(self)))?;
        s.serialize_field("size", &self.size())?;
        s.serialize_field("align", &self.align())?;
        s.serialize_field("tag", &self.tag())?;
        s.serialize_field("padding", &self.padding())?;
        s.serialize_field("offsets_known", &self.offsets_known())?;
        s.serialize_field("largest", &self.largest_variant().map(|v| v.name))?;
        s.serialize_field("spread", &self.spread())?;
        s.serialize_field("best_size", &self.best_size())?;
        s.serialize_field(
            "boxing_hint",
            &self.boxing_hint().map(|(i, size)| BoxingHint {
                variant: self.variants()[i].name,
                size,
            }),
        )?;
        s.serialize_field("variants", self.variants())?;
        s.end()
    }
}

/// The variant to box and the enum's size with it boxed.
struct BoxingHint {
    variant: &'static str,
    size: usize,
}

impl Serialize for BoxingHint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("BoxingHint", 2)?;
        s.serialize_field("variant", self.variant)?;
        s.serialize_field("size", &self.size)?;
        s.end()
    }
}

/// An enum's representation as its report writes it (`repr(C, u8)`).
struct EnumReprText<'a>(&'a EnumLayout);

impl core::fmt::Display for EnumReprText<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut t = super::text::Text::<64>::new();
        super::enums::write_enum_repr(&mut t, &self.0.repr());
        f.write_str(t.as_str())
    }
}

/// A value written as its `Display` text.
struct Display<T>(T);

impl<T: core::fmt::Display> Serialize for Display<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

#[cfg(feature = "std")]
mod snapshot {
    use serde::ser::{Serialize, SerializeStruct, Serializer};

    use super::super::snapshot::{Row, Snapshot};

    /// `{"name":..,"size":..,"align":..,"padding":..,"waste_percent":..,"best_size":..}`.
    impl Serialize for Row {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Row", 6)?;
            s.serialize_field("name", self.name())?;
            s.serialize_field("size", &self.size())?;
            s.serialize_field("align", &self.align())?;
            s.serialize_field("padding", &self.padding())?;
            s.serialize_field("waste_percent", &self.waste_percent())?;
            s.serialize_field("best_size", &self.best_size())?;
            s.end()
        }
    }

    /// The rows, as an array sorted by name.
    impl Serialize for Snapshot {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.rows().serialize(serializer)
        }
    }
}
