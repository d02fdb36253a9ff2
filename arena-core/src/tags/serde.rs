//! `Serialize` for [`Report`], [`History`], [`Usage`] and the rows and samples they hold (the
//! `serde` feature), so a report goes to any format serde writes: JSON, RON, MessagePack, ...
//!
//! The shape is the built-in JSON's ([`Report::to_json`], [`History::to_json`]), field for field
//! and in the same order, so `serde_json::to_string(&report)` and `report.to_json()` give the
//! same text. Tags are written as their paths (`Rendering/Particles`), so a tag type needs no
//! `Serialize` of its own; a row's counters sit beside its name and tag rather than in a nested
//! object. There is no `Deserialize`: a report is an export, its names are `&'static str`.
//!
//! ```
//! use arena_kit::{Arena, Report, Tracked};
//!
//! let scratch = Tracked::new(Arena::with_capacity(256), "scratch", "AI");
//! scratch.alloc([0u8; 64]);
//! let report = Report::gather(&[&scratch]);
//! assert_eq!(serde_json::to_string(&report).unwrap(), report.to_json());
//! ```

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::history::{FrameSample, History};
use super::report::{AllocatorRow, Report, TagRow};
use super::tag::{Tag, TagPath};
use super::usage::Usage;

/// A tag, written as its path.
struct PathOf<G>(G);

impl<G: Tag> Serialize for PathOf<G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&TagPath(self.0))
    }
}

/// The four counters, as fields of the struct being written.
fn usage_fields<S: SerializeStruct>(s: &mut S, u: &Usage) -> Result<(), S::Error> {
    s.serialize_field("current", &u.current)?;
    s.serialize_field("peak", &u.peak)?;
    s.serialize_field("allocations", &u.allocations)?;
    s.serialize_field("reserved", &u.reserved)
}

/// `{"current":..,"peak":..,"allocations":..,"reserved":..}`.
impl Serialize for Usage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Usage", 4)?;
        usage_fields(&mut s, self)?;
        s.end()
    }
}

/// `{"name":..,"tag":"Rendering/Particles","current":..,"peak":..,"allocations":..,
/// "reserved":..,"budget":..}` (`budget` is `null` when there is none).
impl<G: Tag> Serialize for AllocatorRow<G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("AllocatorRow", 7)?;
        s.serialize_field("name", self.name)?;
        s.serialize_field("tag", &PathOf(self.tag))?;
        usage_fields(&mut s, &self.usage)?;
        s.serialize_field("budget", &self.budget)?;
        s.end()
    }
}

/// `{"tag":..,"current":..,"peak":..,"allocations":..,"reserved":..,"budget":..,
/// "allocators":..,"own":{..}}`: the counters with child tags included, then the allocators
/// counted, then the tag's own allocators' counters as a [`Usage`].
impl<G: Tag> Serialize for TagRow<G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("TagRow", 8)?;
        s.serialize_field("tag", &PathOf(self.tag))?;
        usage_fields(&mut s, &self.usage)?;
        s.serialize_field("budget", &self.budget)?;
        s.serialize_field("allocators", &self.allocators)?;
        s.serialize_field("own", &self.own)?;
        s.end()
    }
}

/// `{"frame":..,"tags":[TagRow..],"allocators":[AllocatorRow..],"total":Usage}`.
impl<G: Tag> Serialize for Report<G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Report", 4)?;
        s.serialize_field("frame", &self.frame())?;
        s.serialize_field("tags", self.tags())?;
        s.serialize_field("allocators", self.allocators())?;
        s.serialize_field("total", &self.total())?;
        s.end()
    }
}

/// One tag's counters in a [`FrameSample`].
struct TagUsage<'a, G>(&'a (G, Usage));

impl<G: Tag> Serialize for TagUsage<'_, G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (tag, usage) = self.0;
        let mut s = serializer.serialize_struct("TagUsage", 5)?;
        s.serialize_field("tag", &PathOf(*tag))?;
        usage_fields(&mut s, usage)?;
        s.end()
    }
}

/// The tags of a [`FrameSample`], as a sequence of `{"tag":..,"current":..,...}`.
struct SampleTags<'a, G>(&'a [(G, Usage)]);

impl<G: Tag> Serialize for SampleTags<'_, G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(TagUsage))
    }
}

/// `{"frame":..,"tags":[{"tag":..,"current":..,"peak":..,"allocations":..,"reserved":..}..]}`.
impl<G: Tag> Serialize for FrameSample<G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("FrameSample", 2)?;
        s.serialize_field("frame", &self.frame)?;
        s.serialize_field("tags", &SampleTags(&self.tags))?;
        s.end()
    }
}

/// The recorded frames, oldest first, as a sequence of [`FrameSample`]s.
struct Samples<'a, G>(&'a History<G>);

impl<G: Tag> Serialize for Samples<'_, G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.samples())
    }
}

/// `{"frames":[FrameSample..]}`, oldest first.
impl<G: Tag> Serialize for History<G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("History", 1)?;
        s.serialize_field("frames", &Samples(self))?;
        s.end()
    }
}
