//! A harness for panic-safety tests: every piece of user code an operation runs (`Clone`, `Drop`,
//! `Soa` conversions, closures, iterators) calls [`tick`], and [`at_every_call`] reruns the
//! operation once per call, panicking at exactly that call, then checks that the container is
//! still consistent and that every value is dropped exactly once.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::soa::{Col, Columns, Nested, Soa};

use crate::support::panics::planned_panic;

thread_local! {
    static CALLS: Cell<usize> = const { Cell::new(0) };
    static FUSE: Cell<usize> = const { Cell::new(usize::MAX) };
    /// How often each value made since the last [`reset`] was dropped, by id.
    static DROPS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// One call of user code: panics if it is the armed one (once; the fuse then disarms).
pub fn tick() {
    let n = CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    if FUSE.with(|f| f.get()) == n {
        FUSE.with(|f| f.set(usize::MAX));
        planned_panic(format!("planned panic at user call {n}"));
    }
}

fn calls() -> usize {
    CALLS.with(Cell::get)
}

/// A value that records its drop under its id and owns a heap block (so a double drop is also a
/// double free Miri reports). Its `Clone` and `Drop` are user calls.
#[derive(Debug)]
pub struct Tracked {
    id: usize,
    payload: Box<usize>,
}

impl Tracked {
    pub fn new() -> Self {
        let id = DROPS.with(|d| {
            let mut d = d.borrow_mut();
            d.push(0);
            d.len() - 1
        });
        Tracked {
            id,
            payload: Box::new(id),
        }
    }

    pub fn id(&self) -> usize {
        assert_eq!(*self.payload, self.id, "a moved-from or corrupted value");
        self.id
    }

    /// Panics if this value was dropped already (a use after drop).
    pub fn assert_live(&self) {
        let drops = DROPS.with(|d| d.borrow()[self.id()]);
        assert_eq!(
            drops, 0,
            "value {} is reachable after being dropped",
            self.id
        );
    }
}

impl Default for Tracked {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for Tracked {
    fn clone(&self) -> Self {
        tick();
        Tracked::new()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPS.with(|d| d.borrow_mut()[self.id] += 1);
        tick();
    }
}

/// Forgets every value made so far (call before building a fixture).
pub fn reset() {
    DROPS.with(|d| d.borrow_mut().clear());
}

/// Every value made since [`reset`] was dropped exactly once.
#[track_caller]
pub fn assert_each_dropped_once(context: &str) {
    DROPS.with(|d| {
        for (id, &n) in d.borrow().iter().enumerate() {
            assert_eq!(n, 1, "{context}: value {id} was dropped {n} times");
        }
    });
}

/// Runs `op` on a fresh `setup()` once to count its user calls `n`, then once for every
/// `k in 1..=n` with a panic at call `k`. After each run `check` sees the container (it must be
/// consistent: lengths, iteration, handles), then it is dropped and every value must have been
/// dropped exactly once. Returns `n`.
#[track_caller]
pub fn at_every_call<S>(
    name: &str,
    setup: impl Fn() -> S,
    op: impl Fn(&mut S),
    check: impl Fn(&S),
) -> usize {
    reset();
    let mut s = setup();
    let before = calls();
    op(&mut s);
    let n = calls() - before;
    check(&s);
    drop(s);
    assert_each_dropped_once(&format!("{name} without a panic"));
    for k in 1..=n {
        reset();
        let mut s = setup();
        FUSE.with(|f| f.set(calls() + k));
        let r = catch_unwind(AssertUnwindSafe(|| op(&mut s)));
        FUSE.with(|f| f.set(usize::MAX));
        assert!(r.is_err(), "{name}: user call {k} of {n} did not panic");
        let context = format!("{name}, panic at user call {k} of {n}");
        let checked = catch_unwind(AssertUnwindSafe(|| check(&s)));
        assert!(checked.is_ok(), "{context}: inconsistent afterwards");
        drop(s);
        assert_each_dropped_once(&context);
    }
    n
}

/// The inner row of [`Row`]: `Inner { b: Tracked, n: u16 }`, stored as two columns inside
/// `Row`'s. Its conversions are user calls.
#[derive(Debug, Clone)]
pub struct Inner {
    pub b: Tracked,
    pub n: u16,
}

type InnerCols = (Col<Tracked>, (Col<u16>, ()));

// SAFETY: a test row: every field value is a valid row, and its clone is its fields' clones.
unsafe impl arena_kit_core::soa::PlainRow for Inner {}

impl Soa for Inner {
    type Columns = InnerCols;
    type Ref<'a> = (&'a Tracked, &'a u16);
    type Mut<'a> = (&'a mut Tracked, &'a mut u16);
    type Slices<'a> = (&'a [Tracked], &'a [u16]);
    type SlicesMut<'a> = (&'a mut [Tracked], &'a mut [u16]);
    fn into_columns(self, _: arena_kit_core::soa::RowConversion<Self>) -> (Tracked, (u16, ())) {
        tick();
        (self.b, (self.n, ()))
    }
    fn from_columns(
        (b, (n, ())): (Tracked, (u16, ())),
        _: arena_kit_core::soa::RowConversion<Self>,
    ) -> Self {
        tick();
        Inner { b, n }
    }
    fn view<'a>((b, (n, ())): <InnerCols as Columns>::Ref<'a>) -> Self::Ref<'a> {
        (b, n)
    }
    fn view_mut<'a>((b, (n, ())): <InnerCols as Columns>::Mut<'a>) -> Self::Mut<'a> {
        (b, n)
    }
    fn view_slices<'a>((b, (n, ())): <InnerCols as Columns>::Slices<'a>) -> Self::Slices<'a> {
        (b, n)
    }
    fn view_slices_mut<'a>(
        (b, (n, ())): <InnerCols as Columns>::SlicesMut<'a>,
    ) -> Self::SlicesMut<'a> {
        (b, n)
    }
}

/// A row with a dropping column, a nested `Soa` field and a plain one:
/// `Row { a: Tracked, inner: Inner, key: u32 }`. Its conversions are user calls. `Clone`, so
/// its containers can be cloned (they clone it field by field, through `Tracked`'s `clone`).
#[derive(Debug, Clone)]
pub struct Row {
    pub a: Tracked,
    pub inner: Inner,
    pub key: u32,
}

impl Row {
    pub fn new(key: u32) -> Self {
        Row {
            a: Tracked::new(),
            inner: Inner {
                b: Tracked::new(),
                n: key as u16,
            },
            key,
        }
    }
}

type RowCols = (Col<Tracked>, (Nested<Inner>, (Col<u32>, ())));

/// `(a, (b, n), key)` of one row.
pub type RowRef<'a> = (&'a Tracked, (&'a Tracked, &'a u16), &'a u32);

// SAFETY: a test row: every field value is a valid row, and its clone is its fields' clones.
unsafe impl arena_kit_core::soa::PlainRow for Row {}

impl Soa for Row {
    type Columns = RowCols;
    type Ref<'a> = RowRef<'a>;
    type Mut<'a> = (&'a mut Tracked, (&'a mut Tracked, &'a mut u16), &'a mut u32);
    type Slices<'a> = (&'a [Tracked], (&'a [Tracked], &'a [u16]), &'a [u32]);
    type SlicesMut<'a> = (
        &'a mut [Tracked],
        (&'a mut [Tracked], &'a mut [u16]),
        &'a mut [u32],
    );
    fn into_columns(
        self,
        _: arena_kit_core::soa::RowConversion<Self>,
    ) -> (Tracked, (Inner, (u32, ()))) {
        tick();
        (self.a, (self.inner, (self.key, ())))
    }
    fn from_columns(
        (a, (inner, (key, ()))): (Tracked, (Inner, (u32, ()))),
        _: arena_kit_core::soa::RowConversion<Self>,
    ) -> Self {
        tick();
        Row { a, inner, key }
    }
    fn view<'a>((a, (inner, (key, ()))): <RowCols as Columns>::Ref<'a>) -> Self::Ref<'a> {
        (a, inner, key)
    }
    fn view_mut<'a>((a, (inner, (key, ()))): <RowCols as Columns>::Mut<'a>) -> Self::Mut<'a> {
        (a, inner, key)
    }
    fn view_slices<'a>(
        (a, (inner, (key, ()))): <RowCols as Columns>::Slices<'a>,
    ) -> Self::Slices<'a> {
        (a, inner, key)
    }
    fn view_slices_mut<'a>(
        (a, (inner, (key, ()))): <RowCols as Columns>::SlicesMut<'a>,
    ) -> Self::SlicesMut<'a> {
        (a, inner, key)
    }
}

/// Checks one row view: both values live and intact, the nested `n` matching the key.
#[track_caller]
pub fn check_row((a, (b, n), key): RowRef<'_>) -> u32 {
    a.assert_live();
    b.assert_live();
    assert_ne!(a.id(), b.id());
    assert_eq!(
        *n, *key as u16,
        "the nested column is out of step with the row"
    );
    *key
}
