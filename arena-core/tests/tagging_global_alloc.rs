//! `TaggingAllocator` as this test binary's `#[global_allocator]`: each tag's bytes are checked
//! against what the checks allocate, including nested scopes, frees on other threads, `realloc`,
//! large alignments, refused sizes, threads that exit, and "Untracked".
//!
//! No test harness (`harness = false` in Cargo.toml): the harness's own threads and buffers would
//! allocate while the checks run, and "Untracked" is checked to the byte. The checks run in order
//! on the main thread and on threads they start and join; the slot-table overflow runs last, as it
//! fills the table.
use arena_kit_core::pool::Pool;
use arena_kit_core::soa::{SoaPool, SoaVec};
use arena_kit_core::tags::{
    Budgeted, GlobalRow, MAX_TAG_SLOTS, Registry, Report, Source, Tag, TaggingAllocator, Tracked,
    Usage, global_rows, mem_tag, overflowed_scopes, tag_scope,
};
use arena_kit_core::{Arena, FrameArena};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;

// Not under Miri: `dealloc` reads the header before the pointer it is given, and a `Box`'s
// pointer (std's own, as the runtime frees them) only grants access to the `Box`'s bytes under
// Stacked Borrows, so Miri would report std's frees rather than check this allocator's counting
// (a known limit of Stacked Borrows for allocators with headers: rust-lang/miri#2104,
// rust-lang/unsafe-code-guidelines#402).
// The slot table and `tag_scope` run under Miri through the doc examples (which install no
// global allocator).
#[cfg_attr(not(miri), global_allocator)]
static ALLOC: TaggingAllocator = TaggingAllocator::new(System);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    Rendering,
    Particles,
    Physics,
    Audio,
    Streaming,
    Ai,
    Aligned,
    Sender,
    Receiver,
    Peak,
    Workers,
    Reporting,
    Pages,
    Untracked,
}

impl Tag for T {
    fn name(&self) -> &'static str {
        match self {
            T::Rendering => "Rendering",
            T::Particles => "Particles",
            T::Physics => "Physics",
            T::Audio => "Audio",
            T::Streaming => "Streaming",
            T::Ai => "AI",
            T::Aligned => "Aligned",
            T::Sender => "Sender",
            T::Receiver => "Receiver",
            T::Peak => "Peak",
            T::Workers => "Workers",
            T::Reporting => "Reporting",
            T::Pages => "Pages",
            T::Untracked => "Untracked",
        }
    }
    fn parent(&self) -> Option<T> {
        match self {
            T::Particles => Some(T::Rendering),
            _ => None,
        }
    }
}

/// The global rows now; the rows' own vector is charged to `Reporting`, not to what is checked.
fn rows() -> Vec<GlobalRow<T>> {
    let _scope = tag_scope(T::Reporting);
    global_rows(T::Untracked)
}

fn usage(tag: T) -> Usage {
    rows()
        .iter()
        .find(|r| r.tag == tag)
        .map_or(Usage::default(), |r| r.usage)
}

fn bytes(tag: T) -> usize {
    usage(tag).current
}

fn nested_scopes_charge_the_innermost_tag() {
    let outer = tag_scope(T::Rendering);
    let frame = vec![0u8; 1000];
    let sparks = {
        let _inner = tag_scope(T::Particles);
        vec![0u32; 250]
    };
    let more = vec![0u8; 24];
    drop(outer);
    assert_eq!(usage(T::Rendering).current, 1024);
    assert_eq!(usage(T::Rendering).allocations, 2);
    assert_eq!(bytes(T::Particles), 1000);
    // A report counts the child's bytes towards its parent too.
    let rows = rows();
    let sources: Vec<&dyn Source<T>> = rows.iter().map(|r| r as &dyn Source<T>).collect();
    let report = {
        let _scope = tag_scope(T::Reporting);
        Report::gather(&sources)
    };
    assert_eq!(report.tag(T::Rendering).unwrap().usage.current, 2024);
    assert_eq!(report.tag(T::Rendering).unwrap().own.current, 1024);
    assert_eq!(report.tag(T::Particles).unwrap().usage.current, 1000);
    drop((frame, sparks, more));
    assert_eq!(
        usage(T::Rendering),
        Usage {
            peak: 1024,
            ..Usage::default()
        }
    );
    assert_eq!(bytes(T::Particles), 0);
}

fn untracked_counts_memory_with_no_scope() {
    let before = bytes(T::Untracked);
    let plain = vec![0u8; 12_345];
    assert_eq!(bytes(T::Untracked), before + 12_345);
    // Tags of another type are "Untracked" in a report of `T`.
    let other = {
        let _scope = tag_scope("Some other tag type");
        vec![0u8; 100]
    };
    assert_eq!(bytes(T::Untracked), before + 12_445);
    let strs = {
        let _scope = tag_scope(T::Reporting);
        global_rows("Untracked")
    };
    let row = strs
        .iter()
        .find(|r| r.tag == "Some other tag type")
        .unwrap();
    assert_eq!((row.usage.current, row.usage.allocations), (100, 1));
    drop((plain, other));
    assert_eq!(bytes(T::Untracked), before);
}

fn frees_on_other_threads_go_to_the_allocating_tag() {
    let (send, recv) = std::sync::mpsc::sync_channel::<Box<[u8]>>(4);
    // The channel's own buffers are charged to Sender on both sides of the check.
    let _scope = tag_scope(T::Sender);
    let receiver = std::thread::spawn(move || {
        let _scope = tag_scope(T::Receiver);
        let mut got = 0;
        while let Ok(buf) = recv.recv() {
            got += buf.len();
            drop(buf); // freed here, under Receiver: still Physics's bytes
        }
        got
    });
    let sizes = if cfg!(miri) { 4 } else { 64 };
    let mut sent = 0;
    for i in 1..=sizes {
        let buf = {
            let _physics = tag_scope(T::Physics);
            vec![7u8; i * 16].into_boxed_slice()
        };
        sent += buf.len();
        send.send(buf).unwrap();
    }
    drop(send);
    assert_eq!(receiver.join().unwrap(), sent);
    assert_eq!(usage(T::Physics).current, 0);
    assert_eq!(usage(T::Physics).allocations, 0);
    assert_eq!(
        usage(T::Physics).peak,
        0,
        "nothing was sampled while the buffers lived"
    );
    assert_eq!(usage(T::Receiver).current, 0);
}

fn realloc_keeps_the_tag() {
    let mut samples: Vec<i16> = {
        let _scope = tag_scope(T::Audio);
        Vec::with_capacity(8)
    };
    assert_eq!(bytes(T::Audio), 16);
    {
        let _scope = tag_scope(T::Streaming);
        samples.extend(0..1000); // grown under Streaming, still Audio's memory
        assert_eq!(bytes(T::Audio), samples.capacity() * 2);
        assert_eq!(bytes(T::Streaming), 0);
        samples.truncate(10);
        samples.shrink_to_fit();
    }
    assert_eq!(bytes(T::Audio), 20);
    assert_eq!(usage(T::Audio).allocations, 1);
    assert_eq!(samples.iter().map(|&s| s as i32).sum::<i32>(), 45);
    drop(samples);
    assert_eq!(bytes(T::Audio), 0);
}

fn large_alignments_keep_their_alignment() {
    let _scope = tag_scope(T::Aligned);
    for align in [1, 2, 8, 16, 64, 4096] {
        let layout = Layout::from_size_align(100, align).unwrap();
        // SAFETY: `layout` has a non-zero size; the block is freed below with the layout it has.
        unsafe {
            let p = ALLOC.alloc(layout);
            assert!(!p.is_null());
            assert_eq!(p as usize % align, 0, "align {align}");
            p.write_bytes(0xAB, 100);
            assert_eq!(bytes(T::Aligned), 100);
            let q = ALLOC.realloc(p, layout, 5000);
            assert!(!q.is_null());
            assert_eq!(q as usize % align, 0, "align {align} after realloc");
            assert_eq!(*q.add(99), 0xAB);
            assert_eq!(bytes(T::Aligned), 5000);
            ALLOC.dealloc(q, Layout::from_size_align(5000, align).unwrap());
            assert_eq!(bytes(T::Aligned), 0);

            let z = ALLOC.alloc_zeroed(layout);
            assert_eq!(z as usize % align, 0);
            assert!(std::slice::from_raw_parts(z, 100).iter().all(|&b| b == 0));
            ALLOC.dealloc(z, layout);
        }
    }
    assert_eq!(usage(T::Aligned).allocations, 0);
    assert_eq!(usage(T::Aligned).peak, 5000);
}

fn zero_sizes_and_refused_sizes_charge_nothing() {
    let _scope = tag_scope(T::Ai);
    // Zero-sized requests never reach a global allocator.
    let empty: Vec<u64> = Vec::new();
    let units: Vec<()> = vec![(); 1000];
    let unit = Box::new(());
    let zst_layout = Layout::from_size_align(0, 4096).unwrap();
    assert_eq!(zst_layout.size(), 0);
    assert_eq!(usage(T::Ai), Usage::default());
    // A size that fits a `Layout` but not with the header: refused, nothing counted.
    let huge = Layout::from_size_align(isize::MAX as usize - 8, 8).unwrap();
    // SAFETY: non-zero size; a null result is checked.
    unsafe { assert!(ALLOC.alloc(huge).is_null()) };
    let layout = Layout::from_size_align(64, 4096).unwrap();
    // SAFETY: as in `large_alignments_keep_their_alignment`; the refused realloc leaves the block
    // as it was, freed with its old layout.
    unsafe {
        let p = ALLOC.alloc(layout);
        p.write_bytes(1, 64);
        assert!(
            ALLOC
                .realloc(p, layout, isize::MAX as usize - 100)
                .is_null()
        );
        assert_eq!(bytes(T::Ai), 64);
        assert_eq!(*p.add(63), 1);
        ALLOC.dealloc(p, layout);
    }
    assert_eq!(usage(T::Ai).current, 0);
    assert_eq!(usage(T::Ai).allocations, 0);
    drop((empty, units, unit));
}

fn threads_that_exit_keep_the_sums_exact() {
    // More threads than blocks over the run (each exit gives its block back), and a few at once.
    let rounds = if cfg!(miri) { 3 } else { 300 };
    let mut kept = Vec::new();
    for round in 0..rounds {
        let handles: Vec<_> = (0..if cfg!(miri) { 2 } else { 4 })
            .map(|t| {
                std::thread::spawn(move || {
                    let _scope = tag_scope(T::Workers);
                    let mut map = BTreeMap::new();
                    for i in 0..if cfg!(miri) { 10 } else { 50 } {
                        map.insert(i, format!("{round}:{t}:{i}"));
                    }
                    // Allocated here, freed on the main thread after this thread is gone.
                    vec![round as u8; 100]
                })
            })
            .collect();
        kept.extend(handles.into_iter().map(|h| h.join().unwrap()));
    }
    assert_eq!(bytes(T::Workers), 100 * kept.len());
    assert_eq!(usage(T::Workers).allocations, kept.len());
    drop(kept);
    assert_eq!(usage(T::Workers).current, 0);
    assert_eq!(usage(T::Workers).allocations, 0);
}

thread_local! {
    static ON_EXIT: Noisy = const { Noisy };
}

struct Noisy;

impl Drop for Noisy {
    fn drop(&mut self) {
        // Allocates while the thread's thread-locals are being destroyed.
        let _scope = tag_scope(T::Streaming);
        let v = vec![1u8; 300];
        std::hint::black_box(&v);
    }
}

fn allocations_during_thread_exit_are_counted() {
    let untracked = bytes(T::Untracked);
    std::thread::spawn(|| ON_EXIT.with(|_| ())).join().unwrap();
    assert_eq!(usage(T::Streaming).current, 0);
    assert_eq!(usage(T::Streaming).allocations, 0);
    assert_eq!(bytes(T::Untracked), untracked);
}

fn peaks_are_sampled_when_rows_are_read() {
    let mut registry = {
        let _scope = tag_scope(T::Reporting);
        Registry::with_history(8)
    };
    let frame = |registry: &mut Registry<T>| {
        let rows = rows();
        let _scope = tag_scope(T::Reporting);
        let sources: Vec<&dyn Source<T>> = rows.iter().map(|r| r as &dyn Source<T>).collect();
        registry.end_frame(&sources).unwrap();
    };
    let a = mem_tag!(T::Peak, { vec![0u8; 1000] });
    frame(&mut registry);
    drop(a);
    let b = mem_tag!(T::Peak, { vec![0u8; 3000] });
    drop(b); // never sampled
    let c = {
        mem_tag!(T::Peak);
        vec![0u8; 10]
    };
    frame(&mut registry);
    let series: Vec<(usize, usize)> = registry
        .history()
        .series(T::Peak)
        .map(|(_, u)| (u.current, u.peak))
        .collect();
    assert_eq!(series, [(1000, 1000), (10, 1000)]);
    // The history's exports carry the global rows like any allocator's, "Untracked" included.
    let (csv, svg) = {
        let _scope = tag_scope(T::Reporting);
        let h = registry.history();
        (h.to_csv(), h.to_svg(400, 200))
    };
    assert!(csv.contains("\n1,Peak,10,1000\n"), "{csv}");
    assert!(csv.contains(",Untracked,"), "{csv}");
    assert!(svg.contains("Peak") && svg.contains("Untracked"));
    drop((c, csv, svg));
    drop(registry);
}

/// A tag whose `==` panics on the comparison `COMPARISONS` counts down to.
#[derive(Debug, Clone, Copy, Eq)]
struct Grumpy(u8);

static COMPARISONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl PartialEq for Grumpy {
    fn eq(&self, other: &Grumpy) -> bool {
        use std::sync::atomic::Ordering;
        if COMPARISONS.fetch_sub(1, Ordering::Relaxed) == 1 {
            panic!("Grumpy: this comparison panics");
        }
        self.0 == other.0
    }
}

impl Tag for Grumpy {
    fn name(&self) -> &'static str {
        "Grumpy"
    }
}

fn a_panicking_tag_comparison_leaves_the_table_usable() {
    use std::sync::atomic::Ordering;
    COMPARISONS.store(usize::MAX, Ordering::Relaxed);
    let first = mem_tag!(Grumpy(1), { vec![0u8; 40] });
    // The lookup compares with Grumpy(1), and that comparison panics (tags are compared
    // outside the claim lock, so the lock is never held then; the table must stay usable).
    COMPARISONS.store(1, Ordering::Relaxed);
    let outer = tag_scope(T::Physics);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let panicked = std::panic::catch_unwind(|| drop(tag_scope(Grumpy(2)))).is_err();
    std::panic::set_hook(hook);
    assert!(panicked);
    COMPARISONS.store(usize::MAX, Ordering::Relaxed);
    // The thread's tag is unchanged, and a new tag still claims a slot (the lock was released).
    let v = vec![0u8; 3];
    assert_eq!(bytes(T::Physics), 3);
    drop(outer);
    let second = mem_tag!(Grumpy(2), { vec![0u8; 60] });
    let rows = {
        let _scope = tag_scope(T::Reporting);
        global_rows(Grumpy(0))
    };
    let of = |g: u8| rows.iter().find(|r| r.tag.0 == g).map(|r| r.usage.current);
    assert_eq!((of(1), of(2)), (Some(40), Some(60)));
    drop((first, second, v, rows));
}

/// A tag type for racing claimers: `==` opens a scope of [`Inner`] (a tag of another type,
/// new to the table) for its first comparisons, so a claim happens while a scan is comparing.
#[derive(Debug, Clone, Copy, Eq)]
struct Racer(u8);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inner(u8);

static REENTRIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl PartialEq for Racer {
    fn eq(&self, other: &Racer) -> bool {
        use std::sync::atomic::Ordering;
        if REENTRIES.fetch_add(1, Ordering::Relaxed) < 8 {
            let _inner = tag_scope(Inner(self.0 ^ other.0));
        }
        self.0 == other.0
    }
}

impl Tag for Racer {
    fn name(&self) -> &'static str {
        "Racer"
    }
}

impl Tag for Inner {
    fn name(&self) -> &'static str {
        "Inner"
    }
}

/// Threads released together claim slots for the same few new tags (whose `==` itself claims
/// slots for tags of another type): each tag ends up in exactly one slot, holding every byte
/// charged to it, and every slot of the type reads back a tag that was written (a slot read
/// before its tag was written would show a stranger or be missed).
fn racing_claimers_of_a_new_tag_share_one_slot() {
    const THREADS: usize = 8;
    const TAGS: u8 = 3;
    let barrier = std::sync::Barrier::new(THREADS);
    let held: Vec<Vec<u8>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|i| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let _scope = tag_scope(Racer((i % usize::from(TAGS)) as u8));
                    vec![0u8; 100 + i]
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let rows = {
        let _scope = tag_scope(T::Reporting);
        global_rows(Racer(u8::MAX))
    };
    // The last row is "Untracked" (the tag passed for it), not a slot of the type.
    let mut seen: Vec<u8> = rows
        .iter()
        .map(|r| r.tag.0)
        .filter(|&t| t != u8::MAX)
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..TAGS).collect::<Vec<_>>(), "one slot per tag");
    for tag in 0..TAGS {
        let want: usize = (0..THREADS)
            .filter(|i| i % usize::from(TAGS) == usize::from(tag))
            .map(|i| 100 + i)
            .sum();
        let row = rows.iter().find(|r| r.tag.0 == tag).unwrap();
        assert_eq!(row.usage.current, want, "tag {tag}");
    }
    let inner = {
        let _scope = tag_scope(T::Reporting);
        global_rows(Inner(u8::MAX))
    };
    let mut inner_tags: Vec<u8> = inner
        .iter()
        .map(|r| r.tag.0)
        .filter(|&t| t != u8::MAX)
        .collect();
    inner_tags.sort_unstable();
    let before = inner_tags.len();
    inner_tags.dedup();
    assert_eq!(
        inner_tags.len(),
        before,
        "no tag of the re-entrant type twice"
    );
    drop((held, rows, inner));
}

fn a_full_slot_table_charges_untracked_and_counts() {
    const NAMES: [&str; MAX_TAG_SLOTS + 2] = {
        let mut names = [""; MAX_TAG_SLOTS + 2];
        let all = [
            "t00", "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "t11",
            "t12", "t13", "t14", "t15", "t16", "t17", "t18", "t19", "t20", "t21", "t22", "t23",
            "t24", "t25", "t26", "t27", "t28", "t29", "t30", "t31", "t32", "t33", "t34", "t35",
            "t36", "t37", "t38", "t39", "t40", "t41", "t42", "t43", "t44", "t45", "t46", "t47",
            "t48", "t49", "t50", "t51", "t52", "t53", "t54", "t55", "t56", "t57", "t58", "t59",
            "t60", "t61", "t62", "t63", "t64", "t65",
        ];
        let mut i = 0;
        while i < names.len() {
            names[i] = all[i];
            i += 1;
        }
        names
    };
    let before = overflowed_scopes();
    let untracked = bytes(T::Untracked);
    for name in NAMES {
        let _scope = tag_scope(name);
        let v = vec![0u8; 10];
        std::hint::black_box(&v);
    }
    let overflowed = overflowed_scopes() - before;
    assert!(overflowed >= 2, "{overflowed}");
    let last = NAMES[NAMES.len() - 1];
    let _scope = tag_scope(last);
    let v = vec![0u8; 77];
    drop(_scope);
    assert_eq!(overflowed_scopes() - before, overflowed + 1);
    // The overflowed tag's bytes are "Untracked", so the total still adds up.
    assert_eq!(bytes(T::Untracked), untracked + 77);
    // Tags seen before the table filled still get their own slot.
    let p = mem_tag!(T::Physics, { vec![0u8; 5] });
    assert_eq!(bytes(T::Physics), 5);
    drop((v, p));
}

/// A row of the SoA containers below.
#[derive(Debug, arena_kit_derive::Soa)]
#[soa(crate = arena_kit_core)]
struct Particle {
    x: f32,
    y: f32,
    life: u16,
}

fn particle(i: usize) -> Particle {
    Particle {
        x: i as f32,
        y: 0.0,
        life: 1,
    }
}

/// Runs `grow` on `allocator`, made outside any scope and tracked as `Pages`, inside an `Audio`
/// scope: everything it takes is charged to `Pages`, nothing to `Audio`, and once it is dropped
/// `Pages` is back where it was.
fn charged_to_own_tag<A: Budgeted>(
    what: &str,
    make: impl FnOnce() -> A,
    grow: impl FnOnce(&mut A),
) {
    let before = (bytes(T::Pages), bytes(T::Audio), bytes(T::Untracked));
    let mut tracked = Tracked::new(make(), "pages", T::Pages).forgive_leaks();
    let made = bytes(T::Untracked);
    {
        let _audio = tag_scope(T::Audio);
        grow(&mut tracked);
    }
    assert_eq!(
        bytes(T::Audio),
        before.1,
        "{what}: nothing charged to the scope"
    );
    assert!(
        bytes(T::Pages) > before.0,
        "{what}: its growth is charged to its own tag"
    );
    // (Untracked may fall: blocks made before the wrapper moved to blocks of its tag.)
    assert!(bytes(T::Untracked) <= made, "{what}: nor to Untracked");
    drop(tracked);
    assert_eq!(bytes(T::Pages), before.0, "{what}: and given back there");
    assert_eq!(bytes(T::Untracked), before.2, "{what}: its first block too");
}

fn tracked_allocators_charge_their_growth_to_their_own_tag() {
    charged_to_own_tag(
        "chained arena",
        || Arena::chained(1024),
        |a| {
            for _ in 0..8 {
                a.alloc([0u8; 700]);
            }
            assert!(a.page_count() > 2);
        },
    );
    charged_to_own_tag(
        "frame arena",
        || FrameArena::<2>::chained(1024),
        |f| {
            for _ in 0..2 {
                let frame = f.begin_frame();
                for _ in 0..4 {
                    frame.alloc([0u8; 700]);
                }
            }
        },
    );
    charged_to_own_tag(
        "growable pool",
        || Pool::growable(16),
        |p| {
            // Past the first page, which a pool growing in place commits with its first chunk.
            for _ in 0..2000 {
                p.insert([0u64; 8]);
            }
        },
    );
    charged_to_own_tag("lazy pool", Pool::<u64>::new, |p| {
        p.insert(7);
    });
    charged_to_own_tag("soa vec", SoaVec::<Particle>::new, |v| {
        for i in 0..300 {
            v.push(particle(i));
        }
    });
    // Reordering moves the rows to a new block (`apply_permutation`, `sort_by`, `sort_by_key`):
    // the vector's own tag, not the scope, pays for it.
    charged_to_own_tag("soa vec reordered", SoaVec::<Particle>::new, |v| {
        for i in 0..300 {
            v.push(particle(i));
        }
        let reversed: Vec<u32> = (0..300).rev().collect();
        v.apply_permutation(&reversed).unwrap();
        v.sort_by(|a, b| a.x.total_cmp(b.x));
        v.sort_by_key(|p| core::cmp::Reverse(*p.life));
        assert_eq!(v.slices().x[0], 0.0);
        // So does shrinking it into a smaller block.
        v.truncate(10);
        v.shrink_to_fit();
        assert_eq!(v.capacity(), 10);
    });
    charged_to_own_tag(
        "soa pool",
        || SoaPool::<Particle>::growable(16),
        |p| {
            for i in 0..100 {
                p.insert(particle(i));
            }
            for i in 0..100 {
                let _ = p.try_insert(particle(i));
            }
        },
    );
    // An allocator that is not tracked keeps charging the scope current when it grows.
    let before = bytes(T::Audio);
    let mut plain = Pool::growable(16);
    {
        let _audio = tag_scope(T::Audio);
        // Past the page committed with the first chunk (256 slots of 16 bytes).
        for _ in 0..5000 {
            plain.insert(0u64);
        }
    }
    assert!(bytes(T::Audio) > before);
    drop(plain);
    assert_eq!(bytes(T::Audio), before);
}

/// A growable pool's reserved range, charged by runs of (tag, pages): made under `Streaming`
/// (its first committed pages), grown untracked under `Audio`, then tracked as `Ai` and grown
/// under `Audio` again (those pages are `Ai`'s), shrunk back into its first page (every run but
/// the first's page given back to its own tag), grown again, then sent to another thread and
/// dropped there under `Receiver`. Every tag's bytes and allocations come back exactly to where
/// they were.
fn a_reserved_range_gives_every_tag_its_pages_back() {
    let tags = [T::Streaming, T::Ai, T::Audio, T::Receiver, T::Untracked];
    let snapshot = || tags.map(|t| (usage(t).current, usage(t).allocations));
    let before = snapshot();
    let mut pool = {
        let _scope = tag_scope(T::Streaming);
        let mut pool = Pool::growable(16);
        pool.insert([0u64; 8]);
        pool
    };
    let made = bytes(T::Streaming);
    assert!(made > before[0].0, "the first pages are the scope's");
    {
        let _audio = tag_scope(T::Audio);
        // 400 KiB of slots: past the first page.
        pool.reserve(400 << 10 >> 6);
    }
    assert!(
        bytes(T::Audio) > before[2].0,
        "an untracked pool grows under the scope"
    );
    let mut tracked = Tracked::new(pool, "range", T::Ai).forgive_leaks();
    {
        let _audio = tag_scope(T::Audio);
        tracked.reserve(100_000);
        tracked.insert([1u64; 8]);
    }
    assert!(bytes(T::Ai) > before[1].0, "growth is the tracked tag's");
    assert!(tracked.shrink_to_fit() > 0);
    assert_eq!(
        (usage(T::Ai).current, usage(T::Ai).allocations),
        before[1],
        "shrinking gives the tracked tag's pages back"
    );
    // (The range's list of runs, a few bytes, was allocated when its second run began, under
    // `Audio`, and lives as long as the range.)
    assert!(
        usage(T::Audio).current < before[2].0 + 1024,
        "and the scope's"
    );
    assert_eq!(
        bytes(T::Streaming),
        made,
        "and the first run keeps its one page, where the first value lives"
    );
    {
        let _audio = tag_scope(T::Audio);
        tracked.reserve(50_000);
    }
    assert!(bytes(T::Ai) > before[1].0);
    std::thread::spawn(move || {
        let _scope = tag_scope(T::Receiver);
        drop(tracked);
    })
    .join()
    .unwrap();
    assert_eq!(snapshot(), before, "(current, allocations) of {tags:?}");
}

/// An allocator taken back out of its wrapper (`into_inner`) is untracked again: its growth is
/// charged to the scope current when it grows, no longer to the wrapper's tag.
fn into_inner_charges_growth_to_the_scope_again() {
    let before = (bytes(T::Pages), bytes(T::Audio));
    let tracked = Tracked::new(Arena::chained(1024), "pages", T::Pages).forgive_leaks();
    let arena = tracked.into_inner();
    {
        let _audio = tag_scope(T::Audio);
        for _ in 0..8 {
            arena.alloc([0u8; 700]);
        }
    }
    assert_eq!(bytes(T::Pages), before.0, "nothing charged to the old tag");
    assert!(bytes(T::Audio) > before.1, "the scope's now");
    drop(arena);
    assert_eq!(bytes(T::Audio), before.1);
}

fn main() {
    if cfg!(miri) {
        println!("tagging global allocator: not installed under Miri (see the comment on ALLOC)");
        return;
    }
    let checks: [(&str, fn()); 15] = [
        ("nested scopes", nested_scopes_charge_the_innermost_tag),
        ("untracked", untracked_counts_memory_with_no_scope),
        (
            "cross-thread frees",
            frees_on_other_threads_go_to_the_allocating_tag,
        ),
        ("realloc", realloc_keeps_the_tag),
        ("large alignments", large_alignments_keep_their_alignment),
        (
            "zero and refused sizes",
            zero_sizes_and_refused_sizes_charge_nothing,
        ),
        ("exiting threads", threads_that_exit_keep_the_sums_exact),
        ("thread exit", allocations_during_thread_exit_are_counted),
        ("sampled peaks", peaks_are_sampled_when_rows_are_read),
        (
            "panicking tag ==",
            a_panicking_tag_comparison_leaves_the_table_usable,
        ),
        (
            "tracked allocators' own tag",
            tracked_allocators_charge_their_growth_to_their_own_tag,
        ),
        (
            "into_inner untracks",
            into_inner_charges_growth_to_the_scope_again,
        ),
        (
            "reserved ranges",
            a_reserved_range_gives_every_tag_its_pages_back,
        ),
        (
            "racing claimers",
            racing_claimers_of_a_new_tag_share_one_slot,
        ),
        (
            "full slot table",
            a_full_slot_table_charges_untracked_and_counts,
        ),
    ];
    for (name, check) in checks {
        check();
        println!("tagging global allocator: {name} ... ok");
    }
}
