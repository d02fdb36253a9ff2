//! [`ArenaVec`]: a growable array whose buffer lives in an [`Arena`].

use core::alloc::Layout;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut, RangeBounds};
use core::ptr::{self, NonNull};

use super::{ArenaBox, ArenaFull};
use crate::arena::{Arena, ArenaDrop, ArenaError};
use crate::or_panic::OrPanic;
use crate::range::range_or_panic;

/// A `Vec` whose buffer lives in an [`Arena`]: `push`, `pop`, `insert`, `remove`, `extend`,
/// slices through `Deref`. Growing the newest allocation of the arena extends it in place (no
/// copy); otherwise the buffer moves to a new block and the old one stays used until the
/// arena's next reset or rewind, so grow it before allocating other things, or give it a
/// [`with_capacity_in`](ArenaVec::with_capacity_in).
///
/// Dropping an `ArenaVec` drops its elements (and gives its buffer back if it is still the
/// arena's newest allocation). [`into_slice`](ArenaVec::into_slice) leaves the elements in the
/// arena for the arena's lifetime instead, to be dropped on its reset, rewind or drop like
/// [`Arena::alloc`]'s values; [`into_slice_no_drop`](ArenaVec::into_slice_no_drop) never drops
/// them.
///
/// ```
/// use arena_kit::Arena;
/// use arena_kit::collections::ArenaVec;
///
/// let arena = Arena::new();
/// let mut hits = ArenaVec::new_in(&arena);
/// for id in [3u32, 1, 4, 1, 5] {
///     hits.push(id);
/// }
/// hits.sort_unstable(); // slice methods through `DerefMut`
/// assert_eq!(hits, [1, 1, 3, 4, 5]);
/// let hits: &mut [u32] = hits.into_slice(); // stays in the arena, borrowed from it
/// assert_eq!(hits.len(), 5);
/// ```
///
/// # Variance and borrows
///
/// Covariant in `'a` and `T`, like `Vec<T>` with a `&'a Arena`. The vector borrows the arena
/// shared, so while it lives the arena cannot be reset, rewound or opened for a
/// [`scope`](Arena::scope) (those take `&mut`): a vector made outside a scope cannot grow into
/// memory the scope will rewind. One made from a scope borrows the scope and cannot outlive it.
/// Neither `Send` nor `Sync`: it holds a `&Arena`, and the arena is not `Sync`.
pub struct ArenaVec<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    /// Elements the buffer holds; `usize::MAX` for zero-sized `T` (never allocated).
    cap: usize,
    arena: &'a Arena,
    /// The vector owns its elements (drop check).
    _owns: PhantomData<T>,
}

impl<'a, T> ArenaVec<'a, T> {
    /// An empty vector; nothing is allocated until the first element.
    pub fn new_in(arena: &'a Arena) -> Self {
        ArenaVec {
            ptr: NonNull::dangling(),
            len: 0,
            cap: if size_of::<T>() == 0 { usize::MAX } else { 0 },
            arena,
            _owns: PhantomData,
        }
    }

    /// An empty vector with room for `capacity` elements, allocated now.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut v = ArenaVec::<u64>::with_capacity_in(10, &arena);
    /// let before = arena.used();
    /// v.extend(0..10);
    /// assert_eq!(arena.used(), before); // no growth needed
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room or the size overflows.
    #[track_caller]
    pub fn with_capacity_in(capacity: usize, arena: &'a Arena) -> Self {
        Self::try_with_capacity_in(capacity, arena).or_panic("")
    }

    /// [`with_capacity_in`](ArenaVec::with_capacity_in), returning an error instead of
    /// panicking.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`] or as [`Arena::try_alloc_layout`].
    pub fn try_with_capacity_in(capacity: usize, arena: &'a Arena) -> Result<Self, ArenaError> {
        let mut v = Self::new_in(arena);
        v.grow_to(capacity)?;
        Ok(v)
    }

    /// Builds a vector from an iterator.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room; if the iterator panics (the
    /// elements taken so far are dropped).
    #[track_caller]
    pub fn from_iter_in<I: IntoIterator<Item = T>>(iter: I, arena: &'a Arena) -> Self {
        let mut v = Self::new_in(arena);
        v.extend(iter);
        v
    }

    /// The arena the buffer lives in.
    pub fn arena(&self) -> &'a Arena {
        self.arena
    }

    /// Elements the buffer holds without growing.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The elements as a slice.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the first `len` elements are initialised; the buffer lives as long as the
        // arena borrow, which outlives `&self`.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The elements as a mutable slice.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as for `as_slice`, and `&mut self` makes the access exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    fn cap_bytes(&self) -> usize {
        // `cap` elements were allocated, so this cannot overflow (0 for zero-sized `T`).
        self.cap.wrapping_mul(size_of::<T>())
    }

    /// Makes room for `additional` more elements: the capacity at least doubles (so pushing is
    /// amortised O(1)); if the arena has no room for that, exactly what is needed is tried.
    ///
    /// # Errors
    ///
    /// [`ArenaError::SizeOverflow`] or as [`Arena::try_alloc_layout`]; the vector is unchanged.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), ArenaError> {
        if self.cap - self.len >= additional {
            return Ok(());
        }
        self.reserve_cold(additional)
    }

    #[cold]
    #[inline(never)]
    fn reserve_cold(&mut self, additional: usize) -> Result<(), ArenaError> {
        let required = self
            .len
            .checked_add(additional)
            .ok_or(ArenaError::SizeOverflow {
                elem_size: size_of::<T>(),
                count: usize::MAX,
            })?;
        let min = match size_of::<T>() {
            1 => 8,
            n if n <= 1024 => 4,
            _ => 1,
        };
        let mut amortised = required.max(self.cap.saturating_mul(2)).max(min);
        // Near a budget's limit the doubled buffer may cross it where the exact need does not:
        // then the buffer grows to the exact need, whatever the budget's policy. (A `Fail`
        // budget's refusal of the doubled size below leads there too; a `Panic` budget would
        // panic, and a `Warn` one warn, over growth nothing asked for.) Growing in place adds
        // only the bytes past the old buffer, so those are what the budget is asked about.
        if amortised > required {
            let growth = self.arena.growth_to(
                self.ptr.cast(),
                self.cap_bytes(),
                amortised.saturating_mul(size_of::<T>()),
                align_of::<T>(),
            );
            if !self.arena.within_budget(growth) {
                amortised = required;
            }
        }
        match self.grow_to(amortised) {
            Err(_) if amortised > required => self.grow_to(required),
            r => r,
        }
    }

    /// [`try_reserve`](ArenaVec::try_reserve), panicking on failure.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room or the size overflows.
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.try_reserve(additional).or_panic("");
    }

    /// Grows the buffer to `cap` elements (no-op if it holds that many): in place if it is the
    /// arena's newest allocation and the page has room, else by moving to a new block.
    fn grow_to(&mut self, cap: usize) -> Result<(), ArenaError> {
        if cap <= self.cap {
            return Ok(());
        }
        let new = Layout::array::<T>(cap).map_err(|_| ArenaError::SizeOverflow {
            elem_size: size_of::<T>(),
            count: cap,
        })?;
        let old_bytes = self.cap_bytes();
        if old_bytes != 0
            && let Some(p) =
                self.arena
                    .grow_last(self.ptr.cast(), old_bytes, new.size(), new.align())?
        {
            self.ptr = p.cast();
            self.cap = cap;
            return Ok(());
        }
        let fresh = self.arena.try_alloc_layout(new)?.cast::<T>();
        // SAFETY: `fresh` is a new block for `cap >= len` elements, so it does not overlap the
        // old buffer, whose first `len` elements are initialised; they move (the old buffer is
        // not read again).
        unsafe { ptr::copy_nonoverlapping(self.ptr.as_ptr(), fresh.as_ptr(), self.len) };
        self.ptr = fresh;
        self.cap = cap;
        Ok(())
    }

    /// Appends `value`.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the buffer must grow and the arena has no room
    /// ([`try_push`](ArenaVec::try_push) hands the value back instead).
    #[inline]
    #[track_caller]
    pub fn push(&mut self, value: T) {
        if self.len == self.cap {
            self.reserve(1);
        }
        // SAFETY: `len < cap`: the slot is inside the buffer and uninitialised.
        unsafe { self.ptr.add(self.len).write(value) };
        self.len += 1;
    }

    /// Appends `value`, or hands it back with the reason when the buffer cannot grow.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::with_capacity(16);
    /// let mut v = ArenaVec::with_capacity_in(2, &arena);
    /// v.push(1u64);
    /// v.push(2);
    /// let full = v.try_push(3).unwrap_err();
    /// assert_eq!(full.value, 3);
    /// assert_eq!(v, [1, 2]); // unchanged
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaFull`] with the value and the [`ArenaError`]; the vector is unchanged.
    pub fn try_push(&mut self, value: T) -> Result<(), ArenaFull<T>> {
        if let Err(error) = self.try_reserve(1) {
            return Err(ArenaFull { value, error });
        }
        // SAFETY: `try_reserve(1)` made `len < cap`.
        unsafe { self.ptr.add(self.len).write(value) };
        self.len += 1;
        Ok(())
    }

    /// Removes and returns the last element.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: the element at the old `len - 1` is initialised and no longer counted.
        Some(unsafe { self.ptr.add(self.len).read() })
    }

    /// Inserts `value` at `index`, shifting the elements after it right.
    ///
    /// # Panics
    ///
    /// If `index > len`; with the [`ArenaError`] text when the arena has no room.
    #[track_caller]
    pub fn insert(&mut self, index: usize, value: T) {
        if let Err(full) = self.try_insert(index, value) {
            panic!("{}", full.error);
        }
    }

    /// [`insert`](ArenaVec::insert), handing the value back when the buffer cannot grow.
    ///
    /// # Errors
    ///
    /// [`ArenaFull`] with the value and the [`ArenaError`]; the vector is unchanged.
    ///
    /// # Panics
    ///
    /// If `index > len`.
    #[track_caller]
    pub fn try_insert(&mut self, index: usize, value: T) -> Result<(), ArenaFull<T>> {
        let len = self.len;
        assert!(
            index <= len,
            "insertion index (is {index}) should be <= len (is {len})"
        );
        if let Err(error) = self.try_reserve(1) {
            return Err(ArenaFull { value, error });
        }
        // SAFETY: `len < cap`; the elements `[index, len)` move one slot right inside the
        // buffer (`copy` allows the overlap), then the freed slot takes `value`.
        unsafe {
            let at = self.ptr.add(index).as_ptr();
            ptr::copy(at, at.add(1), len - index);
            at.write(value);
        }
        self.len = len + 1;
        Ok(())
    }

    /// Removes and returns the element at `index`, shifting the elements after it left.
    ///
    /// # Panics
    ///
    /// If `index >= len`.
    #[track_caller]
    pub fn remove(&mut self, index: usize) -> T {
        let len = self.len;
        assert!(
            index < len,
            "removal index (is {index}) should be < len (is {len})"
        );
        // SAFETY: `index < len`: the element is read out once, then the elements after it
        // move one slot left over it (`copy` allows the overlap) and `len` drops by one.
        unsafe {
            let at = self.ptr.add(index).as_ptr();
            let value = at.read();
            ptr::copy(at.add(1), at, len - index - 1);
            self.len = len - 1;
            value
        }
    }

    /// Removes the element at `index` and puts the last element in its place (O(1), does not
    /// keep the order).
    ///
    /// # Panics
    ///
    /// If `index >= len`.
    #[track_caller]
    pub fn swap_remove(&mut self, index: usize) -> T {
        let len = self.len;
        assert!(
            index < len,
            "swap_remove index (is {index}) should be < len (is {len})"
        );
        self.as_mut_slice().swap(index, len - 1);
        self.pop().expect("the vector is not empty")
    }

    /// Keeps the first `len` elements and drops the rest (no-op if `len >= self.len()`). The
    /// capacity is unchanged.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let tail = ptr::slice_from_raw_parts_mut(
            // SAFETY: `len < self.len`, inside the buffer.
            unsafe { self.ptr.add(len).as_ptr() },
            self.len - len,
        );
        // Shortened first: a panicking destructor leaves the rest dropped by unwinding, never
        // twice (as `Vec::truncate`).
        self.len = len;
        // SAFETY: the tail's elements are initialised and no longer counted.
        unsafe { ptr::drop_in_place(tail) };
    }

    /// Drops every element; the capacity is kept.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Appends clones of `other`'s elements. A panicking `clone` leaves the clones made so far
    /// in the vector.
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room; if a `clone` panics.
    #[track_caller]
    pub fn extend_from_slice(&mut self, other: &[T])
    where
        T: Clone,
    {
        self.try_extend_from_slice(other).or_panic("");
    }

    /// [`extend_from_slice`](ArenaVec::extend_from_slice), returning an error instead of
    /// panicking when the arena has no room.
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaVec::try_reserve); nothing is cloned then.
    pub fn try_extend_from_slice(&mut self, other: &[T]) -> Result<(), ArenaError>
    where
        T: Clone,
    {
        self.try_reserve(other.len())?;
        for item in other {
            // SAFETY: room for `other.len()` was reserved and `len` counts each clone as it
            // lands, so a panicking `clone` leaves only built elements counted.
            unsafe { self.ptr.add(self.len).write(item.clone()) };
            self.len += 1;
        }
        Ok(())
    }

    /// Appends clones of the elements in `range` of the vector itself (`Vec::extend_from_within`).
    /// A panicking `clone` leaves the clones made so far in the vector.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut v = ArenaVec::from_iter_in([1, 2, 3], &arena);
    /// v.extend_from_within(1..);
    /// assert_eq!(v, [1, 2, 3, 2, 3]);
    /// ```
    ///
    /// # Panics
    ///
    /// If the range is out of bounds or decreasing; with the [`ArenaError`] text when the arena
    /// has no room; if a `clone` panics.
    #[track_caller]
    pub fn extend_from_within(&mut self, range: impl RangeBounds<usize>)
    where
        T: Clone,
    {
        self.try_extend_from_within(range).or_panic("");
    }

    /// [`extend_from_within`](ArenaVec::extend_from_within), returning an error instead of
    /// panicking when the arena has no room.
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaVec::try_reserve); nothing is cloned then.
    ///
    /// # Panics
    ///
    /// If the range is out of bounds or decreasing; if a `clone` panics.
    #[track_caller]
    pub fn try_extend_from_within(
        &mut self,
        range: impl RangeBounds<usize>,
    ) -> Result<(), ArenaError>
    where
        T: Clone,
    {
        let (start, end) = range_or_panic(range, self.len, "elements");
        self.try_reserve(end - start)?;
        for i in start..end {
            // SAFETY: `i < end <= len`: an initialised element, below the length; room for
            // `end - start` more was reserved, so the write lands inside the buffer, past every
            // counted element, and `len` counts each clone as it lands.
            unsafe {
                let item = (*self.ptr.add(i).as_ptr()).clone();
                self.ptr.add(self.len).write(item);
            }
            self.len += 1;
        }
        Ok(())
    }

    /// Resizes the vector to `new_len` elements: the extra ones are made by `f`, or the tail is
    /// dropped (`Vec::resize_with`). A panicking `f` leaves the elements made so far.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut v = ArenaVec::new_in(&arena);
    /// let mut n = 0;
    /// v.resize_with(3, || { n += 1; n });
    /// assert_eq!(v, [1, 2, 3]);
    /// v.resize_with(1, || unreachable!());
    /// assert_eq!(v, [1]);
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room; if `f` panics.
    #[track_caller]
    pub fn resize_with(&mut self, new_len: usize, f: impl FnMut() -> T) {
        self.try_resize_with(new_len, f).or_panic("");
    }

    /// [`resize_with`](ArenaVec::resize_with), returning an error instead of panicking when
    /// the arena has no room.
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaVec::try_reserve); `f` is not called then.
    pub fn try_resize_with(
        &mut self,
        new_len: usize,
        mut f: impl FnMut() -> T,
    ) -> Result<(), ArenaError> {
        if new_len <= self.len {
            self.truncate(new_len);
            return Ok(());
        }
        self.try_reserve(new_len - self.len)?;
        while self.len < new_len {
            let value = f();
            // SAFETY: room for `new_len` elements was reserved and `len < new_len`.
            unsafe { self.ptr.add(self.len).write(value) };
            self.len += 1;
        }
        Ok(())
    }

    /// Resizes the vector to `new_len` elements, the extra ones clones of `value`
    /// (`Vec::resize`).
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room; if a `clone` panics.
    #[track_caller]
    pub fn resize(&mut self, new_len: usize, value: T)
    where
        T: Clone,
    {
        self.try_resize(new_len, value).or_panic("");
    }

    /// [`resize`](ArenaVec::resize), returning an error instead of panicking when the arena
    /// has no room.
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaVec::try_reserve); nothing is cloned then.
    pub fn try_resize(&mut self, new_len: usize, value: T) -> Result<(), ArenaError>
    where
        T: Clone,
    {
        let mut value = Some(value);
        let last = new_len.saturating_sub(1);
        let mut at = self.len;
        self.try_resize_with(new_len, || {
            let v = if at == last {
                value
                    .take()
                    .expect("the last element takes the value itself")
            } else {
                value
                    .clone()
                    .expect("the value is taken only by the last element")
            };
            at += 1;
            v
        })
    }

    /// Moves every element of `other` to the end of this vector, leaving `other` empty
    /// (`Vec::append`). The two may live in different arenas.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut a = ArenaVec::from_iter_in([1, 2], &arena);
    /// let mut b = ArenaVec::from_iter_in([3, 4], &arena);
    /// a.append(&mut b);
    /// assert_eq!((a.as_slice(), b.len()), (&[1, 2, 3, 4][..], 0));
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the arena has no room (both vectors unchanged).
    #[track_caller]
    pub fn append(&mut self, other: &mut ArenaVec<'_, T>) {
        self.try_append(other).or_panic("");
    }

    /// [`append`](ArenaVec::append), returning an error instead of panicking when the arena
    /// has no room.
    ///
    /// # Errors
    ///
    /// As [`try_reserve`](ArenaVec::try_reserve); both vectors are unchanged then.
    pub fn try_append(&mut self, other: &mut ArenaVec<'_, T>) -> Result<(), ArenaError> {
        let n = other.len;
        self.try_reserve(n)?;
        // SAFETY: room for `n` more was reserved; `other`'s `n` elements are initialised, in
        // another buffer (two `&mut` cannot name one vector), and move: `other` stops counting
        // them before anything else runs.
        unsafe {
            ptr::copy_nonoverlapping(other.ptr.as_ptr(), self.ptr.add(self.len).as_ptr(), n);
        }
        other.len = 0;
        self.len += n;
        Ok(())
    }

    /// Splits the vector at `at`: returns a new vector (in the same arena) holding the elements
    /// from `at` on, and keeps `[0, at)` (`Vec::split_off`).
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut v = ArenaVec::from_iter_in([1, 2, 3, 4], &arena);
    /// let tail = v.split_off(1);
    /// assert_eq!((v.as_slice(), tail.as_slice()), (&[1][..], &[2, 3, 4][..]));
    /// ```
    ///
    /// # Panics
    ///
    /// If `at > len`; with the [`ArenaError`] text when the arena has no room (the vector is
    /// unchanged then).
    #[track_caller]
    pub fn split_off(&mut self, at: usize) -> Self {
        self.try_split_off(at).or_panic("")
    }

    /// [`split_off`](ArenaVec::split_off), returning an error instead of panicking when the
    /// arena has no room.
    ///
    /// # Errors
    ///
    /// As [`try_with_capacity_in`](ArenaVec::try_with_capacity_in); the vector is unchanged
    /// then.
    ///
    /// # Panics
    ///
    /// If `at > len`.
    #[track_caller]
    pub fn try_split_off(&mut self, at: usize) -> Result<Self, ArenaError> {
        let len = self.len;
        assert!(
            at <= len,
            "`at` split index (is {at}) should be <= len (is {len})"
        );
        let n = len - at;
        let mut tail = Self::try_with_capacity_in(n, self.arena)?;
        // SAFETY: `tail` is a new buffer with room for `n`; the elements `[at, len)` are
        // initialised and move: this vector stops counting them at once.
        unsafe { ptr::copy_nonoverlapping(self.ptr.add(at).as_ptr(), tail.ptr.as_ptr(), n) };
        self.len = at;
        tail.len = n;
        Ok(tail)
    }

    /// Removes the elements in `range` and yields them by value (`Vec::drain`); the elements
    /// after the range move down when the iterator is dropped, and those it did not yield are
    /// dropped then. If the iterator is leaked (`mem::forget`), the vector keeps only the
    /// elements before the range (the others are leaked, never dropped twice).
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut v = ArenaVec::from_iter_in([1, 2, 3, 4, 5], &arena);
    /// let taken: Vec<i32> = v.drain(1..3).collect();
    /// assert_eq!((taken, v.as_slice()), (vec![2, 3], &[1, 4, 5][..]));
    /// ```
    ///
    /// # Panics
    ///
    /// If the range is out of bounds or decreasing.
    #[track_caller]
    pub fn drain(&mut self, range: impl RangeBounds<usize>) -> Drain<'_, 'a, T> {
        let len = self.len;
        let (start, end) = range_or_panic(range, len, "elements");
        // From here the vector counts only the elements before the range; the drain puts the
        // tail back when it is dropped.
        self.len = start;
        Drain {
            vec: self,
            front: start,
            back: end,
            tail_start: end,
            tail_len: len - end,
        }
    }

    /// Keeps only the elements for which `keep` returns `true`, in order, and drops the others
    /// (`Vec::retain`). If `keep` or a destructor panics, the vector keeps the elements kept so
    /// far and every element not yet visited, in order; the rejected ones were dropped.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut v = ArenaVec::from_iter_in(1..=6, &arena);
    /// v.retain(|&x| x % 2 == 0);
    /// assert_eq!(v, [2, 4, 6]);
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.retain_mut(|x| keep(x));
    }

    /// [`retain`](ArenaVec::retain) with each element lent mutably to `keep`.
    pub fn retain_mut(&mut self, mut keep: impl FnMut(&mut T) -> bool) {
        let mut g = Compact::new(self, 0);
        while g.read < g.len {
            // SAFETY: `read < len`: an element not yet visited, initialised, lent for the
            // call only (the vector is borrowed here, and counts none of its elements).
            let keep_it = keep(unsafe { &mut *g.at(g.read) });
            // SAFETY: as above; the element is visited once.
            unsafe { g.settle(keep_it) };
        }
    }

    /// Removes consecutive elements for which `same_bucket(element, kept)` returns `true`,
    /// where `kept` is the last element kept before it (`Vec::dedup_by`). Panics in
    /// `same_bucket` or a destructor leave the vector as [`retain_mut`](ArenaVec::retain_mut)
    /// does.
    pub fn dedup_by(&mut self, mut same_bucket: impl FnMut(&mut T, &mut T) -> bool) {
        if self.len <= 1 {
            return;
        }
        let mut g = Compact::new(self, 1);
        while g.read < g.len {
            // SAFETY: `read < len` is unvisited and `write - 1 < read` is the last element
            // kept: two initialised elements at different indexes, lent for the call only.
            let same = unsafe { same_bucket(&mut *g.at(g.read), &mut *g.at(g.write - 1)) };
            // SAFETY: as above; the element is visited once.
            unsafe { g.settle(!same) };
        }
    }

    /// Removes consecutive elements that map to the same key (`Vec::dedup_by_key`).
    pub fn dedup_by_key<K: PartialEq>(&mut self, mut key: impl FnMut(&mut T) -> K) {
        self.dedup_by(|a, b| key(a) == key(b));
    }

    /// Removes consecutive equal elements (`Vec::dedup`).
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let mut v = ArenaVec::from_iter_in([1, 1, 2, 3, 3, 3, 1], &arena);
    /// v.dedup();
    /// assert_eq!(v, [1, 2, 3, 1]);
    /// ```
    pub fn dedup(&mut self)
    where
        T: PartialEq,
    {
        self.dedup_by(|a, b| a == b);
    }

    /// The buffer's unused slots, to write before [`set_len`](ArenaVec::set_len) counts them
    /// (`Vec::spare_capacity_mut`). Empty for zero-sized `T` (their capacity is unbounded).
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<T>] {
        let spare = if size_of::<T>() == 0 {
            0
        } else {
            self.cap - self.len
        };
        // SAFETY: `[len, cap)` lies inside the buffer, which the vector owns and this borrow
        // lends exclusively; `MaybeUninit` makes no claim on its contents.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.add(self.len).as_ptr().cast(), spare) }
    }

    /// Sets the length without dropping or initialising anything (`Vec::set_len`).
    ///
    /// # Safety
    ///
    /// `new_len <= capacity()`, and the elements `[0, new_len)` are initialised.
    pub unsafe fn set_len(&mut self, new_len: usize) {
        debug_assert!(new_len <= self.cap);
        self.len = new_len;
    }

    /// Leaves the elements in the arena and returns them, borrowed for the arena's lifetime;
    /// they are never dropped (as if by `mem::forget`, which is safe). Takes any `T`. The spare
    /// capacity is given back if the buffer is the arena's newest allocation.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let arena = Arena::new();
    /// let text = String::from("a b c");
    /// let mut words = ArenaVec::new_in(&arena);
    /// words.extend(text.split(' ')); // `&str` borrowing `text`: not 'static
    /// let words: &[&str] = words.into_slice_no_drop();
    /// assert_eq!(words, ["a", "b", "c"]);
    /// ```
    pub fn into_slice_no_drop(self) -> &'a mut [T] {
        let me = ManuallyDrop::new(self);
        let used = me.len * size_of::<T>();
        if used == 0 {
            me.arena.give_back_last(me.ptr.cast(), me.cap_bytes());
        } else {
            me.arena.shrink_last(me.ptr.cast(), me.cap_bytes(), used);
        }
        // SAFETY: the first `len` elements are initialised and stay so (never dropped); the
        // buffer's first `len` slots stay allocated for the arena borrow `'a`, and the vector
        // is gone, so this is the only access.
        unsafe { core::slice::from_raw_parts_mut(me.ptr.as_ptr(), me.len) }
    }

    /// The elements in an [`ArenaBox`], which drops them when it is dropped (the arena
    /// registers nothing): `Vec::into_boxed_slice`. Takes any `T`. The spare capacity is given
    /// back if the buffer is the arena's newest allocation.
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::{ArenaBox, ArenaVec};
    ///
    /// let arena = Arena::new();
    /// let mut names = ArenaVec::new_in(&arena);
    /// names.push(String::from("ada"));
    /// names.push(String::from("grace"));
    /// let names: ArenaBox<[String]> = names.into_boxed_slice();
    /// assert_eq!(names[1], "grace");
    /// assert_eq!(arena.pending_drops(), 0); // the box drops the strings, not the arena
    /// ```
    pub fn into_boxed_slice(self) -> ArenaBox<'a, [T]> {
        let slice = self.into_slice_no_drop();
        // SAFETY: the elements are initialised, in arena memory that stays allocated for `'a`
        // and that nothing else reaches: the vector is gone, `into_slice_no_drop` registered
        // nothing, and the only reference to them is consumed here. (No elements take no
        // bytes: the buffer given back then may be reused at once, as `from_raw` allows.)
        unsafe { ArenaBox::from_raw(NonNull::from(slice)) }
    }

    /// Leaves the elements in the arena for its lifetime, to be dropped on its reset, rewind
    /// or drop like values from [`Arena::alloc`], and returns them. Like `alloc`, `T` must be
    /// `Send + 'static` ([`ArenaDrop`]); use
    /// [`into_slice_no_drop`](ArenaVec::into_slice_no_drop) for other types.
    ///
    /// Types without drop glue stay where they are (the spare capacity is given back if the
    /// buffer is the arena's newest allocation). Types that need dropping get a drop record in
    /// front of them: when the buffer is the newest allocation they move up behind it in place,
    /// otherwise they are moved next to a fresh record at the bump pointer (one copy).
    ///
    /// ```
    /// use arena_kit::Arena;
    /// use arena_kit::collections::ArenaVec;
    ///
    /// let mut arena = Arena::new();
    /// let mut names = ArenaVec::new_in(&arena);
    /// names.push(String::from("ada"));
    /// names.push(String::from("grace"));
    /// let names: &mut [String] = names.into_slice();
    /// assert_eq!(names[1], "grace");
    /// assert_eq!(arena.pending_drops(), 1);
    /// arena.reset(); // the strings are dropped here
    /// assert_eq!(arena.pending_drops(), 0);
    /// ```
    ///
    /// # Panics
    ///
    /// With the [`ArenaError`] text when the elements must move and the arena has no room
    /// ([`try_into_slice`](ArenaVec::try_into_slice) hands the vector back instead).
    #[track_caller]
    pub fn into_slice(self) -> &'a mut [T]
    where
        T: ArenaDrop + 'static,
    {
        match self.try_into_slice() {
            Ok(slice) => slice,
            Err(full) => panic!("{}", full.error),
        }
    }

    /// [`into_slice`](ArenaVec::into_slice), handing the vector back when its elements must
    /// move and the arena has no room.
    ///
    /// # Errors
    ///
    /// [`ArenaFull`] with the vector, unchanged, and the [`ArenaError`].
    pub fn try_into_slice(self) -> Result<&'a mut [T], ArenaFull<Self>>
    where
        T: ArenaDrop + 'static,
    {
        if !mem::needs_drop::<T>() || self.len == 0 {
            return Ok(self.into_slice_no_drop());
        }
        // The vector stays droppable while the arena works: a `Panic` budget (or a warning's
        // report sink) may panic before the values are adopted, and they are still the
        // vector's then, to drop on the unwind. Once adopted they are the arena's: the vector
        // is forgotten at once.
        // SAFETY: the buffer is a live block of this arena owned by the vector, with `len > 0`
        // initialised elements; on `Ok` the vector is forgotten before anything else, so the
        // elements are reached only through the returned pointer.
        match unsafe {
            self.arena
                .adopt_values(self.ptr, self.len, self.cap_bytes())
        } {
            Ok(values) => {
                let len = self.len;
                mem::forget(self);
                // SAFETY: `len` initialised elements at `values`, owned by the arena for `'a`.
                Ok(unsafe { core::slice::from_raw_parts_mut(values.as_ptr(), len) })
            }
            Err(error) => Err(ArenaFull { value: self, error }),
        }
    }
}

impl<T> Drop for ArenaVec<'_, T> {
    fn drop(&mut self) {
        /// Gives the buffer back even if an element's destructor panics.
        struct GiveBack<'v, 'a, T>(&'v ArenaVec<'a, T>);
        impl<T> Drop for GiveBack<'_, '_, T> {
            fn drop(&mut self) {
                self.0
                    .arena
                    .give_back_last(self.0.ptr.cast(), self.0.cap_bytes());
            }
        }
        let elems = ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
        let _give_back = GiveBack(self);
        // SAFETY: the first `len` elements are initialised and owned by the vector, which is
        // being dropped; each is dropped once (`drop_in_place` on a slice goes on after a
        // panicking element).
        unsafe { ptr::drop_in_place(elems) };
    }
}

impl<T> Deref for ArenaVec<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> DerefMut for ArenaVec<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T> AsRef<[T]> for ArenaVec<'_, T> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T> AsMut<[T]> for ArenaVec<'_, T> {
    fn as_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T> Extend<T> for ArenaVec<'_, T> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for item in iter {
            self.push(item);
        }
    }
}

impl<'v, T: Copy + 'v> Extend<&'v T> for ArenaVec<'_, T> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = &'v T>>(&mut self, iter: I) {
        self.extend(iter.into_iter().copied());
    }
}

/// Moves the elements out, front to back (through [`ArenaVec::into_boxed_slice`], which gives
/// the spare capacity back first).
impl<'a, T> IntoIterator for ArenaVec<'a, T> {
    type Item = T;
    type IntoIter = super::IntoIter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_boxed_slice().into_iter()
    }
}

impl<'v, T> IntoIterator for &'v ArenaVec<'_, T> {
    type Item = &'v T;
    type IntoIter = core::slice::Iter<'v, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'v, T> IntoIterator for &'v mut ArenaVec<'_, T> {
    type Item = &'v mut T;
    type IntoIter = core::slice::IterMut<'v, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// Clones into the same arena.
impl<T: Clone> Clone for ArenaVec<'_, T> {
    #[track_caller]
    fn clone(&self) -> Self {
        let mut v = ArenaVec::with_capacity_in(self.len, self.arena);
        v.extend_from_slice(self);
        v
    }
}

impl<T: fmt::Debug> fmt::Debug for ArenaVec<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl<T, U> PartialEq<ArenaVec<'_, U>> for ArenaVec<'_, T>
where
    T: PartialEq<U>,
{
    fn eq(&self, other: &ArenaVec<'_, U>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for ArenaVec<'_, T> {}

impl<T, U> PartialEq<[U]> for ArenaVec<'_, T>
where
    T: PartialEq<U>,
{
    fn eq(&self, other: &[U]) -> bool {
        self.as_slice() == other
    }
}

impl<T, U> PartialEq<&[U]> for ArenaVec<'_, T>
where
    T: PartialEq<U>,
{
    fn eq(&self, other: &&[U]) -> bool {
        self.as_slice() == *other
    }
}

impl<T, U, const N: usize> PartialEq<[U; N]> for ArenaVec<'_, T>
where
    T: PartialEq<U>,
{
    fn eq(&self, other: &[U; N]) -> bool {
        self.as_slice() == other
    }
}

/// Hashes like the slice (and so like a `Vec` of the same elements).
/// Ordered as the slices are.
impl<T: PartialOrd> PartialOrd for ArenaVec<'_, T> {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        self.as_slice().partial_cmp(other.as_slice())
    }
}

impl<T: Ord> Ord for ArenaVec<'_, T> {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

/// Looks up a map keyed by `ArenaVec` with a slice (hash and order are the slice's).
impl<T> core::borrow::Borrow<[T]> for ArenaVec<'_, T> {
    fn borrow(&self) -> &[T] {
        self
    }
}

impl<T> core::borrow::BorrowMut<[T]> for ArenaVec<'_, T> {
    fn borrow_mut(&mut self) -> &mut [T] {
        self
    }
}

#[cfg(feature = "alloc")]
impl<T, U> PartialEq<alloc::vec::Vec<U>> for ArenaVec<'_, T>
where
    T: PartialEq<U>,
{
    fn eq(&self, other: &alloc::vec::Vec<U>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Hash> Hash for ArenaVec<'_, T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

/// The compaction of [`ArenaVec::retain_mut`] and [`ArenaVec::dedup_by`]: elements are visited
/// in order from `read`, the kept ones moved down to `write`. While it runs the vector counts
/// none of its elements; dropped (finished, or on a panic in user code), it moves the unvisited
/// tail down behind the kept ones and sets the length, so every element is kept or dropped
/// exactly once.
struct Compact<'v, 'a, T> {
    v: &'v mut ArenaVec<'a, T>,
    /// The next element to visit.
    read: usize,
    /// Where the next kept element goes (`write <= read`).
    write: usize,
    /// The length before.
    len: usize,
}

impl<'v, 'a, T> Compact<'v, 'a, T> {
    /// Starts with the first `kept` elements kept as they are.
    fn new(v: &'v mut ArenaVec<'a, T>, kept: usize) -> Self {
        let len = v.len;
        debug_assert!(kept <= len);
        v.len = 0;
        Compact {
            v,
            read: kept,
            write: kept,
            len,
        }
    }

    /// Element `i` of the buffer.
    fn at(&self, i: usize) -> *mut T {
        self.v.ptr.as_ptr().wrapping_add(i)
    }

    /// Keeps or drops the element at `read` and moves on.
    ///
    /// # Safety
    ///
    /// `read < len`, and the element at `read` was not settled before.
    unsafe fn settle(&mut self, keep: bool) {
        let here = self.at(self.read);
        // Counted as visited before its destructor runs: a panicking one leaves it gone.
        self.read += 1;
        if keep {
            if self.write != self.read - 1 {
                // SAFETY: `write < read - 1`: the slot at `write` holds nothing (its element
                // moved down or was dropped), and the element at `read - 1` moves there.
                unsafe { ptr::copy_nonoverlapping(here, self.at(self.write), 1) };
            }
            self.write += 1;
        } else {
            // SAFETY: initialised and now uncounted: dropped once.
            unsafe { ptr::drop_in_place(here) };
        }
    }
}

impl<T> Drop for Compact<'_, '_, T> {
    fn drop(&mut self) {
        let tail = self.len - self.read;
        if self.write != self.read {
            // SAFETY: `[read, len)` are initialised and unvisited; they move down over the
            // free slots from `write` (`copy` allows the overlap).
            unsafe { ptr::copy(self.at(self.read), self.at(self.write), tail) };
        }
        self.v.len = self.write + tail;
    }
}

/// The iterator of [`ArenaVec::drain`]: yields the removed elements by value; dropped, it drops
/// the ones not yielded and moves the elements after the range down behind the vector's.
pub struct Drain<'v, 'a, T> {
    /// The vector, counting only the elements before the range meanwhile.
    vec: &'v mut ArenaVec<'a, T>,
    /// The next element to yield from the front.
    front: usize,
    /// One past the next element to yield from the back.
    back: usize,
    /// Where the elements after the range start (the range's end).
    tail_start: usize,
    /// How many elements follow the range.
    tail_len: usize,
}

impl<T> Drain<'_, '_, T> {
    /// The elements not yielded yet.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `[front, back)` are initialised elements no one else reaches: the vector
        // does not count them and is borrowed by the drain.
        unsafe {
            core::slice::from_raw_parts(
                self.vec.ptr.as_ptr().add(self.front),
                self.back - self.front,
            )
        }
    }
}

impl<T> Iterator for Drain<'_, '_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        // SAFETY: `front - 1` was in `[front, back)`: initialised, and now yielded once (the
        // range moved past it first).
        Some(unsafe { self.vec.ptr.add(self.front - 1).read() })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl<T> DoubleEndedIterator for Drain<'_, '_, T> {
    fn next_back(&mut self) -> Option<T> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        // SAFETY: `back` was the last of `[front, back)`: initialised, yielded once.
        Some(unsafe { self.vec.ptr.add(self.back).read() })
    }
}

impl<T> ExactSizeIterator for Drain<'_, '_, T> {}

impl<T> core::iter::FusedIterator for Drain<'_, '_, T> {}

impl<T: fmt::Debug> fmt::Debug for Drain<'_, '_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Drain").field(&self.as_slice()).finish()
    }
}

impl<T> Drop for Drain<'_, '_, T> {
    fn drop(&mut self) {
        /// Moves the tail down behind the vector's elements even if a destructor panics.
        struct Tail<'g, 'v, 'a, T>(&'g mut Drain<'v, 'a, T>);
        impl<T> Drop for Tail<'_, '_, '_, T> {
            fn drop(&mut self) {
                let d = &mut *self.0;
                let start = d.vec.len;
                if d.tail_start != start {
                    // SAFETY: `[tail_start, tail_start + tail_len)` are the initialised
                    // elements after the range; they move down to `start`, the end of the
                    // vector's own (`copy` allows the overlap).
                    unsafe {
                        let p = d.vec.ptr.as_ptr();
                        ptr::copy(p.add(d.tail_start), p.add(start), d.tail_len);
                    }
                }
                d.vec.len = start + d.tail_len;
            }
        }
        let rest = ptr::slice_from_raw_parts_mut(
            self.vec.ptr.as_ptr().wrapping_add(self.front),
            self.back - self.front,
        );
        // Counted as yielded before they drop: a panicking destructor drops the rest by
        // unwinding (`drop_in_place` of a slice goes on), never twice, and the guard still
        // moves the tail.
        self.front = self.back;
        let guard = Tail(self);
        // SAFETY: `rest` were the initialised elements not yet yielded, now uncounted.
        unsafe { ptr::drop_in_place(rest) };
        drop(guard);
    }
}
