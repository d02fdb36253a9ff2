//! Reports, histories and usage counters through serde (the `serde` feature): the same text as
//! the built-in JSON, and every figure read back from it as it was.
#![cfg(feature = "serde")]

use arena_kit_core::arena::Arena;
use arena_kit_core::pool::Pool;
use arena_kit_core::tags::{Budget, Registry, Report, Tag, Tracked, Usage};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryTag {
    Physics,
    Rendering,
    Particles,
}

impl Tag for MemoryTag {
    fn name(&self) -> &'static str {
        match self {
            MemoryTag::Physics => "Physics",
            MemoryTag::Rendering => "Rendering",
            MemoryTag::Particles => "Particles",
        }
    }

    fn parent(&self) -> Option<Self> {
        match self {
            MemoryTag::Particles => Some(MemoryTag::Rendering),
            _ => None,
        }
    }
}

use MemoryTag::*;

fn usage_of(v: &Value) -> Usage {
    let n = |key: &str| {
        v[key]
            .as_u64()
            .unwrap_or_else(|| panic!("no `{key}` in {v}")) as usize
    };
    Usage {
        current: n("current"),
        peak: n("peak"),
        allocations: n("allocations"),
        reserved: n("reserved"),
    }
}

fn budget_of(v: &Value) -> Option<usize> {
    v["budget"].as_u64().map(|b| b as usize)
}

/// Two frames of a pool under `Physics`, an arena under `Rendering/Particles` with a budget, an
/// untracked arena under `Rendering`, and a tag budget.
fn two_frames() -> (Registry<MemoryTag>, Report<MemoryTag>) {
    let mut bodies = Tracked::new(Pool::with_capacity(4), "bodies, dynamic", Physics);
    let sparks = Tracked::new(Arena::with_capacity(256), "sparks \"hot\"", Particles)
        .with_budget(Budget::fail(200));
    let ui = Arena::with_capacity(128);
    ui.alloc([0u8; 16]);
    bodies.insert([0u64; 8]);
    sparks.alloc([0u8; 10]);
    let mut registry = Registry::new();
    registry.set_budget(Rendering, Budget::warn(1000));
    registry
        .end_frame(&[&bodies, &sparks, &("ui", Rendering, &ui)])
        .unwrap();
    sparks.alloc([0u8; 20]);
    bodies.insert([1u64; 8]);
    let report = registry
        .end_frame(&[&bodies, &sparks, &("ui", Rendering, &ui)])
        .unwrap();
    bodies.clear();
    (registry, report)
}

#[test]
fn a_report_round_trips_its_figures_through_serde_json() {
    let (_, report) = two_frames();
    let text = serde_json::to_string(&report).unwrap();
    assert_eq!(text, report.to_json(), "serde writes the built-in JSON");
    let json: Value = serde_json::from_str(&text).unwrap();

    assert_eq!(json["frame"], report.frame());
    let allocators = json["allocators"].as_array().unwrap();
    assert_eq!(allocators.len(), report.allocators().len());
    for (row, v) in report.allocators().iter().zip(allocators) {
        assert_eq!(v["name"], row.name);
        assert_eq!(v["tag"], arena_kit_core::tags::TagPath(row.tag).to_string());
        assert_eq!(usage_of(v), row.usage, "{v}");
        assert_eq!(budget_of(v), row.budget, "{v}");
    }
    let tags = json["tags"].as_array().unwrap();
    assert_eq!(tags.len(), report.tags().len());
    for (row, v) in report.tags().iter().zip(tags) {
        assert_eq!(v["tag"], arena_kit_core::tags::TagPath(row.tag).to_string());
        assert_eq!(usage_of(v), row.usage, "{v}");
        assert_eq!(usage_of(&v["own"]), row.own, "{v}");
        assert_eq!(v["allocators"], row.allocators);
        assert_eq!(budget_of(v), row.budget, "{v}");
    }
    assert_eq!(usage_of(&json["total"]), report.total());

    // The figures themselves, so a wrong field order or a swapped counter cannot pass.
    assert_eq!(json["tags"][1]["tag"], "Rendering");
    assert_eq!(json["tags"][1]["budget"], 1000);
    assert_eq!(json["tags"][1]["current"], 30 + 16);
    assert_eq!(json["tags"][1]["own"]["current"], 16);
    assert_eq!(json["tags"][2]["tag"], "Rendering/Particles");
    assert_eq!(json["allocators"][0]["current"], 128);
    assert_eq!(json["allocators"][1]["budget"], 200);
    assert_eq!(json["allocators"][2]["budget"], Value::Null);
}

#[test]
fn a_history_round_trips_every_sample() {
    let (registry, _) = two_frames();
    let history = registry.history();
    let text = serde_json::to_string(history).unwrap();
    assert_eq!(text, history.to_json(), "serde writes the built-in JSON");
    let json: Value = serde_json::from_str(&text).unwrap();
    let frames = json["frames"].as_array().unwrap();
    assert_eq!(frames.len(), history.len());
    for (sample, v) in history.samples().zip(frames) {
        assert_eq!(v["frame"], sample.frame);
        let tags = v["tags"].as_array().unwrap();
        assert_eq!(tags.len(), sample.tags.len());
        for ((tag, usage), t) in sample.tags.iter().zip(tags) {
            assert_eq!(t["tag"], arena_kit_core::tags::TagPath(*tag).to_string());
            assert_eq!(usage_of(t), *usage);
        }
    }
    // One sample on its own has the same shape as inside the history.
    let first = history.samples().next().unwrap();
    assert_eq!(serde_json::to_value(first).unwrap(), frames[0]);
    assert_eq!(frames[1]["tags"][0]["current"], 128);
}

#[test]
fn usage_is_an_object_of_its_four_counters() {
    let usage = Usage {
        current: 1,
        peak: 2,
        allocations: 3,
        reserved: 4,
    };
    assert_eq!(
        serde_json::to_string(&usage).unwrap(),
        r#"{"current":1,"peak":2,"allocations":3,"reserved":4}"#
    );
}
