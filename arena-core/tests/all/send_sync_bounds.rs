//! The `Send`/`Sync` bounds of the SoA containers, views and iterators and of the pools follow
//! the std types they mirror: an owning container or exclusive view is `Send` when its values
//! are `Send`; a shared view or iterator is `Send` only when its values are `Sync` (like
//! `&[T]`). Checked at compile time both ways (a type that must *not* be `Send`/`Sync` makes a
//! trait lookup ambiguous, the trick of `static_assertions::assert_not_impl_any`).
#![allow(missing_docs)] // test-only row types

use std::cell::Cell;
use std::rc::Rc;

use arena_kit_core::pool::{Handle, Handle32, Pool};
use arena_kit_core::soa::{
    ChunksExact, ChunksExactMut, Drain, IntoIter, Iter, IterMut, SoaPool, SoaSlice,
};
use arena_kit_core::soa::{SoaSliceMut, SoaVec};
use arena_kit_core::soa::{SoaTiles, SoaTilesMut, TileRows, TileRowsMut, Tiles, TilesMut};
use arena_kit_derive::Soa;

/// `Send` but not `Sync`, like `Cell`.
#[derive(Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy), tiled)]
pub struct Counter {
    pub hits: Cell<u32>,
    pub id: u32,
}

/// Neither `Send` nor `Sync`.
#[derive(Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy), tiled)]
pub struct Shared {
    pub rc: Rc<u32>,
}

/// Both.
#[derive(Soa)]
#[soa(crate = arena_kit_core, derive(Debug, Clone, Copy), tiled)]
pub struct Plain {
    pub x: f32,
}

fn is_send<T: Send>() {}
fn is_sync<T: Sync>() {}

/// Compiles only if `$t` is not `$trait`.
macro_rules! assert_not {
    ($t:ty: $trait:path) => {{
        trait Ambiguous<A> {
            fn check() {}
        }
        impl<T: ?Sized> Ambiguous<()> for T {}
        #[allow(dead_code)]
        struct Marker;
        impl<T: ?Sized + $trait> Ambiguous<Marker> for T {}
        <$t as Ambiguous<_>>::check();
    }};
}

#[test]
fn owning_and_exclusive_types_need_send_values() {
    is_send::<SoaVec<Counter>>();
    is_send::<IntoIter<Counter>>();
    is_send::<Drain<'static, Counter>>();
    is_send::<SoaSliceMut<'static, Counter>>();
    is_send::<IterMut<'static, Counter>>();
    is_send::<ChunksExactMut<'static, Counter, 4>>();
    is_send::<SoaPool<Counter>>();
    is_send::<arena_kit_core::soa::TrackedSoaVec<Counter>>();
    is_send::<arena_kit_core::soa::TrackedSoaPool<Counter>>();
    is_send::<Pool<Cell<u32>>>();
    is_send::<Pool<Cell<u32>, Handle32<Cell<u32>>>>();
    // A pool's exclusive iterators, like `slice::IterMut`: `Send` with `Send` values.
    is_send::<arena_kit_core::pool::IterMut<'static, Cell<u32>>>();
    is_send::<arena_kit_core::pool::ValuesMut<'static, Cell<u32>>>();
    is_send::<arena_kit_core::pool::Drain<'static, Cell<u32>>>();
    assert_not!(arena_kit_core::pool::IterMut<'static, Rc<u32>>: Send);
    assert_not!(arena_kit_core::pool::IterMut<'static, Cell<u32>>: Sync);
    assert_not!(SoaVec<Shared>: Send);
    assert_not!(IntoIter<Shared>: Send);
    assert_not!(Drain<'static, Shared>: Send);
    assert_not!(SoaSliceMut<'static, Shared>: Send);
    assert_not!(IterMut<'static, Shared>: Send);
    assert_not!(SoaPool<Shared>: Send);
    assert_not!(arena_kit_core::soa::TrackedSoaVec<Shared>: Send);
    assert_not!(arena_kit_core::soa::TrackedSoaPool<Shared>: Send);
    assert_not!(Pool<Rc<u32>>: Send);
    assert_not!(Pool<Rc<u32>, Handle32<Rc<u32>>>: Send);
}

#[test]
fn shared_views_and_iterators_need_sync_values_even_to_be_sent() {
    is_send::<SoaSlice<'static, Plain>>();
    is_send::<Iter<'static, Plain>>();
    is_send::<ChunksExact<'static, Plain, 4>>();
    assert_not!(SoaSlice<'static, Counter>: Send);
    assert_not!(Iter<'static, Counter>: Send);
    assert_not!(ChunksExact<'static, Counter, 4>: Send);
}

#[test]
fn sharing_anything_needs_sync_values() {
    is_sync::<SoaVec<Plain>>();
    is_sync::<SoaSlice<'static, Plain>>();
    is_sync::<Pool<Plain>>();
    assert_not!(SoaVec<Counter>: Sync);
    assert_not!(SoaSlice<'static, Counter>: Sync);
    assert_not!(SoaSliceMut<'static, Counter>: Sync);
    assert_not!(Iter<'static, Counter>: Sync);
    assert_not!(IterMut<'static, Counter>: Sync);
    assert_not!(IntoIter<Counter>: Sync);
    assert_not!(Drain<'static, Counter>: Sync);
    assert_not!(ChunksExactMut<'static, Counter, 4>: Sync);
    assert_not!(SoaPool<Counter>: Sync);
    assert_not!(Pool<Cell<u32>>: Sync);
    assert_not!(Pool<Cell<u32>, Handle32<Cell<u32>>>: Sync);
}

#[test]
fn handles_are_send_and_sync_whatever_they_point_to() {
    is_send::<Handle<Rc<u32>>>();
    is_send::<Handle32<Rc<u32>>>();
    is_sync::<Handle32<Rc<u32>>>();
    is_sync::<Handle<Rc<u32>>>();
}

#[test]
fn an_arena_and_its_scopes_can_move_to_another_thread_but_not_be_shared() {
    use arena_kit_core::arena::{Arena, Marker, Scope};
    is_send::<Arena>();
    is_send::<Scope<'static>>();
    is_send::<Marker>();
    is_sync::<Marker>();
    assert_not!(Arena: Sync);
    assert_not!(Scope<'static>: Sync);
}

#[test]
fn arena_collections_stay_on_the_arenas_thread() {
    // they hold `&Arena`, and the arena is not `Sync`: sending one would let two threads bump
    // the same arena
    use arena_kit_core::collections::{ArenaString, ArenaVec};
    assert_not!(ArenaVec<'static, u32>: Send);
    assert_not!(ArenaVec<'static, u32>: Sync);
    assert_not!(ArenaString<'static>: Send);
    assert_not!(ArenaString<'static>: Sync);
}

#[test]
fn an_arena_box_is_send_and_sync_as_a_box_of_its_value_is() {
    // a box reaches its value only, never the arena, so it follows `Box<T>`
    use arena_kit_core::collections::ArenaBox;
    is_send::<ArenaBox<'static, u32>>();
    is_sync::<ArenaBox<'static, u32>>();
    is_send::<ArenaBox<'static, Cell<u32>>>();
    assert_not!(ArenaBox<'static, Cell<u32>>: Sync);
    assert_not!(ArenaBox<'static, Rc<u32>>: Send);
    assert_not!(ArenaBox<'static, Rc<u32>>: Sync);
    // A boxed slice is as its elements are, as `Box<[T]>`.
    is_send::<ArenaBox<'static, [u32]>>();
    is_sync::<ArenaBox<'static, [u32]>>();
    is_send::<ArenaBox<'static, [Cell<u32>]>>();
    assert_not!(ArenaBox<'static, [Cell<u32>]>: Sync);
    assert_not!(ArenaBox<'static, [Rc<u32>]>: Send);
    assert_not!(ArenaBox<'static, [Rc<u32>]>: Sync);
    // and so is the iterator that moves its values out, as `vec::IntoIter<T>`
    use arena_kit_core::collections::IntoIter;
    is_send::<IntoIter<'static, u32>>();
    is_sync::<IntoIter<'static, u32>>();
    is_send::<IntoIter<'static, Cell<u32>>>();
    assert_not!(IntoIter<'static, Cell<u32>>: Sync);
    assert_not!(IntoIter<'static, Rc<u32>>: Send);
}

#[test]
fn a_tag_scope_stays_on_its_thread_and_the_allocator_is_shared() {
    // dropping a scope puts back the previous tag of the thread that dropped it: a guard moved to
    // another thread would change that thread's tag
    use arena_kit_core::tags::{TagScope, TaggingAllocator};
    assert_not!(TagScope: Send);
    assert_not!(TagScope: Sync);
    is_send::<TaggingAllocator>();
    is_sync::<TaggingAllocator>();
}

#[test]
fn tiled_containers_and_iterators_follow_the_same_rules() {
    is_send::<SoaTiles<Counter, 8>>();
    is_send::<SoaTilesMut<'static, Counter, 8>>();
    is_send::<TileRowsMut<'static, Counter, 8>>();
    is_send::<TilesMut<'static, Counter, 8>>();
    assert_not!(SoaTiles<Shared, 8>: Send);
    assert_not!(SoaTilesMut<'static, Shared, 8>: Send);
    assert_not!(TilesMut<'static, Shared, 8>: Send);
    is_send::<TileRows<'static, Plain, 8>>();
    is_send::<Tiles<'static, Plain, 8>>();
    assert_not!(TileRows<'static, Counter, 8>: Send);
    assert_not!(Tiles<'static, Counter, 8>: Send);
    is_sync::<SoaTiles<Plain, 8>>();
    assert_not!(SoaTiles<Counter, 8>: Sync);
    assert_not!(SoaTilesMut<'static, Counter, 8>: Sync);
    assert_not!(TilesMut<'static, Counter, 8>: Sync);
    is_send::<arena_kit_core::soa::TrackedSoaTiles<Counter, 8>>();
    assert_not!(arena_kit_core::soa::TrackedSoaTiles<Shared, 8>: Send);
    is_sync::<arena_kit_core::soa::TrackedSoaTiles<Plain, 8>>();
    assert_not!(arena_kit_core::soa::TrackedSoaTiles<Counter, 8>: Sync);
}

/// A guarded heap can be shared like the heap it wraps: other threads check its guards and read
/// its statistics while every change still needs `&mut`.
#[test]
fn a_guarded_heap_is_shared_like_its_heap() {
    use arena_kit_core::heap::{FreeListHeap, GuardedHeap};
    use std::alloc::Layout;

    is_send::<GuardedHeap<'static>>();
    is_sync::<GuardedHeap<'static>>();
    let mut heap = GuardedHeap::new(FreeListHeap::with_capacity(4096));
    let p = heap.alloc(Layout::new::<[u64; 4]>());
    let shared = &heap;
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                assert!(shared.check_guards().is_ok());
                assert_eq!(shared.stats().live_blocks, 1);
            });
        }
    });
    heap.free(p).unwrap();
}
