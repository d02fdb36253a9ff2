//! The safe half of the tagging global allocator: [`tag_scope`], [`mem_tag!`](crate::mem_tag) and
//! the report rows ([`global_rows`]). The allocator itself, its header and its counters are in
//! `tagging_alloc.rs`, outside this `forbid(unsafe_code)` module.

use alloc::vec::Vec;
use core::marker::PhantomData;

use super::tag::Tag;
use super::tracked::Source;
use super::usage::Usage;
use crate::tagging_alloc::{
    MAX_TAG_SLOTS, UNTRACKED, sample_peak, slot_of, slot_tag, slot_totals, swap_current,
};

/// Charges every allocation this thread makes through the
/// [`TaggingAllocator`](super::TaggingAllocator) to `tag` until the returned guard is dropped;
/// scopes nest, and the innermost one wins (a `Particles` scope inside a `Rendering` scope
/// charges `Particles`, whose bytes a [`Report`](super::Report) also counts towards its parent).
///
/// The first scope of a tag claims one of [`MAX_TAG_SLOTS`] counter slots (the tag value is
/// copied into it, and later scopes, on any thread, find it with `==`: so the tag type must be
/// `Send + Sync`, as enums of plain variants and `&'static str` are); later scopes only look it
/// up. Nothing is
/// allocated: the guard holds the tag that was current before it, and dropping it puts that tag
/// back, so there is no depth limit. Drop scopes in reverse order (as `let` bindings are): a
/// guard dropped early puts back the tag that was current when it began. A tag that finds no
/// free slot charges "Untracked" and is counted by
/// [`overflowed_scopes`](super::overflowed_scopes).
///
/// Without a `TaggingAllocator` installed, a scope only sets the thread's current tag.
///
/// ```
/// use arena_kit::tags::{mem_tag, tag_scope};
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// enum MemoryTag { Physics, Audio }
///
/// impl arena_kit::Tag for MemoryTag {
///     fn name(&self) -> &'static str {
///         match self { MemoryTag::Physics => "Physics", MemoryTag::Audio => "Audio" }
///     }
/// }
///
/// let _physics = tag_scope(MemoryTag::Physics);
/// let contacts: Vec<[f32; 4]> = Vec::with_capacity(256); // charged to Physics
/// let mixed = {
///     mem_tag!(MemoryTag::Audio); // the macro form: a scope until the end of the block
///     vec![0i16; 48_000] // charged to Audio, freed later as Audio wherever it is dropped
/// };
/// drop((contacts, mixed));
/// ```
#[must_use = "the tag applies until the guard is dropped"]
pub fn tag_scope<G: Tag>(tag: G) -> TagScope {
    let previous = swap_current(slot_of(tag));
    TagScope {
        previous,
        _not_send: PhantomData,
    }
}

/// The guard of a [`tag_scope`]: dropping it puts back the tag that was current before. It stays
/// on the thread that made it (neither `Send` nor `Sync`).
///
/// ```
/// use arena_kit::tags::tag_scope;
///
/// let scope = tag_scope("Loading");
/// let level = vec![0u8; 1024]; // charged to Loading
/// drop(scope);
/// let untagged = vec![0u8; 16]; // charged to Untracked again
/// drop((level, untagged));
/// ```
#[derive(Debug)]
pub struct TagScope {
    previous: u8,
    _not_send: PhantomData<*const ()>,
}

impl Drop for TagScope {
    fn drop(&mut self) {
        swap_current(self.previous);
    }
}

/// A scope of `tag` until the end of the enclosing block (`mem_tag!(tag);`), or around one block
/// whose value it returns (`mem_tag!(tag, { .. })`). See [`tag_scope`](crate::tags::tag_scope).
///
/// ```
/// use arena_kit::tags::mem_tag;
///
/// let names = mem_tag!("AI", { vec![String::from("patrol"), String::from("flee")] });
/// mem_tag!("Rendering");
/// let vertices = vec![[0.0f32; 3]; 1024]; // charged to Rendering
/// drop((names, vertices));
/// ```
#[macro_export]
macro_rules! mem_tag {
    ($tag:expr, $body:block) => {{
        let _arena_kit_tag_scope = $crate::tags::tag_scope($tag);
        $body
    }};
    ($tag:expr $(,)?) => {
        let _arena_kit_tag_scope = $crate::tags::tag_scope($tag);
    };
}

/// One tag's share of the global allocator, from [`global_rows`]: a [`Source`] for
/// [`Registry::end_frame`](super::Registry::end_frame) and [`Report::gather`](super::Report::gather).
///
/// `usage.current` is the tag's live bytes as the program asked for them (headers not counted),
/// `usage.allocations` its live allocations, `usage.reserved` the same as `current` (what the
/// wrapped allocator rounds up is not seen), and `usage.peak` the highest `current` seen by any
/// call of `global_rows` so far: a **sampled** peak (call it once a frame, when the frame ends),
/// not the peak between samples.
///
/// ```
/// use arena_kit::Registry;
/// use arena_kit::tags::{Source, global_rows};
///
/// let mut registry = Registry::new();
/// let rows = global_rows("Untracked");
/// let sources: Vec<&dyn Source<&str>> = rows.iter().map(|r| r as &dyn Source<&str>).collect();
/// let report = registry.end_frame(&sources).unwrap();
/// assert_eq!(report.allocators().len(), rows.len());
/// ```
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalRow<G> {
    /// The tag ("Untracked" is the tag passed to [`global_rows`]).
    pub tag: G,
    /// Its bytes now.
    pub usage: Usage,
}

impl<G: Tag> Source<G> for GlobalRow<G> {
    fn name(&self) -> &'static str {
        "global allocator"
    }
    fn tag(&self) -> G {
        self.tag
    }
    fn usage(&self) -> Usage {
        self.usage
    }
    fn budget(&self) -> Option<usize> {
        None
    }
}

/// The global allocator's bytes per tag of type `G` now, one row per tag a [`tag_scope`] has
/// seen, and a last row for `untracked`: memory allocated with no scope, in scopes of other tag
/// types, or in scopes that found no slot. So the rows add up to every byte allocated through the
/// [`TaggingAllocator`](super::TaggingAllocator) (all zero without one installed).
///
/// Each call samples the peaks (see [`GlobalRow`]). Reading is not the allocation path: it sums
/// every thread's counters (`MAX_THREADS` blocks of [`MAX_TAG_SLOTS`] counters).
///
/// **Counting each byte once.** An arena-kit allocator backed by the global allocator (an
/// `Arena::with_capacity`, a `Pool`, a `SoaVec`) takes its memory from it, so its pages are
/// already in these rows. A [`Tracked`] allocator charges every page, chunk and column block it
/// takes after it is wrapped to its own tag, whatever scope is current when it grows (see
/// [`PageTag`](super::PageTag)); what it took before (a fixed pool's block, an arena's first
/// block) is charged to the scope current when it was made, so make a subsystem's allocators
/// inside its `tag_scope` too. Its `Tracked` row counts how it uses those pages. So the rule is:
/// in one [`Report`] put the global rows and the `Tracked` allocators that do *not* take memory
/// from the global allocator (arenas over your own buffers, a `LockedHeap`); report the
/// global-backed `Tracked` allocators in a report of their own (the view inside their pages).
///
/// [`Tracked`]: super::Tracked
/// [`Report`]: super::Report
///
/// ```
/// use arena_kit::Report;
/// use arena_kit::tags::{Source, global_rows, tag_scope};
///
/// let audio = {
///     let _scope = tag_scope("Audio");
///     vec![0u8; 8192]
/// };
/// let rows = global_rows("Untracked");
/// assert_eq!(rows.last().unwrap().tag, "Untracked");
/// let sources: Vec<&dyn Source<&str>> = rows.iter().map(|r| r as &dyn Source<&str>).collect();
/// let report = Report::gather(&sources);
/// let total: usize = rows.iter().map(|r| r.usage.current).sum();
/// assert_eq!(report.total().current, total);
/// drop(audio);
/// ```
pub fn global_rows<G: Tag>(untracked: G) -> Vec<GlobalRow<G>> {
    let mut rows = Vec::new();
    let mut rest = Usage::default();
    for slot in 0..MAX_TAG_SLOTS {
        let (current, allocations) = slot_totals(slot);
        let usage = Usage {
            current,
            peak: 0,
            allocations,
            reserved: current,
        };
        match slot_tag::<G>(slot).filter(|&t| t != untracked) {
            Some(tag) => rows.push(GlobalRow {
                tag,
                usage: Usage {
                    peak: sample_peak(slot, current),
                    ..usage
                },
            }),
            None => rest = rest + usage,
        }
    }
    rest.peak = sample_peak(usize::from(UNTRACKED), rest.current);
    rows.push(GlobalRow {
        tag: untracked,
        usage: rest,
    });
    rows
}
