//! Attacks from safe code on what `#[derive(Soa)]` generates and on the parallel iterators of the
//! `rayon` feature: row types the derive must handle without the containers misplacing a column
//! (generic parameters whose associated types differ per argument, const generics, lifetimes,
//! `?Sized` parameters, `repr(packed)`/`repr(align)`, raw identifiers, fields named like
//! generated items, shadowed prelude names), panicking clones in `to_value`, a hand-written `Soa`
//! impl with an absurd `ALIGN`, and rayon splitting at every index, with panics, zero-sized and
//! over-aligned rows. Every counted value must be dropped exactly once.
#![allow(missing_docs)]

use std::cell::Cell;
use std::collections::HashSet;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::soa::{Col, SoaAllocError, SoaTiles, SoaVec, ToValue};
use arena_kit_derive::Soa;

const SMALL: bool = cfg!(miri);

fn n(native: usize, miri: usize) -> usize {
    if SMALL { miri } else { native }
}

// ---------------------------------------------------------------------------------------------
// Counted values (thread-safe, so the rayon tests can use them too).

static LIVE: std::sync::Mutex<Option<HashSet<u64>>> = std::sync::Mutex::new(None);
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
static BAD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    static PANIC_CLONE_AFTER: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// A counted value: registered on creation, unregistered on drop; a drop of an unknown value
/// (a double drop) is recorded. Ids are global, so tests running at once do not disturb each
/// other; each test checks only the ids it made.
#[derive(Debug)]
struct D {
    id: u64,
}

impl D {
    fn new() -> Self {
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashSet::new)
            .insert(id);
        D { id }
    }
}

impl Clone for D {
    fn clone(&self) -> Self {
        let left = PANIC_CLONE_AFTER.with(|c| c.get());
        if left == 0 {
            PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));
            panic!("clone panics");
        }
        if left != usize::MAX {
            PANIC_CLONE_AFTER.with(|c| c.set(left - 1));
        }
        assert!(is_live(self.id), "clone of a dead value {}", self.id);
        D::new()
    }
}

/// Clones are equal to their originals (each has its own id).
impl PartialEq for D {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Drop for D {
    fn drop(&mut self) {
        let known = LIVE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashSet::new)
            .remove(&self.id);
        if !known {
            BAD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

fn is_live(id: u64) -> bool {
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .contains(&id)
}

/// Serialises the tests that count values, so one test's live values are not another's leak.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits for the other counting tests, then returns the first id the next `D::new` will get
/// (the test's values are the ids from there on) and the guard to hold until the test ends.
fn mark() -> (u64, std::sync::MutexGuard<'static, ()>) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    (NEXT.load(std::sync::atomic::Ordering::Relaxed), guard)
}

/// Panics unless no value made since `from` is alive and nothing was ever dropped twice.
#[track_caller]
fn assert_clean_since(from: u64, ctx: &str) {
    assert_eq!(
        BAD.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "{ctx}: a value was dropped twice"
    );
    let leaked: Vec<u64> = LIVE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .iter()
        .copied()
        .filter(|&id| id >= from)
        .collect();
    assert!(leaked.is_empty(), "{ctx}: values leaked: {leaked:?}");
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(align(4096))]
pub struct Page(pub u8);

#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(align(64))]
pub struct Line(pub u32);

#[track_caller]
fn assert_aligned<F>(column: &[F], ctx: &str) {
    assert_eq!(
        column.as_ptr().addr() % align_of::<F>(),
        0,
        "{ctx}: column of {} misaligned",
        std::any::type_name::<F>()
    );
}

// ---------------------------------------------------------------------------------------------
// Generic rows whose column types depend on the argument through an associated type.

trait Pick: Clone {
    type Assoc: Clone + PartialEq + std::fmt::Debug;
    fn make(k: u8) -> Self::Assoc;
}

#[derive(Clone)]
struct Small;
#[derive(Clone)]
struct Big;
#[derive(Clone)]
struct Empty;

impl Pick for Small {
    type Assoc = u8;
    fn make(k: u8) -> u8 {
        k
    }
}
impl Pick for Big {
    type Assoc = (Page, D);
    fn make(k: u8) -> (Page, D) {
        (Page(k), D::new())
    }
}
impl Pick for Empty {
    type Assoc = [Page; 0];
    fn make(_: u8) -> [Page; 0] {
        []
    }
}

/// The column of `v` is `u8` for one argument, a 4096-aligned pair with drop glue for another and
/// a zero-sized 4096-aligned array for a third: one derive, three layouts.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, plain)]
struct ByAssoc<P: Pick>
where
    P::Assoc: Clone,
{
    tag: u16,
    v: <P as Pick>::Assoc,
    k: u64,
    _p: PhantomData<fn() -> P>,
}

fn by_assoc<P: Pick>(k: u8) -> ByAssoc<P> {
    ByAssoc {
        tag: u16::from(k) * 7,
        v: P::make(k),
        k: u64::from(k) << 40,
        _p: PhantomData,
    }
}

fn exercise_by_assoc<P: Pick + 'static>(ctx: &str) {
    let (from, _serial) = mark();
    {
        let rows = n(300, 12);
        let mut v: SoaVec<ByAssoc<P>> = SoaVec::new();
        for k in 0..rows {
            v.push(by_assoc::<P>(k as u8));
            let s = v.slices();
            assert_aligned(s.tag, ctx);
            assert_aligned(s.v, ctx);
            assert_aligned(s.k, ctx);
        }
        v.insert(0, by_assoc::<P>(200));
        let removed = v.remove(1);
        assert_eq!(removed.tag, 0);
        v.swap(0, rows - 1);
        let copy = v.clone();
        assert_eq!(copy, v);
        for (i, r) in v.iter().enumerate() {
            let want = if i == rows - 1 {
                200
            } else if i == 0 {
                (rows - 1) as u8
            } else {
                i as u8
            };
            assert_eq!(*r.tag, u16::from(want) * 7, "{ctx}: row {i}");
            assert_eq!(*r.k, u64::from(want) << 40, "{ctx}: row {i}");
            let back: ByAssoc<P> = r.to_value();
            assert_eq!(back.tag, *r.tag);
        }
        v.sort_unstable_by_key(|r| *r.tag);
        assert!(v.slices().tag.is_sorted());
        v.shrink_to_fit();
        v.truncate(3);
        let drained: Vec<ByAssoc<P>> = v.drain(..).collect();
        assert_eq!(drained.len(), 3);
        drop(copy);
    }
    assert_clean_since(from, ctx);
}

#[test]
fn columns_from_associated_types_differ_per_argument_and_stay_aligned() {
    exercise_by_assoc::<Small>("u8");
    exercise_by_assoc::<Big>("(Page, D)");
    exercise_by_assoc::<Empty>("[Page; 0]");
}

// ---------------------------------------------------------------------------------------------
// Const generics, lifetimes, `?Sized` parameters, wrappers.

/// An array column whose length is a const parameter: `[D; 0]` is a zero-sized column, `[D; 3]`
/// owns three counted values per row.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled, plain)]
struct Arr<T, const N: usize> {
    a: [T; N],
    b: u8,
}

fn exercise_arr<const N: usize>() {
    let (from, _serial) = mark();
    {
        let rows = n(100, 9);
        let mut v: SoaVec<Arr<D, N>> = SoaVec::new();
        for k in 0..rows {
            v.push(Arr {
                a: std::array::from_fn(|_| D::new()),
                b: k as u8,
            });
        }
        let c = v.clone();
        assert_eq!(c, v);
        v.retain(|r| *r.b % 2 == 0);
        assert!(v.slices().b.iter().all(|b| b % 2 == 0));
        let mut t: SoaTiles<Arr<D, N>, 4> = c.into_iter().collect();
        assert_eq!(t.len(), rows);
        let last = t.pop().unwrap();
        assert_eq!(last.b as usize, rows - 1);
    }
    assert_clean_since(from, "const generic arrays");
}

#[test]
fn const_generic_array_columns_of_length_zero_and_three_drop_once() {
    exercise_arr::<0>();
    exercise_arr::<3>();
}

/// Lifetimes (the struct takes `'a`, so the views take `'__soa`), a `?Sized` parameter behind
/// a reference, `PhantomData` and `ManuallyDrop` (the container must not drop inside it).
#[derive(Debug, Soa)]
#[soa(crate = arena_kit_core)]
struct Borrowing<'a, 'b: 'a, T: ?Sized + 'b> {
    s: &'a str,
    t: &'b T,
    m: ManuallyDrop<D>,
    p: PhantomData<&'a mut T>,
}

#[test]
fn rows_borrowing_unsized_values_and_manually_dropped_fields() {
    let (from, _serial) = mark();
    let text = String::from("hello");
    let slice: &[u32] = &[1, 2, 3];
    let mut kept = Vec::new();
    {
        let mut v: SoaVec<Borrowing<'_, '_, [u32]>> = SoaVec::new();
        for k in 0..n(50, 6) {
            v.push(Borrowing {
                s: &text[..k % 5],
                t: &slice[..k % 3],
                m: ManuallyDrop::new(D::new()),
                p: PhantomData,
            });
        }
        *v.get_mut(1).unwrap().s = "mut";
        let r = v.get(1).unwrap();
        assert_eq!((*r.s, *r.t), ("mut", &[1u32][..]));
        // The container never drops inside a `ManuallyDrop`: take them all back and drop them.
        for row in v.drain(..) {
            kept.push(ManuallyDrop::into_inner(row.m));
        }
    }
    drop(kept);
    assert_clean_since(from, "borrowing rows");
}

// ---------------------------------------------------------------------------------------------
// Representations.

/// `repr(packed)` moves fields out by value; the columns are aligned to each field type, not to
/// the packed struct.
#[derive(Soa)]
#[soa(crate = arena_kit_core)]
#[repr(C, packed)]
struct Packed {
    a: u8,
    b: u64,
    s: String,
    c: u16,
}

/// `repr(align(N))` on the row does not change its columns.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, align = 128)]
#[repr(C, align(4096))]
struct OverAlignedRow {
    a: u8,
    l: Line,
}

#[test]
fn packed_and_over_aligned_rows_have_aligned_columns() {
    let mut v: SoaVec<Packed> = SoaVec::new();
    for k in 0..n(200, 10) {
        v.push(Packed {
            a: k as u8,
            b: u64::MAX - k as u64,
            s: k.to_string(),
            c: k as u16,
        });
    }
    let s = v.slices();
    assert_aligned(s.b, "packed b");
    assert_aligned(s.s, "packed s");
    assert_aligned(s.c, "packed c");
    for (k, r) in v.iter().enumerate() {
        assert_eq!(
            (*r.a, *r.b, r.s.as_str()),
            (k as u8, u64::MAX - k as u64, &*k.to_string())
        );
    }
    let row = v.remove(3);
    let (b, s) = ({ row.b }, { row.s });
    assert_eq!((b, s.as_str()), (u64::MAX - 3, "3"));

    let mut w: SoaVec<OverAlignedRow> = SoaVec::new();
    for k in 0..n(70, 5) {
        w.push(OverAlignedRow {
            a: k as u8,
            l: Line(k as u32),
        });
        let s = w.slices();
        assert_eq!(
            s.a.as_ptr().addr() % 128,
            0,
            "align = 128 on the first column"
        );
        assert_eq!(
            s.l.as_ptr().addr() % 128,
            0,
            "align = 128 on the second column"
        );
    }
    assert_eq!(w.get(4).unwrap().l, &Line(4));
}

// ---------------------------------------------------------------------------------------------
// Names: raw identifiers, fields named like generated items, tuple structs.

#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, plain)]
struct r#Names {
    r#type: u8,
    r#fn: u16,
    ptr: u32,
    len: u64,
    cap: u8,
    __soa_0: u16,
    __soa_1: D,
    columns: u8,
    view: u8,
    r#struct: u8,
}

fn names(k: u8) -> Names {
    Names {
        r#type: k,
        r#fn: u16::from(k) + 1,
        ptr: u32::from(k) + 2,
        len: u64::from(k) + 3,
        cap: k.wrapping_add(4),
        __soa_0: u16::from(k) + 5,
        __soa_1: D::new(),
        columns: k.wrapping_add(6),
        view: k.wrapping_add(7),
        r#struct: k.wrapping_add(8),
    }
}

/// A tuple struct whose fields are a generic parameter and a unit.
#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core)]
struct Pair<T>(T, ());

#[test]
fn raw_identifiers_and_fields_named_like_generated_items_keep_their_columns() {
    let (from, _serial) = mark();
    {
        assert_eq!(
            <Names as arena_kit_core::soa::Soa>::FIELD_NAMES,
            [
                "type", "fn", "ptr", "len", "cap", "__soa_0", "__soa_1", "columns", "view",
                "struct"
            ]
        );
        let mut v: SoaVec<Names> = (0..n(40, 5) as u8).map(names).collect();
        // `len` and `ptr` are columns; the container's own `len` is unchanged.
        assert_eq!(v.len(), n(40, 5));
        let r = v.get(2).unwrap();
        assert_eq!(
            (*r.r#type, *r.r#fn, *r.ptr, *r.len, *r.cap, *r.__soa_0),
            (2, 3, 4, 5, 6, 7)
        );
        assert_eq!((*r.columns, *r.view, *r.r#struct), (8, 9, 10));
        *v.get_mut(2).unwrap().len = 99;
        assert_eq!(v.slices().len[2], 99);
        let back = v.get(2).unwrap().to_value();
        assert_eq!(back.len, 99);
        let p: SoaVec<Pair<D>> = (0..3).map(|_| Pair(D::new(), ())).collect();
        assert_eq!(p.slices().0.len(), 3);
        assert_eq!(p.get(1).unwrap().0, &p.slices().0[1]);
        drop(p);
    }
    assert_clean_since(from, "names");
}

/// Two rows named alike in different modules: their generated items do not collide.
mod first {
    use arena_kit_derive::Soa;
    #[derive(Debug, Clone, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Row {
        pub a: u8,
    }
}
mod second {
    use arena_kit_derive::Soa;
    #[derive(Debug, Clone, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Row {
        pub a: super::Line,
        pub b: String,
    }
}

#[test]
fn rows_named_alike_in_two_modules_keep_their_own_columns() {
    let mut one: SoaVec<first::Row> = SoaVec::new();
    let mut two: SoaVec<second::Row> = SoaVec::new();
    for k in 0..5u8 {
        one.push(first::Row { a: k });
        two.push(second::Row {
            a: Line(u32::from(k)),
            b: k.to_string(),
        });
    }
    let first::RowRef { a } = one.get(4).unwrap();
    let second::RowRef { a: l, b } = two.get(4).unwrap();
    assert_eq!((*a, *l, b.as_str()), (4, Line(4), "4"));
    assert_aligned(two.slices().a, "second::Row::a");
}

/// The prelude's names shadowed in the module where the derive runs: the generated code must
/// reach `core` and the crate by absolute paths.
#[allow(
    non_camel_case_types,
    dead_code,
    unused_imports,
    clippy::upper_case_acronyms
)]
mod shadowed {
    use arena_kit_derive::Soa;

    mod core {}
    mod std {}
    mod alloc {}
    mod arena_kit {}
    struct Option;
    struct Some;
    struct None;
    struct Result;
    struct Ok;
    struct Err;
    struct Box;
    struct Vec;
    struct String;
    trait Copy {}
    trait Clone {}
    trait Drop {}
    trait Sized {}
    trait Send {}
    trait Sync {}
    trait Debug {}
    trait Default {}
    trait Iterator {}
    trait Fn {}
    #[allow(unused_macros)]
    macro_rules! panic {
        ($($t:tt)*) => {
            compile_error!("the generated code used the caller's `panic!`")
        };
    }
    #[allow(unused_macros)]
    macro_rules! assert {
        ($($t:tt)*) => {
            compile_error!("the generated code used the caller's `assert!`")
        };
    }

    #[derive(Soa, ::core::clone::Clone)]
    #[soa(crate = arena_kit_core, tiled, align = 32)]
    pub struct Row {
        pub a: u32,
        pub b: ::std::string::String,
        #[soa(nested)]
        pub c: Inner,
    }

    #[derive(Soa, ::core::clone::Clone)]
    #[soa(crate = arena_kit_core, tiled)]
    pub struct Inner {
        pub x: u16,
    }

    pub fn row(k: u32) -> Row {
        Row {
            a: k,
            b: ::std::string::ToString::to_string(&k),
            c: Inner { x: k as u16 },
        }
    }
}

#[test]
fn prelude_names_shadowed_where_the_derive_runs() {
    let mut v: SoaVec<shadowed::Row> = SoaVec::new();
    for k in 0..n(20, 5) as u32 {
        v.push(shadowed::row(k));
    }
    let r = v.get(3).unwrap();
    assert_eq!((*r.a, r.b.as_str(), *r.c.x), (3, "3", 3));
    assert_eq!(v.slices().a.as_ptr().addr() % 32, 0);
    assert_eq!(v.slices().c.x.as_ptr().addr() % 32, 0);
    let back = r.to_value();
    assert_eq!((back.a, back.c.x), (3, 3));
}

// ---------------------------------------------------------------------------------------------
// `to_value` with a clone that panics part-way.

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled, plain)]
struct Three {
    a: D,
    #[soa(nested)]
    mid: Two,
    z: D,
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled, plain)]
struct Two {
    b: D,
    c: D,
}

#[test]
fn to_value_drops_the_fields_it_cloned_when_a_later_clone_panics() {
    let (from, _serial) = mark();
    {
        let mut v: SoaVec<Three> = SoaVec::new();
        for _ in 0..3 {
            v.push(Three {
                a: D::new(),
                mid: Two {
                    b: D::new(),
                    c: D::new(),
                },
                z: D::new(),
            });
        }
        // Four clones per row: panic at each in turn, from a shared and a mutable view.
        for at in 0..4 {
            PANIC_CLONE_AFTER.with(|c| c.set(at));
            let r = catch_unwind(AssertUnwindSafe(|| v.get(1).unwrap().to_value()));
            assert!(r.is_err(), "clone {at} should panic");
            PANIC_CLONE_AFTER.with(|c| c.set(at));
            let r = catch_unwind(AssertUnwindSafe(|| v.get_mut(2).unwrap().to_value()));
            assert!(r.is_err(), "clone {at} should panic");
        }
        PANIC_CLONE_AFTER.with(|c| c.set(usize::MAX));
        let whole = v.get(0).unwrap().to_value();
        assert_ne!(whole.a.id, v.get(0).unwrap().a.id);
        // The stored rows are untouched and still owned once.
        assert_eq!(v.len(), 3);
        assert!(v.iter().all(|r| is_live(r.a.id) && is_live(r.mid.c.id)));
    }
    assert_clean_since(from, "to_value with panicking clones");
}

// ---------------------------------------------------------------------------------------------
// A hand-written `Soa` impl with the largest power-of-two `ALIGN`.

/// `ALIGN = 2^63`: every layout with a row in it overflows; the empty container must still hand
/// out aligned empty slices, and growing must be an error, not a misplaced column.
struct Huge(u32);

impl arena_kit_core::soa::Soa for Huge {
    type Columns = (Col<u32>, ());
    type Ref<'a> = &'a u32;
    type Mut<'a> = &'a mut u32;
    type Slices<'a> = &'a [u32];
    type SlicesMut<'a> = &'a mut [u32];
    const ALIGN: usize = 1 << (usize::BITS - 1);
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> (u32, ()) {
        (self.0, ())
    }
    fn from_columns((a, ()): (u32, ()), _: arena_kit_core::soa::RowConversion<Self>) -> Self {
        Huge(a)
    }
    fn view<'a>((a, ()): (&'a u32, ())) -> &'a u32
    where
        Self: 'a,
    {
        a
    }
    fn view_mut<'a>((a, ()): (&'a mut u32, ())) -> &'a mut u32
    where
        Self: 'a,
    {
        a
    }
    fn view_slices<'a>((a, ()): (&'a [u32], ())) -> &'a [u32]
    where
        Self: 'a,
    {
        a
    }
    fn view_slices_mut<'a>((a, ()): (&'a mut [u32], ())) -> &'a mut [u32]
    where
        Self: 'a,
    {
        a
    }
}

/// The same `ALIGN` on a zero-sized row: every capacity fits.
struct HugeZst;

impl arena_kit_core::soa::Soa for HugeZst {
    type Columns = (Col<()>, ());
    type Ref<'a> = &'a ();
    type Mut<'a> = &'a mut ();
    type Slices<'a> = &'a [()];
    type SlicesMut<'a> = &'a mut [()];
    const ALIGN: usize = 1 << (usize::BITS - 1);
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> ((), ()) {
        ((), ())
    }
    fn from_columns(_: ((), ()), _: arena_kit_core::soa::RowConversion<Self>) -> Self {
        HugeZst
    }
    fn view<'a>((a, ()): (&'a (), ())) -> &'a ()
    where
        Self: 'a,
    {
        a
    }
    fn view_mut<'a>((a, ()): (&'a mut (), ())) -> &'a mut ()
    where
        Self: 'a,
    {
        a
    }
    fn view_slices<'a>((a, ()): (&'a [()], ())) -> &'a [()]
    where
        Self: 'a,
    {
        a
    }
    fn view_slices_mut<'a>((a, ()): (&'a mut [()], ())) -> &'a mut [()]
    where
        Self: 'a,
    {
        a
    }
}

#[test]
fn hand_written_align_of_two_to_the_63_is_an_error_not_a_misplaced_column() {
    let mut v: SoaVec<Huge> = SoaVec::new();
    assert!(v.slices().is_empty());
    assert!(v.slices_mut().is_empty());
    assert_eq!(v.iter().count(), 0);
    assert!(matches!(
        v.try_reserve(1),
        Err(SoaAllocError::CapacityOverflow { .. })
    ));
    assert!(catch_unwind(AssertUnwindSafe(|| v.push(Huge(1)))).is_err());
    assert!(v.is_empty());

    let mut z: SoaVec<HugeZst> = SoaVec::new();
    for _ in 0..5 {
        z.push(HugeZst);
    }
    assert_eq!(z.slices().len(), 5);
    assert_eq!(z.slices().as_ptr().addr() % (1 << (usize::BITS - 1)), 0);
    assert!(z.pop().is_some());
    assert_eq!(z.len(), 4);
}

// ---------------------------------------------------------------------------------------------
// Parallel iteration (feature `rayon`).
//
// Under Miri: rayon's worker threads outlive the test (`-Zmiri-ignore-leaks`), crossbeam-epoch
// (under rayon's deques) casts integers to pointers (no `-Zmiri-strict-provenance`) and breaks
// Stacked Borrows' rules itself, so the tests that run a pool need `-Zmiri-tree-borrows`; the
// producer test runs no pool and passes both models.

#[cfg(feature = "rayon")]
mod par {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rayon::iter::plumbing::{Producer, ProducerCallback};
    use rayon::prelude::*;

    use super::{D, Line, Page, SoaVec, assert_clean_since, is_live, mark, n};
    use arena_kit_core::arena::Arena;
    use arena_kit_derive::Soa;

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
    }

    #[derive(Debug, Clone, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    struct Row {
        i: u32,
        s: String,
        d: D,
    }

    fn rows(len: usize) -> SoaVec<Row> {
        (0..len as u32)
            .map(|i| Row {
                i,
                s: i.to_string(),
                d: D::new(),
            })
            .collect()
    }

    #[derive(Debug, Clone, Copy, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    struct Zero {
        a: (),
        b: [Page; 0],
    }

    #[derive(Debug, Clone, PartialEq, Soa)]
    #[soa(crate = arena_kit_core, align = 256)]
    struct Wide {
        tag: u8,
        p: Page,
        l: Line,
    }

    /// Splits the producer at one index and runs both halves, the left after taking every item
    /// of the right (so both halves' views are alive at once).
    struct SplitAt(usize);

    impl<T> ProducerCallback<T> for SplitAt {
        type Output = (Vec<T>, Vec<T>);
        fn callback<P: Producer<Item = T>>(self, producer: P) -> Self::Output {
            let (left, right) = producer.split_at(self.0);
            let r: Vec<T> = right.into_iter().collect();
            let l: Vec<T> = left.into_iter().collect();
            (l, r)
        }
    }

    /// Splitting at every index of every length, down to producers of length 0 and 1: every row
    /// is produced once, in order, by the shared and the exclusive iterator.
    #[test]
    fn producers_split_at_every_index_yield_each_row_once() {
        let (from, _serial) = mark();
        {
            for len in 0..n(12, 5) {
                let mut v = rows(len);
                for mid in 0..=len {
                    let (l, r) = v.par_iter().with_producer(SplitAt(mid));
                    assert_eq!((l.len(), r.len()), (mid, len - mid));
                    let got: Vec<u32> = l.iter().chain(&r).map(|x| *x.i).collect();
                    assert_eq!(got, (0..len as u32).collect::<Vec<_>>());

                    let (mut l, mut r) = v.par_iter_mut().with_producer(SplitAt(mid));
                    // Both halves' exclusive views are alive here: write through every one.
                    for x in r.iter_mut().chain(l.iter_mut()) {
                        *x.i += 1000;
                        x.s.push('!');
                    }
                    drop((l, r));
                    for x in v.iter_mut() {
                        *x.i -= 1000;
                    }
                    // Split a split again: a length-0 or length-1 piece at both ends.
                    let (a, b) = v.split_at_mut(mid);
                    let (aa, ab) = a.into_par_iter_mut().with_producer(SplitAt(0));
                    assert!(aa.is_empty());
                    assert_eq!(ab.len(), mid);
                    let (ba, bb) = b.into_par_iter_mut().with_producer(SplitAt(len - mid));
                    assert!(bb.is_empty());
                    assert_eq!(ba.len(), len - mid);
                }
                for (k, x) in v.iter().enumerate() {
                    assert_eq!(*x.i as usize, k);
                    assert_eq!(x.s.len(), k.to_string().len() + len + 1);
                }
            }
        }
        assert_clean_since(from, "split at every index");
    }

    /// Many threads write through `Mut` views, one task per row (`with_max_len(1)`): each row is
    /// reached exactly once (a second reach would be a data race Miri reports).
    #[test]
    fn par_iter_mut_reaches_each_row_once_from_many_threads() {
        let (from, _serial) = mark();
        let pool = pool();
        {
            let len = n(2000, 24);
            let mut v = rows(len);
            let reached: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
            pool.install(|| {
                v.par_iter_mut().with_max_len(1).for_each(|r| {
                    reached[*r.i as usize].fetch_add(1, Ordering::Relaxed);
                    *r.i = r.i.wrapping_mul(3);
                    r.s.push_str("-x");
                    *r.d = D::new();
                });
                let sum: u64 = v.par_iter().with_max_len(1).map(|r| u64::from(*r.i)).sum();
                assert_eq!(sum, 3 * (len as u64) * (len as u64 - 1) / 2);
            });
            assert!(reached.iter().all(|c| c.load(Ordering::Relaxed) == 1));
            for (k, r) in v.iter().enumerate() {
                assert_eq!(*r.i as usize, 3 * k);
                assert_eq!(*r.s, format!("{k}-x"));
                assert!(is_live(r.d.id));
            }
            // Disjoint halves iterated at the same time on two threads.
            let (a, b) = v.split_at_mut(len / 2);
            pool.join(
                || a.into_par_iter_mut().for_each(|r| *r.i += 1),
                || b.into_par_iter_mut().for_each(|r| *r.i += 2),
            );
            assert!(
                v.iter()
                    .enumerate()
                    .all(|(k, r)| *r.i as usize == 3 * k + if k < len / 2 { 1 } else { 2 })
            );
        }
        assert_clean_since(from, "par_iter_mut from many threads");
    }

    /// A closure that panics part-way: the vector keeps every row, each value still owned once.
    #[test]
    fn a_panic_in_the_parallel_closure_leaves_every_row_owned_once() {
        let (from, _serial) = mark();
        let pool = pool();
        {
            let len = n(500, 16);
            let mut v = rows(len);
            for at in [0, len / 2, len - 1] {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    pool.install(|| {
                        v.par_iter_mut().with_max_len(1).for_each(|r| {
                            if *r.i as usize == at {
                                panic!("closure panics at {at}");
                            }
                            // Replace (and so drop) a value in the rows that run.
                            *r.d = D::new();
                        })
                    })
                }));
                assert!(r.is_err());
                let r = catch_unwind(AssertUnwindSafe(|| {
                    pool.install(|| {
                        v.par_iter().for_each(|r| {
                            if *r.i as usize == at {
                                panic!("shared closure panics at {at}");
                            }
                        })
                    })
                }));
                assert!(r.is_err());
                assert_eq!(v.len(), len);
                for (k, r) in v.iter().enumerate() {
                    assert_eq!(*r.i as usize, k);
                    assert!(is_live(r.d.id));
                }
            }
            let popped = v.pop().unwrap();
            assert_eq!(popped.i as usize, len - 1);
        }
        assert_clean_since(from, "panic in the parallel closure");
    }

    /// Zero-sized rows (every column a ZST, one over-aligned): every index is still one item.
    #[test]
    fn zero_sized_rows_are_each_one_parallel_item() {
        let pool = pool();
        let len = n(10_000, 40);
        let mut v: SoaVec<Zero> = SoaVec::new();
        for _ in 0..len {
            v.push(Zero { a: (), b: [] });
        }
        pool.install(|| {
            assert_eq!(v.par_iter().count(), len);
            assert_eq!(v.par_iter().with_max_len(1).count(), len);
            let seen = AtomicUsize::new(0);
            v.par_iter_mut().with_max_len(1).for_each(|r| {
                assert_eq!((r.b as *const [Page; 0]).addr() % 4096, 0);
                seen.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(seen.into_inner(), len);
        });
        let (l, r) = v.par_iter().with_producer(SplitAt(len / 3));
        assert_eq!(l.len() + r.len(), len);
    }

    /// Over-aligned columns (a 256-byte `ALIGN`, a 4096-aligned field): every view handed to a
    /// worker points at an aligned, initialised value.
    #[test]
    fn over_aligned_columns_are_aligned_in_every_task() {
        let pool = pool();
        let len = n(300, 10);
        let mut v: SoaVec<Wide> = (0..len)
            .map(|k| Wide {
                tag: k as u8,
                p: Page(k as u8),
                l: Line(k as u32),
            })
            .collect();
        pool.install(|| {
            v.par_iter().with_max_len(1).for_each(|r| {
                assert_eq!((r.p as *const Page).addr() % 4096, 0);
                assert_eq!((r.l as *const Line).addr() % 64, 0);
                assert_eq!(r.p.0, *r.tag);
                assert_eq!(r.l.0 as u8, *r.tag);
            });
            v.par_iter_mut().for_each(|r| {
                r.p.0 = r.p.0.wrapping_add(1);
                r.l.0 += 1;
            });
        });
        let s = v.slices();
        assert_eq!(s.tag.as_ptr().addr() % 256, 0);
        assert!(
            s.p.iter()
                .enumerate()
                .all(|(k, p)| p.0 == (k as u8).wrapping_add(1))
        );
        assert!(s.l.iter().enumerate().all(|(k, l)| l.0 == k as u32 + 1));
    }

    /// Empty inputs: a new vector, an empty range of a full one, and an arena's empty SoA slice.
    #[test]
    fn empty_sources_produce_nothing() {
        let (from, _serial) = mark();
        {
            let mut v: SoaVec<Row> = SoaVec::new();
            assert_eq!(v.par_iter().count(), 0);
            assert_eq!(v.par_iter_mut().count(), 0);
            let mut full = rows(4);
            assert_eq!(full.slice(2..2).par_iter().count(), 0);
            assert_eq!(full.slice_mut(4..).into_par_iter_mut().count(), 0);
            let (l, r) = full
                .slice(..0)
                .par_iter()
                .with_producer(super::par::SplitAt(0));
            assert!(l.is_empty() && r.is_empty());
            let arena = Arena::new();
            let mut empty = arena.alloc_soa(0, |_| -> Wide { unreachable!() });
            assert_eq!(empty.reborrow().into_par_iter_mut().count(), 0);
            assert_eq!(empty.as_soa_slice().par_iter().count(), 0);
        }
        assert_clean_since(from, "empty sources");
    }

    /// Rows that borrow (a non-`'static` row type): the parallel iterators take them too, and the
    /// views they hand out borrow only what the rows do.
    #[derive(Debug, Soa)]
    #[soa(crate = arena_kit_core)]
    struct Named<'n> {
        name: &'n str,
        score: u32,
    }

    #[test]
    fn rows_that_borrow_iterate_in_parallel() {
        let pool = pool();
        let text = String::from("abcdef");
        let mut v: SoaVec<Named<'_>> = (0..6)
            .map(|k| Named {
                name: &text[k..],
                score: k as u32,
            })
            .collect();
        // Through the slices: `SoaVec::par_iter`/`par_iter_mut` bound `for<'x> T::Ref<'x>: Send`,
        // which holds only for `T: 'static` (tests/ui/rayon/pass/ has that case).
        pool.install(|| {
            v.as_soa_slice_mut()
                .into_par_iter_mut()
                .for_each(|r| *r.score += r.name.len() as u32);
            let total: u32 = v.as_soa_slice().par_iter().map(|r| *r.score).sum();
            assert_eq!(total, 6 * 6);
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Plain rows: what the containers may build field by field.

#[test]
fn rows_are_plain_when_every_field_is_pub_or_the_struct_says_so() {
    fn plain<T: arena_kit_core::soa::PlainRow>() {}

    #[derive(Debug, Clone, PartialEq, Soa)]
    #[soa(crate = arena_kit_core)]
    pub struct Open {
        pub id: u32,
        pub name: String,
    }

    #[derive(Debug, Clone, PartialEq, Soa)]
    #[soa(crate = arena_kit_core, plain)]
    struct Said {
        id: u32,
        #[soa(nested)]
        open: Open,
    }

    plain::<Open>();
    plain::<Said>();
    let row = Said {
        id: 1,
        open: Open {
            id: 2,
            name: "two".into(),
        },
    };
    let v: SoaVec<Said> = [row.clone()].into();
    let copy = v.clone();
    assert_eq!(copy.into_vec(), std::slice::from_ref(&row));
    assert_eq!(v.get(0).unwrap().to_value(), row);
}
