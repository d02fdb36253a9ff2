//! Slice and fallible constructors beside [`Arena::alloc_slice_fill_with`]: from an iterator, by
//! cloning, by copying one value, from `Default`, and constructors that may fail. All of them
//! build through the one slice builder in `typed.rs`, so a panicking `Clone`, iterator or closure
//! drops the values already built (bump-scope does the same; bumpalo, which never drops, leaks
//! them) and leaves the arena usable: their space is given back when nothing was allocated after
//! it meanwhile (as bumpalo does), else it stays used until the next reset or rewind.
//! Types that need dropping register their drop as [`Arena::alloc`] does, so they are
//! `Send + 'static` ([`ArenaDrop`]); the `alloc_box_slice_*` forms register nothing and hand
//! the values to an [`ArenaBox`], which drops them, so they take any type.

// Handing out `&mut T` from `&self` is the point of an arena: each call returns fresh memory.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;

use super::typed::{dangling, fail};
use super::{AllocOrInitError, Arena, ArenaDrop, ArenaError};
use crate::collections::ArenaBox;
use crate::or_panic::OrFail;

/// Panics for an `ExactSizeIterator` that ran out before its `len()`.
#[cold]
#[inline(never)]
#[track_caller]
fn too_short(expected: usize, got: usize) -> ! {
    panic!(
        "the iterator's len() promised {expected} elements but it ended after {got}: its \
         ExactSizeIterator impl is wrong (collect into a Vec first, or fix the impl)"
    )
}

impl Arena {
    /// Allocates a slice holding the items of `iter`, which must know its length
    /// (`ExactSizeIterator`): one allocation of exactly `len()` elements, no growth.
    ///
    /// An iterator whose `len()` lies cannot corrupt the arena: if it yields more items, only
    /// the first `len()` are taken (the rest stay in the iterator); if it yields fewer, this
    /// panics after dropping the items already taken.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::new();
    /// let squares = arena.alloc_slice_fill_iter((1..5u32).map(|i| i * i));
    /// assert_eq!(squares, [1, 4, 9, 16]);
    /// let names = arena.alloc_slice_fill_iter(["ada", "bob"].map(String::from));
    /// assert_eq!(names[1], "bob");
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full; if the iterator panics; if it
    /// yields fewer items than its `len()` promised.
    #[track_caller]
    pub fn alloc_slice_fill_iter<T, I>(&self, iter: I) -> &mut [T]
    where
        T: ArenaDrop + 'static,
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.try_alloc_slice_fill_iter(iter).or_fail()
    }

    /// [`alloc_slice_fill_iter`](Arena::alloc_slice_fill_iter), returning an error instead of
    /// panicking when the arena is full.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`], or as [`try_alloc_layout`](Arena::try_alloc_layout); the
    /// iterator is not advanced then.
    ///
    /// # Panics
    ///
    /// If the iterator panics, or yields fewer items than its `len()` promised (the items
    /// taken are dropped first).
    #[track_caller]
    pub fn try_alloc_slice_fill_iter<T, I>(&self, iter: I) -> Result<&mut [T], ArenaError>
    where
        T: ArenaDrop + 'static,
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut iter = iter.into_iter();
        let len = iter.len();
        self.try_alloc_slice_fill_with(len, |i| iter.next().unwrap_or_else(|| too_short(len, i)))
    }

    /// Allocates the items of `iter`, which must know its length (`ExactSizeIterator`), in an
    /// [`ArenaBox`] that drops them when it is dropped: as
    /// [`alloc_slice_fill_iter`](Arena::alloc_slice_fill_iter) does, for any type (the arena
    /// registers nothing), as
    /// [`alloc_box_slice_fill_with`](Arena::alloc_box_slice_fill_with) does for a closure.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let text = String::from("fire ice");
    /// let arena = Arena::new();
    /// let words = arena.alloc_box_slice_fill_iter(text.split(' ').map(|w| (w, w.len())).collect::<Vec<_>>());
    /// assert_eq!(*words, [("fire", 4), ("ice", 3)]);
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full; if the iterator panics; if it
    /// yields fewer items than its `len()` promised (the items taken are dropped first).
    #[track_caller]
    pub fn alloc_box_slice_fill_iter<T, I>(&self, iter: I) -> ArenaBox<'_, [T]>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.try_alloc_box_slice_fill_iter(iter).or_fail()
    }

    /// [`alloc_box_slice_fill_iter`](Arena::alloc_box_slice_fill_iter), returning an error
    /// instead of panicking when the arena is full.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`], or as [`try_alloc_layout`](Arena::try_alloc_layout); the
    /// iterator is not advanced then.
    ///
    /// # Panics
    ///
    /// If the iterator panics, or yields fewer items than its `len()` promised (the items
    /// taken are dropped first).
    #[track_caller]
    pub fn try_alloc_box_slice_fill_iter<T, I>(
        &self,
        iter: I,
    ) -> Result<ArenaBox<'_, [T]>, ArenaError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut iter = iter.into_iter();
        let len = iter.len();
        self.try_alloc_box_slice_fill_with(len, |i| {
            iter.next().unwrap_or_else(|| too_short(len, i))
        })
    }

    /// Allocates clones of the elements of `src`. If a `clone` panics, the clones already made
    /// are dropped and the panic goes on.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::new();
    /// let words = [String::from("fire"), String::from("ice")];
    /// let copy = arena.alloc_slice_clone(&words);
    /// copy[0].push('!');
    /// assert_eq!(copy, ["fire!", "ice"]);
    /// assert_eq!(words[0], "fire");
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full; if a `clone` panics.
    #[track_caller]
    pub fn alloc_slice_clone<T: Clone + ArenaDrop + 'static>(&self, src: &[T]) -> &mut [T] {
        self.try_alloc_slice_clone(src).or_fail()
    }

    /// [`alloc_slice_clone`](Arena::alloc_slice_clone), returning an error instead of
    /// panicking when the arena is full.
    ///
    /// # Errors
    ///
    /// As [`try_alloc_layout`](Arena::try_alloc_layout); nothing is cloned then.
    pub fn try_alloc_slice_clone<T: Clone + ArenaDrop + 'static>(
        &self,
        src: &[T],
    ) -> Result<&mut [T], ArenaError> {
        self.try_alloc_slice_fill_with(src.len(), |i| src[i].clone())
    }

    /// Allocates `len` copies of `value`. Takes any `Copy` type (nothing to drop, so no
    /// `'static` or `Send` bound), borrowed ones included.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::new();
    /// let name = String::from("tile");
    /// let grid = arena.alloc_slice_fill_copy(6, (0u8, name.as_str()));
    /// assert_eq!(grid.len(), 6);
    /// assert!(grid.iter().all(|&(n, s)| n == 0 && s == "tile"));
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full or the size overflows.
    #[track_caller]
    pub fn alloc_slice_fill_copy<T: Copy>(&self, len: usize, value: T) -> &mut [T] {
        self.try_alloc_slice_fill_copy(len, value).or_fail()
    }

    /// [`alloc_slice_fill_copy`](Arena::alloc_slice_fill_copy), returning an error instead of
    /// panicking.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`], or as [`try_alloc_layout`](Arena::try_alloc_layout).
    pub fn try_alloc_slice_fill_copy<T: Copy>(
        &self,
        len: usize,
        value: T,
    ) -> Result<&mut [T], ArenaError> {
        let array = Layout::array::<T>(len).map_err(|_| ArenaError::SizeOverflow {
            elem_size: size_of::<T>(),
            count: len,
        })?;
        let ptr = if array.size() == 0 {
            dangling(array.align())
        } else {
            self.raw_alloc::<false>(array)?
        }
        .cast::<T>();
        // A zero-sized `T` has no bytes to write, and `len` may be up to `usize::MAX`: no loop
        // (debug builds would run it).
        if size_of::<T>() != 0 {
            for i in 0..len {
                // SAFETY: `i < len`, inside the array just allocated.
                unsafe { ptr.add(i).write(value) };
            }
        }
        // SAFETY: all `len` values are initialised (a zero-sized value has no bytes, and `T` is
        // `Copy`, so `value` may be repeated); the memory is fresh and borrowed for the arena's
        // borrow.
        Ok(unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr(), len) })
    }

    /// Allocates `len` values of `T::default()`.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::new();
    /// let buckets: &mut [Vec<u32>] = arena.alloc_slice_fill_default(3);
    /// buckets[1].push(7);
    /// assert_eq!(buckets, [vec![], vec![7], vec![]]);
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full or the size overflows; if `default`
    /// panics.
    #[track_caller]
    pub fn alloc_slice_fill_default<T: Default + ArenaDrop + 'static>(
        &self,
        len: usize,
    ) -> &mut [T] {
        self.try_alloc_slice_fill_default(len).or_fail()
    }

    /// [`alloc_slice_fill_default`](Arena::alloc_slice_fill_default), returning an error instead
    /// of panicking when the arena is full.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`], or as [`try_alloc_layout`](Arena::try_alloc_layout).
    pub fn try_alloc_slice_fill_default<T: Default + ArenaDrop + 'static>(
        &self,
        len: usize,
    ) -> Result<&mut [T], ArenaError> {
        self.try_alloc_slice_fill_with(len, |_| T::default())
    }

    /// Builds a value with a constructor that may fail. On `Ok` the value is in the arena
    /// (dropped like one from [`alloc`](Arena::alloc)); on `Err` the error is returned and
    /// nothing is registered (the value's space is given back if nothing was allocated after it
    /// meanwhile).
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::new();
    /// let port: &mut u16 = arena.alloc_try_with(|| "8080".parse()).unwrap();
    /// assert_eq!(*port, 8080);
    /// assert!(arena.alloc_try_with(|| "80x".parse::<u16>()).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// The constructor's error.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full; if `f` panics.
    #[track_caller]
    pub fn alloc_try_with<T, E, F>(&self, f: F) -> Result<&mut T, E>
    where
        T: ArenaDrop + 'static,
        F: FnOnce() -> Result<T, E>,
    {
        self.try_alloc_try_with(f).map_err(|e| match e {
            AllocOrInitError::Alloc(e) => fail(e),
            AllocOrInitError::Init(e) => e,
        })
    }

    /// [`alloc_try_with`](Arena::alloc_try_with), returning the arena's error too instead of
    /// panicking.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::arena::AllocOrInitError;
    ///
    /// let arena = Arena::with_capacity(8);
    /// let big = arena.try_alloc_try_with(|| Ok::<_, ()>([0u8; 64]));
    /// assert!(matches!(big, Err(AllocOrInitError::Alloc(_))));
    /// let bad = arena.try_alloc_try_with(|| Err::<u8, _>("no"));
    /// assert_eq!(bad.unwrap_err().init_error(), Some("no"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`AllocOrInitError::Alloc`] as [`try_alloc_layout`](Arena::try_alloc_layout) (`f` is not
    /// called then), [`AllocOrInitError::Init`] with the constructor's error.
    pub fn try_alloc_try_with<T, E, F>(&self, f: F) -> Result<&mut T, AllocOrInitError<E>>
    where
        T: ArenaDrop + 'static,
        F: FnOnce() -> Result<T, E>,
    {
        let mut f = Some(f);
        let slice = self.build_slice(1, |_| {
            (f.take().expect("the builder calls the constructor once"))()
        })?;
        Ok(&mut slice[0])
    }

    /// Allocates `len` values built by `f(index)` in index order, stopping at the first error:
    /// the values built before it are dropped and the error is returned.
    ///
    /// ```
    /// use arena_kit::Arena;
    ///
    /// let arena = Arena::new();
    /// let text = ["3", "1", "4"];
    /// let digits = arena.alloc_slice_try_fill_with(3, |i| text[i].parse::<u8>()).unwrap();
    /// assert_eq!(digits, [3, 1, 4]);
    /// let bad = ["3", "x"];
    /// assert!(arena.alloc_slice_try_fill_with(2, |i| bad[i].parse::<u8>()).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// The first error `f` returns.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena is full or the size overflows; if `f`
    /// panics.
    #[track_caller]
    pub fn alloc_slice_try_fill_with<T, E, F>(&self, len: usize, f: F) -> Result<&mut [T], E>
    where
        T: ArenaDrop + 'static,
        F: FnMut(usize) -> Result<T, E>,
    {
        self.build_slice(len, f).map_err(|e| match e {
            AllocOrInitError::Alloc(e) => fail(e),
            AllocOrInitError::Init(e) => e,
        })
    }

    /// [`alloc_slice_try_fill_with`](Arena::alloc_slice_try_fill_with), returning the arena's
    /// error too instead of panicking.
    ///
    /// # Errors
    ///
    /// [`AllocOrInitError::Alloc`] with [`ArenaError::SizeOverflow`] or as
    /// [`try_alloc_layout`](Arena::try_alloc_layout) (`f` is not called then),
    /// [`AllocOrInitError::Init`] with the first error of `f`.
    pub fn try_alloc_slice_try_fill_with<T, E, F>(
        &self,
        len: usize,
        f: F,
    ) -> Result<&mut [T], AllocOrInitError<E>>
    where
        T: ArenaDrop + 'static,
        F: FnMut(usize) -> Result<T, E>,
    {
        self.build_slice(len, f)
    }
}
