//! A profiler sink that uses the arena it hears about (`profiler` feature). When a request takes
//! a new page, the arena reports the page it left from inside the allocation. A sink that takes a
//! marker there and allocates a value with a destructor must get bytes before the request's, so
//! that rewinding to its marker drops its value: the drop list is kept in position order. Its own
//! test binary, because the profiler sink is process-wide.
#![cfg(feature = "profiler")]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use arena_kit_core::arena::{Arena, Marker};
use arena_kit_core::tags::{
    Budgeted, ProfilerEvent, ProfilerLabel, ProfilerSink, set_profiler_sink,
};

thread_local! {
    static DROPS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static SINK_ARENA: RefCell<Option<Rc<Arena>>> = const { RefCell::new(None) };
    static SINK_MARK: Cell<Option<Marker>> = const { Cell::new(None) };
    static IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// Records its number when dropped.
#[derive(Debug, Default)]
struct Counted(u32);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.with(|d| d.borrow_mut().push(self.0));
    }
}

fn take_drops() -> Vec<u32> {
    DROPS.with(|d| std::mem::take(&mut *d.borrow_mut()))
}

/// SoA rows that need dropping.
#[derive(Debug, Default, arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core)]
struct Row {
    id: u32,
    c: Counted,
}

/// On its first event on a thread whose arena is set: a marker, then a value to drop.
struct MarkingSink;

impl ProfilerSink for MarkingSink {
    fn event(&self, _: &ProfilerEvent<'_>) {
        if IN_SINK.replace(true) {
            return;
        }
        SINK_ARENA.with(|a| {
            if let Some(a) = a.borrow().as_ref()
                && SINK_MARK.get().is_none()
            {
                SINK_MARK.set(Some(a.mark()));
                a.alloc(Counted(4242));
            }
        });
        IN_SINK.set(false);
    }
}

static SINK: MarkingSink = MarkingSink;

/// The sink is process-wide and set once (it acts only on a thread whose `SINK_ARENA` is set);
/// replacing it would leak the previous registration.
static INSTALL: std::sync::Once = std::sync::Once::new();

/// The sink's value is dropped by a rewind to its marker (with the request's values, which
/// came after it), and every value is dropped exactly once. `values` is what `alloc` allocates.
fn rewind_to_the_sinks_marker(values: &[u32], alloc: impl FnOnce(&Arena)) {
    INSTALL.call_once(|| set_profiler_sink(Some(&SINK)));
    let mut arena = Arena::chained(512);
    arena.set_profiler_label(Some(ProfilerLabel::new("marking", "Test")));
    arena.alloc([0u8; 400]);
    let shared = Rc::new(arena);
    SINK_ARENA.with(|a| *a.borrow_mut() = Some(shared.clone()));
    alloc(&shared); // takes a new page: the sink hears of the page left
    SINK_ARENA.with(|a| *a.borrow_mut() = None);
    let marker = SINK_MARK.take().expect("the sink ran");
    let mut arena = Rc::into_inner(shared).expect("the sink's handle is gone");
    arena.rewind(marker).unwrap();
    let mut dropped = take_drops();
    assert!(
        dropped.contains(&4242),
        "the rewind drops the sink's value: {dropped:?}"
    );
    arena.alloc([0xAAu8; 256]);
    drop(arena);
    dropped.extend(take_drops());
    dropped.sort_unstable();
    let mut expected = values.to_vec();
    expected.push(4242);
    expected.sort_unstable();
    assert_eq!(dropped, expected, "every value is dropped once");
}

#[test]
fn a_profiler_sinks_value_is_dropped_by_a_rewind_to_its_marker() {
    rewind_to_the_sinks_marker(&[1], |a| {
        a.alloc(Counted(1));
    });
}

#[test]
fn a_profiler_sinks_value_is_dropped_by_a_rewind_to_its_marker_inside_a_soa_slice() {
    rewind_to_the_sinks_marker(&[0, 1, 2, 3], |a| {
        a.alloc_soa(4, |i| Row {
            id: i as u32,
            c: Counted(i as u32),
        });
    });
}
