//! The allocation recorder: its queries against a plain recomputation over a `Vec` of events
//! (hostile sequences included: double frees, unknown addresses and allocators, frames going
//! backwards, a ring small enough to drop events), its fixed memory, and its trace-event JSON
//! checked field by field against the Trace Event Format.

use std::collections::{BTreeMap, HashSet};
use std::panic::Location;
use std::sync::Arc;

use arena_kit_core::tags::{Allocation, Record, Recorder, RecorderError, SiteGroup, Stamped};
use proptest::prelude::*;
use serde_json::Value;

use crate::support::{miri_or, proptest_config};

// --- The plain reference ---

/// Every allocation of `held` with the frame of the event that ended it, and the frees that
/// matched nothing: each free scans back for the newest live allocation of the same allocator
/// (by name) at its address, each discard ends every live allocation of its allocator.
fn reference(held: &[Stamped]) -> (Vec<Allocation>, u64) {
    let (allocs, _, unmatched) = reference_with_enders(held);
    (allocs, unmatched)
}

/// [`reference`], with the sequence number of the event that ended each allocation.
fn reference_with_enders(held: &[Stamped]) -> (Vec<Allocation>, Vec<Option<u64>>, u64) {
    let mut allocs: Vec<Allocation> = Vec::new();
    let mut enders: Vec<Option<u64>> = Vec::new();
    let mut unmatched = 0;
    for e in held {
        match e.record {
            Record::Alloc {
                pool,
                tag,
                addr,
                size,
                site,
            } => {
                allocs.push(Allocation {
                    pool,
                    tag,
                    addr,
                    size,
                    frame: e.frame,
                    site,
                    seq: e.seq,
                    freed_in: None,
                });
                enders.push(None);
            }
            Record::Free { pool, addr, .. } => {
                match allocs
                    .iter_mut()
                    .zip(&mut enders)
                    .rev()
                    .find(|(a, _)| a.pool == pool && a.addr == addr && a.freed_in.is_none())
                {
                    Some((a, ender)) => {
                        a.freed_in = Some(e.frame);
                        *ender = Some(e.seq);
                    }
                    None => unmatched += 1,
                }
            }
            Record::Discard { pool, .. } => {
                for (a, ender) in allocs.iter_mut().zip(&mut enders) {
                    if a.pool == pool && a.freed_in.is_none() {
                        a.freed_in = Some(e.frame);
                        *ender = Some(e.seq);
                    }
                }
            }
            Record::FrameEnd { .. } => {}
        }
    }
    (allocs, enders, unmatched)
}

fn live_at(a: &Allocation, frame: u64) -> bool {
    a.frame <= frame && a.freed_in.is_none_or(|end| end > frame)
}

/// (bytes_from, bytes_to, count_from, count_to) per name.
type Rows = BTreeMap<&'static str, (u64, u64, u64, u64)>;

fn reference_growth(allocs: &[Allocation], from: u64, to: u64) -> (Rows, Rows) {
    let (mut tags, mut pools) = (Rows::new(), Rows::new());
    for a in allocs {
        let (f, t) = (live_at(a, from), live_at(a, to));
        if !(f || t) {
            continue;
        }
        for row in [
            tags.entry(a.tag).or_default(),
            pools.entry(a.pool).or_default(),
        ] {
            if f {
                row.0 += a.size as u64;
                row.2 += 1;
            }
            if t {
                row.1 += a.size as u64;
                row.3 += 1;
            }
        }
    }
    (tags, pools)
}

type GroupKey = (Option<(&'static str, u32, u32)>, &'static str, &'static str);

fn site_key(site: Option<&'static Location<'static>>) -> Option<(&'static str, u32, u32)> {
    site.map(|l| (l.file(), l.line(), l.column()))
}

// --- The operations ---

/// Two allocators of the same name at different addresses are one allocator.
fn pool_names() -> [&'static str; 3] {
    let twin: &'static str = Box::leak(String::from("bodies").into_boxed_str());
    ["bodies", twin, "scratch"]
}

const TAGS: [&str; 3] = ["Physics", "Frame", "AI"];

#[derive(Debug, Clone)]
enum Op {
    Alloc {
        pool: usize,
        tag: usize,
        addr: usize,
        size: usize,
        site: bool,
    },
    Free {
        pool: usize,
        addr: usize,
    },
    Discard {
        pool: usize,
    },
    EndFrame {
        frame: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, 0..3usize, 0..6usize, 1..100usize, any::<bool>())
            .prop_map(|(pool, tag, addr, size, site)| Op::Alloc { pool, tag, addr, size, site }),
        3 => (0..4usize, 0..7usize).prop_map(|(pool, addr)| Op::Free { pool, addr }),
        1 => (0..4usize).prop_map(|pool| Op::Discard { pool }),
        2 => (0..12u64).prop_map(|frame| Op::EndFrame { frame }),
    ]
}

fn site_a() -> &'static Location<'static> {
    Location::caller()
}

fn run(ops: &[Op], capacity: usize) -> (Recorder, Vec<Stamped>) {
    let pools = pool_names();
    let pool = |i: usize| if i < 3 { pools[i] } else { "never allocated" };
    let site = site_a();
    let recorder = Recorder::new(capacity);
    for (i, op) in ops.iter().enumerate() {
        // A query now and then keeps its matching for the next, which brings it up to date
        // with what was recorded and what left the ring since: each must answer as a matching
        // of the held events from scratch does.
        if i % 7 == 3 {
            let (allocs, unmatched) = reference(&recorder.events());
            for frame in [0, i as u64 % 12] {
                let answer = recorder.live_at(frame);
                let want: Vec<Allocation> = allocs
                    .iter()
                    .copied()
                    .filter(|a| live_at(a, frame))
                    .collect();
                assert_eq!(answer.value, want, "live_at({frame}) after {i} events");
                assert_eq!(answer.unmatched_frees, unmatched, "after {i} events");
            }
        }
        match *op {
            Op::Alloc {
                pool: p,
                tag,
                addr,
                size,
                site: with_site,
            } => recorder.alloc(
                pool(p),
                TAGS[tag],
                addr * 16,
                size,
                with_site.then_some(site),
            ),
            Op::Free { pool: p, addr } => recorder.free(pool(p), "Physics", addr * 16, 1),
            Op::Discard { pool: p } => recorder.discard(pool(p), "Frame"),
            Op::EndFrame { frame } => recorder.end_frame(frame),
        }
    }
    let held = recorder.events();
    (recorder, held)
}

fn check_against_reference(ops: &[Op], capacity: usize) -> Result<(), TestCaseError> {
    let (recorder, held) = run(ops, capacity);
    let total = ops.len() as u64;
    prop_assert_eq!(held.len() as u64, total.min(capacity as u64));
    prop_assert_eq!(recorder.dropped(), total.saturating_sub(capacity as u64));
    for (i, e) in held.iter().enumerate() {
        prop_assert_eq!(e.seq, recorder.dropped() + i as u64);
    }
    let (allocs, unmatched) = reference(&held);
    let complete = recorder.dropped() == 0;
    let now = recorder.frame();

    for frame in 0..14 {
        let answer = recorder.live_at(frame);
        prop_assert_eq!(answer.complete, complete);
        prop_assert_eq!(answer.unmatched_frees, unmatched);
        let want: Vec<Allocation> = allocs
            .iter()
            .copied()
            .filter(|a| live_at(a, frame))
            .collect();
        prop_assert_eq!(answer.value, want, "live_at({})", frame);
    }

    for (from, to) in [(0, 5), (3, 1), (11, 11), (2, 13)] {
        let growth = recorder.growth(from, to).value;
        let (tags, pools) = reference_growth(&allocs, from, to);
        for (rows, want) in [(&growth.tags, tags), (&growth.pools, pools)] {
            let got: Rows = rows
                .iter()
                .map(|r| (r.name, (r.bytes_from, r.bytes_to, r.count_from, r.count_to)))
                .collect();
            prop_assert_eq!(got.len(), rows.len(), "one row per name");
            prop_assert_eq!(got, want);
            prop_assert!(
                rows.windows(2)
                    .all(|w| w[0].bytes_change() >= w[1].bytes_change()),
                "biggest growth first"
            );
        }
    }

    let outlived = recorder.outlived_frame().value;
    let mut want: Vec<Allocation> = allocs
        .iter()
        .copied()
        .filter(|a| a.freed_in.is_none_or(|end| end > a.frame))
        .collect();
    let mut got = outlived.clone();
    got.sort_by_key(|a| a.seq);
    want.sort_by_key(|a| a.seq);
    prop_assert_eq!(got, want);
    // Grouped: each group contiguous, in recording order, most bytes first.
    let key = |a: &Allocation| -> GroupKey { (site_key(a.site), a.pool, a.tag) };
    let mut seen = HashSet::new();
    let mut group_bytes = Vec::new();
    for (i, a) in outlived.iter().enumerate() {
        if i == 0 || key(&outlived[i - 1]) != key(a) {
            prop_assert!(seen.insert(key(a)), "a group split in two");
            group_bytes.push(0u64);
        } else {
            prop_assert!(outlived[i - 1].seq < a.seq);
        }
        *group_bytes.last_mut().unwrap() += a.size as u64;
    }
    prop_assert!(group_bytes.windows(2).all(|w| w[0] >= w[1]));

    for min_age in [0, 1, 3, 20] {
        let leaks = recorder.leak_candidates(min_age).value;
        let mut want: BTreeMap<GroupKey, (u64, u64, u64)> = BTreeMap::new();
        for a in allocs
            .iter()
            .filter(|a| a.freed_in.is_none() && now.saturating_sub(a.frame) >= min_age)
        {
            let g = want.entry(key(a)).or_insert((0, 0, u64::MAX));
            g.0 += 1;
            g.1 += a.size as u64;
            g.2 = g.2.min(a.frame);
        }
        let got: BTreeMap<GroupKey, (u64, u64, u64)> = leaks
            .iter()
            .map(|g: &SiteGroup| {
                (
                    (site_key(g.site), g.pool, g.tag),
                    (g.count, g.bytes, g.oldest_frame),
                )
            })
            .collect();
        prop_assert_eq!(got.len(), leaks.len(), "one group per key");
        prop_assert_eq!(got, want);
        prop_assert!(leaks.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }

    // The export sees the same matching: one end per ended allocation, one unmatched-free event
    // per unmatched free.
    let trace: Value = serde_json::from_str(&recorder.to_trace_json()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    prop_assert_eq!(count("b"), allocs.len());
    prop_assert_eq!(
        count("e"),
        allocs.iter().filter(|a| a.freed_in.is_some()).count()
    );
    prop_assert_eq!(
        events
            .iter()
            .filter(|e| e["name"] == "unmatched free")
            .count() as u64,
        unmatched
    );
    check_trace_fields(&trace);
    // Each tag's counter track is its live bytes after every change (its maximum is the tag's
    // peak), recomputed here from the reference matching.
    let (_, enders, _) = reference_with_enders(&held);
    let mut want: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut bytes: BTreeMap<&str, u64> = BTreeMap::new();
    for e in &held {
        let mut changed: Vec<&str> = Vec::new();
        if let Record::Alloc { tag, size, .. } = e.record {
            *bytes.entry(tag).or_default() += size as u64;
            changed.push(tag);
        }
        let ended = allocs
            .iter()
            .zip(&enders)
            .filter(|(_, end)| **end == Some(e.seq));
        for (a, _) in ended {
            *bytes.get_mut(a.tag).unwrap() -= a.size as u64;
            if !changed.contains(&a.tag) {
                changed.push(a.tag);
            }
        }
        for tag in changed {
            want.entry(tag).or_default().push(bytes[tag]);
        }
    }
    let mut got: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "C") {
        got.entry(e["name"].as_str().unwrap())
            .or_default()
            .push(e["args"]["bytes"].as_u64().unwrap());
    }
    prop_assert_eq!(got, want);
    Ok(())
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    #[cfg_attr(miri, ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there")]
    fn queries_match_a_plain_recomputation(
        ops in proptest::collection::vec(op(), 0..miri_or(120, 40)),
        capacity in 1..miri_or(150, 50),
    ) {
        check_against_reference(&ops, capacity)?;
    }
}

// --- Hand-written sequences ---

#[test]
fn a_full_ring_overwrites_its_oldest_event_and_counts_it() {
    let recorder = Recorder::new(3);
    let bytes = recorder.memory_bytes();
    for frame in 0..10 {
        recorder.end_frame(frame);
    }
    assert_eq!((recorder.len(), recorder.dropped()), (3, 7));
    assert_eq!(recorder.memory_bytes(), bytes, "the ring never grows");
    let frames: Vec<u64> = recorder.events().iter().map(|e| e.frame).collect();
    assert_eq!(frames, [7, 8, 9]);
    let answer = recorder.live_at(9);
    assert!(!answer.complete);
    assert_eq!(answer.first_full_frame, Some(8));
    recorder.clear();
    assert_eq!((recorder.len(), recorder.dropped()), (0, 0));
    assert_eq!(recorder.frame(), 10, "the frame carries on");
    assert_eq!(recorder.memory_bytes(), bytes);
}

#[test]
fn capacity_errors_say_what_happened() {
    assert_eq!(
        Recorder::try_new(0).unwrap_err(),
        RecorderError::ZeroCapacity
    );
    let huge = Recorder::try_new(usize::MAX / 2).unwrap_err();
    assert_eq!(
        huge,
        RecorderError::TooLarge {
            capacity: usize::MAX / 2
        }
    );
    assert!(huge.to_string().contains("ask for fewer events"), "{huge}");
    assert!(
        RecorderError::ZeroCapacity
            .to_string()
            .contains("at least 1")
    );
    let panic = std::panic::catch_unwind(|| Recorder::new(0)).unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(text.contains("0 events"), "{text}");
}

#[test]
fn a_free_ends_the_newest_live_allocation_at_its_address() {
    let recorder = Recorder::new(32);
    recorder.alloc("heap", "AI", 0x10, 1, None);
    recorder.alloc("heap", "AI", 0x10, 2, None); // the same address again (no free between)
    recorder.alloc("other", "AI", 0x10, 4, None); // another allocator, same address
    recorder.free("heap", "AI", 0x10, 2);
    let live = recorder.live_at(0).value;
    let sizes: Vec<usize> = live.iter().map(|a| a.size).collect();
    assert_eq!(sizes, [1, 4]);
    recorder.free("heap", "AI", 0x10, 1);
    recorder.free("heap", "AI", 0x10, 1); // double free
    recorder.free("heap", "AI", 0x999, 1); // never allocated
    recorder.free("nobody", "AI", 0x10, 1); // unknown allocator
    recorder.discard("nobody", "AI"); // unknown allocator
    let answer = recorder.live_at(0);
    assert_eq!(answer.unmatched_frees, 3);
    assert!(answer.complete, "unmatched frees are not dropped events");
    assert_eq!(answer.value.len(), 1);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn frames_going_backwards_still_answer() {
    let recorder = Recorder::new(32);
    recorder.end_frame(10);
    recorder.alloc("p", "T", 1, 8, None); // frame 11
    recorder.end_frame(2);
    recorder.free("p", "T", 1, 8); // frame 3: ended "before" it was made
    assert_eq!(recorder.frame(), 3);
    assert!(recorder.live_at(11).value.is_empty());
    assert!(recorder.live_at(u64::MAX).value.is_empty());
    assert!(recorder.outlived_frame().value.is_empty());
    recorder.end_frame(u64::MAX);
    assert_eq!(recorder.frame(), u64::MAX, "saturates");
    recorder.alloc("p", "T", 2, 8, None);
    assert_eq!(recorder.leak_candidates(0).value.len(), 1);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn recording_from_many_threads_keeps_every_event() {
    let threads = miri_or(4, 2);
    let per_thread = miri_or(2_000, 50);
    let recorder = Arc::new(Recorder::new(threads * per_thread));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let recorder = Arc::clone(&recorder);
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let addr = (t << 20) | (i << 4);
                    recorder.alloc("shared", "Workers", addr, 16, None);
                    if i % 2 == 0 {
                        recorder.free("shared", "Workers", addr, 16);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(recorder.dropped(), (threads * per_thread / 2) as u64);
    let events = recorder.events();
    assert!(events.windows(2).all(|w| w[0].seq + 1 == w[1].seq));
    assert!(events.windows(2).all(|w| w[0].time_us <= w[1].time_us));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn leak_candidates_group_by_site_biggest_first() {
    let recorder = Recorder::new(64);
    let (a, b) = (site_a(), Location::caller());
    recorder.alloc("textures", "Streaming", 0x100, 10, Some(a));
    recorder.alloc("textures", "Streaming", 0x200, 10, Some(a));
    recorder.alloc("textures", "Streaming", 0x300, 500, Some(b));
    recorder.alloc("meshes", "Rendering", 0x400, 5, None);
    for frame in 0..4 {
        recorder.end_frame(frame);
    }
    recorder.alloc("meshes", "Rendering", 0x500, 1000, None); // too young
    let leaks = recorder.leak_candidates(3).value;
    let got: Vec<(Option<u32>, u64, u64)> = leaks
        .iter()
        .map(|g| (g.site.map(|l| l.line()), g.count, g.bytes))
        .collect();
    assert_eq!(
        got,
        [
            (Some(b.line()), 1, 500),
            (Some(a.line()), 2, 20),
            (None, 1, 5)
        ]
    );
}

// --- The trace-event JSON ---

/// Checks every event against the Trace Event Format's required fields: `name`, `ph`, `ts`,
/// `pid`, `tid` on all; counters (`C`) with numeric `args`; instants (`i`) with a scope `s` of
/// `g`, `p` or `t`; nestable async begins and ends (`b`, `e`) with `cat` and `id`, each end after
/// its begin; metadata (`M`) with `args.name`.
fn check_trace_fields(trace: &Value) {
    assert_eq!(trace["displayTimeUnit"], "ms");
    let events = trace["traceEvents"].as_array().expect("traceEvents array");
    let mut open = BTreeMap::new();
    let mut last_ts = 0;
    for e in events {
        // Times in recording order never go backwards, so an end is never before its begin.
        let ts = e["ts"].as_u64().unwrap_or(0);
        assert!(ts >= last_ts, "ts went backwards: {e}");
        last_ts = ts;
        assert!(e["name"].is_string(), "name: {e}");
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("ph: {e}"));
        assert!(e["ts"].is_u64(), "ts: {e}");
        assert!(e["pid"].is_u64(), "pid: {e}");
        assert!(e["tid"].is_u64(), "tid: {e}");
        match ph {
            "C" => {
                let args = e["args"].as_object().expect("counter args");
                assert!(!args.is_empty());
                assert!(args.values().all(Value::is_number), "{e}");
            }
            "i" => assert!(matches!(e["s"].as_str(), Some("g" | "p" | "t")), "{e}"),
            "b" | "e" => {
                let cat = e["cat"].as_str().expect("async cat");
                let id = e["id"].as_str().expect("async id");
                assert!(id.starts_with("0x"));
                let key = (cat.to_owned(), id.to_owned());
                if ph == "b" {
                    assert!(open.insert(key, ts).is_none(), "one begin per id: {e}");
                } else {
                    let begin = open.remove(&key).expect("an end after its begin");
                    assert!(begin <= ts);
                }
            }
            "M" => assert!(e["args"]["name"].is_string()),
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn trace_json_has_the_fields_each_event_type_needs() {
    let recorder = Recorder::new(64);
    let site = site_a();
    recorder.alloc("bodies", "Physics", 0xdead0, 64, Some(site));
    recorder.alloc("scratch", "Frame", 0x1000, 32, None);
    recorder.alloc("scratch", "Frame", 0x1020, 32, None);
    recorder.end_frame(0);
    recorder.discard("scratch", "Frame");
    recorder.free("bodies", "Physics", 0xdead0, 64);
    recorder.free("bodies", "Physics", 0xbeef, 8);
    recorder.end_frame(1);
    let trace: Value = serde_json::from_str(&recorder.to_trace_json()).unwrap();
    check_trace_fields(&trace);
    let events = trace["traceEvents"].as_array().unwrap();
    let phases: Vec<&str> = events.iter().map(|e| e["ph"].as_str().unwrap()).collect();
    for ph in ["M", "b", "e", "C", "i"] {
        assert!(phases.contains(&ph), "{ph} missing: {phases:?}");
    }
    let begin = events.iter().find(|e| e["ph"] == "b").unwrap();
    assert_eq!(begin["name"], "Physics");
    assert_eq!(begin["args"]["pool"], "bodies");
    assert_eq!(begin["args"]["size"], 64);
    assert_eq!(begin["args"]["addr"], "0xdead0");
    assert_eq!(begin["args"]["frame"], 0);
    assert_eq!(
        begin["args"]["site"],
        format!("{}:{}:{}", site.file(), site.line(), site.column())
    );
    // The Frame counter: 32, 64, then 0 at the discard.
    let frame_bytes: Vec<u64> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "Frame")
        .map(|e| e["args"]["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(frame_bytes, [32, 64, 0]);
    let discard = events.iter().find(|e| e["name"] == "discard").unwrap();
    assert_eq!(
        (discard["s"].as_str(), &discard["args"]["allocations"]),
        (Some("p"), &Value::from(2))
    );
    let frames: Vec<&str> = events
        .iter()
        .filter(|e| e["s"] == "g")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(frames, ["frame 0", "frame 1"]);
    assert_eq!(trace["otherData"]["dropped"], "0");
    let mut written = Vec::new();
    recorder.write_trace_json(&mut written).unwrap();
    assert_eq!(written, recorder.to_trace_json().into_bytes());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn trace_json_escapes_names() {
    const POOL: &str = "a \"quoted\" \\ pool\n\t\u{1}\u{1f}";
    const TAG: &str = "Énergie/🦀 \u{7f} \u{2028}";
    let recorder = Recorder::new(8);
    recorder.alloc(POOL, TAG, 1, 2, None);
    recorder.discard(POOL, TAG);
    recorder.free(POOL, TAG, 99, 1);
    let json = recorder.to_trace_json();
    let trace: Value = serde_json::from_str(&json).expect("valid JSON");
    check_trace_fields(&trace);
    let events = trace["traceEvents"].as_array().unwrap();
    let begin = events.iter().find(|e| e["ph"] == "b").unwrap();
    assert_eq!(begin["name"], TAG);
    assert_eq!(begin["args"]["pool"], POOL);
    assert_eq!(begin["args"]["tag"], TAG);
    let counter = events.iter().find(|e| e["ph"] == "C").unwrap();
    assert_eq!(counter["name"], TAG);
    assert!(
        !json.contains('\u{1}') && !json.contains('\n'),
        "control characters escaped"
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn trace_json_of_an_empty_recorder_is_valid() {
    let trace: Value = serde_json::from_str(&Recorder::new(1).to_trace_json()).unwrap();
    check_trace_fields(&trace);
    assert_eq!(trace["traceEvents"].as_array().unwrap().len(), 1); // the process name
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn a_ring_that_dropped_events_says_so_in_the_trace() {
    let recorder = Recorder::new(2);
    recorder.alloc("p", "T", 1, 8, None);
    recorder.free("p", "T", 1, 8);
    recorder.free("p", "T", 1, 8);
    let trace: Value = serde_json::from_str(&recorder.to_trace_json()).unwrap();
    check_trace_fields(&trace);
    assert_eq!(trace["otherData"]["dropped"], "1");
    let events = trace["traceEvents"].as_array().unwrap();
    assert_eq!(
        events
            .iter()
            .filter(|e| e["name"] == "unmatched free")
            .count(),
        2
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn a_panic_while_the_lock_is_held_does_not_stop_recording() {
    // `Debug` formats under the lock: a writer that panics there poisons it.
    struct Panicking;
    impl std::fmt::Write for Panicking {
        fn write_str(&mut self, _: &str) -> std::fmt::Result {
            panic!("the writer gave up");
        }
    }
    let recorder = Recorder::new(8);
    recorder.alloc("p", "T", 1, 8, None);
    let poisoned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        use std::fmt::Write;
        let _ = write!(Panicking, "{recorder:?}");
    }));
    assert!(poisoned.is_err());
    recorder.free("p", "T", 1, 8);
    recorder.end_frame(0);
    assert_eq!(recorder.len(), 3);
    assert!(recorder.live_at(0).value.is_empty());
    assert!(format!("{recorder:?}").contains("len: 3"));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn a_long_trace_is_written_in_a_few_pieces_and_stays_valid() {
    struct Counting(Vec<u8>, usize);
    impl std::io::Write for Counting {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.1 += 1;
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let n = miri_or(3_000, 600);
    let recorder = Recorder::new(3 * n);
    for i in 0..n {
        recorder.alloc("particles", "Effects", 16 * i, 48, None);
        if i % 2 == 1 {
            recorder.free("particles", "Effects", 16 * (i - 1), 48);
        }
    }
    let mut out = Counting(Vec::new(), 0);
    recorder.write_trace_json(&mut out).unwrap();
    assert!(out.0.len() > 1 << 16, "{} bytes", out.0.len());
    assert!(out.1 <= 2 + out.0.len() / (1 << 16) + 1, "{} writes", out.1);
    let trace: Value = serde_json::from_slice(&out.0).unwrap();
    check_trace_fields(&trace);
    assert_eq!(out.0, recorder.to_trace_json().into_bytes());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe) and slow under Miri (one case ran over ten minutes): the small cases and the doc examples run there"
)]
fn a_query_after_more_recording_sees_the_new_events() {
    let recorder = Recorder::new(4);
    recorder.alloc("p", "T", 1, 8, None);
    assert_eq!(recorder.live_at(0).value.len(), 1);
    assert_eq!(
        recorder.live_at(0).value.len(),
        1,
        "the same answer from the kept matching"
    );
    recorder.free("p", "T", 1, 8);
    assert!(recorder.live_at(0).value.is_empty());
    recorder.alloc("p", "T", 2, 8, None);
    assert_eq!(recorder.live_at(0).value.len(), 1);
    recorder.clear();
    assert!(recorder.live_at(0).value.is_empty(), "cleared");
    recorder.alloc("p", "T", 3, 8, None);
    assert_eq!(recorder.live_at(0).value[0].addr, 3);
}

/// Queried after every event, a small ring keeps matching frees while thousands of addresses
/// pass through it and leave: the addresses that left are forgotten, the held ones still match,
/// and a free whose allocation left the ring is counted as unmatched until it leaves too.
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe): a query and a matching from scratch after every round take minutes under Miri"
)]
fn queries_between_events_keep_matching_as_addresses_leave_the_ring() {
    let recorder = Recorder::new(8);
    let hot = 0x10;
    for i in 0..miri_or(40, 2_000) {
        recorder.alloc("bodies", "Physics", 0x1000 + 16 * i, 16, None);
        // One address stays in use throughout: freed and handed out again.
        if i > 0 {
            recorder.free("bodies", "Physics", hot, 16);
        }
        recorder.alloc("bodies", "Physics", hot, 16, None);
        let answer = recorder.live_at(0);
        let (allocs, unmatched) = reference(&recorder.events());
        let want: Vec<Allocation> = allocs.into_iter().filter(|a| live_at(a, 0)).collect();
        assert_eq!(answer.value, want, "after {i} rounds");
        assert_eq!(answer.unmatched_frees, unmatched, "after {i} rounds");
    }
    for i in 0..8 {
        recorder.alloc("bodies", "Physics", 0x1000 + 16 * i, 16, None);
    }
    let last = 0x1000 + 16 * 7;
    // The newest two are held: their frees match. The oldest is gone: its free does not.
    recorder.free("bodies", "Physics", last, 16);
    recorder.free("bodies", "Physics", last - 16, 16);
    recorder.free("bodies", "Physics", 0x1000, 16);
    let answer = recorder.live_at(0);
    assert_eq!(
        answer.value.len(),
        3,
        "5 of the 8 held events are allocations, 2 freed"
    );
    assert_eq!(answer.unmatched_frees, 1);
    // Each later event pushes one of the held out: the two matched frees stay matched while
    // their allocations are held, then count as unmatched, then leave.
    let mut unmatched = Vec::new();
    for frame in 0..8 {
        recorder.end_frame(frame);
        unmatched.push(recorder.live_at(0).unmatched_frees);
    }
    assert_eq!(unmatched, [1, 1, 1, 2, 3, 2, 1, 0]);
}

/// As a profiler sink, the recorder keeps allocations, frees, discards and frame ends, records a
/// frame arena's buffers as allocators of their own (a discard of buffer 0 leaves buffer 1's
/// blocks live), and ignores plots and messages.
#[cfg(feature = "profiler")]
#[test]
fn as_a_profiler_sink_each_frame_buffer_is_its_own_allocator() {
    use arena_kit_core::tags::{ProfilerEvent, ProfilerSink};

    let recorder = Recorder::new(64);
    let sink: &dyn ProfilerSink = &recorder;
    let block = |addr, buffer| ProfilerEvent::Alloc {
        pool: "draw lists",
        tag: "Rendering",
        addr,
        size: 4096,
        buffer: Some(buffer),
        id: 1,
        site: None,
    };
    sink.event(&block(0x1000, 0));
    sink.event(&block(0x9000, 1));
    sink.event(&ProfilerEvent::Alloc {
        pool: "bodies",
        tag: "Physics",
        addr: 0x40,
        size: 64,
        buffer: None,
        id: 1,
        site: Some(Location::caller()),
    });
    sink.event(&ProfilerEvent::Plot {
        tag: "Rendering",
        bytes: 8192,
        frame: 0,
    });
    sink.event(&ProfilerEvent::Message {
        text: "over budget",
        frame: 0,
    });
    sink.event(&ProfilerEvent::Discard {
        pool: "draw lists",
        tag: "Rendering",
        buffer: Some(0),
        id: 1,
    });
    sink.event(&ProfilerEvent::Free {
        pool: "bodies",
        tag: "Physics",
        addr: 0x40,
        size: 64,
        buffer: None,
        id: 1,
    });
    sink.event(&ProfilerEvent::FrameEnd { frame: 0 });
    assert_eq!(recorder.len(), 6, "plots and messages are not kept");
    assert_eq!(recorder.frame(), 1);
    let live = recorder.live_at(0).value;
    assert_eq!(live.len(), 1);
    assert_eq!(
        (live[0].pool, live[0].addr, live[0].tag),
        ("draw lists [buffer 1]", 0x9000, "Rendering")
    );
    // The same buffer name each time: a second block of buffer 0 is discarded with it.
    sink.event(&block(0x2000, 0));
    sink.event(&ProfilerEvent::Discard {
        pool: "draw lists",
        tag: "Rendering",
        buffer: Some(0),
        id: 1,
    });
    sink.event(&ProfilerEvent::FrameEnd { frame: 1 });
    assert_eq!(recorder.live_at(1).value.len(), 1);
    assert_eq!(recorder.live_at(1).unmatched_frees, 0);
}

/// As a profiler sink, the recorder keeps two live allocators of one name apart by their
/// identities: one's discard ends its own allocations only, so the other's free matches. Each
/// is recorded under a name of its own (the second `"{name} (2)"`), and once one ends
/// (`PoolEnd`) its name goes to the next allocator of that name.
#[cfg(feature = "profiler")]
#[test]
fn as_a_profiler_sink_two_live_allocators_of_one_name_stay_apart() {
    use arena_kit_core::tags::{ProfilerEvent, ProfilerSink};

    const NAME: &str = "recorder sink: scratch";
    let recorder = Recorder::new(64);
    let sink: &dyn ProfilerSink = &recorder;
    let alloc = |id, addr| ProfilerEvent::Alloc {
        pool: NAME,
        tag: "Frame",
        addr,
        size: 64,
        buffer: None,
        id,
        site: None,
    };
    sink.event(&alloc(1, 0x1000));
    sink.event(&alloc(2, 0x2000));
    sink.event(&ProfilerEvent::Discard {
        pool: NAME,
        tag: "Frame",
        buffer: None,
        id: 1,
    });
    sink.event(&ProfilerEvent::Free {
        pool: NAME,
        tag: "Frame",
        addr: 0x2000,
        size: 64,
        buffer: None,
        id: 2,
    });
    sink.event(&alloc(2, 0x2040));
    sink.event(&ProfilerEvent::FrameEnd { frame: 0 });
    let live = recorder.live_at(0);
    assert_eq!(live.unmatched_frees, 0, "the free of 0x2000 matched");
    let second = format!("{NAME} (2)");
    assert_eq!(
        live.value
            .iter()
            .map(|a| (a.pool, a.addr))
            .collect::<Vec<_>>(),
        [(&*second, 0x2040)]
    );
    // The first ends: the next allocator of the name is recorded under the plain name, and its
    // discard leaves the second's allocation live.
    sink.event(&ProfilerEvent::PoolEnd {
        pool: NAME,
        tag: "Frame",
        buffer: None,
        id: 1,
    });
    sink.event(&alloc(3, 0x3000));
    sink.event(&ProfilerEvent::Discard {
        pool: NAME,
        tag: "Frame",
        buffer: None,
        id: 3,
    });
    sink.event(&ProfilerEvent::FrameEnd { frame: 1 });
    let live = recorder.live_at(1).value;
    assert_eq!(
        live.iter().map(|a| (a.pool, a.addr)).collect::<Vec<_>>(),
        [(&*second, 0x2040)]
    );
    let events = recorder.events();
    let third = events
        .iter()
        .find_map(|e| match e.record {
            Record::Alloc {
                pool, addr: 0x3000, ..
            } => Some(pool),
            _ => None,
        })
        .expect("the third allocator's allocation");
    assert_eq!(third, NAME);
}

/// As a profiler sink, past the 4,096 names it makes, the recorder records an allocator that
/// finds none under its plain name for its whole life (as it recorded every allocator before it
/// kept them apart) rather than losing its events, and counts those events (`merged_events`).
#[cfg(feature = "profiler")]
#[test]
#[cfg_attr(
    miri,
    ignore = "safe code only (tags forbids unsafe); 4,096 names are slow under Miri"
)]
fn as_a_profiler_sink_an_allocator_past_the_name_limit_keeps_its_plain_name() {
    use arena_kit_core::tags::{ProfilerEvent, ProfilerSink};

    const NAME: &str = "recorder sink: crowd";
    let recorder = Recorder::new(8);
    let sink: &dyn ProfilerSink = &recorder;
    let discard = |id| ProfilerEvent::Discard {
        pool: NAME,
        tag: "T",
        buffer: None,
        id,
    };
    for id in 1..=4096 {
        sink.event(&discard(id));
    }
    let last = |recorder: &Recorder| match recorder.events().last().unwrap().record {
        Record::Discard { pool, .. } => pool,
        other => panic!("{other:?}"),
    };
    assert_eq!(last(&recorder), format!("{NAME} (4096)"));
    assert_eq!(recorder.merged_events(), 0);
    sink.event(&discard(4097));
    assert_eq!(last(&recorder), NAME);
    assert_eq!(recorder.merged_events(), 1, "the merge is counted");
    // It keeps the plain name even once a name is free: its events stay under one name.
    sink.event(&ProfilerEvent::PoolEnd {
        pool: NAME,
        tag: "T",
        buffer: None,
        id: 2,
    });
    sink.event(&discard(4097));
    assert_eq!(last(&recorder), NAME);
    assert_eq!(recorder.merged_events(), 2);
    sink.event(&discard(4098));
    assert_eq!(
        last(&recorder),
        format!("{NAME} (2)"),
        "the freed name goes to the next allocator"
    );
    assert_eq!(recorder.merged_events(), 2);
}
