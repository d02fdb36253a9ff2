//! [`ArenaBox`]: one value (or a slice of them) in an [`Arena`](crate::Arena), dropped when the
//! box is dropped.

use core::borrow::{Borrow, BorrowMut};
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

use crate::arena::Arena;

/// A value in an [`Arena`] that is dropped when the box is dropped, as `Box<T>` drops its value;
/// the memory stays used until the arena's next reset or rewind. bumpalo's `boxed::Box` and
/// bump-scope's `BumpBox`. Made by [`Arena::alloc_box`] or [`ArenaBox::new_in`]; a boxed slice,
/// `ArenaBox<[T]>` (dropping its values in index order, as `Box<[T]>` does), by
/// [`Arena::alloc_box_slice_fill_with`], [`Arena::alloc_box_slice_fill_iter`] or
/// [`ArenaVec::into_boxed_slice`](crate::collections::ArenaVec::into_boxed_slice).
///
/// Pick it over [`Arena::alloc`] when the caller holds the value anyway and wants it dropped
/// early, or when the value borrows (`alloc` asks for `'static`, because the arena drops its
/// values later, when what they borrow may be gone; a box drops its value while the borrow is
/// still alive). The arena registers nothing for a box, so a box costs what a bump and a move
/// cost. A box that is leaked ([`ArenaBox::leak`], `mem::forget`) never drops its value; its
/// memory still goes back at reset.
///
/// ```
/// use arena_kit::Arena;
/// use arena_kit::collections::{ArenaBox, ArenaVec};
///
/// struct Mesh<'a> { name: &'a str, verts: Vec<[f32; 3]> }
///
/// let name = String::from("rock"); // borrowed by the meshes: `alloc` would refuse them
/// let mut arena = Arena::new();
/// {
///     let mut meshes = ArenaVec::new_in(&arena);
///     for _ in 0..3 {
///         let mesh: ArenaBox<Mesh> = arena.alloc_box(Mesh { name: &name, verts: vec![[0.0; 3]] });
///         meshes.push(mesh);
///     }
///     assert_eq!(meshes[2].name, "rock");
///     meshes[0].verts.push([1.0, 0.0, 0.0]); // `DerefMut`
///     let first = ArenaBox::into_inner(meshes.remove(0)); // moved out of the arena
///     assert_eq!(first.verts.len(), 2);
/// } // the other two meshes (and their `Vec`s) are dropped here, with `meshes`
/// arena.reset(); // their memory goes back
///
/// // A slice of boxes, as bump-scope's `alloc_slice_fill_with` gives a `BumpBox<[T]>`:
/// {
///     let a = &arena;
///     let rocks = a.alloc_box_slice_fill_with(4, |i| a.alloc_box(Mesh { name: &name, verts: vec![[i as f32; 3]] }));
///     assert_eq!(rocks[3].verts[0], [3.0; 3]);
///     assert_eq!(a.pending_drops(), 0); // the arena registers nothing
/// } // the four meshes are dropped here, in index order
/// ```
///
/// # Variance, borrows and threads
///
/// Covariant in `'a` and `T`, like `Box<T>` with a `&'a Arena`. The box borrows the arena
/// shared, so while it lives the arena cannot be reset, rewound or opened for a
/// [`scope`](Arena::scope) (those take `&mut`), and a box made from a scope cannot outlive it.
/// `Send` when `T` is and `Sync` when `T` is, as `Box<T>`: the box reaches its value only, never
/// the arena (nothing the arena does through `&self` touches the memory of a value it handed
/// out), so the arena may go on allocating on its own thread meanwhile.
pub struct ArenaBox<'a, T: ?Sized> {
    ptr: NonNull<T>,
    /// The arena's shared borrow: its memory stays put while the box lives.
    _arena: PhantomData<&'a Arena>,
    /// The box owns its value (drop check).
    _owns: PhantomData<T>,
}

// SAFETY: the box is the only handle to its value (made from memory the arena handed out once
// and never reaches again until a reset, which the box's borrow rules out), so sending the box
// sends the value: sound when `T: Send`, as for `Box<T>`. It holds no reference to the arena.
unsafe impl<T: ?Sized + Send> Send for ArenaBox<'_, T> {}

// SAFETY: through `&ArenaBox` only `&T` is reachable, so sharing the box shares the value:
// sound when `T: Sync`, as for `Box<T>`.
unsafe impl<T: ?Sized + Sync> Sync for ArenaBox<'_, T> {}

/// Moving the box does not move its value, as for `Box<T>`.
impl<T: ?Sized> Unpin for ArenaBox<'_, T> {}

impl<'a, T> ArenaBox<'a, T> {
    /// Moves `value` into `arena`: [`Arena::alloc_box`].
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`](crate::arena::ArenaError) text when the arena is full
    /// ([`Arena::try_alloc_box`] hands the value back instead).
    #[inline(always)]
    #[track_caller]
    pub fn new_in(value: T, arena: &'a Arena) -> Self {
        arena.alloc_box(value)
    }

    /// Moves the value out; its memory stays used until the arena's next reset or rewind.
    /// An associated function (`ArenaBox::into_inner(b)`), so it does not hide a method of `T`.
    #[inline]
    pub fn into_inner(b: Self) -> T {
        let b = ManuallyDrop::new(b);
        // SAFETY: the value is initialised (see `from_raw`) and the box, which will not drop it
        // (`ManuallyDrop`), is consumed: this is its only read.
        unsafe { b.ptr.as_ptr().read() }
    }
}

impl<'a, T: ?Sized> ArenaBox<'a, T> {
    /// A box over `ptr`.
    ///
    /// # Safety
    ///
    /// - `ptr` points to an initialised `T` (for a slice, its elements) in memory that stays
    ///   valid and unused by anything else for `'a` (arena memory handed out once, which the
    ///   arena does not drop or reach; dangling and aligned where that is no bytes).
    #[inline(always)]
    pub(crate) unsafe fn from_raw(ptr: NonNull<T>) -> Self {
        ArenaBox {
            ptr,
            _arena: PhantomData,
            _owns: PhantomData,
        }
    }

    /// The value for as long as the arena's borrow lasts, never dropped (its memory goes back at
    /// the arena's next reset or rewind), as `Box::leak`.
    #[inline]
    pub fn leak(b: Self) -> &'a mut T {
        let b = ManuallyDrop::new(b);
        // SAFETY: the value is initialised and valid for `'a` (see `from_raw`); the box is
        // consumed without dropping it, so this is the only reference.
        unsafe { &mut *b.ptr.as_ptr() }
    }

    /// A pointer to the value, valid while the box lives (as `Box::as_ptr`).
    #[inline]
    pub fn as_ptr(b: &Self) -> *const T {
        b.ptr.as_ptr()
    }

    /// A mutable pointer to the value, valid while the box lives (as `Box::as_mut_ptr`).
    #[inline]
    pub fn as_mut_ptr(b: &mut Self) -> *mut T {
        b.ptr.as_ptr()
    }
}

impl<T: ?Sized> Drop for ArenaBox<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the value is initialised and only the box reaches it (see `from_raw`); it is
        // dropped once, here. A destructor that panics leaves nothing to drop again: the
        // memory is the arena's, which never drops it.
        unsafe { self.ptr.as_ptr().drop_in_place() }
    }
}

impl<T: ?Sized> Deref for ArenaBox<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: initialised, and shared for as long as the box is (see `from_raw`).
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: ?Sized> DerefMut for ArenaBox<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: initialised, and the box's `&mut` is the only way to it (see `from_raw`).
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: ?Sized> AsRef<T> for ArenaBox<'_, T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: ?Sized> AsMut<T> for ArenaBox<'_, T> {
    fn as_mut(&mut self) -> &mut T {
        self
    }
}

impl<T: ?Sized> Borrow<T> for ArenaBox<'_, T> {
    fn borrow(&self) -> &T {
        self
    }
}

impl<T: ?Sized> BorrowMut<T> for ArenaBox<'_, T> {
    fn borrow_mut(&mut self) -> &mut T {
        self
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ArenaBox<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for ArenaBox<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

/// The value's address, as for `Box` (for a slice, its address and length, as `Box<[T]>`
/// prints them).
impl<T: ?Sized> fmt::Pointer for ArenaBox<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.ptr, f)
    }
}

impl<T: ?Sized + PartialEq> PartialEq for ArenaBox<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: ?Sized + Eq> Eq for ArenaBox<'_, T> {}

impl<T: ?Sized + PartialOrd> PartialOrd for ArenaBox<'_, T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: ?Sized + Ord> Ord for ArenaBox<'_, T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (**self).cmp(&**other)
    }
}

impl<T: ?Sized + Hash> Hash for ArenaBox<'_, T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

/// Moves the values out, front to back: `for value in boxed_slice`. The values not taken are
/// dropped with the iterator; the memory stays used until the arena's next reset or rewind.
impl<'a, T> IntoIterator for ArenaBox<'a, [T]> {
    type Item = T;
    type IntoIter = IntoIter<'a, T>;

    fn into_iter(self) -> IntoIter<'a, T> {
        let b = ManuallyDrop::new(self);
        IntoIter {
            ptr: b.ptr.cast::<T>(),
            front: 0,
            back: b.ptr.len(),
            _arena: PhantomData,
            _owns: PhantomData,
        }
    }
}

impl<'b, T> IntoIterator for &'b ArenaBox<'_, [T]> {
    type Item = &'b T;
    type IntoIter = core::slice::Iter<'b, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'b, T> IntoIterator for &'b mut ArenaBox<'_, [T]> {
    type Item = &'b mut T;
    type IntoIter = core::slice::IterMut<'b, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// The values of a boxed slice ([`ArenaBox<[T]>`](ArenaBox)) or an
/// [`ArenaVec`](crate::collections::ArenaVec), moved out one by one, from either end
/// (`vec::IntoIter`). Dropping the iterator drops the values not taken; their memory stays
/// used until the arena's next reset or rewind.
///
/// ```
/// use arena_kit::Arena;
///
/// let arena = Arena::with_capacity(1024);
/// let names = arena.alloc_box_slice_fill_with(3, |i| format!("orc {i}"));
/// let mut names = names.into_iter();
/// let first: String = names.next().unwrap(); // moved out of the arena
/// assert_eq!(first, "orc 0");
/// assert_eq!(names.next_back().as_deref(), Some("orc 2"));
/// assert_eq!(names.as_slice(), ["orc 1"]);
/// drop(names); // drops "orc 1"
/// ```
///
/// # Variance and threads
///
/// Covariant in `'a` and `T`; `Send` and `Sync` as `T` is, as `vec::IntoIter<T>`.
pub struct IntoIter<'a, T> {
    ptr: NonNull<T>,
    /// The values at `[front, back)` are still in place and owned by the iterator.
    front: usize,
    back: usize,
    /// The arena's shared borrow: its memory stays put while the iterator lives.
    _arena: PhantomData<&'a Arena>,
    /// The iterator owns the values left (drop check).
    _owns: PhantomData<T>,
}

// SAFETY: the iterator is the only handle to the values left (taken over from the box that
// owned them), so sending it sends them: sound when `T: Send`, as for `vec::IntoIter<T>`. It
// holds no reference to the arena.
unsafe impl<T: Send> Send for IntoIter<'_, T> {}

// SAFETY: through `&IntoIter` only `&[T]` is reachable (`as_slice`), so sharing it shares the
// values: sound when `T: Sync`.
unsafe impl<T: Sync> Sync for IntoIter<'_, T> {}

impl<T> IntoIter<'_, T> {
    /// The values not taken yet.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `[front, back)` holds initialised values the iterator owns, inside the box's
        // slice (dangling and aligned for a zero-sized `T`).
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().add(self.front), self.len()) }
    }

    /// The values not taken yet, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only reference.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr().add(self.front), self.len()) }
    }
}

impl<T> Iterator for IntoIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.front == self.back {
            return None;
        }
        // SAFETY: `front < back`: the value there is initialised and owned by the iterator;
        // `front` moves past it, so it is read (moved out) once.
        let value = unsafe { self.ptr.as_ptr().add(self.front).read() };
        self.front += 1;
        Some(value)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl<T> DoubleEndedIterator for IntoIter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        // SAFETY: the value at the old `back - 1` is initialised and owned by the iterator;
        // `back` moved before it, so it is read (moved out) once.
        Some(unsafe { self.ptr.as_ptr().add(self.back).read() })
    }
}

impl<T> ExactSizeIterator for IntoIter<'_, T> {}

impl<T> core::iter::FusedIterator for IntoIter<'_, T> {}

impl<T: fmt::Debug> fmt::Debug for IntoIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IntoIter").field(&self.as_slice()).finish()
    }
}

impl<T> Drop for IntoIter<'_, T> {
    fn drop(&mut self) {
        let rest: *mut [T] = self.as_mut_slice();
        // SAFETY: the values left are initialised and owned by the iterator, dropped once here
        // (a destructor that panics still lets the slice's drop glue drop the others, and the
        // iterator is not dropped again).
        unsafe { rest.drop_in_place() };
    }
}
