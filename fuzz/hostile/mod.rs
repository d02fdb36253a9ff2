//! Hostile input for every `Deserialize` impl of arena-kit-core, shared by the cargo-fuzz targets
//! (`fuzz/fuzz_targets/*_de.rs`) and the replay test `arena-core/tests/serde_hostile_input.rs`,
//! which runs every corpus and crash file through the same [`run`].
//!
//! The bytes are not fed to a JSON parser: they drive `arbitrary` to build a tree with the real
//! field names and adversarial numbers (capacities near `u32::MAX`/`u64::MAX`, long and cyclic
//! free lists, huge or tagged generations, duplicates), often starting from a real pool's save
//! data and tampering with it. The tree becomes a `serde_json::Value` that is deserialized into
//! the type. Each check asserts that it terminates, that the result is either an error or a value
//! that passes a consistency check (against an oracle where one exists), and that the peak heap
//! growth stays under the documented bound, measured by [`Counting`].
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use arbitrary::{Result, Unstructured};
use arena_kit_core::pool::{
    Handle, Handle32, Pool, PoolHandle, PoolSeed, SecondaryPool, SecondaryPoolSeed,
    SparseSecondaryPool,
};
use arena_kit_core::soa::{Col, Columns, Nested, PlainRow, Soa, SoaVec};
use serde::Deserialize;
use serde::de::DeserializeSeed;
use serde_json::{Map, Value, json};

// -------------------------------------------------------------------------------------------
// Peak heap growth

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// A global allocator that tracks the calling thread's heap growth while [`measure`] runs.
pub struct Counting;

fn account(delta: isize) {
    if MEASURING.try_with(Cell::get).unwrap_or(false) {
        let now = CURRENT.with(|c| {
            c.set(c.get() + delta);
            c.get()
        });
        PEAK.with(|p| p.set(p.get().max(now)));
    }
}

// SAFETY: forwards every call to `System` unchanged; it only adds up sizes in thread-locals that
// are const-initialised without drop glue (reading them never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        account(-(layout.size() as isize));
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        account(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result with the largest net heap growth (bytes) of this thread
/// while it ran. Memory freed that was allocated before counts against later allocations.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    CURRENT.with(|c| c.set(0));
    PEAK.with(|p| p.set(0));
    MEASURING.with(|m| m.set(true));
    let r = f();
    MEASURING.with(|m| m.set(false));
    (r, PEAK.with(Cell::get).max(0) as usize)
}

/// The slot-memory limit the pool target deserializes with (small, so runs stay fast).
pub const POOL_LIMIT: usize = 256 << 10;
/// Bytes of heap growth allowed per byte of input, besides the pool's slot storage: the slot and
/// free lists as read grow with the elements present (a 9-byte `[0,null],` becomes a 24-byte
/// element, at most twice that after `Vec` doubling; the raw-pointer chunk table and the
/// free-list marks are below that).
pub const BYTES_PER_INPUT_BYTE: usize = 8;
/// Fixed allowance: allocator rounding, a `SoaVec` row reservation of up to 4096 rows trusted
/// from a size hint, error messages.
pub const FIXED_SLACK: usize = 256 << 10;

#[track_caller]
fn assert_bounded(what: &str, peak: usize, storage_limit: usize, input_len: usize) {
    let bound = storage_limit + BYTES_PER_INPUT_BYTE * input_len + FIXED_SLACK;
    assert!(
        peak <= bound,
        "{what}: heap grew by {peak} bytes for {input_len} bytes of input (bound {bound})"
    );
}

// -------------------------------------------------------------------------------------------
// Trees

const POOL_FIELDS: [&str; 8] = [
    "generation_tag",
    "first_generation",
    "chunk",
    "capacity",
    "slots",
    "free_list",
    "peak_live",
    "inserts",
];

/// An adversarial number.
fn num(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0u8..=10)? {
        0 | 1 => json!(u.int_in_range(0u64..=16)?),
        2 => json!(u64::from(u32::MAX) - u.int_in_range(0u64..=4)?),
        3 => json!(u64::MAX - u.int_in_range(0u64..=4)?),
        4 => json!(1u64 << u.int_in_range(0u32..=63)?),
        // A generation of a tagged (debug) pool: bit 31, a 7-bit tag, a small counter.
        5 => json!(
            0x8000_0000u64
                | (u64::from(u.int_in_range(0u8..=127)?) << 24)
                | u.int_in_range(0u64..=9)?
        ),
        6 => json!(0x8000_0000u64 | u64::from(u.arbitrary::<u32>()?)),
        7 => json!(u.arbitrary::<u64>()?),
        8 => json!(-u.int_in_range(1i64..=3)?),
        9 => json!(f64::from(u.int_in_range(0u8..=4)?) + 0.5),
        _ => json!(u64::from(u32::MAX) + u.int_in_range(1u64..=2)?),
    })
}

fn short_string(u: &mut Unstructured<'_>) -> Result<String> {
    let n = u.int_in_range(0usize..=12)?;
    (0..n)
        .map(|_| Ok(char::from(u.int_in_range(b'a'..=b'z')?)))
        .collect()
}

/// Any JSON value, with object keys drawn mostly from `names`.
fn node(u: &mut Unstructured<'_>, names: &[&str], depth: u32) -> Result<Value> {
    if depth > 4 {
        return Ok(Value::Null);
    }
    Ok(match u.int_in_range(0u8..=6)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 | 3 => num(u)?,
        4 => Value::String(short_string(u)?),
        5 => {
            let n = u.int_in_range(0usize..=4)?;
            Value::Array(
                (0..n)
                    .map(|_| node(u, names, depth + 1))
                    .collect::<Result<_>>()?,
            )
        }
        _ => {
            let mut m = Map::new();
            for _ in 0..u.int_in_range(0usize..=4)? {
                let key = if !names.is_empty() && u.arbitrary()? {
                    names[u.choose_index(names.len())?].to_string()
                } else {
                    short_string(u)?
                };
                m.insert(key, node(u, names, depth + 1)?);
            }
            Value::Object(m)
        }
    })
}

/// A real pool after arbitrary inserts and removes (fixed, budgeted or growable).
fn real_pool(u: &mut Unstructured<'_>) -> Result<Pool<u64>> {
    let cap = u.int_in_range(0usize..=12)?;
    let mut p = match u.int_in_range(0u8..=2)? {
        0 => Pool::with_capacity(cap),
        1 => Pool::with_capacity_and_generation_budget(cap, u.int_in_range(1u32..=3)?),
        _ => Pool::growable(cap.max(1)),
    };
    let mut hs = Vec::new();
    for i in 0..u.int_in_range(0u64..=24)? {
        if hs.is_empty() || u.arbitrary()? {
            if let Ok(h) = p.try_insert(i) {
                hs.push(h);
            }
        } else {
            let at = u.choose_index(hs.len())?;
            p.remove(hs.swap_remove(at));
        }
    }
    Ok(p)
}

/// Applies a few tamperings to a pool's save data.
fn tamper(u: &mut Unstructured<'_>, v: &mut Value) -> Result<()> {
    for _ in 0..u.int_in_range(0u8..=4)? {
        let Some(obj) = v.as_object_mut() else {
            return Ok(());
        };
        let slots_len = obj
            .get("slots")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match u.int_in_range(0u8..=10)? {
            0 => {
                let f = POOL_FIELDS[u.choose_index(POOL_FIELDS.len())?];
                obj.insert(f.into(), num(u)?);
            }
            1 if slots_len > 0 => {
                let i = u.choose_index(slots_len)?;
                let Some(slot) = obj["slots"][i].as_array() else {
                    continue;
                };
                let g = slot.first().and_then(Value::as_u64).unwrap_or(0);
                let new = match u.int_in_range(0u8..=4)? {
                    0 => json!(g.wrapping_add(1)),
                    1 => json!(g.wrapping_sub(1)),
                    2 => obj.get("generation_tag").cloned().unwrap_or_default(),
                    3 => obj.get("first_generation").cloned().unwrap_or_default(),
                    _ => num(u)?,
                };
                if let Some(slot) = obj["slots"][i].as_array_mut().filter(|s| !s.is_empty()) {
                    slot[0] = new;
                }
            }
            2 if slots_len > 0 => {
                let i = u.choose_index(slots_len)?;
                let value = if u.arbitrary()? { Value::Null } else { num(u)? };
                if let Some(slot) = obj["slots"][i].as_array_mut().filter(|s| s.len() > 1) {
                    slot[1] = value;
                }
            }
            3 => {
                let entry = if slots_len > 0 && u.arbitrary()? {
                    json!(u.choose_index(slots_len)?)
                } else {
                    num(u)?
                };
                if let Some(list) = obj.get_mut("free_list").and_then(Value::as_array_mut) {
                    let at = u.int_in_range(0..=list.len())?;
                    list.insert(at, entry);
                }
            }
            4 => {
                // A long list: one entry repeated (a cycle) or a long run of indexes.
                let n = u.int_in_range(0usize..=4096)?;
                let list: Vec<Value> = if u.arbitrary()? {
                    let e = num(u)?;
                    (0..n).map(|_| e.clone()).collect()
                } else {
                    (0..n).map(|i| json!(i)).collect()
                };
                obj.insert("free_list".into(), Value::Array(list));
            }
            5 => {
                let n = u.int_in_range(0usize..=2048)?;
                let g = num(u)?;
                let value = if u.arbitrary()? {
                    Value::Null
                } else {
                    json!(7)
                };
                let extra = (0..n).map(|_| json!([g, value]));
                if let Some(list) = obj.get_mut("slots").and_then(Value::as_array_mut) {
                    list.extend(extra);
                }
            }
            6 => {
                let f = POOL_FIELDS[u.choose_index(POOL_FIELDS.len())?];
                obj.remove(f);
            }
            7 => {
                let f = POOL_FIELDS[u.choose_index(POOL_FIELDS.len())?];
                obj.insert(f.into(), node(u, &[], 1)?);
            }
            8 => {
                obj.insert(short_string(u)?, node(u, &POOL_FIELDS, 1)?);
            }
            9 => {
                // The sequence form: the fields in order.
                let seq = POOL_FIELDS
                    .iter()
                    .map(|f| obj.get(*f).cloned().unwrap_or(Value::Null));
                *v = Value::Array(seq.collect());
                return Ok(());
            }
            _ => {}
        }
    }
    Ok(())
}

/// Save data of a `Pool<u64>`: tampered real data, a synthetic object with the real field names,
/// or anything.
pub fn pool_tree(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0u8..=4)? {
        0..=2 => {
            let pool = real_pool(u)?;
            let mut v = serde_json::to_value(&pool).expect("a pool serializes");
            tamper(u, &mut v)?;
            v
        }
        3 => {
            let mut m = Map::new();
            for f in POOL_FIELDS {
                if u.int_in_range(0u8..=7)? == 0 {
                    continue;
                }
                let value = match f {
                    "slots" => {
                        let n = u.int_in_range(0usize..=16)?;
                        let slots = (0..n)
                            .map(|_| {
                                let value = if u.arbitrary()? {
                                    Value::Null
                                } else {
                                    json!(1)
                                };
                                Ok(json!([num(u)?, value]))
                            })
                            .collect::<Result<Vec<_>>>()?;
                        Value::Array(slots)
                    }
                    "free_list" => {
                        let n = u.int_in_range(0usize..=16)?;
                        Value::Array((0..n).map(|_| num(u)).collect::<Result<_>>()?)
                    }
                    "chunk" if u.arbitrary()? => Value::Null,
                    _ => num(u)?,
                };
                m.insert(f.into(), value);
            }
            Value::Object(m)
        }
        _ => node(u, &POOL_FIELDS, 0)?,
    })
}

/// A handle: usually a pair of adversarial numbers (a `Handle`), sometimes one (a `Handle32`).
pub fn handle_tree(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0u8..=5)? {
        0..=2 => json!([num(u)?, num(u)?]),
        // One number: the form of a `Handle32`.
        5 => num(u)?,
        3 => {
            let n = u.int_in_range(0usize..=3)?;
            Value::Array((0..n).map(|_| num(u)).collect::<Result<_>>()?)
        }
        _ => node(u, &[], 0)?,
    })
}

/// Side-table save data: a real table's `(handle, value)` pairs (handles from a real pool, some
/// stale), tampered with (a huge or repeated index, an even or other-pool generation, a long
/// run of entries, a wrong shape), or anything.
pub fn secondary_tree(u: &mut Unstructured<'_>) -> Result<Value> {
    if u.int_in_range(0u8..=5)? == 0 {
        return node(u, &[], 0);
    }
    let mut pool = real_pool(u)?;
    let mut table = SecondaryPool::new();
    for (h, &v) in pool.iter() {
        if u.arbitrary()? {
            table.insert(h, v);
        }
    }
    // Stale handles too: removed from the pool, kept in the table.
    let handles: Vec<_> = pool.iter().map(|(h, _)| h).collect();
    for h in handles {
        if u.int_in_range(0u8..=3)? == 0 {
            pool.remove(h);
        }
    }
    let mut v = serde_json::to_value(&table).expect("a side table serializes");
    let Some(list) = v.as_array_mut() else {
        return Ok(v);
    };
    for _ in 0..u.int_in_range(0u8..=4)? {
        let n = list.len();
        match u.int_in_range(0u8..=7)? {
            0 => list.push(json!([[num(u)?, num(u)?], 1])),
            1 if n > 0 => {
                let e = list[u.choose_index(n)?].clone();
                let at = u.int_in_range(0..=n)?;
                list.insert(at, e);
            }
            2 if n > 0 => {
                let i = u.choose_index(n)?;
                let g = list[i][0][1].as_u64().unwrap_or(1);
                let new = match u.int_in_range(0u8..=2)? {
                    0 => json!(g ^ 1),
                    1 => json!(g | 0x8000_0000),
                    _ => num(u)?,
                };
                if let Some(slot) = list[i].get_mut(0).and_then(|h| h.get_mut(1)) {
                    *slot = new;
                }
            }
            3 if n > 0 => {
                let i = u.choose_index(n)?;
                let index = num(u)?;
                if let Some(slot) = list[i].get_mut(0).and_then(|h| h.get_mut(0)) {
                    *slot = index;
                }
            }
            4 => {
                let count = u.int_in_range(0u32..=2048)?;
                let g = u.int_in_range(0u64..=5)? * 2 + 1;
                list.extend((0..count).map(|i| json!([[i, g], i])));
            }
            5 if n > 0 => {
                let i = u.choose_index(n)?;
                list[i] = node(u, &[], 2)?;
            }
            6 => list.reverse(),
            _ => {}
        }
    }
    Ok(v)
}

/// The dense table's slot-memory limit in the side-table target (small, so runs stay fast).
pub const SECONDARY_LIMIT: usize = 256 << 10;
/// Heap bytes allowed per input byte for a sparse side table: a 10-byte `[[0,1],0],` entry
/// becomes a 24-byte `HashMap` bucket plus a control byte, in a table kept at most 7/8 full and
/// growing by doubling, with the old table alive while it grows.
pub const SPARSE_BYTES_PER_INPUT_BYTE: usize = 16;

/// What the side-table readers must make of a tree: `None` if it is not a list of
/// `((u32, odd u32), u64)` pairs with distinct indexes below `u32::MAX` and one pool tag, else
/// the entries.
fn secondary_oracle(v: &Value) -> Option<HashMap<u32, (u32, u64)>> {
    let pairs = serde_json::from_value::<Vec<((u32, u32), u64)>>(v.clone()).ok()?;
    let tag = |g: u32| (g & 0x8000_0000 != 0).then_some((g >> 24) & 0x7F);
    let first_tag = pairs.first().map(|&((_, g), _)| tag(g));
    let mut map = HashMap::new();
    for ((index, generation), value) in pairs {
        let ok = generation & 1 == 1 && index != u32::MAX && Some(tag(generation)) == first_tag;
        if !ok || map.insert(index, (generation, value)).is_some() {
            return None;
        }
    }
    Some(map)
}

/// The entries of a table read back, by index.
fn entries_of<'a>(it: impl Iterator<Item = (Handle<u64>, &'a u64)>) -> HashMap<u32, (u32, u64)> {
    it.map(|(h, &v)| (h.index(), (h.generation().get(), v)))
        .collect()
}

/// `SecondaryPool<u64, u64>` from a tree: exactly what the oracle accepts, unless the highest
/// index needs more slot memory than the limit; the slots within the limit and the rest
/// proportional to the input; a round trip writes what was read, in slot order.
pub fn check_secondary(v: Value) {
    let len = input_len(&v);
    let oracle = secondary_oracle(&v);
    let seed = SecondaryPoolSeed::<u64, u64>::with_max_bytes(SECONDARY_LIMIT);
    let (result, peak) = measure(|| seed.deserialize(v));
    assert_bounded("SecondaryPool<u64, u64>", peak, SECONDARY_LIMIT, len);
    match (result, oracle) {
        (Ok(table), Some(want)) => {
            assert_eq!(entries_of(table.iter()), want);
            assert_eq!(table.len(), want.len());
            let mut sorted: Vec<_> = want
                .iter()
                .map(|(&i, &(g, v))| json!([[i, g], v]))
                .collect();
            sorted.sort_by_key(|e| e[0][0].as_u64());
            assert_eq!(serde_json::to_value(&table).unwrap(), Value::Array(sorted));
        }
        (Err(e), Some(want)) => {
            let e = e.to_string();
            let top = want.keys().max().map_or(0, |&i| i as usize + 1);
            assert!(e.contains("over the limit"), "valid data refused: {e}");
            assert!(
                top * 16 > SECONDARY_LIMIT,
                "refused {top} slots as over the limit"
            );
        }
        (Ok(table), None) => panic!("accepted {} entries the oracle refuses", table.len()),
        (Err(e), None) => assert!(!e.to_string().is_empty()),
    }
}

/// `SparseSecondaryPool<u64, u64>` from a tree: exactly what the oracle accepts, whatever the
/// indexes, in memory proportional to the input.
pub fn check_sparse_secondary(v: Value) {
    let len = input_len(&v);
    let oracle = secondary_oracle(&v);
    let (result, peak) = measure(|| serde_json::from_value::<SparseSecondaryPool<u64, u64>>(v));
    let bound = SPARSE_BYTES_PER_INPUT_BYTE * len + FIXED_SLACK;
    assert!(
        peak <= bound,
        "SparseSecondaryPool: heap grew by {peak} bytes for {len} bytes of input"
    );
    match (result, oracle) {
        (Ok(table), Some(want)) => {
            assert_eq!(entries_of(table.iter()), want);
            let back: SparseSecondaryPool<u64, u64> =
                serde_json::from_value(serde_json::to_value(&table).unwrap()).unwrap();
            assert!(back == table);
        }
        (Err(_), None) => {}
        (r, o) => panic!(
            "sparse table read {:?} entries, the oracle {:?}",
            r.map(|t| t.len()).map_err(|e| e.to_string()),
            o.map(|m| m.len())
        ),
    }
}

// -------------------------------------------------------------------------------------------
// Row types

/// A nested field: two `f32` columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pos {
    pub x: f32,
    pub y: f32,
}

type PosCols = (Col<f32>, (Col<f32>, ()));

// SAFETY: every field is `pub`: any values make a `Pos`, and its clone is its fields' clones.
unsafe impl PlainRow for Pos {}

impl Soa for Pos {
    type Columns = PosCols;
    const FIELD_NAMES: &'static [&'static str] = &["x", "y"];
    type Ref<'a> = <PosCols as Columns>::Ref<'a>;
    type Mut<'a> = <PosCols as Columns>::Mut<'a>;
    type Slices<'a> = <PosCols as Columns>::Slices<'a>;
    type SlicesMut<'a> = <PosCols as Columns>::SlicesMut<'a>;
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> (f32, (f32, ())) {
        (self.x, (self.y, ()))
    }
    fn from_columns(
        (x, (y, ())): (f32, (f32, ())),
        _: arena_kit_core::soa::RowConversion<Self>,
    ) -> Self {
        Pos { x, y }
    }
    fn view<'a>(c: Self::Ref<'a>) -> Self::Ref<'a> {
        c
    }
    fn view_mut<'a>(c: Self::Mut<'a>) -> Self::Mut<'a> {
        c
    }
    fn view_slices<'a>(c: Self::Slices<'a>) -> Self::Slices<'a> {
        c
    }
    fn view_slices_mut<'a>(c: Self::SlicesMut<'a>) -> Self::SlicesMut<'a> {
        c
    }
}

/// A row with a plain column, a nested field and a column that owns heap memory. Rows are
/// written as `[id, [x, y], name]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mob {
    pub id: u32,
    pub pos: Pos,
    pub name: String,
}

type MobCols = (Col<u32>, (Nested<Pos>, (Col<String>, ())));

// SAFETY: every field is `pub` (and `pos` is a plain `Pos`): any values make a `Mob`, and its clone is its fields' clones.
unsafe impl PlainRow for Mob {}

impl Soa for Mob {
    type Columns = MobCols;
    const FIELD_NAMES: &'static [&'static str] = &["id", "pos", "name"];
    type Ref<'a> = <MobCols as Columns>::Ref<'a>;
    type Mut<'a> = <MobCols as Columns>::Mut<'a>;
    type Slices<'a> = <MobCols as Columns>::Slices<'a>;
    type SlicesMut<'a> = <MobCols as Columns>::SlicesMut<'a>;
    fn into_columns(
        self,
        _: arena_kit_core::soa::RowConversion<Self>,
    ) -> (u32, (Pos, (String, ()))) {
        (self.id, (self.pos, (self.name, ())))
    }
    fn from_columns(
        (id, (pos, (name, ()))): (u32, (Pos, (String, ()))),
        _: arena_kit_core::soa::RowConversion<Self>,
    ) -> Self {
        Mob { id, pos, name }
    }
    fn view<'a>(c: Self::Ref<'a>) -> Self::Ref<'a> {
        c
    }
    fn view_mut<'a>(c: Self::Mut<'a>) -> Self::Mut<'a> {
        c
    }
    fn view_slices<'a>(c: Self::Slices<'a>) -> Self::Slices<'a> {
        c
    }
    fn view_slices_mut<'a>(c: Self::SlicesMut<'a>) -> Self::SlicesMut<'a> {
        c
    }
}

/// A row type with no columns at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Empty;

// SAFETY: a `Empty` has no fields.
unsafe impl PlainRow for Empty {}

impl Soa for Empty {
    type Columns = ();
    type Ref<'a> = ();
    type Mut<'a> = ();
    type Slices<'a> = ();
    type SlicesMut<'a> = ();
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) {}
    fn from_columns((): (), _: arena_kit_core::soa::RowConversion<Self>) -> Self {
        Empty
    }
    fn view<'a>(c: Self::Ref<'a>) -> Self::Ref<'a> {
        c
    }
    fn view_mut<'a>(c: Self::Mut<'a>) -> Self::Mut<'a> {
        c
    }
    fn view_slices<'a>(c: Self::Slices<'a>) -> Self::Slices<'a> {
        c
    }
    fn view_slices_mut<'a>(c: Self::SlicesMut<'a>) -> Self::SlicesMut<'a> {
        c
    }
}

/// A row type whose only column is zero-sized (rows take no memory).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit(pub ());

// SAFETY: the one field is `pub` and `()`.
unsafe impl PlainRow for Unit {}

impl Soa for Unit {
    type Columns = (Col<()>, ());
    const FIELD_NAMES: &'static [&'static str] = &["0"];
    type Ref<'a> = (&'a (), ());
    type Mut<'a> = (&'a mut (), ());
    type Slices<'a> = (&'a [()], ());
    type SlicesMut<'a> = (&'a mut [()], ());
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> ((), ()) {
        (self.0, ())
    }
    fn from_columns((u, ()): ((), ()), _: arena_kit_core::soa::RowConversion<Self>) -> Self {
        Unit(u)
    }
    fn view<'a>(c: Self::Ref<'a>) -> Self::Ref<'a> {
        c
    }
    fn view_mut<'a>(c: Self::Mut<'a>) -> Self::Mut<'a> {
        c
    }
    fn view_slices<'a>(c: Self::Slices<'a>) -> Self::Slices<'a> {
        c
    }
    fn view_slices_mut<'a>(c: Self::SlicesMut<'a>) -> Self::SlicesMut<'a> {
        c
    }
}

// Hand-written (arena-kit-core's tests have no serde derive): rows read as tuples.
impl<'de> Deserialize<'de> for Pos {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        let (x, y) = <(f32, f32)>::deserialize(d)?;
        Ok(Pos { x, y })
    }
}
impl<'de> Deserialize<'de> for Mob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        let (id, pos, name) = <(u32, Pos, String)>::deserialize(d)?;
        Ok(Mob { id, pos, name })
    }
}
impl<'de> Deserialize<'de> for Empty {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        <()>::deserialize(d)?;
        Ok(Empty)
    }
}
impl<'de> Deserialize<'de> for Unit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        <()>::deserialize(d)?;
        Ok(Unit(()))
    }
}

fn mob_tree(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0u8..=5)? {
        0..=3 => json!([num(u)?, [num(u)?, num(u)?], short_string(u)?]),
        4 => json!([u.int_in_range(0u32..=9)?, [0.5, 1.5], short_string(u)?]),
        _ => node(u, &[], 1)?,
    })
}

/// Which row type a SoA check uses: 0 = `Mob`, 1 = `Empty`, 2 = `Unit`.
fn row_kind(u: &mut Unstructured<'_>) -> Result<u8> {
    u.int_in_range(0u8..=2)
}

/// A sequence of rows (the row format).
pub fn rows_tree(u: &mut Unstructured<'_>, kind: u8) -> Result<Value> {
    if u.int_in_range(0u8..=9)? == 0 {
        return node(u, &[], 0);
    }
    let n = if u.int_in_range(0u8..=7)? == 0 {
        u.int_in_range(0usize..=4096)?
    } else {
        u.int_in_range(0usize..=8)?
    };
    let mut rows = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        rows.push(match kind {
            0 => mob_tree(u)?,
            _ if u.int_in_range(0u8..=15)? == 0 => node(u, &[], 2)?,
            _ => Value::Null,
        });
    }
    Ok(Value::Array(rows))
}

/// A sequence of columns (the column format), usually of the right count, lengths that may
/// disagree.
pub fn columns_tree(u: &mut Unstructured<'_>, kind: u8) -> Result<Value> {
    let count = match kind {
        0 => 4,
        1 => 0,
        _ => 1,
    };
    if u.int_in_range(0u8..=9)? == 0 {
        return node(u, &[], 0);
    }
    let count = if u.int_in_range(0u8..=7)? == 0 {
        u.int_in_range(0usize..=6)?
    } else {
        count
    };
    let base = if u.int_in_range(0u8..=7)? == 0 {
        u.int_in_range(0usize..=4096)?
    } else {
        u.int_in_range(0usize..=8)?
    };
    let mut cols = Vec::new();
    for c in 0..count {
        let len = if u.int_in_range(0u8..=5)? == 0 {
            u.int_in_range(0usize..=9)?
        } else {
            base
        };
        let col = (0..len)
            .map(|_| {
                Ok(match (kind, c) {
                    (0, 3) => Value::String(short_string(u)?),
                    (0, _) => num(u)?,
                    _ if u.int_in_range(0u8..=15)? == 0 => num(u)?,
                    _ => Value::Null,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        cols.push(Value::Array(col));
    }
    // The named format now and then, decided last so that inputs written for the positional
    // format (and exhausted input, which reads as 0) keep meaning what they meant.
    if u.int_in_range(0u8..=2)? == 2 {
        return named_tree(u, kind, cols);
    }
    Ok(Value::Array(cols))
}

/// The column names of each row kind in the named format.
const NAMED: [&[&str]; 3] = [&["id", "pos.x", "pos.y", "name"], &[], &["0"]];

/// `cols` keyed by the kind's column names, sometimes with a key renamed, dropped or added
/// (a JSON object cannot repeat a key; tests/serde_hostile_input.rs covers repeats).
fn named_tree(u: &mut Unstructured<'_>, kind: u8, cols: Vec<Value>) -> Result<Value> {
    let names = NAMED[kind as usize];
    let mut m = Map::new();
    for (i, col) in cols.into_iter().enumerate() {
        let key = match (names.get(i), u.int_in_range(0u8..=7)?) {
            (Some(name), 1..) => name.to_string(),
            _ => short_string(u)?,
        };
        m.insert(key, col);
    }
    if u.int_in_range(0u8..=7)? == 0 && !m.is_empty() {
        let first = m.keys().next().cloned().unwrap_or_default();
        m.remove(&first);
    }
    Ok(Value::Object(m))
}

// -------------------------------------------------------------------------------------------
// Checks

/// The slot index of either handle type, for the checks.
pub trait SlotIndex: PoolHandle<u64> + serde::Serialize + for<'de> Deserialize<'de> {
    fn slot(self) -> u32;
}

impl SlotIndex for Handle<u64> {
    fn slot(self) -> u32 {
        self.index()
    }
}

impl SlotIndex for Handle32<u64> {
    fn slot(self) -> u32 {
        self.index()
    }
}

/// A deserialized pool is consistent: `len`, iteration and lookups agree, it round-trips, and
/// new inserts never return a handle that was live or stale before. For both handle types.
pub fn check_pool_consistent<H: SlotIndex>(mut pool: Pool<u64, H>) {
    let stats = pool.stats();
    assert_eq!(stats.len, pool.len());
    assert!(stats.len + stats.retired <= stats.capacity);
    let live: Vec<(H, u64)> = pool.iter().map(|(h, &v)| (h, v)).collect();
    assert_eq!(live.len(), pool.len());
    let mut indexes = HashSet::new();
    for &(h, v) in &live {
        assert!(
            indexes.insert(h.slot()),
            "two live values in slot {}",
            h.slot()
        );
        assert!((h.slot() as usize) < stats.capacity);
        assert_eq!(pool.get(h), Some(&v));
    }
    let again: Pool<u64, H> = PoolSeed::with_max_bytes(usize::MAX)
        .deserialize(serde_json::to_value(&pool).unwrap())
        .expect("a validated pool round-trips");
    assert_eq!(again.stats(), pool.stats());
    let mut seen: HashSet<H> = live.iter().map(|&(h, _)| h).collect();
    // New values never get a handle seen before; the old ones stay untouched.
    let mut fresh = Vec::new();
    for i in 0..8u64 {
        let Ok(h) = pool.try_insert(1000 + i) else {
            break;
        };
        assert!(seen.insert(h), "insert reissued {h:?}");
        fresh.push(h);
    }
    for &(h, v) in &live {
        assert_eq!(pool.get(h), Some(&v));
    }
    for (i, &h) in (0u64..).zip(&fresh) {
        assert_eq!(pool.remove(h), Some(1000 + i));
    }
    for &(h, _) in &live {
        assert!(pool.remove(h).is_some());
        assert!(pool.get(h).is_none());
    }
    assert!(pool.is_empty());
    for i in 0..8u64 {
        let Ok(h) = pool.try_insert(i) else { break };
        assert!(seen.insert(h), "a stale handle came back: {h:?}");
    }
}

fn input_len(v: &Value) -> usize {
    serde_json::to_vec(v).map_or(0, |b| b.len())
}

/// `Pool<u64>` and `Pool<u64, Handle32<u64>>` from a tree: an error, or a consistent pool; slot
/// storage within the seed's limit and the rest proportional to the input.
pub fn check_pool(v: Value) {
    check_pool_as::<Handle<u64>>(v.clone(), "Pool<u64>");
    check_pool_as::<Handle32<u64>>(v, "Pool<u64, Handle32<u64>>");
}

fn check_pool_as<H: SlotIndex>(v: Value, name: &str) {
    let len = input_len(&v);
    let seed = PoolSeed::<u64, H>::with_max_bytes(POOL_LIMIT).with_input_len(len);
    let (result, peak) = measure(|| seed.deserialize(v));
    assert_bounded(name, peak, seed.limit(), len);
    match result {
        Ok(pool) => check_pool_consistent(pool),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// `Handle<u64>` from a tree: accepted exactly when it is a pair of `u32` with an odd
/// generation, and then round-trips.
pub fn check_handle(v: Value) {
    let oracle = serde_json::from_value::<(u32, u32)>(v.clone())
        .ok()
        .filter(|&(_, g)| g & 1 == 1);
    let v32 = v.clone();
    let (result, peak) = measure(|| serde_json::from_value::<Handle<u64>>(v));
    assert_bounded("Handle<u64>", peak, 0, 0);
    match (result, oracle) {
        (Ok(h), Some((index, generation))) => {
            assert_eq!((h.index(), h.generation().get()), (index, generation));
            assert_eq!(serde_json::to_value(h).unwrap(), json!([index, generation]));
        }
        (Err(_), None) => {}
        (r, o) => panic!("Handle deserialized to {r:?} but a (u32, odd u32) pair reads {o:?}"),
    }
    check_handle32(v32);
}

/// `Handle32<u64>` from a tree: accepted exactly when it is a `u32` whose low 12 bits are odd
/// and that is not the null index with another generation; then it round-trips.
fn check_handle32(v: Value) {
    let oracle = serde_json::from_value::<u32>(v.clone()).ok().filter(|&b| {
        let (index, generation) = (b >> 12, b & 0xFFF);
        generation & 1 == 1 && (index != 0xF_FFFF || generation == 1)
    });
    let (result, peak) = measure(|| serde_json::from_value::<Handle32<u64>>(v));
    assert_bounded("Handle32<u64>", peak, 0, 0);
    match (result, oracle) {
        (Ok(h), Some(bits)) => {
            assert_eq!(h.to_bits(), bits);
            assert_eq!(serde_json::to_value(h).unwrap(), json!(bits));
        }
        (Err(_), None) => {}
        (r, o) => panic!("Handle32 deserialized to {r:?} but the bit rule reads {o:?}"),
    }
}

fn check_vec<T: Soa + PartialEq + core::fmt::Debug>(v: &SoaVec<T>, oracle: Vec<T>) {
    assert_eq!(v.len(), oracle.len());
    assert_eq!(v.iter().count(), v.len());
    let back = v.as_soa_slice().len();
    assert_eq!(back, oracle.len());
}

/// Runs the row format for one row type against `Vec<T>` as the oracle.
fn rows_as<T>(v: Value)
where
    T: Soa + for<'de> Deserialize<'de> + PartialEq + core::fmt::Debug,
{
    let len = input_len(&v);
    let oracle = serde_json::from_value::<Vec<T>>(v.clone());
    let (result, peak) = measure(|| serde_json::from_value::<SoaVec<T>>(v));
    assert_bounded("SoaVec rows", peak, 0, len);
    match (result, oracle) {
        (Ok(vec), Ok(rows)) => {
            let got = vec.into_vec();
            assert_eq!(got, rows);
        }
        (Err(_), Err(_)) => {}
        (r, o) => panic!(
            "row format gave {:?} but Vec<T> gave {:?}",
            r.map(|v| v.len()),
            o
        ),
    }
}

/// `SoaVec<T>` in the row format: the same result as `Vec<T>`.
pub fn check_rows(kind: u8, v: Value) {
    match kind {
        0 => rows_as::<Mob>(v),
        1 => rows_as::<Empty>(v),
        _ => rows_as::<Unit>(v),
    }
}

fn columns_of<T>(v: Value) -> core::result::Result<SoaVec<T>, serde_json::Error>
where
    T: Soa + for<'de> Deserialize<'de> + PlainRow,
    T::Columns: for<'de> arena_kit_core::soa::serde::columns::DeColumns<'de>,
{
    arena_kit_core::soa::serde::columns::deserialize(v)
}

fn named_of<T>(v: Value) -> core::result::Result<SoaVec<T>, serde_json::Error>
where
    T: Soa + for<'de> Deserialize<'de> + PlainRow,
    T::Columns: for<'de> arena_kit_core::soa::serde::columns::DeColumns<'de>
        + arena_kit_core::soa::serde::columns::NamedColumns,
{
    arena_kit_core::soa::serde::named_columns::deserialize(v)
}

/// The named format's input in the positional format, if its keys are exactly the kind's
/// column names.
fn named_as_positional(kind: u8, v: &Value) -> Option<Value> {
    let obj = v.as_object()?;
    let names = NAMED[kind as usize];
    let exact = obj.len() == names.len() && names.iter().all(|n| obj.contains_key(*n));
    exact.then(|| Value::Array(names.iter().map(|n| obj[*n].clone()).collect()))
}

/// The named format agrees with the positional one on the same columns, and refuses any other
/// set of keys; memory stays proportional to the input.
fn named_like_positional<T>(what: &str, kind: u8, v: Value)
where
    T: Soa + for<'de> Deserialize<'de> + PlainRow + PartialEq + core::fmt::Debug,
    T::Columns: for<'de> arena_kit_core::soa::serde::columns::DeColumns<'de>
        + arena_kit_core::soa::serde::columns::NamedColumns,
{
    let len = input_len(&v);
    let want = named_as_positional(kind, &v).and_then(|p| columns_of::<T>(p).ok());
    let (got, peak) = measure(|| named_of::<T>(v));
    assert_bounded(what, peak, 0, len);
    match (got, want) {
        (Ok(got), Some(want)) => assert_eq!(got.into_vec(), want.into_vec()),
        (Err(e), None) => assert!(!e.to_string().is_empty()),
        (got, want) => panic!(
            "{what}: the named format gave {:?}, the positional one {:?}",
            got.map(|v| v.len()),
            want.map(|v| v.len())
        ),
    }
}

/// `SoaVec<T>` in the column format: accepted exactly when the columns read as the field types
/// and agree in length, and then holds those rows; terminates for a type with no columns. A
/// map is the named format, checked against the positional one.
pub fn check_columns(kind: u8, v: Value) {
    if v.is_object() {
        match kind {
            0 => named_like_positional::<Mob>("SoaVec<Mob> named columns", kind, v),
            1 => named_like_positional::<Empty>("SoaVec<Empty> named columns", kind, v),
            _ => named_like_positional::<Unit>("SoaVec<Unit> named columns", kind, v),
        }
        return;
    }
    let len = input_len(&v);
    match kind {
        0 => {
            type Parts = (Vec<u32>, Vec<f32>, Vec<f32>, Vec<String>);
            let oracle = serde_json::from_value::<Parts>(v.clone()).ok().filter(|p| {
                p.0.len() == p.1.len() && p.1.len() == p.2.len() && p.2.len() == p.3.len()
            });
            let (result, peak) = measure(|| columns_of::<Mob>(v));
            assert_bounded("SoaVec<Mob> columns", peak, 0, len);
            match (result, oracle) {
                (Ok(vec), Some((ids, xs, ys, names))) => {
                    let want: Vec<Mob> = ids
                        .into_iter()
                        .zip(xs.into_iter().zip(ys))
                        .zip(names)
                        .map(|((id, (x, y)), name)| Mob {
                            id,
                            pos: Pos { x, y },
                            name,
                        })
                        .collect();
                    assert_eq!(vec.into_vec(), want);
                }
                (Err(_), None) => {}
                (r, o) => panic!(
                    "column format gave {:?}, the columns read {o:?}",
                    r.map(|v| v.len())
                ),
            }
        }
        1 => {
            // Zero columns: exactly an empty sequence.
            let oracle = v.as_array().is_some_and(Vec::is_empty);
            let (result, peak) = measure(|| columns_of::<Empty>(v));
            assert_bounded("SoaVec<Empty> columns", peak, 0, len);
            match result {
                Ok(vec) => {
                    assert!(oracle);
                    assert!(vec.is_empty(), "rows with no columns carry no count");
                }
                Err(_) => assert!(!oracle),
            }
        }
        _ => {
            let oracle = serde_json::from_value::<(Vec<()>,)>(v.clone()).ok();
            let (result, peak) = measure(|| columns_of::<Unit>(v));
            assert_bounded("SoaVec<Unit> columns", peak, 0, len);
            match (result, oracle) {
                (Ok(vec), Some((units,))) => assert_eq!(vec.len(), units.len()),
                (Err(_), None) => {}
                (r, o) => panic!(
                    "column format gave {:?}, the column read {o:?}",
                    r.map(|v| v.len())
                ),
            }
        }
    }
}

/// The fuzz targets, by name.
pub const TARGETS: [&str; 6] = [
    "pool_de",
    "handle_de",
    "soa_rows_de",
    "soa_columns_de",
    "secondary_de",
    "sparse_secondary_de",
];

/// Runs target `name` on fuzzer bytes. Returns `false` for an unknown target name.
pub fn run(name: &str, data: &[u8]) -> bool {
    let mut u = Unstructured::new(data);
    let ok = match name {
        "pool_de" => pool_tree(&mut u).map(check_pool),
        "handle_de" => handle_tree(&mut u).map(check_handle),
        "secondary_de" => secondary_tree(&mut u).map(check_secondary),
        "sparse_secondary_de" => secondary_tree(&mut u).map(check_sparse_secondary),
        "soa_rows_de" => {
            row_kind(&mut u).and_then(|k| rows_tree(&mut u, k).map(|v| check_rows(k, v)))
        }
        "soa_columns_de" => {
            row_kind(&mut u).and_then(|k| columns_tree(&mut u, k).map(|v| check_columns(k, v)))
        }
        _ => return false,
    };
    // Running out of bytes mid-tree just ends the input early.
    let _ = ok;
    true
}
