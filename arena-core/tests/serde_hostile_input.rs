//! Hostile save data on stable: every fuzz corpus and crash file under `fuzz/corpus/*/` and
//! `fuzz/artifacts/*/` replayed through the fuzz targets' own checks (`fuzz/hostile/mod.rs`),
//! and the documented memory bound held, measured with a counting allocator, for the inputs that
//! used to allocate from a declared size: a capacity of `u32::MAX`, a free list declared with
//! 2^32 entries, a huge chunk size, a `Soa` type with no columns, and a side table whose single
//! entry sits at slot index 4,000,000,000.
#![cfg(feature = "serde")]
#![allow(missing_docs)] // test-only row types

#[path = "../../fuzz/hostile/mod.rs"]
mod hostile;

use std::path::Path;

use arena_kit_core::pool::{
    DEFAULT_MAX_BYTES, Pool, PoolSeed, SecondaryPool, SecondaryPoolSeed, SparseSecondaryPool,
};
use arena_kit_core::soa::SoaVec;
use hostile::{Empty, measure};
use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::json;

#[global_allocator]
static ALLOC: hostile::Counting = hostile::Counting;

#[test]
#[cfg_attr(miri, ignore = "reads the corpus files; Miri isolates the file system")]
fn every_corpus_and_crash_file_passes_its_targets_check() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut replayed = 0;
    for kind in ["corpus", "artifacts"] {
        let Ok(targets) = std::fs::read_dir(fuzz.join(kind)) else {
            continue;
        };
        for target in targets.flatten() {
            let name = target.file_name().into_string().unwrap();
            if !hostile::TARGETS.contains(&name.as_str()) {
                continue; // another target's files (heap_ops)
            }
            for file in std::fs::read_dir(target.path()).unwrap().flatten() {
                let data = std::fs::read(file.path()).unwrap();
                let ok = std::panic::catch_unwind(|| hostile::run(&name, &data));
                assert!(ok.is_ok(), "{} failed its check", file.path().display());
                replayed += 1;
            }
        }
    }
    assert!(
        replayed >= hostile::TARGETS.len(),
        "only {replayed} files found under {fuzz:?}"
    );
}

/// Small arbitrary inputs through every target, so the checks also run under Miri.
#[test]
fn generated_inputs_pass_every_targets_check() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let n = if cfg!(miri) { 1 } else { 200 };
    for target in hostile::TARGETS {
        for _ in 0..n {
            let data: Vec<u8> = (0..64)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            assert!(hostile::run(target, &data));
        }
    }
}

fn pool_json(capacity: u64, chunk: Option<u64>) -> serde_json::Value {
    json!({
        "generation_tag": 0, "first_generation": 0, "chunk": chunk, "capacity": capacity,
        "slots": [], "free_list": [], "peak_live": 0, "inserts": 0,
    })
}

/// Slot memory of a pool whose data is only a few hundred bytes: refused over the limit, with
/// the limit named, and the heap barely grows.
#[track_caller]
fn refused_over_limit(v: serde_json::Value) -> String {
    let (r, peak) = measure(|| serde_json::from_value::<Pool<u64>>(v));
    let Err(e) = r else {
        panic!("a capacity over the limit was accepted")
    };
    let e = e.to_string();
    assert!(peak < 64 << 10, "refusing it grew the heap by {peak} bytes");
    e
}

#[test]
fn a_small_input_declaring_a_large_capacity_allocates_nothing_for_it() {
    // 16 Mi slots of 16 bytes: 256 MiB from about 150 bytes of JSON.
    let text = serde_json::to_string(&pool_json(16 << 20, None)).unwrap();
    assert!(text.len() < 200);
    let e = refused_over_limit(pool_json(16 << 20, None));
    assert!(
        e.contains(&format!("limit of {DEFAULT_MAX_BYTES} bytes")),
        "{e}"
    );
    let e = refused_over_limit(pool_json(u64::from(u32::MAX), None));
    assert!(e.contains("over the limit"), "{e}");
}

#[test]
fn a_huge_chunk_size_is_refused_before_allocating() {
    let e = refused_over_limit(pool_json(1 << 31, Some(1 << 31)));
    assert!(e.contains("over the limit"), "{e}");
    for (capacity, chunk) in [(u64::from(u32::MAX), u64::from(u32::MAX)), (1 << 20, 3)] {
        let (r, peak) =
            measure(|| serde_json::from_value::<Pool<u64>>(pool_json(capacity, Some(chunk))));
        assert!(r.unwrap_err().to_string().contains("chunks"));
        assert!(peak < 64 << 10);
    }
}

#[test]
fn the_limit_is_settable_and_scales_with_the_input() {
    let v = pool_json(1000, None);
    let tight = PoolSeed::<u64>::with_max_bytes(1024);
    let e = tight.deserialize(v.clone()).unwrap_err().to_string();
    assert!(e.contains("limit of 1024 bytes"), "{e}");
    let scaled = tight.with_input_len(4096);
    assert_eq!(scaled.limit(), 8 * 4096);
    let (pool, peak) = measure(|| scaled.deserialize(v).unwrap());
    assert_eq!(pool.capacity(), 1000);
    assert!(
        peak <= scaled.limit(),
        "{peak} bytes for a limit of {}",
        scaled.limit()
    );
}

/// A deserializer whose sequences declare (as a binary format's length prefix would) far more
/// elements than they hold.
enum Node {
    U64(u64),
    Null,
    Declared { declared: usize, items: Vec<u64> },
}

struct Fields(std::vec::IntoIter<(&'static str, Node)>, Option<Node>);

impl<'de> MapAccess<'de> for Fields {
    type Error = de::value::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        match self.0.next() {
            Some((k, v)) => {
                self.1 = Some(v);
                seed.deserialize(k.into_deserializer()).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        seed.deserialize(self.1.take().unwrap())
    }
}

struct Items(std::vec::IntoIter<u64>, usize);

impl<'de> SeqAccess<'de> for Items {
    type Error = de::value::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.0
            .next()
            .map(|x| seed.deserialize(x.into_deserializer()))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.1)
    }
}

impl<'de> Deserializer<'de> for Node {
    type Error = de::value::Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Node::U64(x) => visitor.visit_u64(x),
            Node::Null => visitor.visit_unit(),
            Node::Declared { declared, items } => {
                visitor.visit_seq(Items(items.into_iter(), declared))
            }
        }
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct Top(Vec<(&'static str, Node)>);

impl<'de> Deserializer<'de> for Top {
    type Error = de::value::Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_map(Fields(self.0.into_iter(), None))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

#[test]
fn declared_list_lengths_are_never_trusted() {
    let huge = if usize::BITS > 32 {
        1usize << 32
    } else {
        usize::MAX
    };
    let top = || {
        Top(vec![
            ("generation_tag", Node::U64(0)),
            ("first_generation", Node::U64(0)),
            ("chunk", Node::Null),
            ("capacity", Node::U64(4)),
            (
                "slots",
                Node::Declared {
                    declared: huge,
                    items: vec![],
                },
            ),
            (
                "free_list",
                Node::Declared {
                    declared: huge,
                    items: vec![0, 1, 2],
                },
            ),
            ("peak_live", Node::U64(0)),
            ("inserts", Node::U64(0)),
        ])
    };
    let (r, peak) = measure(|| Pool::<u64>::deserialize_from(top()));
    let e = r.unwrap_err().to_string();
    assert!(e.contains("names no slot"), "{e}");
    assert!(
        peak < 64 << 10,
        "a declared 2^32-entry free list grew the heap by {peak} bytes"
    );
    // The row format of a SoaVec trusts a declared length only up to 4096 rows.
    let rows = Node::Declared {
        declared: huge,
        items: vec![],
    };
    let (r, peak) = measure(|| <SoaVec<hostile::Unit> as serde::Deserialize>::deserialize(rows));
    assert!(r.is_err() || r.is_ok());
    assert!(peak < 64 << 10);
}

trait DeserializeFrom: Sized {
    fn deserialize_from<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}
impl DeserializeFrom for Pool<u64> {
    fn deserialize_from<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::Deserialize::deserialize(d)
    }
}

#[test]
fn column_format_of_a_type_with_no_columns_terminates() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = measure(|| {
            arena_kit_core::soa::serde::columns::deserialize::<Empty, _>(json!([]))
                .map(|v: SoaVec<Empty>| v.len())
        });
        let _ = tx.send(r);
    });
    let wait = std::time::Duration::from_secs(if cfg!(miri) { 600 } else { 10 });
    let (r, peak) = rx
        .recv_timeout(wait)
        .expect("deserializing zero columns never finished");
    assert_eq!(r.unwrap(), 0);
    assert!(peak < 4096);
}

/// The named column format (`{"0": [..]}`) never trusts a declared column length, refuses a
/// repeated, unknown or missing key with its name, and reads keys in any order.
#[test]
fn named_columns_refuse_repeats_and_never_trust_a_length() {
    use arena_kit_core::soa::serde::named_columns;
    let huge = if usize::BITS > 32 {
        1usize << 32
    } else {
        usize::MAX
    };
    let declared = |n| Node::Declared {
        declared: n,
        items: vec![],
    };
    let (r, peak) = measure(|| {
        named_columns::deserialize::<hostile::Unit, _>(Top(vec![("0", declared(huge))]))
    });
    assert_eq!(r.map(|v| v.len()), Ok(0));
    assert!(
        peak < 64 << 10,
        "a declared 2^32-value column grew the heap by {peak} bytes"
    );
    let twice = named_columns::deserialize::<hostile::Unit, _>(Top(vec![
        ("0", declared(0)),
        ("0", declared(huge)),
    ]));
    let err = twice.unwrap_err().to_string();
    assert!(err.contains("`0` appears twice"), "{err}");
    let unknown =
        named_columns::deserialize::<hostile::Unit, _>(Top(vec![("1", declared(0))])).unwrap_err();
    assert!(
        unknown.to_string().contains("unknown SoA column `1`"),
        "{unknown}"
    );
    let missing = named_columns::deserialize::<hostile::Unit, _>(Top(vec![])).unwrap_err();
    assert!(missing.to_string().contains("`0` is missing"), "{missing}");
    // Repeated keys in JSON text, in and out of declaration order.
    let mob = r#"{"pos.y":[2.0],"name":["a"],"id":[1],"pos.x":[1.0]}"#;
    let v: SoaVec<hostile::Mob> =
        named_columns::deserialize(&mut serde_json::Deserializer::from_str(mob)).unwrap();
    assert_eq!(v.len(), 1);
    let repeated = r#"{"id":[1],"id":[1],"pos.x":[1.0],"pos.y":[2.0],"name":["a"]}"#;
    assert!(
        named_columns::deserialize::<hostile::Mob, _>(&mut serde_json::Deserializer::from_str(
            repeated
        ))
        .is_err()
    );
    let unequal = r#"{"id":[1,2],"pos.x":[1.0],"pos.y":[2.0],"name":["a"]}"#;
    let err = named_columns::deserialize::<hostile::Mob, _>(
        &mut serde_json::Deserializer::from_str(unequal),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("different lengths") && err.contains("`id`"),
        "{err}"
    );
}

/// The generator feeds the named format to the column target too.
#[test]
fn the_column_target_also_generates_the_named_format() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut named = 0;
    for _ in 0..if cfg!(miri) { 30 } else { 300 } {
        let data: Vec<u8> = (0..64)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let mut u = arbitrary::Unstructured::new(&data);
        if let Ok(v) = hostile::columns_tree(&mut u, 0) {
            named += usize::from(v.is_object());
        }
    }
    assert!(named > 0, "no named-format input was generated");
}

#[test]
fn a_side_table_entry_at_index_four_billion_allocates_nothing_for_it() {
    let text = r#"[[[4000000000, 1], 7]]"#;
    let (r, peak) = measure(|| serde_json::from_str::<SecondaryPool<u64, u64>>(text));
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("slot index 4000000000") && e.contains("over the limit"),
        "{e}"
    );
    assert!(peak < 64 << 10, "refusing it grew the heap by {peak} bytes");
    // A sparse table stores the one entry, whatever its index.
    let (r, peak) = measure(|| serde_json::from_str::<SparseSecondaryPool<u64, u64>>(text));
    assert_eq!(r.unwrap().len(), 1);
    assert!(
        peak < 64 << 10,
        "one sparse entry grew the heap by {peak} bytes"
    );
}

#[test]
fn a_dense_side_table_grows_within_its_limit() {
    // Entries in slot order up to just under the limit: accepted, and the slot memory never
    // doubles past the limit (16-byte slots of `u64` values).
    let limit = if cfg!(miri) { 4 << 10 } else { 64 << 10 };
    let n = limit / 16;
    let entries: Vec<_> = (0..n).map(|i| json!([[i, 1], i])).collect();
    let text = serde_json::to_string(&entries).unwrap();
    let seed = SecondaryPoolSeed::<u64, u64>::with_max_bytes(limit);
    let mut de = serde_json::Deserializer::from_str(&text);
    let (r, peak) = measure(|| seed.deserialize(&mut de));
    assert_eq!(r.unwrap().len(), n);
    assert!(
        peak <= limit + (8 << 10),
        "{peak} bytes for a limit of {limit}"
    );
    let over = format!("[[[{n}, 1], 0]]");
    let mut de = serde_json::Deserializer::from_str(&over);
    let e = seed.deserialize(&mut de).unwrap_err().to_string();
    assert!(
        e.contains(&format!("over the limit of {limit} bytes")),
        "{e}"
    );
}
