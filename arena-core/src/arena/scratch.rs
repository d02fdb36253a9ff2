//! Per-thread scratch arenas: a stack of thread-local arenas, one per nesting depth.
//!
//! A nested [`scratch`] call gets the next arena of the stack, never the caller's, so it cannot
//! clobber memory the caller still uses, even if the inner closure also allocates from the
//! caller's arena (the conflict RAD Debugger avoids by passing two scratch arenas around).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::Arena;
use crate::tags::{MemoryUsage, Usage};

/// Page size of the thread-local scratch arenas.
const SCRATCH_PAGE: usize = 64 * 1024;

struct ScratchStack {
    /// One arena per nesting depth, boxed so their addresses survive the vector growing.
    #[allow(
        clippy::vec_box,
        reason = "callers hold pointers to the arenas while the vector grows"
    )]
    arenas: RefCell<Vec<Box<Arena>>>,
    depth: Cell<usize>,
    /// The lowest depth whose arena a `Pop` is resetting right now (`usize::MAX`: none). A
    /// destructor run by that reset may open deeper scratch calls, whose own resets then run
    /// while it still holds its arena mutably, so [`ThreadScratch`] reads no arena at or above
    /// this depth.
    resetting: Cell<usize>,
}

std::thread_local! {
    static SCRATCH: ScratchStack = const {
        ScratchStack {
            arenas: RefCell::new(Vec::new()),
            depth: Cell::new(0),
            resetting: Cell::new(usize::MAX),
        }
    };
}

/// Runs `f` with this thread's scratch arena for the current nesting depth, then resets that
/// arena (dropping what `f` allocated). Nothing allocated inside can escape `f`: the arena's
/// lifetime is local to the closure. Pages are kept per thread, so steady use does not call the
/// system allocator: each depth's arena keeps one page large enough for the most its calls
/// ever held at once, until the thread exits or [`scratch_release`] gives it back (after a
/// one-off large temporary, say). A limit ([`Arena::set_limit`]) or budget
/// ([`Budgeted::restore_budget`](crate::tags::Budgeted::restore_budget)) that `f` puts on the
/// arena is taken off when `f` returns: the next call gets the arena without them.
///
/// ```
/// use arena_kit::scratch;
///
/// let total = scratch(|outer| {
///     let a = outer.alloc_slice_fill_with(4, |i| i as u32);
///     let inner_sum = scratch(|inner| {
///         // a different arena: resetting it cannot clobber `a`
///         let b = inner.alloc_slice_copy(&[10u32, 20]);
///         b.iter().sum::<u32>()
///     });
///     a.iter().sum::<u32>() + inner_sum
/// });
/// assert_eq!(total, 36);
/// ```
///
/// During thread-local destruction (when the thread's scratch stack is already gone), `f` gets a
/// temporary arena instead.
pub fn scratch<R>(f: impl FnOnce(&Arena) -> R) -> R {
    let mut f = Some(f);
    let mut out = None;
    let _ = SCRATCH.try_with(|stack| {
        let f = f.take().expect("called once");
        out = Some(stack.run(f));
    });
    match out {
        Some(r) => r,
        None => {
            let f = f.take().expect("not called by the thread-local path");
            f(&Arena::chained(SCRATCH_PAGE))
        }
    }
}

/// Gives the memory of this thread's idle scratch arenas back to the system allocator, and
/// returns how many bytes that was (pages and their headers, as
/// [`Arena::system_bytes`] counts them).
///
/// The idle arenas are those of the depths at and below the current one: outside any
/// [`scratch`] call, all of them; inside one, those that only deeper calls would use. The arenas
/// of the calls in progress, the caller's own included, keep their pages. The next [`scratch`]
/// call at a released depth starts a new arena, as the thread's first call did.
///
/// ```
/// use arena_kit::arena::{ThreadScratch, scratch_release};
/// use arena_kit::scratch;
/// use arena_kit::tags::MemoryUsage;
///
/// // A one-off large temporary (256 KiB, four scratch pages' worth): the thread keeps a page
/// // that size for its next calls...
/// scratch(|a| a.alloc_slice_fill_copy(1 << 18, 0u8).len());
/// assert!(ThreadScratch.usage().reserved >= 1 << 18);
/// // ...until it is released.
/// assert!(scratch_release() >= 1 << 18);
/// assert_eq!(ThreadScratch.usage().reserved, 0);
/// assert_eq!(scratch(|a| *a.alloc(7u32)), 7);
/// ```
///
/// While the thread exits, once its scratch arenas are gone, there is nothing to release: 0.
pub fn scratch_release() -> usize {
    SCRATCH.try_with(ScratchStack::release).unwrap_or(0)
}

/// The current scratch nesting depth of this thread (0 outside any [`scratch`] call). While the
/// thread exits, once its scratch arenas are gone, [`scratch`] runs each call on a temporary
/// arena of its own, which this does not count: it is 0 there, inside those calls too.
pub fn scratch_depth() -> usize {
    SCRATCH.try_with(|s| s.depth.get()).unwrap_or(0)
}

/// This thread's scratch arenas as one allocator, for reports: pass it to
/// [`Registry::end_frame`](crate::tags::Registry::end_frame) as a source, e.g.
/// `("scratch", MyTag::Temp, ThreadScratch)`.
///
/// Its [`usage`](MemoryUsage::usage) sums the scratch arenas of the thread that calls it (one per
/// nesting depth reached so far): outside any [`scratch`] call their `current` is 0 (each is
/// reset when its call returns), while the peak and reserved bytes show what the thread's
/// temporaries needed.
///
/// ```
/// use arena_kit::arena::ThreadScratch;
/// use arena_kit::scratch;
/// use arena_kit::tags::MemoryUsage;
///
/// scratch(|a| {
///     a.alloc([0u8; 100]);
///     assert_eq!(ThreadScratch.usage().current, 100);
/// });
/// let after = ThreadScratch.usage();
/// assert_eq!(after.current, 0);
/// assert!(after.peak >= 100);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadScratch;

impl MemoryUsage for ThreadScratch {
    fn usage(&self) -> Usage {
        SCRATCH.try_with(ScratchStack::usage).unwrap_or_default()
    }
}

impl ScratchStack {
    /// The sum over this thread's scratch arenas, skipping those a reset in progress may hold
    /// mutably (the one being reset and any deeper one).
    fn usage(&self) -> Usage {
        let Ok(arenas) = self.arenas.try_borrow() else {
            return Usage::default();
        };
        let resetting = self.resetting.get();
        arenas
            .iter()
            .enumerate()
            .filter(|&(i, _)| i < resetting)
            .map(|(_, arena)| arena.usage())
            .fold(Usage::default(), |a, b| a + b)
    }

    /// Drops the arenas no call in progress uses (depths at and below the current one) and
    /// returns the bytes they held. The arenas in use are those of depths `0..depth`, the one a
    /// reset in progress holds among them (`resetting` is below `depth` while its call is
    /// counted); every other arena is reset and held by nobody.
    fn release(&self) -> usize {
        let Ok(mut arenas) = self.arenas.try_borrow_mut() else {
            // `run` or `usage` of this thread holds the list: only for the moment it takes a
            // pointer or sums, which runs no code that could get here.
            return 0;
        };
        let in_use = self.depth.get().min(arenas.len());
        let idle = arenas.split_off(in_use);
        drop(arenas);
        let bytes = idle.iter().map(|arena| arena.system_bytes()).sum();
        // Dropped outside the borrow: an arena's drop gives its pages back to the global
        // allocator, which may be one that calls back into this thread's scratch.
        drop(idle);
        bytes
    }

    fn run<R>(&self, f: impl FnOnce(&Arena) -> R) -> R {
        let depth = self.depth.get();
        let arena: *mut Arena = {
            let mut arenas = self.arenas.borrow_mut();
            if arenas.len() == depth {
                arenas.push(Box::new(Arena::chained(SCRATCH_PAGE)));
            }
            &raw mut *arenas[depth]
        };
        self.depth.set(depth + 1);

        /// Resets this depth's arena, then pops the depth, also when `f` or a destructor panics.
        /// The depth is popped only after the reset: a destructor run by the reset that calls
        /// [`scratch`] must get the next arena, not the one being reset.
        struct Pop<'a> {
            stack: &'a ScratchStack,
            arena: *mut Arena,
            depth: usize,
        }
        impl Drop for Pop<'_> {
            fn drop(&mut self) {
                /// Pops the depth even if a destructor run by the reset panics.
                struct Depth<'a>(&'a ScratchStack, usize);
                impl Drop for Depth<'_> {
                    fn drop(&mut self) {
                        self.0.depth.set(self.1);
                    }
                }
                /// Ends the reset mark even if a destructor run by the reset panics.
                struct Resetting<'a>(&'a ScratchStack, usize);
                impl Drop for Resetting<'_> {
                    fn drop(&mut self) {
                        self.0.resetting.set(self.1);
                    }
                }
                let _depth = Depth(self.stack, self.depth);
                // The outermost reset in progress keeps its mark: a reset nested in one of its
                // destructors is deeper, and must not unmark the arena held below it.
                let outer = self.stack.resetting.get();
                let _resetting = Resetting(
                    self.stack,
                    self.stack.resetting.replace(outer.min(self.depth)),
                );
                // SAFETY: the arena is boxed and owned by the stack, which outlives this call;
                // only depth `self.depth` uses it and its closure has returned, so no borrow of
                // it remains. The depth still counts this call while the reset runs, so a
                // `scratch` call from a destructor gets a deeper arena, never this one, and
                // `ThreadScratch` skips this depth while `resetting` is at or below it.
                let arena = unsafe { &mut *self.arena };
                // What the closure set through `&Arena` (a limit, a budget) was for its own
                // call: the next caller gets the arena as `scratch` made it. Taken off before
                // the reset, which a limit would keep from merging the pages.
                arena.set_limit(None);
                arena.apply_budget(None);
                arena.reset();
            }
        }
        let _pop = Pop {
            stack: self,
            arena,
            depth,
        };
        // SAFETY: the arena is boxed and owned by the stack, which outlives this call; while `f`
        // runs (and while `Pop` resets the arena) the depth counts this call, so nested calls
        // use deeper arenas, never this one.
        f(unsafe { &*arena })
    }
}
