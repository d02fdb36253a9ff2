//! Scopes: the stack allocator with LIFO enforced by the borrow checker.

use core::ops::Deref;

use super::marker::ListHeads;
use super::{Arena, Marker};

/// A guard from [`Arena::scope`]: allocate through it (it dereferences to the [`Arena`]);
/// dropping it rewinds the arena to where the scope began, dropping what was allocated inside.
///
/// Scopes nest through [`Scope::scope`]. Values borrow the scope they came from, so one cannot
/// outlive its scope, and an outer scope cannot be used while an inner one is open: LIFO order
/// is checked at compile time. The price of that check: a value allocated in a scope (or in the
/// arena) cannot be used while a nested scope is open; keep data that must survive inner scopes
/// in an arena or buffer of its own.
///
/// ```
/// use arena_kit::Arena;
///
/// let mut arena = Arena::with_capacity(1024);
/// arena.alloc(1u32);
/// {
///     let mut outer = arena.scope();
///     outer.alloc([0u8; 100]);
///     {
///         let inner = outer.scope();
///         inner.alloc([0u8; 500]);
///         assert!(inner.used() >= 604);
///     } // inner's 500 bytes are free again
///     assert_eq!(outer.used(), 104);
/// }
/// assert_eq!(arena.used(), 4);
/// ```
///
/// # Variance
///
/// Covariant in `'a`, like the `&'a mut Arena` it holds. Shortening `'a` is sound: values allocated
/// through a scope borrow the scope itself (not `'a`), a nested scope mutably borrows its parent,
/// and no `&mut Arena` is handed out, so a scope can neither outlive its arena nor be outlived by
/// its values or its nested scopes.
pub struct Scope<'a> {
    arena: &'a mut Arena,
    start: Marker,
    /// The arena's drop and guard lists when the scope began: still the same at its end when
    /// nothing inside needs dropping or checking.
    heads: ListHeads,
}

impl Arena {
    /// Opens a scope: everything allocated through the returned guard is freed (and dropped)
    /// when the guard is dropped. The arena itself is borrowed until then.
    #[inline]
    pub fn scope(&mut self) -> Scope<'_> {
        let start = self.mark();
        let heads = self.list_heads();
        Scope {
            arena: self,
            start,
            heads,
        }
    }
}

impl Scope<'_> {
    /// Opens a nested scope; this one is unusable until the nested one is dropped.
    pub fn scope(&mut self) -> Scope<'_> {
        self.arena.scope()
    }

    /// Frees everything allocated in this scope so far, keeping the scope open.
    pub fn clear(&mut self) {
        self.arena.rewind_scope(self.start, self.heads);
    }

    /// The marker where this scope began.
    pub fn start(&self) -> Marker {
        self.start
    }
}

impl Deref for Scope<'_> {
    type Target = Arena;
    fn deref(&self) -> &Arena {
        self.arena
    }
}

impl Drop for Scope<'_> {
    #[inline]
    fn drop(&mut self) {
        self.arena.rewind_scope(self.start, self.heads);
    }
}

impl core::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Scope")
            .field("start", &self.start.used())
            .field("arena", &*self.arena)
            .finish()
    }
}
