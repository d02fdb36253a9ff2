//! Every covariant parameter of arena-kit-core's public types, checked at compile time: each
//! function below only compiles if the type is covariant in that parameter (it turns a longer
//! lifetime into a shorter one). The invariant parameters are checked the other way, by the
//! facade's compile-fail cases `tests/ui/variance-*.rs`; each type's docs have a `# Variance`
//! section saying which parameter is which, and why.
//!
//! The one test only runs a few of these, so the file is an ordinary test target; what it checks
//! is that it builds.
#![allow(missing_docs)] // test-only row types
#![allow(dead_code, clippy::needless_lifetimes)]

use crate::soa_rows;

use arena_kit_core::arena::{Arena, BufferArena, FrameArena, FrameReader, Scope};
use arena_kit_core::collections::{ArenaBox, ArenaString, ArenaVec, IntoIter};
use arena_kit_core::heap::{Blocks, FreeListHeap, MemoryMap};
use arena_kit_core::layout::FieldOrder;
use arena_kit_core::pool::{self, Handle, Handle32, Pool, PoolFull};
use arena_kit_core::soa::{self, SoaSlice, SoaSliceMut};
use arena_kit_core::tags::{
    AllocatorRow, FrameSample, GuardedHeap, History, OverBudget, Report, TagRow, Totals, Tracked,
};
use soa_rows::Particle;

/// A tag, for the tags types (tags are `'static`, so only the allocator parameter can vary).
type Tag = &'static str;

// --- arena ---

fn frame_reader<'a: 'b, 'b>(x: FrameReader<&'a str>) -> FrameReader<&'b str> {
    x
}
fn scope<'a: 'b, 'b>(x: Scope<'a>) -> Scope<'b> {
    x
}
fn buffer_arena<'a: 'b, 'b>(x: BufferArena<'a>) -> BufferArena<'b> {
    x
}
fn arena_vec_lifetime<'a: 'b, 'b>(x: ArenaVec<'a, u32>) -> ArenaVec<'b, u32> {
    x
}
fn arena_vec_type<'s, 'a: 'b, 'b>(x: ArenaVec<'s, &'a str>) -> ArenaVec<'s, &'b str> {
    x
}
fn arena_string<'a: 'b, 'b>(x: ArenaString<'a>) -> ArenaString<'b> {
    x
}
fn arena_box_lifetime<'a: 'b, 'b>(x: ArenaBox<'a, u32>) -> ArenaBox<'b, u32> {
    x
}
fn arena_box_type<'s, 'a: 'b, 'b>(x: ArenaBox<'s, &'a str>) -> ArenaBox<'s, &'b str> {
    x
}
fn arena_box_slice_lifetime<'a: 'b, 'b>(x: ArenaBox<'a, [u32]>) -> ArenaBox<'b, [u32]> {
    x
}
fn arena_box_slice_type<'s, 'a: 'b, 'b>(x: ArenaBox<'s, [&'a str]>) -> ArenaBox<'s, [&'b str]> {
    x
}
fn box_into_iter_lifetime<'a: 'b, 'b>(x: IntoIter<'a, u32>) -> IntoIter<'b, u32> {
    x
}
fn box_into_iter_type<'s, 'a: 'b, 'b>(x: IntoIter<'s, &'a str>) -> IntoIter<'s, &'b str> {
    x
}

// --- pool ---

fn pool<'a: 'b, 'b>(x: Pool<&'a str>) -> Pool<&'b str> {
    x
}
fn handle<'a: 'b, 'b>(x: Handle<&'a str>) -> Handle<&'b str> {
    x
}
fn pool_of_handle32s<'a: 'b, 'b>(
    x: Pool<&'a str, Handle32<&'a str>>,
) -> Pool<&'b str, Handle32<&'b str>> {
    x
}
fn handle32<'a: 'b, 'b>(x: Handle32<&'a str>) -> Handle32<&'b str> {
    x
}
fn pool_iter_handle32<'s, 'a: 'b, 'b>(
    x: pool::Iter<'s, &'a str, Handle32<&'a str>>,
) -> pool::Iter<'s, &'b str, Handle32<&'b str>> {
    x
}
fn pool_full<'a: 'b, 'b>(x: PoolFull<&'a str>) -> PoolFull<&'b str> {
    x
}
fn pool_iter_lifetime<'a: 'b, 'b>(x: pool::Iter<'a, u32>) -> pool::Iter<'b, u32> {
    x
}
fn pool_iter_type<'s, 'a: 'b, 'b>(x: pool::Iter<'s, &'a str>) -> pool::Iter<'s, &'b str> {
    x
}
fn pool_iter_mut_lifetime<'a: 'b, 'b>(x: pool::IterMut<'a, u32>) -> pool::IterMut<'b, u32> {
    x
}
fn pool_drain_lifetime<'a: 'b, 'b>(x: pool::Drain<'a, u32>) -> pool::Drain<'b, u32> {
    x
}
fn pool_into_iter<'a: 'b, 'b>(x: pool::IntoIter<&'a str>) -> pool::IntoIter<&'b str> {
    x
}

// --- soa (the row type is invariant everywhere: see tests/ui/variance-soa-row-type.rs) ---

fn soa_slice<'a: 'b, 'b>(x: SoaSlice<'a, Particle>) -> SoaSlice<'b, Particle> {
    x
}
fn soa_slice_mut<'a: 'b, 'b>(x: SoaSliceMut<'a, Particle>) -> SoaSliceMut<'b, Particle> {
    x
}
fn soa_iter<'a: 'b, 'b>(x: soa::Iter<'a, Particle>) -> soa::Iter<'b, Particle> {
    x
}
fn soa_iter_mut<'a: 'b, 'b>(x: soa::IterMut<'a, Particle>) -> soa::IterMut<'b, Particle> {
    x
}
fn soa_chunks<'a: 'b, 'b>(
    x: soa::ChunksExact<'a, Particle, 4>,
) -> soa::ChunksExact<'b, Particle, 4> {
    x
}
fn soa_chunks_mut<'a: 'b, 'b>(
    x: soa::ChunksExactMut<'a, Particle, 4>,
) -> soa::ChunksExactMut<'b, Particle, 4> {
    x
}

// --- tiled soa (row type invariant as well: see tests/ui/soa-tile-mut-stores-shorter-borrow.rs) ---

#[derive(arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Dot {
    x: f32,
    n: u8,
}

#[derive(arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core, tiled)]
struct Named<'n> {
    name: &'n str,
    score: u32,
}

fn soa_tiles_mut<'a: 'b, 'b>(x: soa::SoaTilesMut<'a, Dot, 8>) -> soa::SoaTilesMut<'b, Dot, 8> {
    x
}
fn soa_tile_rows<'a: 'b, 'b>(x: soa::TileRows<'a, Dot, 8>) -> soa::TileRows<'b, Dot, 8> {
    x
}
fn soa_tile_rows_mut<'a: 'b, 'b>(x: soa::TileRowsMut<'a, Dot, 8>) -> soa::TileRowsMut<'b, Dot, 8> {
    x
}
fn soa_tiles_iter<'a: 'b, 'b>(x: soa::Tiles<'a, Dot, 8>) -> soa::Tiles<'b, Dot, 8> {
    x
}
fn soa_tiles_iter_mut<'a: 'b, 'b>(x: soa::TilesMut<'a, Dot, 8>) -> soa::TilesMut<'b, Dot, 8> {
    x
}
fn derived_tile_lifetime<'a: 'b, 'b>(x: DotTile<'a, 8>) -> DotTile<'b, 8> {
    x
}
fn derived_tile_mut_lifetime<'a: 'b, 'b>(x: DotTileMut<'a, 8>) -> DotTileMut<'b, 8> {
    x
}
fn derived_tile_row_parameter<'t, 'n: 'm, 'm>(x: NamedTile<'t, 'n, 4>) -> NamedTile<'t, 'm, 4> {
    x
}

// --- heap ---

fn free_list_heap<'a: 'b, 'b>(x: FreeListHeap<'a>) -> FreeListHeap<'b> {
    x
}
fn heap_blocks<'a: 'b, 'b>(x: Blocks<'a>) -> Blocks<'b> {
    x
}
fn memory_map_heap<'h: 'g, 'g, 'buf>(x: MemoryMap<'h, 'buf>) -> MemoryMap<'g, 'buf> {
    x
}
fn memory_map_buffer<'h, 'a: 'b, 'b>(x: MemoryMap<'h, 'a>) -> MemoryMap<'h, 'b> {
    x
}

// --- layout ---

fn field_order<'a: 'b, 'b>(x: FieldOrder<'a>) -> FieldOrder<'b> {
    x
}

// --- tags ---

fn tracked_allocator<'a: 'b, 'b>(x: Tracked<Pool<&'a str>, Tag>) -> Tracked<Pool<&'b str>, Tag> {
    x
}
fn tracked_buffer_arena<'a: 'b, 'b>(
    x: Tracked<BufferArena<'a>, Tag>,
) -> Tracked<BufferArena<'b>, Tag> {
    x
}
fn guarded_heap<'a: 'b, 'b>(x: GuardedHeap<'a>) -> GuardedHeap<'b> {
    x
}
fn totals<'a: 'b, 'b>(x: Totals<'a, Tag>) -> Totals<'b, Tag> {
    x
}
/// The tag parameter of the report types is covariant (plain fields), checked here with
/// `&str` where the types allow any `G`; real tags are `'static`, so nothing shrinks in practice.
fn report<'a: 'b, 'b>(x: Report<&'a str>) -> Report<&'b str> {
    x
}
fn allocator_row<'a: 'b, 'b>(x: AllocatorRow<&'a str>) -> AllocatorRow<&'b str> {
    x
}
fn tag_row<'a: 'b, 'b>(x: TagRow<&'a str>) -> TagRow<&'b str> {
    x
}
fn frame_sample<'a: 'b, 'b>(x: FrameSample<&'a str>) -> FrameSample<&'b str> {
    x
}
fn history<'a: 'b, 'b>(x: History<&'a str>) -> History<&'b str> {
    x
}
fn over_budget<'a: 'b, 'b>(x: OverBudget<&'a str>) -> OverBudget<&'b str> {
    x
}

#[test]
fn shortened_readers_and_scopes_still_work() {
    let mut frames = FrameArena::<2>::chained(1024);
    let frame = frames.begin_frame();
    let name: &'static str = "player";
    let data = frame.arena().alloc(name);
    let reader: FrameReader<&str> = frame_reader(frame.publish(&*data).unwrap());
    assert_eq!(*reader, "player");
    drop(reader);

    let mut arena = Arena::with_capacity(256);
    {
        let outer = scope(arena.scope());
        outer.alloc(1u32);
        assert_eq!(outer.used(), 4);
    }
    assert_eq!(arena.used(), 0);

    let mut p = pool(Pool::with_capacity(4));
    let h = handle(p.insert("x"));
    assert_eq!(p.get(h), Some(&"x"));

    let mut p = pool_of_handle32s(Pool::with_capacity_and_key(4));
    let h = handle32(p.insert("x"));
    assert_eq!(p.get(h), Some(&"x"));
    assert_eq!(pool_iter_handle32(p.iter()).count(), 1);
}
