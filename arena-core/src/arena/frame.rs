//! N-buffered frame arenas: the double-buffered (ping-pong) frame allocator, generalised
//! to N buffers, with reader tokens so a buffer is never reset under a reader.

use core::fmt;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::Deref;
use core::ptr::NonNull;

use super::Arena;
use crate::sync::{Arc, AtomicUsize, Ordering};

/// Readers of one buffer, shared with its [`FrameReader`]s.
struct Readers {
    count: AtomicUsize,
    /// The producer thread waiting in [`FrameArena::begin_frame`], if any.
    #[cfg(feature = "std")]
    waiter: crate::sync::Mutex<Option<crate::sync::thread::Thread>>,
}

impl Readers {
    fn new() -> Self {
        Readers {
            count: AtomicUsize::new(0),
            #[cfg(feature = "std")]
            waiter: crate::sync::Mutex::new(None),
        }
    }
}

impl Readers {
    fn release(&self) {
        if self.count.fetch_sub(1, Ordering::Release) == 1 {
            #[cfg(feature = "std")]
            if let Some(t) = self
                .waiter
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
            {
                t.unpark();
            }
        }
    }
}

struct Buffer {
    arena: ManuallyDrop<Arena>,
    readers: Arc<Readers>,
}

/// `N` arenas used in rotation, one per frame in flight: `N = 2` is the classic double
/// buffering, `N = 3` triple buffering. [`begin_frame`](FrameArena::begin_frame) moves to the
/// oldest buffer and resets it, unless a [`FrameReader`] still holds it: then
/// [`try_begin_frame`](FrameArena::try_begin_frame) returns [`FrameInUse`] and `begin_frame`
/// waits for the reader. A frame's data borrows the frame arena, so within a thread it cannot be
/// kept past the next `begin_frame`; across threads, a [`FrameReader`] keeps its frame alive.
///
/// Pick it for data a consumer reads a frame or more later (render thread, GPU upload,
/// telemetry). Not for data that must live longer than `N` frames.
///
/// ```
/// use arena_kit::FrameArena;
///
/// let mut frames = FrameArena::<2>::with_capacity(1024);
/// let buffers: Vec<usize> = (0..4)
///     .map(|_| {
///         let frame = frames.begin_frame();
///         frame.alloc([0u8; 64]); // this frame's transform matrices
///         frame.buffer_index()
///     })
///     .collect();
/// assert_eq!(buffers, [0, 1, 0, 1]); // ping, pong, ping, pong
/// ```
///
/// # Variance
///
/// No lifetime or type parameters: it owns its buffers.
pub struct FrameArena<const N: usize = 2> {
    buffers: [Buffer; N],
    /// Buffer of the current frame (`N - 1` before the first frame, so frame 0 uses buffer 0).
    current: usize,
    /// Frames begun so far.
    frames: u64,
}

/// The frame being built, from [`FrameArena::begin_frame`]. It dereferences to the frame's
/// [`Arena`]; [`Frame::arena`] gives the arena for the whole frame lifetime `'f`.
///
/// # Variance
///
/// Invariant in `'f`, the borrow of the [`FrameArena`]. [`publish`](Frame::publish) takes data
/// borrowed for exactly `'f`, so published data stays shared-borrowed until the frame arena is
/// borrowed mutably again (the next `begin_frame`): no write to it, and no drop of the
/// collection holding it, can happen while a [`FrameReader`] on another thread reads it. A
/// covariant `Frame` could be shortened to any lifetime and `publish` would then accept a borrow
/// that ends right after the call.
pub struct Frame<'f> {
    arena: &'f Arena,
    readers: &'f Arc<Readers>,
    index: usize,
    number: u64,
    /// Makes `'f` invariant (see the type's docs); auto traits are unaffected.
    _invariant: PhantomData<fn(&'f ()) -> &'f ()>,
}

/// A handle that keeps one frame's buffer from being reset while it lives, and reads a value in
/// it. Made by [`Frame::publish`]; `Send` and `Sync` when `T` is `Sync`, so it can go to a
/// render or consumer thread. Cloning adds a reader.
///
/// # Variance
///
/// Covariant in `T`, like `&T` or `Arc<T>`: it only ever gives shared access to the value, so
/// a reader of `&'long str` can be used as a reader of `&'short str`.
pub struct FrameReader<T: ?Sized> {
    ptr: NonNull<T>,
    readers: Arc<Readers>,
    frame: u64,
}

/// [`FrameArena::try_begin_frame`] found the oldest buffer still held by readers; nothing was
/// reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameInUse {
    /// The buffer that would have been reset.
    pub buffer: usize,
    /// How many [`FrameReader`]s hold it.
    pub readers: usize,
}

impl fmt::Display for FrameInUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "frame buffer {} is still read by {} reader(s); drop the FrameReaders of that frame \
             first, call begin_frame to wait for them, or use more buffers",
            self.buffer, self.readers
        )
    }
}

impl core::error::Error for FrameInUse {}

impl<const N: usize> FrameArena<N> {
    fn from_fn(make: impl Fn() -> Arena) -> Self {
        const { assert!(N >= 1, "a FrameArena needs at least one buffer") };
        FrameArena {
            buffers: core::array::from_fn(|_| Buffer {
                arena: ManuallyDrop::new(make()),
                readers: Arc::new(Readers::new()),
            }),
            current: N - 1,
            frames: 0,
        }
    }

    /// `N` fixed buffers of `bytes` bytes each (see [`Arena::with_capacity`]).
    #[track_caller]
    pub fn with_capacity(bytes: usize) -> Self {
        Self::from_fn(|| Arena::with_capacity(bytes))
    }

    /// `N` buffers growing by pages of `page_bytes` (see [`Arena::chained`]); pages are kept
    /// across frames.
    pub fn chained(page_bytes: usize) -> Self {
        Self::from_fn(|| Arena::chained(page_bytes))
    }

    /// Limits the bytes each buffer takes from the system allocator to `limit` (see
    /// [`Arena::with_limit`]); `N` buffers take at most `N * limit`. Has no effect on fixed
    /// buffers.
    #[must_use]
    pub fn with_limit(self, limit: usize) -> Self {
        self.set_limit(Some(limit));
        self
    }

    /// Sets (or with `None` removes) every buffer's limit on a live frame arena, as
    /// [`Arena::set_limit`] does for one: values of the frames in flight stay valid, a limit
    /// below what a buffer holds frees nothing and refuses its new pages.
    ///
    /// ```
    /// use arena_kit::{ArenaError, FrameArena};
    ///
    /// let mut frames: FrameArena = FrameArena::chained(4096);
    /// frames.set_limit(Some(4096)); // each buffer keeps to one page
    /// let frame = frames.begin_frame();
    /// assert!(frame.arena().try_alloc([0u8; 1024]).is_ok());
    /// assert!(matches!(
    ///     frame.arena().try_alloc([0u8; 8192]),
    ///     Err(ArenaError::LimitReached { limit: 4096, .. })
    /// ));
    /// ```
    pub fn set_limit(&self, limit: Option<usize>) {
        for buffer in &self.buffers {
            buffer.arena.set_limit(limit);
        }
    }

    /// Starts the next frame in the oldest buffer, resetting it (its values are dropped).
    ///
    /// # Errors
    ///
    /// [`FrameInUse`] if a [`FrameReader`] of that buffer is alive; nothing changes then.
    pub fn try_begin_frame(&mut self) -> Result<Frame<'_>, FrameInUse> {
        let next = (self.current + 1) % N;
        let readers = self.buffers[next].readers.count.load(Ordering::Acquire);
        if readers > 0 {
            return Err(FrameInUse {
                buffer: next,
                readers,
            });
        }
        Ok(self.start(next))
    }

    /// Starts the next frame, first waiting until no [`FrameReader`] holds the oldest buffer
    /// (parking the thread with `std`, spinning without). Never resets under a reader.
    ///
    /// Waiting forever is possible if this thread itself holds a reader of that buffer; use
    /// [`try_begin_frame`](FrameArena::try_begin_frame) when that can happen.
    pub fn begin_frame(&mut self) -> Frame<'_> {
        let next = (self.current + 1) % N;
        let readers = &self.buffers[next].readers;
        while readers.count.load(Ordering::Acquire) > 0 {
            #[cfg(feature = "std")]
            {
                *readers.waiter.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(crate::sync::thread::current());
                // Registered before this second look at the count: a release that brings it to
                // 0 after the look sees the waiter and unparks it (both take the mutex).
                if readers.count.load(Ordering::Acquire) > 0 {
                    crate::sync::park_briefly();
                }
                *readers.waiter.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
            #[cfg(not(feature = "std"))]
            crate::sync::spin();
        }
        self.start(next)
    }

    fn start(&mut self, next: usize) -> Frame<'_> {
        self.current = next;
        let number = self.frames;
        self.frames += 1;
        let buffer = &mut self.buffers[next];
        buffer.arena.reset();
        Frame {
            arena: &buffer.arena,
            readers: &buffer.readers,
            index: next,
            number,
            _invariant: PhantomData,
        }
    }

    /// Number of buffers, `N`.
    pub const fn buffer_count(&self) -> usize {
        N
    }

    /// The arena of buffer `index`, for statistics.
    ///
    /// # Panics
    ///
    /// If `index >= N`.
    #[track_caller]
    pub fn buffer(&self, index: usize) -> &Arena {
        &self.buffers[index].arena
    }

    /// Live [`FrameReader`]s of buffer `index`.
    ///
    /// # Panics
    ///
    /// If `index >= N`.
    #[track_caller]
    pub fn readers(&self, index: usize) -> usize {
        self.buffers[index].readers.count.load(Ordering::Acquire)
    }

    /// Frames begun so far.
    pub fn frames_begun(&self) -> u64 {
        self.frames
    }
}

impl<const N: usize> Drop for FrameArena<N> {
    fn drop(&mut self) {
        let mut teardown = Teardown {
            buffers: &mut self.buffers,
            taken: [false; N],
        };
        teardown.run();
    }
}

/// [`FrameArena`]'s drop, as a guard: if a destructor panics, the buffers of that pass are
/// still dropped (they are one array), and dropping the guard as the panic unwinds runs the
/// passes left.
struct Teardown<'a, const N: usize> {
    buffers: &'a mut [Buffer; N],
    /// The buffers taken out so far.
    taken: [bool; N],
}

impl<const N: usize> Teardown<'_, N> {
    /// Passes until none finds a buffer to drop: a buffer's values may hold readers of another
    /// buffer, which dropping them releases.
    fn run(&mut self) {
        while let Some(unread) = self.take_unread() {
            drop(unread);
        }
    }

    /// Takes out every buffer not taken yet that no reader holds; `None` if there is none.
    /// Any other buffer is read on another thread, now or later: its memory is leaked (pending
    /// destructors skipped) rather than freed under the reader.
    fn take_unread(&mut self) -> Option<[Option<Arena>; N]> {
        let mut any = false;
        let unread = core::array::from_fn(|i| {
            let buffer = &mut self.buffers[i];
            if self.taken[i] || buffer.readers.count.load(Ordering::Acquire) != 0 {
                return None;
            }
            self.taken[i] = true;
            any = true;
            // SAFETY: taken once (`taken`), and never used again: the frame arena is being
            // dropped. A count of 0 read with `Acquire` means every `FrameReader` of this buffer
            // was dropped and its reads happen before this (its `Release` decrement); no new
            // reader can appear: `publish` needs a `Frame`, which borrows the frame arena, and
            // `clone` needs a live reader.
            Some(unsafe { ManuallyDrop::take(&mut buffer.arena) })
        });
        any.then_some(unread)
    }
}

impl<const N: usize> Drop for Teardown<'_, N> {
    fn drop(&mut self) {
        self.run();
    }
}

impl<const N: usize> fmt::Debug for FrameArena<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameArena")
            .field("buffers", &N)
            .field("current", &self.current)
            .field("frames", &self.frames)
            .finish_non_exhaustive()
    }
}

impl<'f> Frame<'f> {
    /// The frame's arena, borrowed for the whole frame: values allocated through it live until
    /// the next [`FrameArena::begin_frame`].
    pub fn arena(&self) -> &'f Arena {
        self.arena
    }

    /// Which buffer this frame writes into (`0..N`).
    pub fn buffer_index(&self) -> usize {
        self.index
    }

    /// The frame's number, counting from 0.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// A reader token for `data`, which must live in this frame's buffer. The token can cross
    /// threads; while it (or a clone) lives, this buffer is not reset. `data` is borrowed for the
    /// whole frame `'f` (`Frame` is invariant in `'f`), so it stays shared-borrowed until the
    /// [`FrameArena`] is borrowed mutably again: nobody can write to it, or drop the collection
    /// that holds it, while readers read. To publish the contents of an arena collection
    /// (an `allocator_api2` `Vec` in the frame, say), `leak` it into a `&'f [T]` first: a
    /// collection that could still be dropped would drop what the readers read.
    ///
    /// ```
    /// use arena_kit::FrameArena;
    ///
    /// let mut frames = FrameArena::<2>::chained(4096);
    /// let frame = frames.begin_frame();
    /// let events = frame.arena().alloc_slice_copy(&[1u32, 2, 3]);
    /// let reader = frame.publish(&*events).unwrap();
    /// let total = std::thread::spawn(move || reader.iter().sum::<u32>()).join().unwrap();
    /// assert_eq!(total, 6);
    /// ```
    ///
    /// # Errors
    ///
    /// Returns `data` back if it does not lie in this frame's buffer.
    pub fn publish<T: ?Sized + Sync>(&self, data: &'f T) -> Result<FrameReader<T>, &'f T> {
        let size = size_of_val(data);
        if size != 0 && !self.arena.contains((data as *const T).cast(), size) {
            return Err(data);
        }
        self.readers.count.fetch_add(1, Ordering::Relaxed);
        Ok(FrameReader {
            ptr: NonNull::from(data),
            readers: Arc::clone(self.readers),
            frame: self.number,
        })
    }
}

impl Deref for Frame<'_> {
    type Target = Arena;
    fn deref(&self) -> &Arena {
        self.arena
    }
}

impl fmt::Debug for Frame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("buffer", &self.index)
            .field("number", &self.number)
            .finish()
    }
}

impl<T: ?Sized> FrameReader<T> {
    /// The number of the frame the data belongs to.
    pub fn frame(&self) -> u64 {
        self.frame
    }
}

impl<T: ?Sized> Deref for FrameReader<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: `ptr` came from a `&'f T` that `publish` checked lies in this frame's buffer
        // (or is zero-sized, needing no memory), so it is aligned and was initialised. It stays
        // valid and unchanged while this reader is counted:
        // - memory: the buffer's pages are heap blocks that do not move with the `FrameArena`;
        //   `begin_frame`/`try_begin_frame` reset (and so drop or overwrite) a buffer only after
        //   reading a count of 0 with `Acquire`, and `Drop for FrameArena` leaks a buffer whose
        //   count is not 0. Our count is only released in `Drop for FrameReader` (`Release`),
        //   after our last read, so every read here happens before any reset or free.
        // - aliasing: `Frame` is invariant in `'f`, so the producer's `&'f T` keeps the data
        //   shared-borrowed for all of `'f`, and everything else that can reach the buffer's
        //   bytes borrows the arena for at most `'f` (a `&mut T` from `alloc`, an arena `Vec`),
        //   so it can neither write there nor give the bytes back during `'f`, and is gone after.
        //   After `'f`, `&Arena` (`FrameArena::buffer`) only hands out bytes past the bump
        //   pointer, and only the reset above, which waits for us, reuses these. Shared access
        //   from several threads is fine because `publish` required `T: Sync`.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: ?Sized> Clone for FrameReader<T> {
    fn clone(&self) -> Self {
        self.readers.count.fetch_add(1, Ordering::Relaxed);
        FrameReader {
            ptr: self.ptr,
            readers: Arc::clone(&self.readers),
            frame: self.frame,
        }
    }
}

impl<T: ?Sized> Drop for FrameReader<T> {
    fn drop(&mut self) {
        self.readers.release();
    }
}

// SAFETY: a reader only ever gives `&T` (through `Deref`); it never moves, mutates or drops the
// `T` (the arena drops it at its next reset, on whichever thread owns the `FrameArena` then,
// after the count reaches 0). So sending a reader to another thread is sending a `&T`, which is sound exactly when
// `T: Sync`. Its other fields are thread-safe: `Arc<Readers>` holds an atomic count and a
// `Mutex`, and releasing (in `Drop`) from any thread is an atomic `fetch_sub` plus, at 0, an
// `unpark` of the producer, which may happen from any thread.
unsafe impl<T: ?Sized + Sync> Send for FrameReader<T> {}
// SAFETY: `&FrameReader<T>` gives `&T` (`Deref`), `frame()` (a copied `u64`) and `clone()` (an
// atomic increment plus an `Arc` clone), so sharing a reader between threads shares `&T`: sound
// for `T: Sync`.
unsafe impl<T: ?Sized + Sync> Sync for FrameReader<T> {}

impl<T: ?Sized + fmt::Debug> fmt::Debug for FrameReader<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameReader")
            .field("frame", &self.frame)
            .field("data", &&**self)
            .finish()
    }
}
