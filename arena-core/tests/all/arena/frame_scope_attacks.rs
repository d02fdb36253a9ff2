//! Attacks from safe code on the frame arena (publishing foreign or odd data, readers on other
//! threads while `begin_frame` waits, readers outliving a moved or swapped frame arena,
//! panicking and re-entrant destructors in a buffer's reset), on the per-thread scratch arenas
//! (thread exit, deep nesting, panics) and worker arenas, and on scopes, markers, lying
//! iterators and in-place resizing. Each test says which attack it is; every value must be
//! dropped exactly once and no published byte may change while a reader holds it (Miri reports
//! the data race or use-after-free if one does).

use std::mem;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use allocator_api2::vec::Vec as AVec;
use arena_kit_core::arena::{
    Arena, ArenaError, FrameArena, FrameInUse, FrameReader, MarkerError, ThreadScratch, scratch,
    scratch_depth,
};
use arena_kit_core::collections::ArenaVec;
use arena_kit_core::tags::MemoryUsage;

/// Bigger workloads natively, small ones under Miri.
const fn pick(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// A drop counter private to one test.
fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// `publish`'s reader (its error holds the data, which need not be `Debug`).
fn ok<T: ?Sized, E>(published: Result<FrameReader<T>, E>) -> FrameReader<T> {
    published.unwrap_or_else(|_| panic!("the data is in this frame"))
}

fn count(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}

/// A value that counts its drop and, if `bomb`, panics in its destructor.
struct Counted {
    drops: Arc<AtomicUsize>,
    bomb: bool,
}

impl Counted {
    fn new(drops: &Arc<AtomicUsize>) -> Counted {
        Counted {
            drops: Arc::clone(drops),
            bomb: false,
        }
    }

    fn bomb(drops: &Arc<AtomicUsize>) -> Counted {
        Counted {
            drops: Arc::clone(drops),
            bomb: true,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.bomb {
            panic!("a frame value's destructor panics (expected by the test)");
        }
    }
}

/// What a frame publishes: a pattern in plain memory and a flag its destructor sets, so a
/// reader sees at once if the arena dropped or overwrote the value under it.
struct Payload {
    words: [u64; 8],
    dropped: AtomicBool,
    drops: Arc<AtomicUsize>,
}

impl Payload {
    fn new(n: u64, drops: &Arc<AtomicUsize>) -> Payload {
        Payload {
            words: pattern(n),
            dropped: AtomicBool::new(false),
            drops: Arc::clone(drops),
        }
    }

    fn check(&self, n: u64) {
        assert!(
            !self.dropped.load(Ordering::SeqCst),
            "frame {n}'s value was dropped under its reader"
        );
        assert_eq!(
            self.words,
            pattern(n),
            "frame {n} was overwritten under its reader"
        );
    }
}

impl Drop for Payload {
    fn drop(&mut self) {
        assert!(!self.dropped.swap(true, Ordering::SeqCst), "dropped twice");
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn pattern(n: u64) -> [u64; 8] {
    core::array::from_fn(|i| n * 1000 + i as u64)
}

/// Publishes `Payload::new(n)` in the next frame of `frames`.
fn publish_payload<const N: usize>(
    frames: &mut FrameArena<N>,
    n: u64,
    drops: &Arc<AtomicUsize>,
) -> FrameReader<Payload> {
    let frame = frames.begin_frame();
    let data: &Payload = frame.arena().alloc(Payload::new(n, drops));
    frame
        .publish(data)
        .unwrap_or_else(|_| panic!("the payload is in this frame"))
}

// ---------------------------------------------------------------------------------------------
// Frame arenas: what `publish` accepts
// ---------------------------------------------------------------------------------------------

trait Answer: Sync {
    fn answer(&self) -> u64;
}

struct Seven;
impl Answer for Seven {
    fn answer(&self) -> u64 {
        7
    }
}

struct Word(u64);
impl Answer for Word {
    fn answer(&self) -> u64 {
        self.0
    }
}

static SEVEN: Seven = Seven;
static STATIC_WORDS: [u32; 2] = [5, 6];

/// Attack: publish data that does not live in this frame's buffer (another frame arena's frame,
/// a plain arena, the heap, a `'static`, a string literal, a stack value): each is refused, so
/// no reader can pin memory the frame arena does not own. Sub-slices, single elements and
/// `str` slices of the frame's own data are accepted and read exactly those bytes; zero-sized
/// data (an empty slice of a static, `()`, a zero-sized trait object) is accepted from anywhere,
/// since it needs no memory. A trait object in the frame is read through its vtable on another
/// thread.
#[test]
fn publish_accepts_exactly_the_bytes_of_its_own_frame() {
    let mut other = FrameArena::<2>::chained(256);
    let plain = Arena::with_capacity(256);
    let elsewhere: &[u32] = plain.alloc_slice_copy(&[1u32, 2, 3]);
    let boxed = Box::new([7u32; 4]);
    let on_stack = [8u32; 4];
    let mut frames = FrameArena::<2>::chained(256);

    let of = other.begin_frame();
    let foreign: &[u32] = of.alloc_slice_copy(&[9u32; 4]);
    let f = frames.begin_frame();
    assert!(f.publish(foreign).is_err(), "another frame arena's data");
    assert!(f.publish(elsewhere).is_err(), "a plain arena's data");
    assert!(f.publish(&*boxed).is_err(), "a heap block");
    assert!(f.publish(&STATIC_WORDS).is_err(), "a static");
    assert!(f.publish("a literal").is_err(), "a string literal");
    assert!(f.publish(&on_stack).is_err(), "a stack array");
    assert!(f.publish(&on_stack[1..]).is_err(), "a stack slice");

    let mine: &[u32] = f.alloc_slice_copy(&[10u32, 11, 12, 13]);
    let text: &str = f.alloc_str("h\u{e9}llo");
    let word: &Word = f.alloc(Word(42));
    let word: &dyn Answer = word;
    let readers = (
        f.publish(&mine[1..3]).unwrap(),
        f.publish(&mine[3]).unwrap(),
        f.publish(text).unwrap(),
        f.publish(&text[1..3]).unwrap(),
        f.publish(&STATIC_WORDS[..0]).unwrap(),
        f.publish(&()).unwrap(),
        ok(f.publish::<dyn Answer>(&SEVEN)),
        ok(f.publish(word)),
    );
    assert_eq!(frames.readers(0), 8);
    let read = thread::spawn(move || {
        let (mid, last, text, e_acute, empty, unit, seven, word) = readers;
        assert_eq!(*mid, [11, 12]);
        assert_eq!(*last, 13);
        assert_eq!(&*text, "h\u{e9}llo");
        assert_eq!(&*e_acute, "\u{e9}");
        assert!(empty.is_empty());
        assert_eq!(*unit, ());
        assert_eq!((seven.answer(), word.answer()), (7, 42));
    });
    read.join().unwrap();
    assert_eq!(
        frames.readers(0),
        0,
        "every reader released on the reading thread"
    );
    frames.begin_frame();
    assert_eq!(frames.try_begin_frame().unwrap().buffer_index(), 0);
}

/// Attack: a buffer filled to its very last byte (a fixed buffer), its last value published:
/// the containment check accepts it (it ends at the block end) and refuses a value of the next
/// block in memory, whatever lies there.
#[test]
fn publish_accepts_a_value_ending_at_the_last_byte_of_a_fixed_buffer() {
    let mut frames = FrameArena::<1>::with_capacity(64);
    let f = frames.begin_frame();
    let all: &[u8] = f.alloc_slice_fill_copy(64, 0xAB);
    assert_eq!(f.remaining(), 0);
    let tail = f.publish(&all[63]).unwrap();
    let whole = f.publish(all).unwrap();
    assert!(f.try_alloc(1u8).is_err());
    assert_eq!((*tail, whole.len()), (0xAB, 64));
    assert!(whole.iter().all(|&b| b == 0xAB));
}

// ---------------------------------------------------------------------------------------------
// Frame arenas: readers on other threads
// ---------------------------------------------------------------------------------------------

/// Attack: several reader threads per frame, each with its own clone, releasing at random
/// moments while the producer is already waiting in `begin_frame` for the buffer they hold.
/// The producer must neither reset the buffer under the last of them nor miss its release.
#[test]
fn readers_released_on_many_threads_while_begin_frame_waits() {
    let frames_to_run = pick(40, 4) as u64;
    let per_frame = pick(4, 2);
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(512);
    let mut threads = Vec::new();
    for n in 0..frames_to_run {
        let reader = publish_payload(&mut frames, n, &drops);
        for k in 0..per_frame {
            let r = reader.clone();
            threads.push(thread::spawn(move || {
                r.check(n);
                if k % 2 == 0 {
                    thread::yield_now();
                } else {
                    thread::sleep(Duration::from_micros(50 * (n % 3)));
                }
                r.check(n);
            }));
        }
        drop(reader);
    }
    for t in threads {
        t.join().unwrap();
    }
    drop(frames);
    assert_eq!(count(&drops), frames_to_run as usize);
}

/// Attack: readers juggled between threads: each thread clones the reader it holds, sends the
/// clone to the next thread and drops its own, so the count is carried from thread to thread
/// (and through clones made off the producer thread) while the producer spins on
/// `try_begin_frame`. It must fail until the last clone is gone.
#[test]
fn clones_made_and_dropped_off_the_producer_thread_keep_the_buffer_held() {
    let hops = pick(64, 6);
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(512);
    let reader = publish_payload(&mut frames, 0, &drops);
    frames.begin_frame(); // buffer 1
    let (first_tx, mut rx) = mpsc::channel::<FrameReader<Payload>>();
    let mut threads = Vec::new();
    for _ in 0..3 {
        let (tx, next_rx) = mpsc::channel();
        let my_rx = mem::replace(&mut rx, next_rx);
        threads.push(thread::spawn(move || {
            for r in my_rx {
                r.check(0);
                let clone = r.clone();
                drop(r);
                clone.check(0);
                if tx.send(clone).is_err() {
                    break;
                }
            }
        }));
    }
    // the last thread's receiver: the producer takes the readers back and sends them round
    for _ in 0..hops {
        first_tx.send(reader.clone()).unwrap();
        let back = rx.recv().unwrap();
        assert!(matches!(
            frames.try_begin_frame(),
            Err(FrameInUse { buffer: 0, .. })
        ));
        back.check(0);
    }
    drop(first_tx);
    for t in threads {
        t.join().unwrap();
    }
    assert!(
        frames.try_begin_frame().is_err(),
        "the producer's own reader"
    );
    drop(reader);
    assert_eq!(frames.try_begin_frame().unwrap().buffer_index(), 0);
    assert_eq!(count(&drops), 1);
}

/// Attack: the frame arena is moved to another thread while a reader of one of its buffers
/// lives on this one; the new owner waits in `begin_frame` for that buffer. Pages do not move
/// with the frame arena, so the reader stays valid, and the wait ends when it is dropped here.
#[test]
fn a_frame_arena_moved_to_another_thread_waits_for_a_reader_left_behind() {
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(512);
    let reader = publish_payload(&mut frames, 0, &drops);
    let (about_to_wait, waiting) = mpsc::channel();
    let producer = thread::spawn(move || {
        frames.begin_frame().alloc(1u8); // buffer 1
        about_to_wait.send(()).unwrap();
        let f = frames.begin_frame(); // buffer 0: waits for the reader on the other thread
        assert_eq!((f.buffer_index(), f.used()), (0, 0));
        frames
    });
    waiting.recv().unwrap();
    reader.check(0);
    thread::sleep(Duration::from_millis(pick(5, 1) as u64));
    reader.check(0);
    assert_eq!(count(&drops), 0, "not reset while the reader lives");
    drop(reader);
    let frames = producer.join().unwrap();
    assert_eq!(count(&drops), 1);
    assert_eq!(frames.frames_begun(), 3);
}

/// Attack: `mem::swap` two frame arenas while each has a reader: the readers' counts travel
/// with their buffers, so each arena refuses to reset exactly the buffer read through the other
/// one's former reader, and each reader's data stays intact through the other's frames.
#[test]
fn swapping_two_frame_arenas_keeps_each_reader_on_its_own_buffer() {
    let drops = counter();
    let mut a = FrameArena::<2>::chained(512);
    let mut b = FrameArena::<2>::with_capacity(512);
    let ra = publish_payload(&mut a, 1, &drops);
    let rb = publish_payload(&mut b, 2, &drops);
    mem::swap(&mut a, &mut b);
    // `a` now owns b's buffers: its buffer 0 is read by `rb`
    assert_eq!((a.readers(0), b.readers(0)), (1, 1));
    a.begin_frame().alloc([3u8; 100]);
    b.begin_frame().alloc([4u8; 100]);
    drop(ra);
    assert!(a.try_begin_frame().is_err(), "rb still holds a's buffer 0");
    assert_eq!(b.try_begin_frame().unwrap().buffer_index(), 0);
    assert_eq!(count(&drops), 1, "only ra's payload was dropped");
    rb.check(2);
    for _ in 0..4 {
        b.begin_frame().alloc_slice_fill_copy(64, 0xEEu8);
    }
    rb.check(2);
    drop(rb);
    assert_eq!(a.try_begin_frame().unwrap().buffer_index(), 0);
    assert_eq!(count(&drops), 2);
}

/// Attack: `N = 1`, every frame reuses the only buffer: a reader of it makes `try_begin_frame`
/// refuse, `begin_frame` waits for a reader released on another thread, and the index checks
/// of `buffer` and `readers` panic instead of reading past the array.
#[test]
fn a_single_buffer_frame_arena_never_resets_under_its_reader() {
    let drops = counter();
    let mut frames = FrameArena::<1>::chained(256);
    let reader = publish_payload(&mut frames, 0, &drops);
    assert_eq!(
        frames.try_begin_frame().unwrap_err(),
        FrameInUse {
            buffer: 0,
            readers: 1
        }
    );
    assert!(catch_unwind(AssertUnwindSafe(|| frames.readers(1))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| frames.buffer(1).used())).is_err());
    let reading = thread::spawn(move || {
        thread::sleep(Duration::from_millis(pick(5, 1) as u64));
        reader.check(0);
    });
    let f = frames.begin_frame(); // waits for the thread
    assert_eq!((f.buffer_index(), f.number(), f.used()), (0, 1, 0));
    reading.join().unwrap();
    assert_eq!(count(&drops), 1);
}

/// Attack: `set_limit` on a live frame arena while a buffer is read, then allocations through
/// `buffer(i)` between frames that the limit refuses, and a limit of 0 on fixed and chained
/// buffers: refused requests are errors, nothing read moves or changes.
#[test]
fn limits_set_on_a_live_frame_arena_leave_read_buffers_intact() {
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(256);
    let reader = publish_payload(&mut frames, 5, &drops);
    frames.set_limit(Some(0));
    assert!(matches!(
        frames.buffer(0).try_alloc([0u8; 4096]),
        Err(ArenaError::LimitReached { .. })
    ));
    frames.buffer(0).alloc(1u64); // still fits in the kept page, past the bump pointer
    reader.check(5);
    let f = frames.begin_frame(); // buffer 1
    assert!(f.try_alloc_slice_fill_copy(10_000, 0u8).is_err());
    frames.set_limit(None);
    frames.buffer(0).alloc_slice_fill_copy(5000, 0xFFu8);
    reader.check(5);
    drop(reader);

    let mut fixed = FrameArena::<2>::with_capacity(128).with_limit(0);
    let f = fixed.begin_frame();
    assert!(
        f.try_alloc([0u8; 100]).is_ok(),
        "no effect on fixed buffers"
    );
    let mut none = FrameArena::<2>::chained(128).with_limit(0);
    let f = none.begin_frame();
    assert!(f.try_alloc(0u8).is_err());
    assert!(f.publish(&()).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Frame arenas: destructors run by a buffer's reset or by the frame arena's drop
// ---------------------------------------------------------------------------------------------

/// Attack: a destructor panics while `begin_frame` resets the oldest buffer. The panic reaches
/// the caller; every value of that buffer is still dropped once, the buffer is left empty, and
/// later frames (and readers of them) work.
#[test]
fn a_destructor_panicking_in_the_reset_of_begin_frame_leaves_the_frame_arena_usable() {
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(256);
    {
        let f = frames.begin_frame();
        f.alloc(Counted::new(&drops));
        f.alloc(Counted::bomb(&drops));
        f.alloc(Counted::new(&drops));
        f.alloc_slice_fill_copy(600, 1u8); // a second page, so the reset would coalesce
    }
    frames.begin_frame().alloc(Counted::new(&drops));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        frames.begin_frame();
    }));
    assert!(caught.is_err());
    assert_eq!(count(&drops), 3, "every value of buffer 0 dropped once");
    assert_eq!(frames.buffer(0).used(), 0);
    assert_eq!(frames.buffer(0).pending_drops(), 0);
    // and the frames go on, through both buffers, with readers
    let payloads = counter();
    for n in 10..14 {
        let r = publish_payload(&mut frames, n, &payloads);
        r.check(n);
    }
    // try_begin_frame's reset panics the same way
    frames.begin_frame().alloc(Counted::bomb(&drops));
    frames.begin_frame();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = frames.try_begin_frame();
    }));
    assert!(caught.is_err());
    assert_eq!(count(&drops), 5);
    drop(frames);
    assert_eq!(count(&drops), 5);
    assert_eq!(count(&payloads), 4);
}

/// Attack: a destructor panics while the frame arena itself is dropped. The arena with the
/// panicking value still drops the rest of its values and frees its pages; the other buffers
/// must be dropped too (their destructors run, their pages are freed), not leaked because the
/// loop over the buffers was cut short by the unwinding.
#[test]
fn a_destructor_panicking_while_the_frame_arena_drops_still_drops_the_other_buffers() {
    let drops = counter();
    let mut frames = FrameArena::<3>::chained(256);
    frames.begin_frame().alloc(Counted::bomb(&drops)); // buffer 0
    frames.begin_frame().alloc(Counted::new(&drops)); // buffer 1
    let f = frames.begin_frame(); // buffer 2
    f.alloc(Counted::new(&drops));
    f.alloc(Counted::new(&drops));
    let caught = catch_unwind(AssertUnwindSafe(move || drop(frames)));
    assert!(caught.is_err());
    assert_eq!(
        count(&drops),
        4,
        "the values of buffers 1 and 2 were never dropped (and their pages leaked)"
    );
}

/// A frame value holding (behind a mutex) a reader of another frame's data.
struct HoldsReader {
    reader: Mutex<Option<FrameReader<[u64]>>>,
    drops: Arc<AtomicUsize>,
}

impl Drop for HoldsReader {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        // releasing the held reader here touches the other buffer's count
        if let Some(r) = self.reader.get_mut().unwrap().take() {
            assert_eq!(r.len(), 4);
        }
    }
}

/// Publishes a `HoldsReader` in the next frame and returns a reader of it.
fn publish_holder(
    frames: &mut FrameArena<2>,
    drops: &Arc<AtomicUsize>,
) -> FrameReader<HoldsReader> {
    let f = frames.begin_frame();
    let h: &HoldsReader = f.alloc(HoldsReader {
        reader: Mutex::new(None),
        drops: Arc::clone(drops),
    });
    f.publish(h).unwrap_or_else(|_| panic!("in this frame"))
}

/// Publishes `[n; 4]` in the next frame.
fn publish_words(frames: &mut FrameArena<2>, n: u64) -> FrameReader<[u64]> {
    let f = frames.begin_frame();
    let w: &[u64] = f.alloc_slice_fill_copy(4, n);
    f.publish(w).unwrap_or_else(|_| panic!("in this frame"))
}

/// Attack (re-entrance): a value of buffer 0 holds a reader of buffer 1, so the reset of
/// buffer 0 releases buffer 1 from inside a destructor; buffer 1 can then be reset. Dropping
/// the frame arena in that state (buffer 0 first) drops both.
#[test]
fn a_destructor_run_by_a_reset_releases_a_reader_of_the_other_buffer() {
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(256);
    let holder = publish_holder(&mut frames, &drops); // buffer 0
    let words = publish_words(&mut frames, 9); // buffer 1
    *holder.reader.lock().unwrap() = Some(words);
    drop(holder);
    assert_eq!((frames.readers(0), frames.readers(1)), (0, 1));
    frames.begin_frame(); // resets buffer 0: its destructor releases buffer 1
    assert_eq!(count(&drops), 1);
    assert_eq!(frames.readers(1), 0);
    assert_eq!(frames.try_begin_frame().unwrap().buffer_index(), 1);

    // the same hold across the frame arena's drop
    let holder = publish_holder(&mut frames, &drops); // buffer 0
    let words = publish_words(&mut frames, 9); // buffer 1
    *holder.reader.lock().unwrap() = Some(words);
    drop(holder);
    drop(frames);
    assert_eq!(count(&drops), 2);
}

/// Attack (re-entrance, the other order): a value of buffer 1 holds a reader of buffer 0. When
/// the frame arena is dropped, buffer 0 is still counted as read when it is first looked at,
/// and becomes free only once buffer 1's values are dropped: it must be dropped then, not
/// leaked (its only reader was inside the frame arena itself).
#[test]
fn dropping_a_frame_arena_whose_later_buffer_holds_a_reader_of_an_earlier_one_drops_both() {
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(256);
    let earlier = {
        let f = frames.begin_frame(); // buffer 0
        f.alloc(Counted::new(&drops));
        let w: &[u64] = f.alloc_slice_fill_copy(4, 1);
        f.publish(w).unwrap()
    };
    let holder = publish_holder(&mut frames, &drops); // buffer 1
    *holder.reader.lock().unwrap() = Some(earlier);
    drop(holder);
    drop(frames);
    assert_eq!(
        count(&drops),
        2,
        "buffer 0's value was never dropped: the buffer was leaked"
    );
}

/// Attack (re-entrance, self-hold): a value of buffer 0 holds a reader of buffer 0 itself.
/// The buffer can never be reset: `try_begin_frame` keeps refusing it (`begin_frame` would
/// wait forever, as documented), and nothing reads freed memory.
#[test]
#[cfg_attr(miri, ignore = "the self-held buffer is leaked by design")]
fn a_buffer_holding_a_reader_of_itself_is_never_reset() {
    let drops = counter();
    let mut frames = FrameArena::<2>::chained(256);
    {
        let f = frames.begin_frame();
        let w: &[u64] = f.alloc_slice_fill_copy(4, 3);
        let words = f.publish(w).unwrap();
        let h: &HoldsReader = f.alloc(HoldsReader {
            reader: Mutex::new(Some(words)),
            drops: Arc::clone(&drops),
        });
        assert_eq!(h.reader.lock().unwrap().as_deref(), Some(&[3u64; 4][..]));
    }
    frames.begin_frame();
    for _ in 0..3 {
        assert!(matches!(
            frames.try_begin_frame(),
            Err(FrameInUse {
                buffer: 0,
                readers: 1
            })
        ));
    }
    drop(frames);
    assert_eq!(count(&drops), 0, "the held buffer was leaked, not dropped");
}

/// Attack: values allocated in frames and published after an allocator `Vec` of the same frame
/// gave its spare tail back (`shrink_to_fit`): the vector, still alive and growing, must move
/// instead of growing in place over the published value, and later allocations through
/// `buffer(i)` between frames go past everything read.
#[test]
fn a_frame_vector_growing_after_its_tail_was_reused_moves_instead_of_overwriting() {
    let mut frames = FrameArena::<2>::chained(256);
    let f = frames.begin_frame();
    let mut v: AVec<u8, &Arena> = AVec::with_capacity_in(64, f.arena());
    v.extend(0..8u8);
    v.shrink_to_fit(); // the newest block: its spare 56 bytes go back
    let used = f.used();
    let x: &[u8] = f.alloc_slice_fill_copy(16, 0xAA); // in the bytes just given back
    assert!(f.used() <= used + 16);
    let reader = f.publish(x).unwrap();
    v.extend(8..200u8); // not the newest any more: must move
    assert!(v.iter().copied().eq(0..200u8));
    assert!(reader.iter().all(|&b| b == 0xAA));
    drop(v);
    frames.begin_frame();
    frames.buffer(0).alloc_slice_fill_copy(300, 0x55u8);
    assert!(reader.iter().all(|&b| b == 0xAA));
}

/// Attack: zero-sized values with destructors (one over-aligned) in frames, and a zero-sized
/// value published: each reset drops every one of them exactly once, whatever the buffer.
#[test]
fn zero_sized_frame_values_with_destructors_are_dropped_once_per_reset() {
    static PLAIN: AtomicUsize = AtomicUsize::new(0);
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    struct Z;
    impl Drop for Z {
        fn drop(&mut self) {
            PLAIN.fetch_add(1, Ordering::SeqCst);
        }
    }
    #[repr(align(4096))]
    struct ZPage;
    impl Drop for ZPage {
        fn drop(&mut self) {
            PAGE.fetch_add(1, Ordering::SeqCst);
        }
    }
    let mut frames = FrameArena::<2>::chained(128);
    let rounds = pick(6, 3);
    for round in 0..rounds {
        let f = frames.begin_frame();
        for _ in 0..round {
            f.alloc(Z);
            f.alloc(ZPage);
        }
        f.alloc_slice_fill_with(round, |_| Z);
        let z: &Z = f.alloc(Z);
        let r = ok(f.publish(z));
        drop(r);
    }
    drop(frames);
    let n: usize = (0..rounds).sum();
    assert_eq!(PLAIN.load(Ordering::SeqCst), 2 * n + rounds);
    assert_eq!(PAGE.load(Ordering::SeqCst), n);
}

// ---------------------------------------------------------------------------------------------
// Scratch arenas
// ---------------------------------------------------------------------------------------------

static EXIT_DROPS: AtomicUsize = AtomicUsize::new(0);
static EXIT_SUMS: AtomicUsize = AtomicUsize::new(0);

struct ExitCounted;
impl Drop for ExitCounted {
    fn drop(&mut self) {
        EXIT_DROPS.fetch_add(1, Ordering::SeqCst);
        // a destructor run by a scratch reset at thread exit opens scratch again
        scratch(|a| {
            a.alloc_slice_fill_copy(8, 1u8);
        });
    }
}

/// A thread-local whose destructor uses scratch arenas, nested, with values to drop.
struct UsesScratchAtExit;
impl Drop for UsesScratchAtExit {
    fn drop(&mut self) {
        let sum = scratch(|outer| {
            outer.alloc(ExitCounted);
            let xs = outer.alloc_slice_fill_with(16, |i| i);
            let inner = scratch(|inner| {
                inner.alloc(ExitCounted);
                inner
                    .alloc_slice_fill_with(4, |i| i * 100)
                    .iter()
                    .sum::<usize>()
            });
            xs.iter().sum::<usize>() + inner
        });
        EXIT_SUMS.fetch_add(sum, Ordering::SeqCst);
    }
}

thread_local! {
    static AT_EXIT: UsesScratchAtExit = const { UsesScratchAtExit };
}

/// Attack: scratch used from a thread-local destructor at thread exit, both before the
/// thread's scratch stack is destroyed (the key registered after it) and after (registered
/// before it, so the stack is gone and a temporary arena is used), with nested calls and
/// destructors that use scratch again.
#[test]
fn scratch_from_a_thread_local_destructor_at_thread_exit() {
    let before = thread::spawn(|| {
        scratch(|a| {
            a.alloc(1u8);
        });
        AT_EXIT.with(|_| {});
    });
    before.join().unwrap();
    let after = thread::spawn(|| {
        AT_EXIT.with(|_| {});
        scratch(|a| {
            a.alloc(1u8);
        });
    });
    after.join().unwrap();
    assert_eq!(EXIT_DROPS.load(Ordering::SeqCst), 4);
    assert_eq!(EXIT_SUMS.load(Ordering::SeqCst), 2 * (120 + 600));
}

/// Recurses `levels` scratch calls deep; every level keeps data in its arena, the deepest reads
/// the thread's scratch usage and leaves a value whose destructor opens one level more (while
/// its reset holds that arena). Each level checks its own data afterwards.
fn deep_scratch(level: usize, levels: usize, drops: &Arc<AtomicUsize>) -> usize {
    scratch(|a| {
        assert_eq!(scratch_depth(), level + 1);
        let mine = a.alloc_slice_fill_with(8, |i| level * 100 + i);
        a.alloc(Counted::new(drops));
        let inner = if level + 1 < levels {
            deep_scratch(level + 1, levels, drops)
        } else {
            struct OpensDeeper(Arc<AtomicUsize>);
            impl Drop for OpensDeeper {
                fn drop(&mut self) {
                    let depth = scratch_depth();
                    scratch(|deeper| {
                        assert_eq!(scratch_depth(), depth + 1);
                        deeper.alloc(Counted::new(&self.0));
                        let _ = ThreadScratch.usage();
                    });
                }
            }
            a.alloc(OpensDeeper(Arc::clone(drops)));
            ThreadScratch.usage().current.min(1)
        };
        assert!(mine.iter().copied().eq((0..8).map(|i| level * 100 + i)));
        mine.iter().sum::<usize>() + inner
    })
}

/// Attack: scratch nested deeper than ever before on this thread (the stack of arenas grows
/// while every outer level holds its arena), and a destructor run by the deepest reset opening
/// a level deeper still.
#[test]
fn scratch_nested_deeper_than_ever_while_outer_levels_hold_their_arenas() {
    let levels = pick(24, 6);
    let drops = counter();
    let total = thread::spawn({
        let drops = Arc::clone(&drops);
        move || deep_scratch(0, levels, &drops)
    })
    .join()
    .unwrap();
    let expected: usize = (0..levels)
        .map(|l| (0..8).map(|i| l * 100 + i).sum::<usize>())
        .sum();
    assert_eq!(total, expected + 1);
    assert_eq!(count(&drops), levels + 1);
}

/// Attack: the closure of a nested scratch call panics while its arena holds values whose
/// destructors use scratch and read the usage; the panic is caught inside the outer call, which
/// then goes on using its own arena (at the right depth, its data intact).
#[test]
fn a_panic_in_a_nested_scratch_closure_unwinds_to_a_usable_outer_arena() {
    let drops = counter();
    struct UsesScratch(Arc<AtomicUsize>);
    impl Drop for UsesScratch {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
            scratch(|a| {
                a.alloc(Counted::new(&self.0));
                let _ = ThreadScratch.usage();
            });
        }
    }
    scratch(|outer| {
        let kept = outer.alloc_slice_fill_with(32, |i| i as u32);
        for round in 0..3 {
            let caught = catch_unwind(AssertUnwindSafe(|| {
                scratch(|inner| {
                    inner.alloc(UsesScratch(Arc::clone(&drops)));
                    inner.alloc_slice_fill_with(4, |_| UsesScratch(Arc::clone(&drops)));
                    assert_eq!(scratch_depth(), 2);
                    panic!("a nested scratch closure panics (expected by the test)");
                })
            }));
            assert!(caught.is_err());
            assert_eq!(scratch_depth(), 1, "round {round}");
            assert_eq!(count(&drops), (round + 1) * 10);
        }
        outer.alloc_slice_fill_copy(1000, 0u8);
        assert!(kept.iter().copied().eq(0..32));
    });
    assert_eq!(scratch_depth(), 0);
}

/// Attack: a limit set through the `&Arena` a scratch call hands out. The scratch arena is
/// the thread's, shared by every later scratch call on it, so a limit left behind by one
/// caller (a library, say) must not make another caller's allocations fail: the limit ends
/// with the call that set it.
#[test]
fn a_limit_set_inside_one_scratch_call_does_not_refuse_the_next_caller() {
    thread::spawn(|| {
        scratch(|a| a.set_limit(Some(0)));
        // Past the scratch arena's first 64 KiB page, so it needs a page the limit would refuse.
        let n = pick(200_000, 66_000);
        // Under Miri the bytes are copied in (one copy) rather than filled in (66,000
        // interpreted writes, 10 s there): the request takes the same allocation path.
        let zeros = vec![0u8; if cfg!(miri) { n } else { 0 }];
        let big = scratch(|a| {
            if cfg!(miri) {
                a.try_alloc_slice_copy(&zeros)
            } else {
                a.try_alloc_slice_fill_copy(n, 0u8)
            }
            .map(|s| s.len())
        });
        assert_eq!(
            big.ok(),
            Some(n),
            "a limit set by an earlier scratch caller refused a later one"
        );
    })
    .join()
    .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Worker arenas
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "rayon")]
mod workers {
    use super::*;
    use arena_kit_core::arena::WorkerArenas;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Attack: `iter_mut` hands out the worker arenas mutably, so safe code can swap two
    /// workers' arenas (with values in them) or put a fresh arena in a slot. Each arena still
    /// has one owner thread at a time; values are dropped once at `reset_all` or at the drop.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "rayon's int-to-pointer casts stop Miri under strict provenance"
    )]
    fn worker_arenas_swapped_through_iter_mut_still_drop_every_value_once() {
        let drops = counter();
        let p = pool(2);
        let mut arenas = p.install(|| WorkerArenas::new(512));
        let fill = |arenas: &WorkerArenas| {
            p.broadcast(|ctx| {
                let a = arenas.current().unwrap();
                a.alloc(Counted::new(&drops));
                let xs = a.alloc_slice_fill_with(16, |i| ctx.index() * 100 + i);
                assert!(
                    xs.iter()
                        .copied()
                        .eq((0..16).map(|i| ctx.index() * 100 + i))
                );
            });
        };
        fill(&arenas);
        {
            let mut it = arenas.iter_mut();
            let (first, second) = (it.next().unwrap(), it.next().unwrap());
            mem::swap(first, second);
        }
        fill(&arenas);
        let old = mem::replace(arenas.iter_mut().next().unwrap(), Arena::chained(64));
        assert_eq!(old.pending_drops(), 2);
        fill(&arenas);
        arenas.reset_all();
        assert_eq!(count(&drops), 4);
        drop(old);
        assert_eq!(count(&drops), 6);
        fill(&arenas);
        drop(arenas);
        assert_eq!(count(&drops), 8);
    }

    /// Attack: `rayon::join` inside a slice constructor running on a worker: while the slice is
    /// half built, the same thread (or a thief) runs the other half of the join, which takes
    /// its worker's arena (possibly the very arena building the slice) and allocates values to
    /// drop. Every value is built and dropped once.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "rayon's int-to-pointer casts stop Miri under strict provenance"
    )]
    fn a_join_inside_a_worker_constructor_allocates_from_the_same_arena() {
        let drops = counter();
        for threads in [1, 2] {
            let p = pool(threads);
            let mut arenas = p.install(|| WorkerArenas::new(256));
            let n = pick(32, 4);
            p.install(|| {
                let a = arenas.current().unwrap();
                let slice = a.alloc_slice_fill_with(n, |i| {
                    let (x, y) = rayon::join(
                        || {
                            let a = arenas.current().unwrap();
                            a.alloc(Counted::new(&drops));
                            a.alloc_slice_fill_copy(40, i as u8).len()
                        },
                        || {
                            let a = arenas.current().unwrap();
                            a.alloc_with(|| {
                                a.alloc(Counted::new(&drops));
                                i
                            });
                            i
                        },
                    );
                    (Counted::new(&drops), x + y)
                });
                assert!(slice.iter().map(|s| s.1).eq((0..n).map(|i| 40 + i)));
            });
            arenas.reset_all();
        }
        assert_eq!(count(&drops), 2 * 3 * pick(32, 4));
    }
}

// ---------------------------------------------------------------------------------------------
// Scopes and markers
// ---------------------------------------------------------------------------------------------

/// Attack: markers from the wrong place: a marker of an arena that was swapped with another
/// (the marker follows its arena, not the variable), of an arena replaced by a fresh one in the
/// same place, a scope's start marker used after the scope, a marker taken inside a scope used
/// once the scope's end rewound past it, and one from before a reset: refused as
/// `Foreign`/`Stale`, or accepted with every value dropped once.
#[test]
fn markers_from_the_wrong_arena_or_scope_are_refused_or_rewind_exactly() {
    let drops = counter();
    let mut a = Arena::chained(256);
    let mut b = Arena::chained(256);
    a.alloc(Counted::new(&drops));
    let ma = a.mark();
    a.alloc(Counted::new(&drops));
    mem::swap(&mut a, &mut b);
    assert_eq!(a.rewind(ma), Err(MarkerError::Foreign));
    assert_eq!(b.rewind(ma), Ok(()));
    assert_eq!(count(&drops), 1);

    let mb = b.mark();
    b = Arena::chained(256); // the old one is dropped here, the new one is in its place
    assert_eq!(count(&drops), 2);
    assert_eq!(b.rewind(mb), Err(MarkerError::Foreign));

    let mut arena = Arena::chained(128);
    let before = arena.mark();
    let (start, inside) = {
        let s = arena.scope();
        s.alloc(Counted::new(&drops));
        let inside = s.mark();
        s.alloc_slice_fill_copy(300, 1u8); // a page of its own
        s.alloc(Counted::new(&drops));
        (s.start(), inside)
    };
    assert_eq!(count(&drops), 4);
    assert_eq!(arena.used(), 0);
    assert_eq!(arena.rewind(start), Ok(()));
    assert_eq!(
        arena.rewind(inside),
        Err(MarkerError::Stale),
        "past the position"
    );
    arena.alloc(Counted::new(&drops));
    arena.reset();
    assert_eq!(count(&drops), 5, "each value dropped once");
    assert_eq!(
        arena.rewind(before),
        Err(MarkerError::Stale),
        "taken before a reset"
    );
    assert_eq!(
        arena.rewind(inside),
        Err(MarkerError::Stale),
        "taken before a reset"
    );
    assert_eq!(arena.used(), 0);
}

/// One round of [`a_marker_into_a_freed_page_is_never_read_through_after_the_address_is_reused`]:
/// a marker into the first page of a chained arena (a page of the arena's page size), taken
/// inside a scope that then needs a second page; the scope's end merges the two pages into a
/// new one (giving both back). The arena then regrows through a dozen new pages of the page
/// size, so the system allocator may hand the first page's address out again, and rewinds to
/// the marker.
fn rewind_to_a_marker_into_a_merged_away_page(drops: &Arc<AtomicUsize>) {
    let mut arena = Arena::chained(128);
    let inside = {
        let s = arena.scope();
        s.alloc(Counted::new(drops));
        let inside = s.mark();
        s.alloc_slice_fill_copy(300, 1u8); // a page of its own
        s.alloc(Counted::new(drops));
        inside
    };
    for i in 0..40 {
        arena.alloc_slice_fill_copy(40, i as u8); // fills the merged page, then new 128-byte pages
    }
    // the marker's page was given back: either the marker is refused, or the rewind reads the
    // live page at that address through the chain, never through the marker's freed pointer
    let r = arena.rewind(inside);
    assert!(r.is_ok() || r == Err(MarkerError::Stale), "{r:?}");
    arena.alloc_slice_fill_copy(100, 3u8);
}

/// Attack: a marker is plain data holding the address of its page. Its page is given back (a
/// scope's end merges the pages after the bump pointer into one new page), and the system
/// allocator hands the same address out again for a later page of the same arena. `rewind`
/// finds that address in the chain (it compares addresses only) and must then read the page
/// header through the chain's pointer to the live page, never the marker's own, whose
/// allocation was freed (a use-after-free by provenance, which Miri reports as "dangling
/// reference (use-after-free)" in `page::header`; natively nothing shows, the address being
/// live again). Several rounds, so that one of them meets an address reuse whatever Miri's
/// random choices.
#[test]
fn a_marker_into_a_freed_page_is_never_read_through_after_the_address_is_reused() {
    let drops = counter();
    for _ in 0..pick(16, 6) {
        rewind_to_a_marker_into_a_merged_away_page(&drops);
    }
}

/// A marker into a page that was given back is stale, also when a later page of the arena got
/// the same address from the system allocator (the marker's position is not in that page, which
/// did not exist when it was taken): the rewind is refused and changes nothing.
#[test]
fn a_marker_into_a_given_back_page_is_stale_even_when_a_new_page_has_its_address() {
    let drops = counter();
    for _ in 0..pick(16, 6) {
        let mut arena = Arena::chained(128);
        let inside = {
            let s = arena.scope();
            s.alloc(Counted::new(&drops));
            let inside = s.mark();
            s.alloc_slice_fill_copy(300, 1u8); // a page of its own
            s.alloc(Counted::new(&drops));
            inside
        };
        for i in 0..40 {
            arena.alloc_slice_fill_copy(40, i as u8); // new 128-byte pages, one may reuse the address
        }
        let (used, allocs) = (arena.used(), arena.allocation_count());
        assert_eq!(arena.rewind(inside), Err(MarkerError::Stale));
        assert_eq!((arena.used(), arena.allocation_count()), (used, allocs));
    }
}

/// Attack: `mem::forget` of scopes. A forgotten scope never rewinds, so its values stay until
/// a reset; a forgotten inner scope's values are freed by the outer scope's end instead. Each
/// value is dropped once, the bytes are accounted, and a value allocated afterwards does not
/// overlap the forgotten scope's values while they live.
#[test]
fn forgotten_scopes_leave_their_values_to_the_next_rewind() {
    let drops = counter();
    let mut arena = Arena::chained(256);
    let kept = {
        let s = arena.scope();
        s.alloc(Counted::new(&drops));
        s.alloc_slice_fill_copy(40, 7u8);
        let used = s.used();
        mem::forget(s);
        used
    };
    assert_eq!(arena.used(), kept, "nothing rewound");
    let after: &[u8] = arena.alloc_slice_fill_copy(40, 9u8);
    assert!(after.iter().all(|&b| b == 9));
    {
        let mut outer = arena.scope();
        outer.alloc(Counted::new(&drops));
        {
            let inner = outer.scope();
            inner.alloc(Counted::new(&drops));
            inner.alloc(Counted::new(&drops));
            mem::forget(inner);
        }
        assert_eq!(count(&drops), 0);
        outer.alloc(Counted::new(&drops));
    }
    assert_eq!(
        count(&drops),
        4,
        "the outer end freed the forgotten inner scope too"
    );
    assert_eq!(arena.used(), kept + 40);
    arena.reset();
    assert_eq!(count(&drops), 5);
    assert_eq!(arena.used(), 0);
}

/// Attack: an arena `Vec` whose block started before a marker grows in place across it, then
/// hands its values to the arena (`into_slice`, which puts a drop record in front of them in
/// place). Rewinding to the marker frees a record that reaches past it whole: every value is
/// dropped once, none after the rewind.
#[test]
fn a_vector_grown_across_a_marker_and_adopted_is_dropped_whole_by_the_rewind() {
    let drops = counter();
    let mut arena = Arena::chained(1024);
    arena.alloc(1u64);
    let marker;
    {
        let mut v = ArenaVec::with_capacity_in(1, &arena);
        v.push(Counted::new(&drops));
        marker = arena.mark();
        for _ in 0..5 {
            v.push(Counted::new(&drops));
        }
        let s = v.into_slice();
        assert_eq!(s.len(), 6);
    }
    let used = arena.used();
    arena.rewind(marker).unwrap();
    assert_eq!(
        count(&drops),
        6,
        "the record reaching past the marker is dropped whole"
    );
    assert!(arena.used() <= used);
    arena.alloc_slice_fill_copy(200, 0xCCu8);
    arena.reset();
    assert_eq!(count(&drops), 6);
}

// ---------------------------------------------------------------------------------------------
// Slices from lying or re-entrant iterators
// ---------------------------------------------------------------------------------------------

/// An iterator whose `len()` is whatever it is told, that allocates a value to drop in the
/// arena on every `next` and panics at item `panic_at`.
struct Liar<'a> {
    arena: &'a Arena,
    claimed: usize,
    real: usize,
    given: usize,
    panic_at: Option<usize>,
    drops: Arc<AtomicUsize>,
}

impl Iterator for Liar<'_> {
    type Item = Counted;
    fn next(&mut self) -> Option<Counted> {
        if self.given == self.real {
            return None;
        }
        if self.panic_at == Some(self.given) {
            panic!("a lying iterator panics (expected by the test)");
        }
        self.arena.alloc(Counted::new(&self.drops));
        self.arena.alloc_slice_fill_copy(self.given + 1, 0xABu8);
        self.given += 1;
        Some(Counted::new(&self.drops))
    }
}

impl ExactSizeIterator for Liar<'_> {
    fn len(&self) -> usize {
        self.claimed
    }
}

impl<'a> Liar<'a> {
    fn new(arena: &'a Arena, claimed: usize, real: usize, drops: &Arc<AtomicUsize>) -> Self {
        Liar {
            arena,
            claimed,
            real,
            given: 0,
            panic_at: None,
            drops: Arc::clone(drops),
        }
    }
}

impl Iterator for LiarRef<'_, '_> {
    type Item = Counted;
    fn next(&mut self) -> Option<Counted> {
        self.0.next()
    }
}

impl ExactSizeIterator for LiarRef<'_, '_> {
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// Borrows a `Liar` as an iterator, so the test can look at it afterwards.
struct LiarRef<'l, 'a>(&'l mut Liar<'a>);

/// Attack: `ExactSizeIterator`s that lie about their length (more items than claimed, fewer,
/// `usize::MAX`), allocate values to drop in the same arena while the slice is being built, or
/// panic half-way, through both the registering and the boxed slice builders. The slice holds
/// exactly the claimed items when there are enough, a short iterator panics, an impossible
/// length is an error without advancing the iterator, and every value built (in the slice or
/// by the iterator) is dropped exactly once.
#[test]
fn slices_from_lying_allocating_and_panicking_iterators_drop_every_value_once() {
    let drops = counter();
    let mut arena = Arena::chained(256);
    let mut built = 0; // values the iterators built (each also allocates one in the arena)

    // more items than claimed: only the claimed ones are taken
    let mut liar = Liar::new(&arena, 3, 10, &drops);
    assert_eq!(arena.alloc_slice_fill_iter(LiarRef(&mut liar)).len(), 3);
    assert_eq!(liar.given, 3);
    built += 3;
    // fewer: panics after dropping what was taken
    let mut liar = Liar::new(&arena, 8, 2, &drops);
    assert!(
        catch_unwind(AssertUnwindSafe(
            || arena.alloc_slice_fill_iter(LiarRef(&mut liar))
        ))
        .is_err()
    );
    built += 2;
    assert_eq!(count(&drops), 2, "the two taken items were dropped");
    // a panic half-way
    let mut liar = Liar::new(&arena, 6, 6, &drops);
    liar.panic_at = Some(4);
    assert!(
        catch_unwind(AssertUnwindSafe(
            || arena.alloc_slice_fill_iter(LiarRef(&mut liar))
        ))
        .is_err()
    );
    built += 4;
    assert_eq!(count(&drops), 6);
    // an impossible length: an error, the iterator untouched
    let mut liar = Liar::new(&arena, usize::MAX, 5, &drops);
    assert!(matches!(
        arena.try_alloc_slice_fill_iter(LiarRef(&mut liar)),
        Err(ArenaError::SizeOverflow { .. })
    ));
    assert_eq!(liar.given, 0);
    // the boxed builder, with the same lies
    {
        let mut liar = Liar::new(&arena, 2, 9, &drops);
        let b = arena.alloc_box_slice_fill_iter(LiarRef(&mut liar));
        assert_eq!(b.len(), 2);
        built += 2;
        drop(b);
        assert_eq!(count(&drops), 8);
        let mut liar = Liar::new(&arena, 5, 1, &drops);
        assert!(
            catch_unwind(AssertUnwindSafe(
                || arena.alloc_box_slice_fill_iter(LiarRef(&mut liar))
            ))
            .is_err()
        );
        built += 1;
        assert_eq!(count(&drops), 9);
    }
    arena.reset();
    // every item built was dropped once, and every value the iterators allocated too
    assert_eq!(count(&drops), built + built);
    assert_eq!(arena.pending_drops(), 0);
}

// ---------------------------------------------------------------------------------------------
// Huge requests inside a frame
// ---------------------------------------------------------------------------------------------

/// Attack: requests of absurd sizes and alignments inside a frame (`usize::MAX` elements,
/// sizes near `isize::MAX`, alignment `1 << 31`): typed errors, no page taken for nothing, and
/// the frame still allocates and publishes afterwards.
#[test]
fn absurd_requests_inside_a_frame_are_errors_and_leave_it_usable() {
    use core::alloc::Layout;
    let mut frames = FrameArena::<2>::chained(256);
    let f = frames.begin_frame();
    let pages = f.page_count();
    assert!(f.try_alloc_slice_fill_copy(usize::MAX, 0u64).is_err());
    assert!(
        f.try_alloc_slice_fill_with(usize::MAX / 2, |_| 0u32)
            .is_err()
    );
    assert!(
        f.try_alloc_layout(Layout::from_size_align(isize::MAX as usize - 64, 64).unwrap())
            .is_err()
    );
    if !cfg!(miri) {
        let big = Layout::from_size_align(1, 1 << 31).unwrap();
        if let Ok(p) = f.try_alloc_layout(big) {
            assert_eq!(p.as_ptr() as usize % (1 << 31), 0);
        }
    }
    // A zero-sized `()` slice of any length is accepted at once (no loop over its elements).
    let zst = f.try_alloc_slice_fill_copy(usize::MAX / 2, ());
    assert_eq!(zst.map(|s| s.len()).ok(), Some(usize::MAX / 2));
    assert!(f.page_count() <= pages + 2);
    let x: &[u32] = f.alloc_slice_copy(&[1, 2, 3]);
    let r = f.publish(x).unwrap();
    assert_eq!(*r, [1, 2, 3]);
}

// ---------------------------------------------------------------------------------------------
// Auto traits
// ---------------------------------------------------------------------------------------------

/// Compiles only if `$t` is not `$tr`: with both impls applying, `_` would be ambiguous.
macro_rules! assert_not {
    ($tr:path: $($t:ty),+ $(,)?) => {{
        trait Ambiguous<A> {
            fn item() {}
        }
        impl<T: ?Sized> Ambiguous<()> for T {}
        impl<T: ?Sized + $tr> Ambiguous<u8> for T {}
        $(let _ = <$t as Ambiguous<_>>::item;)+
    }};
}

/// Attack (auto traits): a `Frame` (which hands out `&Arena`, whose cells are unsynchronised)
/// must stay on its thread, and the frame arena must not be shared; a reader crosses threads
/// exactly when `&T` may (`T: Sync`), whatever `T`'s `Send`. A change that made any of these
/// wrong stops this test from compiling.
#[test]
fn frames_stay_on_their_thread_and_readers_cross_as_shared_references_do() {
    fn send<T: Send + ?Sized>() {}
    fn sync<T: Sync + ?Sized>() {}
    send::<FrameArena<2>>();
    send::<FrameReader<[u64]>>();
    sync::<FrameReader<str>>();
    send::<FrameReader<dyn Answer>>();
    // `Sync` but not `Send`: the reader gives only `&T`, so it may cross
    send::<FrameReader<std::sync::MutexGuard<'static, u8>>>();
    assert_not!(Send: arena_kit_core::arena::Frame<'static>, FrameReader<std::cell::Cell<u8>>);
    assert_not!(Sync: arena_kit_core::arena::Frame<'static>, FrameArena<2>, Arena, FrameReader<std::cell::Cell<u8>>);
}
