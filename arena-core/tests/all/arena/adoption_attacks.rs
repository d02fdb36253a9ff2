//! The drop list under the paths the tail fuzz does not take: vectors handed to the arena
//! (`ArenaVec::into_slice`, in place or moved), slices built by closures, clones and iterators
//! that panic part way, fallible constructors that fail, zero-sized values with destructors
//! between them, and markers, scopes and resets in chained arenas with pages small enough that
//! records, runs and tails cross page boundaries. A model says which values are pending, in
//! which order they were reserved; every rewind must drop exactly the values after its marker,
//! newest first, and give back exactly the marker's `used` and `allocation_count`.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::Marker;
use std::mem::MaybeUninit;

use arena_kit_core::arena::{Arena, BufferArena, MarkerError, Scope};
use arena_kit_core::collections::ArenaVec;

use super::drop_ledger::{LIVE, born, check_no_errors, died, take_log, ty};
use crate::support::Rng;
use crate::support::panics::planned_panic;

/// The id every zero-sized value is logged under (untracked: they cannot tell themselves apart).
const ZMARK: u32 = u32::MAX - 1;

ty!(W8; );
ty!(W24; p: u64, q: u64);
ty!(W64, repr(align(64)); );

/// Zero-sized with drop glue.
struct Zd;
impl Drop for Zd {
    fn drop(&mut self) {
        died(ZMARK, self as *mut Self as usize, 1, true);
    }
}

/// A value whose `clone` may panic: the template (`id == 0`) is not in the ledger; every clone
/// is, under a fresh id.
struct Cl {
    id: u32,
}
thread_local! {
    static NEXT_CLONE: Cell<u32> = const { Cell::new(500_000) };
    static CLONE_PANICS_AT: Cell<u32> = const { Cell::new(u32::MAX) };
    /// Clones made by the current `alloc_slice_clone`, in order.
    static CLONES: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}
impl Clone for Cl {
    fn clone(&self) -> Self {
        let n = CLONES.with(|c| c.borrow().len() as u32);
        if n == CLONE_PANICS_AT.with(Cell::get) {
            planned_panic("constructor panics");
        }
        let id = NEXT_CLONE.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        born(id);
        CLONES.with(|c| c.borrow_mut().push(id));
        Cl { id }
    }
}
impl Drop for Cl {
    fn drop(&mut self) {
        if self.id != 0 {
            died(
                self.id,
                self as *mut Self as usize,
                align_of::<Self>(),
                true,
            );
        }
    }
}

/// Pending values in reservation order, with the id each logs when dropped.
#[derive(Default)]
struct Model {
    next_id: u32,
    live: Vec<u32>,
}

impl Model {
    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }
    /// Drops the values from index `keep` on: the ids they log, newest first.
    fn drop_from(&mut self, keep: usize) -> Vec<u32> {
        let mut gone: Vec<u32> = self.live.drain(keep..).collect();
        gone.reverse();
        gone
    }
}

/// One allocation of a random kind through `arena` (an arena or a scope), recorded in `m`.
/// Nothing here takes a marker, so no position reached before the call is given back.
#[allow(clippy::too_many_lines)]
fn allocate(arena: &Arena, m: &RefCell<Model>, rng: &mut Rng, case: u64, step: usize) {
    let kind = rng.below(12);
    // what a failed builder that allocated nothing else must leave behind: its block given
    // back and uncounted, so at most the padding that aligned it stays used (in a page taken
    // for it, the padding from the page's start)
    let before = (arena.used(), arena.allocation_count());
    let unchanged = |what: &str, align: usize| {
        // (a drop record, 8-aligned, comes first)
        let align = align.max(8);
        let (used, allocs) = (arena.used(), arena.allocation_count());
        assert!(
            allocs == before.1 && used >= before.0 && used - before.0 < align,
            "case {case} step {step}: {what} left {used} bytes used (was {}) and {allocs} live \
             allocations (was {})",
            before.0,
            before.1
        );
    };
    match kind {
        0 => {
            let id = m.borrow_mut().id();
            let v = arena.alloc(W8::new(id));
            assert_eq!(v.id, id);
            m.borrow_mut().live.push(id);
        }
        1 => {
            let id = m.borrow_mut().id();
            let v = arena.alloc_with(|| W64::new(id));
            assert_eq!((v as *mut W64 as usize) % 64, 0);
            m.borrow_mut().live.push(id);
        }
        2 => {
            arena.alloc(Zd);
            m.borrow_mut().live.push(ZMARK);
        }
        3 => {
            // a constructor that allocates a value of another type, then panics
            let r = catch_unwind(AssertUnwindSafe(|| {
                arena.alloc_with(|| {
                    let id = m.borrow_mut().id();
                    arena.alloc(W8::new(id));
                    m.borrow_mut().live.push(id);
                    if true {
                        planned_panic("constructor panics");
                    }
                    W24::new(0)
                })
            }));
            assert!(r.is_err());
        }
        4 => {
            // a slice whose closure panics at element `k` (or never, for `k == n`), after
            // dropping-type allocations of its own in between
            let n = 1 + rng.below(3);
            let k = rng.below(n + 2).min(n);
            let inner = rng.below(3) == 0;
            let built = RefCell::new(Vec::new());
            let r = catch_unwind(AssertUnwindSafe(|| {
                arena
                    .alloc_slice_fill_with(n, |i| {
                        if inner {
                            arena.alloc(Zd);
                            m.borrow_mut().live.push(ZMARK);
                        }
                        if i == k {
                            planned_panic("constructor panics");
                        }
                        let id = m.borrow_mut().id();
                        built.borrow_mut().push(id);
                        W24::new(id)
                    })
                    .len()
            }));
            let built = built.into_inner();
            if k < n {
                assert!(r.is_err());
                // the elements built are dropped at once, front to back
                let got = take_log();
                assert_eq!(
                    got, built,
                    "case {case} step {step}: a panicking slice closure"
                );
                if !inner {
                    unchanged("a panicking slice closure", align_of::<W24>());
                }
            } else {
                assert_eq!(r.unwrap(), n);
                // the slice was reserved before the values its closure allocated, but they are
                // recorded after it: they lie after the slice's record
                let mut m = m.borrow_mut();
                let at = m.live.len() - if inner { n } else { 0 };
                for (j, id) in built.into_iter().enumerate() {
                    m.live.insert(at + j, id);
                }
            }
        }
        5 => {
            // a fallible constructor that fails after allocating
            let r: Result<&mut W64, u8> = arena.alloc_try_with(|| {
                let id = m.borrow_mut().id();
                arena.alloc(W8::new(id));
                m.borrow_mut().live.push(id);
                Err(7)
            });
            assert_eq!(r.err(), Some(7));
        }
        6 => {
            // clones, one of which may panic
            let n = 1 + rng.below(3);
            let at = rng.below(n + 2) as u32;
            let src: Vec<Cl> = (0..n).map(|_| Cl { id: 0 }).collect();
            CLONES.with(|c| c.borrow_mut().clear());
            CLONE_PANICS_AT.with(|c| c.set(at));
            let r = catch_unwind(AssertUnwindSafe(|| arena.alloc_slice_clone(&src).len()));
            CLONE_PANICS_AT.with(|c| c.set(u32::MAX));
            let clones = CLONES.with(|c| std::mem::take(&mut *c.borrow_mut()));
            if (at as usize) < n {
                assert!(r.is_err());
                assert_eq!(
                    take_log(),
                    clones,
                    "case {case} step {step}: a panicking clone"
                );
                unchanged("a panicking clone", align_of::<Cl>());
            } else {
                assert_eq!(r.unwrap(), n);
                m.borrow_mut().live.extend(clones);
            }
        }
        7 | 8 => {
            // a vector handed to the arena: in place, or moved past a value allocated while it
            // grew; sometimes dropped instead
            let n = 1 + rng.below(4);
            let between = kind == 8;
            let mut v = ArenaVec::new_in(arena);
            let mut ids = Vec::new();
            for i in 0..n {
                let id = m.borrow_mut().id();
                v.push(W8::new(id));
                ids.push(id);
                if between && i == 0 {
                    let id = m.borrow_mut().id();
                    arena.alloc(W24::new(id));
                    m.borrow_mut().live.push(id);
                }
            }
            match rng.below(4) {
                0 => {
                    drop(v);
                    assert_eq!(take_log(), ids, "case {case} step {step}: a dropped vector");
                }
                1 => {
                    v.truncate(n - 1);
                    let cut = ids.pop().unwrap();
                    assert_eq!(take_log(), [cut]);
                    if n == 1 {
                        drop(v);
                    } else {
                        let s = v.into_slice();
                        assert_eq!(s.iter().map(|w| w.id).collect::<Vec<_>>(), ids);
                        m.borrow_mut().live.extend(ids);
                    }
                }
                _ => {
                    let s = v.into_slice();
                    assert_eq!(s.iter().map(|w| w.id).collect::<Vec<_>>(), ids);
                    m.borrow_mut().live.extend(ids);
                }
            }
        }
        9 => {
            // an iterator that panics part way
            let n = 1 + rng.below(3);
            let k = rng.below(n + 1);
            let built = RefCell::new(Vec::new());
            let r = catch_unwind(AssertUnwindSafe(|| {
                arena
                    .alloc_slice_fill_iter((0..n).map(|i| {
                        if i == k {
                            planned_panic("constructor panics");
                        }
                        let id = m.borrow_mut().id();
                        built.borrow_mut().push(id);
                        W64::new(id)
                    }))
                    .len()
            }));
            let built = built.into_inner();
            if k < n {
                assert!(r.is_err());
                assert_eq!(
                    take_log(),
                    built,
                    "case {case} step {step}: a panicking iterator"
                );
                unchanged("a panicking iterator", align_of::<W64>());
            } else {
                assert_eq!(r.unwrap(), n);
                m.borrow_mut().live.extend(built);
            }
        }
        10 => {
            // fallible constructors of zero-sized and over-aligned values that fail at once
            let r: Result<&mut Zd, u8> = arena.alloc_try_with(|| Err(1));
            assert_eq!(r.err(), Some(1));
            unchanged("a failed zero-sized constructor", align_of::<Zd>());
            let first = m.borrow_mut().id();
            let ids = [first, m.borrow_mut().id()];
            let r: Result<&mut [W64], u8> =
                arena.alloc_slice_try_fill_with(3, |i| match ids.get(i) {
                    Some(&id) => Ok(W64::new(id)),
                    None => Err(2),
                });
            assert_eq!(r.err(), Some(2));
            unchanged("a failed over-aligned slice", align_of::<W64>());
            // the two values built before the failure are dropped, front to back
            assert_eq!(take_log(), ids);
        }
        _ => {
            arena.alloc(rng.next() as u8);
        }
    }
}

/// The arenas the model runs on: an [`Arena`] and a [`BufferArena`] over memory the test owns,
/// whose `&mut` operations are its own.
trait Host {
    fn arena(&self) -> &Arena;
    fn rewind_to(&mut self, marker: Marker) -> Result<(), MarkerError>;
    fn open_scope(&mut self) -> Scope<'_>;
    fn reset_all(&mut self);
}

impl Host for Arena {
    fn arena(&self) -> &Arena {
        self
    }
    fn rewind_to(&mut self, marker: Marker) -> Result<(), MarkerError> {
        self.rewind(marker)
    }
    fn open_scope(&mut self) -> Scope<'_> {
        self.scope()
    }
    fn reset_all(&mut self) {
        self.reset();
    }
}

impl Host for BufferArena<'_> {
    fn arena(&self) -> &Arena {
        self
    }
    fn rewind_to(&mut self, marker: Marker) -> Result<(), MarkerError> {
        self.rewind(marker)
    }
    fn open_scope(&mut self) -> Scope<'_> {
        self.scope()
    }
    fn reset_all(&mut self) {
        self.reset();
    }
}

fn run<H: Host>(case: u64, steps: usize, mut arena: H) {
    let m = RefCell::new(Model::default());
    let mut rng = Rng(case.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // (marker, values pending when it was taken, allocation count then)
    let mut markers: Vec<(Marker, usize, usize)> = Vec::new();
    for step in 0..steps {
        match rng.below(20) {
            0..=12 => allocate(arena.arena(), &m, &mut rng, case, step),
            13 | 14 => markers.push((
                arena.arena().mark(),
                m.borrow().live.len(),
                arena.arena().allocation_count(),
            )),
            15 | 16 if !markers.is_empty() => {
                let i = rng.below(markers.len());
                let (mk, keep, allocs) = markers[i];
                markers.truncate(i + 1);
                arena.rewind_to(mk).unwrap();
                let exp = m.borrow_mut().drop_from(keep);
                assert_eq!(take_log(), exp, "case {case} step {step}: rewind");
                assert_eq!(
                    arena.arena().used(),
                    mk.used(),
                    "case {case} step {step}: used"
                );
                assert_eq!(
                    arena.arena().allocation_count(),
                    allocs,
                    "case {case} step {step}"
                );
            }
            17 | 18 => {
                let keep = m.borrow().live.len();
                let (used, allocs) = (arena.arena().used(), arena.arena().allocation_count());
                {
                    let mut scope = arena.open_scope();
                    for _ in 0..rng.below(4) {
                        allocate(&scope, &m, &mut rng, case, step);
                    }
                    if rng.below(2) == 0 {
                        scope.clear();
                        let exp = m.borrow_mut().drop_from(keep);
                        assert_eq!(take_log(), exp, "case {case} step {step}: scope clear");
                        for _ in 0..rng.below(3) {
                            allocate(&scope, &m, &mut rng, case, step);
                        }
                    }
                }
                let exp = m.borrow_mut().drop_from(keep);
                assert_eq!(take_log(), exp, "case {case} step {step}: scope end");
                assert_eq!(
                    (arena.arena().used(), arena.arena().allocation_count()),
                    (used, allocs)
                );
            }
            _ => {
                if rng.below(3) == 0 {
                    arena.reset_all();
                    markers.clear();
                    let exp = m.borrow_mut().drop_from(0);
                    assert_eq!(take_log(), exp, "case {case} step {step}: reset");
                    assert_eq!(
                        (arena.arena().used(), arena.arena().allocation_count()),
                        (0, 0)
                    );
                }
            }
        }
        let pending = m.borrow().live.len();
        assert_eq!(
            arena.arena().pending_drops() == 0,
            pending == 0,
            "case {case} step {step}: pending_drops"
        );
        check_no_errors();
    }
    drop(arena);
    let exp = m.borrow_mut().drop_from(0);
    assert_eq!(take_log(), exp, "case {case}: arena drop");
    check_no_errors();
    LIVE.with(|l| assert!(l.borrow().is_empty(), "never dropped: {:?}", l.borrow()));
}

#[test]
fn adopted_vectors_failing_slices_and_zero_sized_values_drop_in_reverse_order_across_pages() {
    let (cases, steps) = if cfg!(miri) { (3, 60) } else { (200, 400) };
    for case in 0..cases {
        for page in [192usize, 320, 1024] {
            run(case * 3 + page as u64, steps, Arena::chained(page));
        }
        let bytes = if cfg!(miri) { 1 << 15 } else { 1 << 20 };
        run(case, steps, Arena::with_capacity(bytes));
        // borrowed memory starting at an odd address: offsets are not alignments there
        let mut buffer = vec![MaybeUninit::<u8>::uninit(); bytes + 1];
        run(case, steps, Arena::from_buffer(&mut buffer[1..]));
    }
}

#[test]
fn a_failed_slice_builder_whose_built_values_panic_when_dropped_drops_each_once_and_leaves_a_usable_arena()
 {
    use super::drop_ledger::{check_clean, panic_on};
    for panicking in 0..3u32 {
        for arena in [Arena::with_capacity(4096), Arena::chained(256)] {
            let mut arena = arena;
            arena.alloc(W8::new(100));
            let (used, allocs) = (arena.used(), arena.allocation_count());
            // values 1 and 2 are built, the third fails; one of them (or none) panics when the
            // builder drops them
            panic_on(&[panicking]);
            let r = catch_unwind(AssertUnwindSafe(|| {
                arena
                    .alloc_slice_try_fill_with(3, |i| match i {
                        0 | 1 => Ok(W64::new(i as u32 + 1)),
                        _ => Err("the third fails"),
                    })
                    .map(|s| s.len())
            }));
            panic_on(&[]);
            let log = take_log();
            assert_eq!(log, [1, 2], "built values are dropped front to back, once");
            match panicking {
                1 | 2 => assert!(r.is_err(), "the destructor's panic comes out"),
                _ => assert_eq!(r.unwrap(), Err("the third fails")),
            }
            check_no_errors();
            // nothing is left to drop but the first value; the bytes may stay used, never
            // handed out twice
            assert!(arena.allocation_count() <= allocs + 1 && arena.used() >= used);
            let later = arena.alloc(W24::new(200));
            assert_eq!(later.id, 200);
            arena.reset();
            assert_eq!(take_log(), [200, 100]);
            assert_eq!(arena.pending_drops(), 0);
        }
    }
    check_clean();
}
