//! `SoaTiles<T, N>` and arena tiles attacked from safe code: a hand-written tiled row with a
//! nested field whose every conversion, `Clone` and `Drop` panics in turn (at a tile size that is
//! not a power of two), tile views held all at once, iterators leaked or consumed from both ends,
//! zero-sized rows at the largest `N`, a zero-sized field aligned past a page, tiles too large
//! for the address space, and arena tiles whose `init` allocates tiles in the same arena.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arena_kit_core::Arena;
use arena_kit_core::soa::{Col, SoaAllocError, SoaTiled, SoaTiles, TileColumns};
use arena_kit_derive::Soa;

use crate::panic_harness::{Inner, Row, Tracked, at_every_call, check_row, tick};
use crate::support::miri_or;

// --- the panic harness's rows, tiled by hand ---

type InnerCols = (Col<Tracked>, (Col<u16>, ()));

impl SoaTiled for Inner {
    type Tile<'a, const N: usize> = (&'a [Tracked; N], &'a [u16; N]);
    type TileMut<'a, const N: usize> = (&'a mut [Tracked; N], &'a mut [u16; N]);
    fn view_tile<'a, const N: usize>(
        (b, (n, ())): <InnerCols as TileColumns>::Tile<'a, N>,
    ) -> Self::Tile<'a, N> {
        (b, n)
    }
    fn view_tile_mut<'a, const N: usize>(
        (b, (n, ())): <InnerCols as TileColumns>::TileMut<'a, N>,
    ) -> Self::TileMut<'a, N> {
        (b, n)
    }
}

type RowCols = <Row as arena_kit_core::soa::Soa>::Columns;

/// `(a, (b, n), key)` lane arrays of one tile.
type RowTileMut<'a, const N: usize> = (
    &'a mut [Tracked; N],
    (&'a mut [Tracked; N], &'a mut [u16; N]),
    &'a mut [u32; N],
);

impl SoaTiled for Row {
    type Tile<'a, const N: usize> = (
        &'a [Tracked; N],
        (&'a [Tracked; N], &'a [u16; N]),
        &'a [u32; N],
    );
    type TileMut<'a, const N: usize> = RowTileMut<'a, N>;
    fn view_tile<'a, const N: usize>(
        (a, (inner, (key, ()))): <RowCols as TileColumns>::Tile<'a, N>,
    ) -> Self::Tile<'a, N> {
        (a, inner, key)
    }
    fn view_tile_mut<'a, const N: usize>(
        (a, (inner, (key, ()))): <RowCols as TileColumns>::TileMut<'a, N>,
    ) -> Self::TileMut<'a, N> {
        (a, inner, key)
    }
}

/// Three rows a tile: row-to-tile arithmetic by division, and every structural operation moves
/// rows across tile boundaries.
type Tiles3 = SoaTiles<Row, 3>;

/// More than one tile and a partial one: at least 4.
const ROWS: u32 = if cfg!(miri) { 4 } else { 8 };
const LAST: usize = ROWS as usize - 1;

fn setup() -> Tiles3 {
    (0..ROWS).map(Row::new).collect()
}

/// Every row reachable three ways (by index, by the row iterator, by the tiles and the tail),
/// each the same values, live and in step with its nested column.
fn check(t: &Tiles3) {
    let by_iter: Vec<u32> = t.iter().map(check_row).collect();
    assert_eq!(by_iter.len(), t.len());
    for (i, &key) in by_iter.iter().enumerate() {
        assert_eq!(check_row(t.get(i).unwrap()), key, "row {i}");
    }
    assert!(t.get(t.len()).is_none());
    let mut by_tiles = Vec::new();
    for (a, (b, n), key) in t.tiles() {
        for k in 0..3 {
            by_tiles.push(check_row((&a[k], (&b[k], &n[k]), &key[k])));
        }
    }
    let (a, (b, n), key) = t.tail();
    let tail = t.tail_len();
    assert_eq!(
        (a.len(), b.len(), n.len(), key.len()),
        (tail, tail, tail, tail)
    );
    for k in 0..a.len() {
        by_tiles.push(check_row((&a[k], (&b[k], &n[k]), &key[k])));
    }
    assert_eq!(by_tiles, by_iter, "tiles and tail against the rows");
    assert_eq!(t.full_tiles(), t.len() / 3);
    assert!(t.capacity() >= t.len() && t.capacity().is_multiple_of(3));
}

fn case(name: &str, op: impl Fn(&mut Tiles3)) {
    at_every_call(name, setup, op, check);
}

#[test]
fn tiles_of_a_nested_row_stay_whole_when_a_move_meets_a_panic_at_every_user_call() {
    case("push", |t| t.push(Row::new(99)));
    case("try_push", |t| t.try_push(Row::new(99)).unwrap());
    case("insert at the front", |t| t.insert(0, Row::new(99)));
    case("insert at a tile's start", |t| t.insert(3, Row::new(99)));
    case("try_insert", |t| t.try_insert(2, Row::new(99)).unwrap());
    case("remove", |t| drop(t.remove(1)));
    case("swap_remove", |t| drop(t.swap_remove(0)));
    case("pop", |t| drop(t.pop()));
    case("swap and replace a value", |t| {
        t.swap(0, LAST);
        let (a, _, _) = t.get_mut(LAST).unwrap();
        *a = Tracked::new(); // drops the old value: a user call
    });
}

#[test]
fn tiles_of_a_nested_row_stay_whole_when_a_drop_meets_a_panic_at_every_user_call() {
    case("truncate", |t| t.truncate(2));
    case("clear", |t| t.clear());
    case("retain", |t| {
        t.retain(|(_, _, key)| {
            tick();
            key % 2 == 0
        })
    });
    case("retain_mut", |t| {
        t.retain_mut(|(a, _, key)| {
            *a = Tracked::new();
            *key % 3 != 1
        })
    });
    case("shrink_to_fit after a truncate", |t| {
        t.truncate(1);
        t.shrink_to_fit();
    });
}

#[test]
fn tiles_of_a_nested_row_stay_whole_when_a_bulk_call_meets_a_panic_at_every_user_call() {
    case("extend", |t| {
        t.extend((0..3).map(|k| {
            tick();
            Row::new(100 + k)
        }))
    });
    case("clone", |t| {
        let copy = t.clone();
        check(&copy);
    });
}

#[test]
fn tiles_of_a_nested_row_stay_whole_when_a_conversion_meets_a_panic_at_every_user_call() {
    case("into_vec", |t| {
        let rows = std::mem::take(t).into_vec();
        *t = rows.into_iter().rev().collect();
    });
    case("from a Vec", |t| {
        *t = SoaTiles::from(vec![Row::new(7), Row::new(8), Row::new(9), Row::new(10)]);
    });
    case("write through every tile", |t| {
        for (a, _, _) in t.tiles_mut() {
            a[1] = Tracked::new();
        }
        let (a, _, _) = t.tail_mut();
        if let Some(a) = a.first_mut() {
            *a = Tracked::new();
        }
    });
}

#[test]
fn arena_tiles_whose_init_panics_at_every_user_call_are_dropped_once_with_the_arena() {
    at_every_call(
        "alloc_tiles",
        || Arena::with_capacity(4096),
        |arena| {
            let t = arena.alloc_tiles::<Row, 3, _>(ROWS as usize, |i| {
                tick();
                Row::new(i as u32)
            });
            assert_eq!(t.len(), ROWS as usize);
        },
        |_| {},
    );
}

#[test]
fn arena_tiles_whose_init_allocates_tiles_in_the_same_arena_keep_both_blocks_apart() {
    at_every_call(
        "alloc_tiles inside alloc_tiles",
        || Arena::with_capacity(1 << 14),
        |arena| {
            let mut inner_rows = Vec::new();
            let mut outer = arena.alloc_tiles::<Row, 3, _>(4, |i| {
                let mut inner = arena.alloc_tiles::<Row, 3, _>(2, |j| Row::new(100 + j as u32));
                let (_, _, key) = inner.get_mut(0).unwrap();
                *key += i as u32;
                inner_rows.push(inner);
                Row::new(i as u32)
            });
            let (_, _, key) = outer.get_mut(3).unwrap();
            *key += 0; // the outer block is written while the inner ones live
            for (i, inner) in inner_rows.iter().enumerate() {
                let (a, (b, _), key) = inner.get(0).unwrap();
                a.assert_live();
                b.assert_live();
                assert_eq!(*key, 100 + i as u32);
            }
            let outer_keys: Vec<u32> = outer.iter().map(|(_, _, k)| *k).collect();
            assert_eq!(outer_keys, [0, 1, 2, 3]);
        },
        |_| {},
    );
}

// --- views and iterators ---

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Cell2 {
    name: String,
    n: u64,
}

fn cells<const N: usize>(rows: usize) -> SoaTiles<Cell2, N> {
    (0..rows)
        .map(|i| Cell2 {
            name: format!("r{i}"),
            n: i as u64,
        })
        .collect()
}

/// Every tile view and every row view of a block held at once, then all written: they are
/// disjoint, so the writes land once each (and Miri sees no two of them alias).
#[test]
fn every_tile_view_held_at_once_writes_its_own_lanes() {
    let mut t = cells::<4>(miri_or(43, 11));
    let len = t.len();
    let views: Vec<Cell2TileMut<'_, 4>> = t.tiles_mut().collect();
    assert_eq!(views.len(), len / 4);
    for (k, Cell2TileMut { name, n }) in views.into_iter().enumerate() {
        for lane in 0..4 {
            n[lane] += 1000 * (k as u64 + 1);
            name[lane].push('!');
        }
    }
    let Cell2SlicesMut { name, n } = t.tail_mut();
    for (name, n) in name.iter_mut().zip(n) {
        *n += 1;
        name.push('?');
    }
    let rows: Vec<Cell2Mut<'_>> = t.iter_mut().collect();
    for Cell2Mut { n, .. } in rows {
        *n *= 2;
    }
    for (i, row) in t.iter().enumerate() {
        let tile = i / 4;
        let (add, mark) = if tile < len / 4 {
            (1000 * (tile as u64 + 1), '!')
        } else {
            (1, '?')
        };
        assert_eq!(*row.n, 2 * (i as u64 + add), "row {i}");
        assert_eq!(*row.name, format!("r{i}{mark}"), "row {i}");
    }
}

/// Iterators forgotten, or consumed partly and from both ends, own nothing: the rows stay, each
/// index is yielded once, the lengths they report are exact, and the vector grows afterwards.
#[test]
#[allow(
    clippy::forget_non_drop,
    reason = "the iterators own nothing now; forgetting one must stay harmless if that changes"
)]
fn leaked_and_partly_consumed_tile_iterators_leave_the_rows_as_they_were() {
    let mut t = cells::<3>(miri_or(20, 10));
    let len = t.len();
    std::mem::forget(t.iter_mut());
    std::mem::forget(t.tiles_mut());
    std::mem::forget(t.iter());
    std::mem::forget(t.tiles());

    let mut rows = t.iter_mut();
    assert_eq!(rows.len(), len);
    let first = rows.next().unwrap();
    let last = rows.next_back().unwrap();
    assert_eq!((*first.n, *last.n), (0, len as u64 - 1));
    assert_eq!(rows.len(), len - 2);
    let middle: Vec<u64> = rows.by_ref().take(2).map(|r| *r.n).collect();
    assert_eq!(middle, [1, 2]);
    assert_eq!(rows.len(), len - 4);

    let mut tiles = t.tiles_mut();
    assert_eq!(tiles.len(), len / 3);
    let back = tiles.next_back().unwrap();
    let front = tiles.next().unwrap();
    assert_eq!((front.n[0], back.n[2]), (0, 3 * (len / 3) as u64 - 1));
    front.n[0] = 500;
    back.n[2] = 600;
    let rest: Vec<u64> = tiles.map(|tile| tile.n[0]).collect();
    assert_eq!(rest.len(), len / 3 - 2);
    assert!(rest.iter().all(|&n| n % 3 == 0 && n != 0));

    let shared = t.tiles();
    let copy = shared.clone();
    assert_eq!(shared.count(), copy.rev().count());
    for i in 0..miri_or(30, 7) {
        t.push(Cell2 {
            name: String::new(),
            n: i as u64,
        });
    }
    assert_eq!(t.len(), len + miri_or(30, 7));
    assert_eq!(*t.get(0).unwrap().n, 500);
    assert_eq!(*t.get(3 * (len / 3) - 1).unwrap().n, 600);
    assert_eq!(t.iter().filter(|r| r.name.starts_with('r')).count(), len);
}

// --- zero-sized rows, zero-sized fields, huge tiles ---

thread_local! {
    static UNIT_DROPS: Cell<usize> = const { Cell::new(0) };
}

/// A zero-sized value that counts its drops.
#[derive(Debug, Clone, PartialEq)]
struct Unit;

impl Drop for Unit {
    fn drop(&mut self) {
        UNIT_DROPS.with(|d| d.set(d.get() + 1));
    }
}

fn unit_drops() -> usize {
    UNIT_DROPS.with(Cell::get)
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled, plain)]
struct Units {
    a: Unit,
    b: (),
}

/// Rows of no bytes at the largest tile size: no tile is ever full, every row is in the tail,
/// every structural operation works, and every value is dropped once.
#[test]
fn zero_sized_rows_at_the_largest_tile_size_drop_once_and_never_fill_a_tile() {
    let start = unit_drops();
    {
        let mut t: SoaTiles<Units, { usize::MAX }> = SoaTiles::new();
        assert_eq!(t.capacity(), usize::MAX);
        for _ in 0..5 {
            t.push(Units { a: Unit, b: () });
        }
        t.insert(2, Units { a: Unit, b: () });
        assert_eq!((t.len(), t.full_tiles(), t.tail_len()), (6, 0, 6));
        assert_eq!(t.tiles().count(), 0);
        assert_eq!(t.tail().a.len(), 6);
        assert_eq!(unit_drops(), start);
        drop(t.remove(0));
        drop(t.swap_remove(0));
        drop(t.pop());
        assert_eq!(unit_drops(), start + 3);
        let copy = t.clone();
        t.retain(|_| false);
        assert_eq!(unit_drops(), start + 3 + 3);
        assert_eq!(copy.len(), 3);
        assert_eq!(copy.into_vec().len(), 3);
        assert_eq!(unit_drops(), start + 9);
        t.extend([Units { a: Unit, b: () }, Units { a: Unit, b: () }]);
        assert_eq!(
            t.try_reserve(usize::MAX),
            Err(SoaAllocError::CapacityOverflow { rows: usize::MAX })
        );
        assert_eq!(t.len(), 2);
    }
    assert_eq!(unit_drops(), start + 11);

    let mut one: SoaTiles<Units, 1> = (0..4).map(|_| Units { a: Unit, b: () }).collect();
    assert_eq!(one.tiles().count(), 4);
    assert_eq!(one.tiles_mut().map(|tile| tile.a.len()).sum::<usize>(), 4);
    drop(one);
    assert_eq!(unit_drops(), start + 15);
}

/// A zero-sized type aligned to a page.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(4096))]
struct PageAligned;

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Marked {
    mark: PageAligned,
    n: u8,
}

/// A zero-sized field aligned past the lane alignment: every tile starts on its alignment, the
/// values stay where they are across growth, and an arena carves the same shape.
#[test]
fn a_zero_sized_field_aligned_to_a_page_aligns_every_tile() {
    let layout = arena_kit_core::soa::tile_layout::<Marked, 4>();
    assert_eq!((layout.size(), layout.align()), (4096, 4096));
    let mut t: SoaTiles<Marked, 4> = SoaTiles::new();
    for i in 0..miri_or(11, 6) {
        t.push(Marked {
            mark: PageAligned,
            n: i as u8,
        });
        for (k, row) in t.iter().enumerate() {
            assert_eq!(*row.n, k as u8);
            assert_eq!(core::ptr::from_ref(row.mark).addr() % 4096, 0);
        }
    }
    for tile in t.tiles() {
        assert_eq!(core::ptr::from_ref(tile.mark).addr() % 4096, 0);
        assert_eq!(core::ptr::from_ref(tile.n).addr() % 32, 0);
    }
    let arena = Arena::with_capacity(4 * 4096);
    let carved = arena.alloc_tiles::<Marked, 4, _>(5, |i| Marked {
        mark: PageAligned,
        n: i as u8,
    });
    let ns: Vec<u8> = carved.iter().map(|r| *r.n).collect();
    assert_eq!(ns, [0, 1, 2, 3, 4]);
    assert_eq!(core::ptr::from_ref(carved.tail().mark).addr() % 4096, 0);
}

#[derive(Debug, Clone, Copy, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Wide {
    x: f32,
}

/// One tile of `2^61` rows is `2^63` bytes: its size fits `usize` but no allocation can have
/// it. Every fallible call says so, the row comes back, and nothing is allocated.
#[test]
fn a_tile_larger_than_any_allocation_is_refused_by_every_fallible_call() {
    const HUGE: usize = 1 << 61;
    let mut t: SoaTiles<Wide, HUGE> = SoaTiles::new();
    assert_eq!(t.capacity(), 0);
    let refused = t.try_push(Wide { x: 1.5 }).unwrap_err();
    assert_eq!(refused.into_inner(), Wide { x: 1.5 });
    assert!(matches!(
        t.try_reserve(1),
        Err(SoaAllocError::CapacityOverflow { .. })
    ));
    assert!(matches!(
        t.try_reserve_exact(1),
        Err(SoaAllocError::CapacityOverflow { .. })
    ));
    assert!(matches!(
        SoaTiles::<Wide, HUGE>::try_with_capacity(1),
        Err(SoaAllocError::CapacityOverflow { .. })
    ));
    assert!(catch_unwind(AssertUnwindSafe(|| t.push(Wide { x: 2.5 }))).is_err());
    assert_eq!((t.len(), t.capacity()), (0, 0));
    assert_eq!(t.tail().x, &[] as &[f32]);

    let arena = Arena::with_capacity(1024);
    let called = Cell::new(false);
    let e = arena
        .try_alloc_tiles::<Wide, HUGE, _>(1, |_| {
            called.set(true);
            Wide { x: 0.0 }
        })
        .unwrap_err();
    assert!(!called.get(), "init ran for a block that was refused: {e}");
    let empty = arena
        .try_alloc_tiles::<Wide, HUGE, _>(0, |_| Wide { x: 0.0 })
        .unwrap();
    assert!(empty.is_empty());
    assert_eq!(arena.used(), 0);
}

/// One tile of `2^62` rows of four bytes does not fit in `usize` at all: the fallible
/// constructor says so instead of panicking, and so does the arena.
#[test]
fn a_tile_whose_size_overflows_usize_is_an_error_from_the_fallible_constructor() {
    const HUGER: usize = 1 << 62;
    assert!(matches!(
        SoaTiles::<Wide, HUGER>::try_with_capacity(0),
        Err(SoaAllocError::CapacityOverflow { .. })
    ));
    assert!(matches!(
        SoaTiles::<Wide, HUGER>::try_with_capacity(5),
        Err(SoaAllocError::CapacityOverflow { .. })
    ));
    let arena = Arena::with_capacity(1024);
    assert!(
        arena
            .try_alloc_tiles::<Wide, HUGER, _>(3, |_| Wide { x: 0.0 })
            .is_err()
    );
}

/// Arena tiles in a guarded arena, rows with and without drop glue, at tile sizes that leave the
/// last tile partial: writing every lane handed out (tiles, tail, rows) touches no guard byte,
/// and the tiles next to each other keep their values.
#[test]
fn arena_tiles_written_through_every_view_stay_inside_their_guards() {
    let mut arena = Arena::with_capacity(1 << 14).with_guards();
    for len in [1, 3, 4, 5, 11] {
        let mut plain = arena.alloc_tiles::<Wide, 4, _>(len, |i| Wide { x: i as f32 });
        let mut named = arena.alloc_tiles::<Cell2, 3, _>(len, |i| Cell2 {
            name: format!("r{i}"),
            n: i as u64,
        });
        for tile in plain.tiles_mut() {
            tile.x.iter_mut().for_each(|x| *x = -*x);
        }
        plain.tail_mut().x.iter_mut().for_each(|x| *x = -*x);
        for Cell2TileMut { name, n } in named.tiles_mut() {
            for k in 0..3 {
                name[k].push('!');
                n[k] = u64::MAX;
            }
        }
        let Cell2SlicesMut { name, n } = named.tail_mut();
        name.iter_mut().for_each(|s| s.push('!'));
        n.iter_mut().for_each(|n| *n = u64::MAX);
        for row in named.iter_mut() {
            row.name.push('?');
        }
        arena
            .check_guards()
            .unwrap_or_else(|v| panic!("{len} rows: {v}"));
        let xs: Vec<f32> = plain.iter().map(|r| *r.x).collect();
        assert_eq!(xs, (0..len).map(|i| -(i as f32)).collect::<Vec<_>>());
        assert!(
            named
                .iter()
                .enumerate()
                .all(|(i, r)| *r.name == format!("r{i}!?") && *r.n == u64::MAX)
        );
    }
    arena.reset();
    arena.check_guards().unwrap();
}

#[derive(Debug, Clone, PartialEq, Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct MarkedUnits {
    mark: PageAligned,
    unit: Unit,
}

/// Rows of no bytes that need dropping, one field aligned to a page: the arena keeps their drop
/// record and nothing else (no page of padding to align a block that takes no bytes), the rows
/// still sit on their alignment, and each is dropped once.
#[test]
fn zero_sized_rows_with_a_page_aligned_field_take_only_their_drop_record_in_an_arena() {
    let start = unit_drops();
    let mut arena = Arena::with_capacity(4 * 4096);
    let before = arena.used();
    {
        let carved = arena.alloc_tiles::<MarkedUnits, 4, _>(6, |_| MarkedUnits {
            mark: PageAligned,
            unit: Unit,
        });
        assert_eq!(carved.len(), 6);
        assert_eq!(core::ptr::from_ref(carved.tail().mark).addr() % 4096, 0);
        for row in carved.iter() {
            assert_eq!(core::ptr::from_ref(row.mark).addr() % 4096, 0);
        }
    }
    let taken = arena.used() - before;
    assert!(taken < 256, "{taken} bytes for rows of no bytes");
    assert_eq!(unit_drops(), start);
    arena.reset();
    assert_eq!(unit_drops(), start + 6);
}
