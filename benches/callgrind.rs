//! The performance issue's jobs, ours beside every peer that does the same work, for two kinds
//! of measurement (see BENCHMARKS.md, "Instruction counts: ours / best peer"):
//!
//! - `callgrind JOB CONTESTANT`: builds the contestant's state (outside the counted region), runs
//!   the job once to warm up, then runs it once more inside [`counted_region`], the one function
//!   that `valgrind --tool=callgrind --toggle-collect='*counted_region*'` counts. Prints the
//!   job's operation count. `scripts/callgrind-ratios.sh` drives it and prints the table.
//! - `callgrind wall [JOB...]`: every contestant of each job once per round (one sample: its
//!   job run back to back for about 10 ms), 15 rounds (`--rounds N` for more). Each round builds
//!   every contestant's state afresh, in contestant order in even rounds and in reverse order in
//!   odd ones (the order states are built in decides where their memory lands, and that alone
//!   moved identical loops by up to 15%), and runs them in an order reversed every other pair of
//!   rounds, so the four combinations come round evenly. Prints the median of the per-round
//!   ratios ours / best peer and the 5th-95th percentile of them (the interval 90% of the rounds
//!   fall in).
//!   `scripts/wall-ratios.sh` runs it from two links of this driver whose code is laid out in
//!   opposite orders (see build.rs).
//! - `callgrind list`: one line per job: name, operation count, `role=contestant` fields
//!   (`ours`, `peer`: counted for the best peer, `other`: shown for reference only).
//!
//! Every job's workload (value type and size, size distribution, alignment, live count,
//! operation mix, seed) is in its doc comment below and in BENCHMARKS.md. All random choices are
//! precomputed from fixed-seed xorshift generators before the counted region, so every
//! contestant sees the same sequence and pays the same loop overhead.
//!
//! Build: `cargo bench -p arena-kit-benches --bench callgrind --no-run` (release, with debug
//! info). Set `ARENA_KIT_CALLGRIND_1M=1` to add the 1,000,000-live pool churn job.

use std::hint::black_box;
use std::time::Instant;

use arena_kit::arena::Arena;
use arena_kit::heap::FreeListHeap;
use arena_kit::pool::{Handle, Handle32, Pool};
use arena_kit::soa::{SoaPool, SoaTiles, SoaVec, TrackedSoaVec};
use arena_kit::tags::{Budget, Tracked};
use core::alloc::Layout;
use core::ptr::NonNull;

/// One contestant's prepared workload: each call runs the job once and returns a checksum.
type Runner = Box<dyn FnMut() -> u64>;

/// The only function callgrind counts in: everything the job does, and nothing else.
#[inline(never)]
fn counted_region(run: &mut dyn FnMut() -> u64) -> u64 {
    run()
}

/// What a contestant is to the job's ratio.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// The numerator of the ratio.
    Ours,
    /// A peer doing the same work: the best one is the denominator.
    Peer,
    /// Shown for reference, never the best peer.
    Other,
}

/// One row of the table (or one size or live count of it).
struct Job {
    name: &'static str,
    /// Operations per run: the divisor of the instruction count.
    ops: u64,
    contestants: &'static [Contestant],
}

/// A contestant: its role, its name on the command line, and the function that sets it up.
type Contestant = (Role, &'static str, fn() -> Runner);

use Role::{Other, Ours, Peer};

// ---------------------------------------------------------------------------------------------
// Random numbers and values
// ---------------------------------------------------------------------------------------------

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// `count` positions in `0..n` from `seed`.
fn positions(n: usize, count: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| rng.below(n)).collect()
}

/// A `W`-word value (8 * W bytes, align 8) whose words depend on `i`.
#[inline(always)]
fn words<const W: usize>(i: usize) -> [u64; W] {
    std::array::from_fn(|k| i as u64 + k as u64)
}

/// A 64-byte value with drop glue (the drop reads word `K` so it is not optimised away);
/// `Droppy<0>` and `Droppy<1>` are two types, for interleaving.
struct Droppy<const K: usize> {
    fields: [u64; 8],
}

impl<const K: usize> Drop for Droppy<K> {
    #[inline]
    fn drop(&mut self) {
        black_box(self.fields[K]);
    }
}

#[path = "support/particle.rs"]
mod particle;
use particle::{
    HandAosoa, HandAosoa16, Particle, particle, update_x_chunks8, update_x_std_chunks8,
    update_x_tiles, update_x_xv16, update_x_zip, xv_blocks16,
};

// ---------------------------------------------------------------------------------------------
// Containers with one shape, for the pool jobs
// ---------------------------------------------------------------------------------------------

/// The operations the pool jobs use, with each container's own key type.
trait Slots<V> {
    type Key: Copy;
    fn insert(&mut self, value: V) -> Self::Key;
    fn remove(&mut self, key: Self::Key) -> Option<V>;
    fn get(&self, key: Self::Key) -> Option<&V>;
    fn sum_first(&self) -> u64;
}

macro_rules! slots {
    ($ty:ty, $key:ty, $remove:ident) => {
        impl<const W: usize> Slots<[u64; W]> for $ty {
            type Key = $key;
            #[inline]
            fn insert(&mut self, value: [u64; W]) -> $key {
                <$ty>::insert(self, value)
            }
            #[inline]
            fn remove(&mut self, key: $key) -> Option<[u64; W]> {
                <$ty>::$remove(self, key)
            }
            #[inline]
            fn get(&self, key: $key) -> Option<&[u64; W]> {
                <$ty>::get(self, key)
            }
            #[inline]
            fn sum_first(&self) -> u64 {
                self.iter().map(|(_, v)| v[0]).sum()
            }
        }
    };
}

slots!(Pool<[u64; W]>, Handle<[u64; W]>, remove);
slots!(Pool<[u64; W], Handle32<[u64; W]>>, Handle32<[u64; W]>, remove);
slots!(slotmap::SlotMap<slotmap::DefaultKey, [u64; W]>, slotmap::DefaultKey, remove);
slots!(slotmap::DenseSlotMap<slotmap::DefaultKey, [u64; W]>, slotmap::DefaultKey, remove);
slots!(thunderdome::Arena<[u64; W]>, thunderdome::Index, remove);
slots!(slab::Slab<[u64; W]>, usize, try_remove);

/// `live` values in `c`, then `live / 2` remove-insert steps at random positions (seed 7), so
/// the free list is scrambled as in a program that has been running. Returns the live keys.
fn fill<const W: usize, C: Slots<[u64; W]>>(c: &mut C, live: usize, scramble: bool) -> Vec<C::Key> {
    let mut keys: Vec<C::Key> = (0..live).map(|i| c.insert(words::<W>(i))).collect();
    if scramble {
        for (n, at) in positions(live, live / 2, 7).into_iter().enumerate() {
            c.remove(keys[at]).expect("live");
            keys[at] = c.insert(words::<W>(n));
        }
    }
    keys
}

/// Churn: per operation, remove the value at `removes[k]`, insert it again (its key replaces
/// the old one) and look up the value at `reads[k]`.
fn churn_runner<const W: usize, C: Slots<[u64; W]> + 'static>(
    mut c: C,
    mut keys: Vec<C::Key>,
    removes: Vec<usize>,
    reads: Vec<usize>,
) -> Runner {
    Box::new(move || {
        let mut sum = 0u64;
        for (&r, &l) in removes.iter().zip(&reads) {
            let old = c.remove(keys[r]).expect("live");
            keys[r] = c.insert(old);
            sum = sum.wrapping_add(c.get(keys[l]).expect("live")[0]);
        }
        black_box(sum)
    })
}

/// Lookup: per operation, one `get` of the value at `reads[k]`.
fn lookup_runner<const W: usize, C: Slots<[u64; W]> + 'static>(
    c: C,
    keys: Vec<C::Key>,
    reads: Vec<usize>,
) -> Runner {
    Box::new(move || {
        let mut sum = 0u64;
        for &l in &reads {
            sum = sum.wrapping_add(black_box(&c).get(keys[l]).expect("live")[0]);
        }
        black_box(sum)
    })
}

/// Churn operations per run.
const CHURN_OPS: usize = 100_000;

/// Pool churn with `LIVE` values of `8 * W` bytes: filled, scrambled, then `CHURN_OPS` steps at
/// positions from RNG seed 1 (remove) and RNG seed 2 (read).
fn churn<const W: usize, const LIVE: usize, C: Slots<[u64; W]> + 'static>(mut c: C) -> Runner {
    let keys = fill::<W, C>(&mut c, LIVE, true);
    churn_runner::<W, C>(
        c,
        keys,
        positions(LIVE, CHURN_OPS, 1),
        positions(LIVE, CHURN_OPS, 2),
    )
}

/// Live values of the growable-pool jobs (every handle they touch lies past the first chunk)
/// and of `pool-lookup` (a fixed pool and its peers, every position).
const GROW_LIVE: usize = 100_000;
/// The growable pool's chunk size (slots).
const GROW_CHUNK: usize = 4096;

/// Positions in `GROW_CHUNK..GROW_LIVE` (filled in order, not scrambled, so position = slot).
fn past_first_chunk(count: usize, seed: u64) -> Vec<usize> {
    positions(GROW_LIVE - GROW_CHUNK, count, seed)
        .into_iter()
        .map(|p| p + GROW_CHUNK)
        .collect()
}

fn grow_churn(mut c: Pool<[u64; 8]>) -> Runner {
    let keys = fill::<8, _>(&mut c, GROW_LIVE, false);
    churn_runner::<8, _>(
        c,
        keys,
        past_first_chunk(CHURN_OPS, 1),
        past_first_chunk(CHURN_OPS, 2),
    )
}

fn grow_lookup(mut c: Pool<[u64; 8]>) -> Runner {
    let keys = fill::<8, _>(&mut c, GROW_LIVE, false);
    lookup_runner::<8, _>(c, keys, past_first_chunk(CHURN_OPS, 2))
}

/// Lookups in a pool of `GROW_LIVE` 64-byte values (filled and scrambled as for churn): one `get`
/// per operation at positions from RNG seed 2.
fn lookup<C: Slots<[u64; 8]> + 'static>(mut c: C) -> Runner {
    let keys = fill::<8, C>(&mut c, GROW_LIVE, true);
    lookup_runner::<8, C>(c, keys, positions(GROW_LIVE, CHURN_OPS, 2))
}

/// Iteration passes per run.
const ITER_PASSES: usize = 2;
/// Live values of the iteration job.
const ITER_LIVE: usize = 100_000;

fn iterate<C: Slots<[u64; 8]> + 'static>(mut c: C) -> Runner {
    fill::<8, C>(&mut c, ITER_LIVE, true);
    Box::new(move || {
        let mut sum = 0u64;
        for _ in 0..ITER_PASSES {
            sum = sum.wrapping_add(black_box(&c).sum_first());
        }
        black_box(sum)
    })
}

// ---------------------------------------------------------------------------------------------
// Arena jobs
// ---------------------------------------------------------------------------------------------

/// Values per round of the arena jobs.
const ARENA_N: usize = 10_000;
/// Rounds (values then reset) per run.
const ARENA_ROUNDS: usize = 10;

/// Bytes every arena gets up front: one page holds a whole round of 256-byte values.
const ARENA_BYTES: usize = 4 << 20;

/// `ARENA_ROUNDS` x (`ARENA_N` allocations made by `alloc(i)`, then `reset`).
macro_rules! rounds {
    ($arena:ident, $i:ident => $alloc:expr, $reset:expr) => {
        Box::new(move || {
            for _ in 0..ARENA_ROUNDS {
                for $i in 0..ARENA_N {
                    black_box($alloc);
                }
                $reset;
            }
            0
        })
    };
}

/// One round of the runs jobs for a contestant that keeps the values' destructors itself:
/// `$put` takes `RUN` values of one type, then `RUN` of the other, `ARENA_N` in all.
macro_rules! alternate_runs {
    ($run:expr, $value:ident => $put:expr) => {
        for i in 0..ARENA_N / (2 * $run) {
            for k in 0..$run {
                let $value = Droppy::<0> {
                    fields: words::<8>(i * $run + k),
                };
                black_box($put);
            }
            for k in 0..$run {
                let $value = Droppy::<1> {
                    fields: words::<8>(i * $run + k),
                };
                black_box($put);
            }
        }
    };
}

/// The layouts of the mixed job: sizes uniform in 8..=256 bytes, align 8 or 16 (even odds),
/// seed 0x5EED.
fn mixed_layouts() -> Vec<Layout> {
    let mut rng = Rng::new(0x5EED);
    (0..ARENA_N)
        .map(|_| {
            let size = 8 + rng.below(256 - 8 + 1);
            let align = if rng.next() & 1 == 0 { 8 } else { 16 };
            Layout::from_size_align(size, align).expect("valid layout")
        })
        .collect()
}

/// Scopes per run of the scope job, and allocations per scope.
const SCOPES: usize = 1_000;
const PER_SCOPE: usize = 100;

// ---------------------------------------------------------------------------------------------
// Heap jobs
// ---------------------------------------------------------------------------------------------

/// The heap's region, and every peer's, for `live` blocks: 4 KiB a block (the blocks average
/// 2,056 bytes, so the free space left covers fragmentation), and at least 64 MiB. Only the
/// pages the blocks touch become resident.
const fn region_bytes(live: usize) -> usize {
    let bytes = live * 4096;
    if bytes > 64 << 20 { bytes } else { 64 << 20 }
}
/// Free+alloc pairs per run.
const HEAP_PAIRS: usize = 20_000;

/// One allocator of a fixed region.
trait RegionAlloc {
    fn alloc(&mut self, layout: Layout) -> NonNull<u8>;
    /// # Safety
    /// `ptr` is live, from `alloc` with `layout`.
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout);
}

/// Ours frees as talc does and as the allocator traits do, told the block's layout
/// (`free_sized`, which also checks the size; `free(ptr)` alone took 9 instructions fewer a
/// pair and, at 100,000 live, more time: BENCHMARKS.md, "The heap told the block's size").
impl RegionAlloc for FreeListHeap<'static> {
    #[inline]
    fn alloc(&mut self, layout: Layout) -> NonNull<u8> {
        FreeListHeap::alloc(self, layout)
    }
    #[inline]
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout) {
        FreeListHeap::free_sized(self, ptr, layout).expect("a live block of this size");
    }
}

/// Memory for a peer's region of `bytes`; leaked, as the process ends after the job.
fn region(bytes: usize) -> NonNull<u8> {
    let layout = Layout::from_size_align(bytes, 4096).expect("valid layout");
    // SAFETY: the layout has a non-zero size.
    NonNull::new(unsafe { std::alloc::alloc(layout) }).expect("memory for a peer's region")
}

struct Rlsf(rlsf::Tlsf<'static, u32, u16, 24, 16>);

impl Rlsf {
    fn new(bytes: usize) -> Self {
        let mut tlsf = rlsf::Tlsf::new();
        // SAFETY: the region is valid for `bytes` bytes, never freed, used by nothing else.
        unsafe { tlsf.insert_free_block_ptr(NonNull::slice_from_raw_parts(region(bytes), bytes)) };
        Rlsf(tlsf)
    }
}

impl RegionAlloc for Rlsf {
    #[inline]
    fn alloc(&mut self, layout: Layout) -> NonNull<u8> {
        self.0
            .allocate(layout)
            .expect("the region holds the live set")
    }
    #[inline]
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.deallocate(ptr, layout.align()) }
    }
}

struct Talc(talc::base::Talc<talc::source::Manual, talc::DefaultBinning>);

impl Talc {
    fn new(bytes: usize) -> Self {
        let mut talc = talc::base::Talc::new(talc::source::Manual);
        // SAFETY: as for rlsf.
        unsafe {
            talc.claim(region(bytes).as_ptr(), bytes)
                .expect("talc claims the region")
        };
        Talc(talc)
    }
}

impl RegionAlloc for Talc {
    #[inline]
    fn alloc(&mut self, layout: Layout) -> NonNull<u8> {
        // SAFETY: every size is non-zero.
        unsafe { self.0.allocate(layout) }.expect("the region holds the live set")
    }
    #[inline]
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.deallocate(ptr.as_ptr(), layout) }
    }
}

/// `LIVE` blocks of sizes uniform in 16..=4096 bytes (align 8), seed 0x9E37_79B9_7F4A_7C15;
/// then per operation: free the block at a random position (seed 4), allocate a new random size
/// there (one free + one alloc = one operation).
fn heap<const LIVE: usize, A: RegionAlloc + 'static>(mut a: A) -> Runner {
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut layout =
        || Layout::from_size_align(16 + rng.below(4096 - 16 + 1), 8).expect("valid layout");
    let mut live: Vec<(NonNull<u8>, Layout)> = (0..LIVE)
        .map(|_| {
            let l = layout();
            (a.alloc(l), l)
        })
        .collect();
    let at = positions(LIVE, HEAP_PAIRS, 4);
    let steps: Vec<(usize, Layout)> = at.into_iter().map(|k| (k, layout())).collect();
    Box::new(move || {
        for &(at, l) in &steps {
            let (ptr, old) = live[at];
            // SAFETY: every entry of `live` is a live block with its layout.
            unsafe { a.free(ptr, old) };
            live[at] = (black_box(a.alloc(l)), l);
        }
        0
    })
}

// ---------------------------------------------------------------------------------------------
// SoA jobs
// ---------------------------------------------------------------------------------------------

/// Live particles of the `SoaPool` churn job and operations per run.
const SOA_LIVE: usize = 100_000;
const SOA_OPS: usize = 50_000;
/// Particles of the column-pass job, and passes per run.
const PASS_N: usize = 100_003;
const PASSES: usize = 4;
const DT: f32 = 1.0 / 60.0;

/// Remove the particle at a random position (seed 3), insert a new one in its place.
macro_rules! soa_churn {
    ($pool:expr) => {{
        let mut p = $pool;
        let mut keys: Vec<_> = (0..SOA_LIVE).map(|i| p.insert(particle(i))).collect();
        let picks = positions(SOA_LIVE, SOA_OPS, 3);
        Box::new(move || {
            for (step, &i) in picks.iter().enumerate() {
                p.remove(keys[i]);
                keys[i] = p.insert(particle(step));
            }
            0
        })
    }};
}

/// `PASSES` x `pass` over a `SoaVec` of `PASS_N` particles.
fn column_pass(pass: fn(&mut SoaVec<Particle>, f32)) -> Runner {
    let mut v: SoaVec<Particle> = (0..PASS_N).map(particle).collect();
    Box::new(move || {
        for _ in 0..PASSES {
            pass(&mut v, DT);
            black_box(v.slices().x);
        }
        0
    })
}

// ---------------------------------------------------------------------------------------------
// The contestants, one function each: setup, then the runner the job times or counts.
// ---------------------------------------------------------------------------------------------

fn bump_ours<const W: usize>() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    rounds!(a, i => a.alloc(words::<W>(i)), a.reset())
}
fn bump_ours_chained<const W: usize>() -> Runner {
    let mut a = Arena::chained(ARENA_BYTES);
    rounds!(a, i => a.alloc(words::<W>(i)), a.reset())
}
fn bump_bumpalo<const W: usize>() -> Runner {
    let mut a = bumpalo::Bump::with_capacity(ARENA_BYTES);
    rounds!(a, i => a.alloc(words::<W>(i)), a.reset())
}
fn bump_bump_scope<const W: usize>() -> Runner {
    let mut a: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    rounds!(a, i => a.alloc(words::<W>(i)).into_mut(), a.reset())
}
fn mixed_ours() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    let ls = mixed_layouts();
    rounds!(a, i => a.alloc_layout(ls[i]), a.reset())
}
fn mixed_bumpalo() -> Runner {
    let mut a = bumpalo::Bump::with_capacity(ARENA_BYTES);
    let ls = mixed_layouts();
    rounds!(a, i => a.alloc_layout(ls[i]), a.reset())
}
fn mixed_bump_scope() -> Runner {
    use bump_scope::traits::BumpAllocatorTyped;
    let mut a: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    let ls = mixed_layouts();
    rounds!(a, i => a.allocate_layout(ls[i]), a.reset())
}
fn scope_ours() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    a.alloc(1u64); // something that outlives every scope
    Box::new(move || {
        for _ in 0..SCOPES {
            let s = a.scope();
            for i in 0..PER_SCOPE {
                black_box(s.alloc(words::<8>(i)));
            }
        }
        0
    })
}
fn scope_bump_scope() -> Runner {
    let mut a: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    let _ = a.alloc(1u64).into_mut();
    Box::new(move || {
        for _ in 0..SCOPES {
            a.scoped(|s| {
                for i in 0..PER_SCOPE {
                    black_box(s.alloc(words::<8>(i)).into_mut());
                }
            });
        }
        0
    })
}
fn drop1_ours() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    rounds!(a, i => a.alloc(Droppy::<0> { fields: words::<8>(i) }), a.reset())
}
fn drop1_bump_scope() -> Runner {
    let mut a: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            a.scoped(|s| {
                let mut i = 0;
                let held = s.alloc_slice_fill_with(ARENA_N, || {
                    i += 1;
                    s.alloc(Droppy::<0> {
                        fields: words::<8>(i),
                    })
                });
                black_box(&held);
            });
        }
        0
    })
}
fn drop2_bump_scope() -> Runner {
    let mut a: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            a.scoped(|s| {
                let mut i = 0;
                let held = s.alloc_slice_fill_with(ARENA_N / 2, || {
                    i += 1;
                    (
                        s.alloc(Droppy::<0> {
                            fields: words::<8>(i),
                        }),
                        s.alloc(Droppy::<1> {
                            fields: words::<8>(i),
                        }),
                    )
                });
                black_box(&held);
            });
        }
        0
    })
}
/// blink-alloc's `Blink`, which drops what `put` placed when it is reset: the same work as
/// ours (the arena, not the caller, keeps the values' destructors). Warmed once so that its
/// chunk holds a whole round, as ours is sized to.
fn warm_blink(round: impl Fn(&blink_alloc::Blink)) -> blink_alloc::Blink {
    let mut a = blink_alloc::Blink::new();
    round(&a);
    a.reset();
    a
}
fn drop1_blink() -> Runner {
    let mut a = warm_blink(|a| {
        for i in 0..ARENA_N {
            black_box(a.put(Droppy::<0> {
                fields: words::<8>(i),
            }));
        }
    });
    rounds!(a, i => a.put(Droppy::<0> { fields: words::<8>(i) }), a.reset())
}
/// The runs jobs for [`drop1_blink`].
fn drop_runs_blink<const RUN: usize>() -> Runner {
    let round = |a: &blink_alloc::Blink| alternate_runs!(RUN, value => a.put(value));
    let mut a = warm_blink(round);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            round(&a);
            a.reset();
        }
        0
    })
}
/// Runs of `RUN` values of one type, then `RUN` of the other (`drop-2types` with runs of 1,
/// `drop-runs2`, `drop-runs8`).
fn drop_runs_ours<const RUN: usize>() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            alternate_runs!(RUN, value => a.alloc(value));
            a.reset();
        }
        0
    })
}
/// `drop_runs_ours` through a `Tracked` arena with a budget never reached: the wrapper's own
/// `alloc` for values that keep starting records or entries (the armed path misses on every
/// change of type).
fn drop_runs_tracked<const RUN: usize>() -> Runner {
    let mut a = Tracked::new(Arena::with_capacity(ARENA_BYTES), "budgeted", "Bench")
        .with_budget(Budget::fail(1 << 30));
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            alternate_runs!(RUN, value => a.alloc(value));
            a.reset();
        }
        0
    })
}
fn drop_runs_bump_scope<const RUN: usize>() -> Runner {
    let mut a: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            a.scoped(|s| {
                let mut i = 0;
                let held = s.alloc_slice_fill_with(ARENA_N / (2 * RUN), || {
                    i += 1;
                    let first: [_; RUN] = std::array::from_fn(|k| {
                        s.alloc(Droppy::<0> {
                            fields: words::<8>(i * RUN + k),
                        })
                    });
                    let second: [_; RUN] = std::array::from_fn(|k| {
                        s.alloc(Droppy::<1> {
                            fields: words::<8>(i * RUN + k),
                        })
                    });
                    (first, second)
                });
                black_box(&held);
            });
        }
        0
    })
}
/// `drop-1type` done as bump-scope's contestant does it: each value in an `ArenaBox` (which
/// drops its value when it is dropped), the boxes held in a boxed slice from the same arena
/// (`alloc_box_slice_fill_with`, bump-scope's `alloc_slice_fill_with`) and dropped before the
/// reset, so the arena registers nothing. Shown beside ours, not a peer: the job is `alloc`'s
/// drop at reset.
fn drop1_ours_box() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            {
                let a = &a;
                let mut i = 0;
                let held = a.alloc_box_slice_fill_with(ARENA_N, |_| {
                    i += 1;
                    a.alloc_box(Droppy::<0> {
                        fields: words::<8>(i),
                    })
                });
                black_box(&held);
            }
            a.reset();
        }
        0
    })
}
/// The runs jobs as [`drop1_ours_box`] does `drop-1type`: pairs of `RUN` boxes of each type.
/// `drop-2types` as `drop2_bump_scope` writes it (a pair per element), for the same shape of loop.
fn drop2_ours_box() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            {
                let a = &a;
                let mut i = 0;
                let held = a.alloc_box_slice_fill_with(ARENA_N / 2, |_| {
                    i += 1;
                    (
                        a.alloc_box(Droppy::<0> {
                            fields: words::<8>(i),
                        }),
                        a.alloc_box(Droppy::<1> {
                            fields: words::<8>(i),
                        }),
                    )
                });
                black_box(&held);
            }
            a.reset();
        }
        0
    })
}
fn drop_runs_ours_box<const RUN: usize>() -> Runner {
    let mut a = Arena::with_capacity(ARENA_BYTES);
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            {
                let a = &a;
                let mut i = 0;
                let held = a.alloc_box_slice_fill_with(ARENA_N / (2 * RUN), |_| {
                    i += 1;
                    let first: [_; RUN] = std::array::from_fn(|k| {
                        a.alloc_box(Droppy::<0> {
                            fields: words::<8>(i * RUN + k),
                        })
                    });
                    let second: [_; RUN] = std::array::from_fn(|k| {
                        a.alloc_box(Droppy::<1> {
                            fields: words::<8>(i * RUN + k),
                        })
                    });
                    (first, second)
                });
                black_box(&held);
            }
            a.reset();
        }
        0
    })
}
fn churn_ours<const W: usize, const LIVE: usize>() -> Runner {
    churn::<W, LIVE, _>(Pool::<[u64; W]>::with_capacity(LIVE))
}
/// The same pool with 4-byte handles (`Handle32`): shown beside ours, not a peer.
fn churn_ours32<const W: usize, const LIVE: usize>() -> Runner {
    churn::<W, LIVE, _>(Pool::<[u64; W], Handle32<[u64; W]>>::with_capacity_and_key(
        LIVE,
    ))
}
fn churn_slotmap<const W: usize, const LIVE: usize>() -> Runner {
    churn::<W, LIVE, _>(slotmap::SlotMap::<slotmap::DefaultKey, [u64; W]>::with_capacity(LIVE))
}
fn churn_dense<const W: usize, const LIVE: usize>() -> Runner {
    churn::<W, LIVE, _>(slotmap::DenseSlotMap::<slotmap::DefaultKey, [u64; W]>::with_capacity(LIVE))
}
fn churn_thunderdome<const W: usize, const LIVE: usize>() -> Runner {
    churn::<W, LIVE, _>(thunderdome::Arena::<[u64; W]>::with_capacity(LIVE))
}
fn churn_slab<const W: usize, const LIVE: usize>() -> Runner {
    churn::<W, LIVE, _>(slab::Slab::<[u64; W]>::with_capacity(LIVE))
}
fn grow_churn_ours() -> Runner {
    grow_churn(Pool::growable(GROW_CHUNK))
}
fn grow_churn_fixed() -> Runner {
    grow_churn(Pool::with_capacity(GROW_LIVE))
}
fn grow_lookup_ours() -> Runner {
    grow_lookup(Pool::growable(GROW_CHUNK))
}
fn grow_lookup_fixed() -> Runner {
    grow_lookup(Pool::with_capacity(GROW_LIVE))
}
fn lookup_ours() -> Runner {
    lookup(Pool::<[u64; 8]>::with_capacity(GROW_LIVE))
}
fn lookup_slotmap() -> Runner {
    lookup(slotmap::SlotMap::<slotmap::DefaultKey, [u64; 8]>::with_capacity(GROW_LIVE))
}
fn lookup_thunderdome() -> Runner {
    lookup(thunderdome::Arena::<[u64; 8]>::with_capacity(GROW_LIVE))
}
fn iter_ours() -> Runner {
    iterate(Pool::<[u64; 8]>::with_capacity(ITER_LIVE))
}
fn iter_slotmap() -> Runner {
    iterate(slotmap::SlotMap::<slotmap::DefaultKey, [u64; 8]>::with_capacity(ITER_LIVE))
}
fn iter_dense() -> Runner {
    iterate(slotmap::DenseSlotMap::<slotmap::DefaultKey, [u64; 8]>::with_capacity(ITER_LIVE))
}
fn iter_thunderdome() -> Runner {
    iterate(thunderdome::Arena::<[u64; 8]>::with_capacity(ITER_LIVE))
}
fn soa_churn_ours() -> Runner {
    soa_churn!(SoaPool::<Particle>::with_capacity(SOA_LIVE))
}
fn soa_churn_dense() -> Runner {
    soa_churn!(slotmap::DenseSlotMap::<slotmap::DefaultKey, Particle>::with_capacity(SOA_LIVE))
}
fn soa_churn_slotmap() -> Runner {
    soa_churn!(slotmap::SlotMap::<slotmap::DefaultKey, Particle>::with_capacity(SOA_LIVE))
}
fn heap_ours<const LIVE: usize>() -> Runner {
    heap::<LIVE, _>(FreeListHeap::with_capacity(region_bytes(LIVE)))
}
fn heap_rlsf<const LIVE: usize>() -> Runner {
    heap::<LIVE, _>(Rlsf::new(region_bytes(LIVE)))
}
fn heap_talc<const LIVE: usize>() -> Runner {
    heap::<LIVE, _>(Talc::new(region_bytes(LIVE)))
}
fn chunks_ours() -> Runner {
    column_pass(update_x_chunks8)
}
fn chunks_zip() -> Runner {
    column_pass(update_x_zip)
}
fn chunks_std() -> Runner {
    column_pass(update_x_std_chunks8)
}
fn chunks_hand() -> Runner {
    let mut x: Vec<f32> = (0..PASS_N).map(|i| particle(i).x).collect();
    let vx: Vec<f32> = (0..PASS_N).map(|i| particle(i).vx).collect();
    Box::new(move || {
        for _ in 0..PASSES {
            for (x, vx) in x.iter_mut().zip(&vx) {
                *x += vx * DT;
            }
            black_box(&x);
        }
        0
    })
}
/// Rows of the `tiles-x-1m` job: 28 MB of particles, close to the size of the 32 MiB L3 (the
/// 100,003 rows of `tiles-x` are 2.8 MB).
const PASS_1M: usize = 1_000_003;

fn tiles_x_ours<const N: usize, const ROWS: usize>() -> Runner {
    let mut v: SoaTiles<Particle, N> = (0..ROWS).map(particle).collect();
    Box::new(move || {
        for _ in 0..PASSES {
            update_x_tiles(&mut v, DT);
            black_box(v.tail().x);
        }
        0
    })
}
/// `PASSES` x `pass` over `state`, which the runner owns.
fn passes<S: 'static>(mut state: S, pass: fn(&mut S, f32)) -> Runner {
    Box::new(move || {
        for _ in 0..PASSES {
            pass(&mut state, DT);
            black_box(&state);
        }
        0
    })
}
fn tiles_x_aosoa<const ROWS: usize>() -> Runner {
    passes(HandAosoa::new(ROWS), HandAosoa::update_x)
}
fn tiles_x_aosoa16<const ROWS: usize>() -> Runner {
    passes(HandAosoa16::new(ROWS), HandAosoa16::update_x)
}
/// The control: blocks of 16 `x` and 16 `vx` only, the same two lines per 16 rows as a tile
/// of 16 with nothing between them.
fn tiles_x_xv16<const ROWS: usize>() -> Runner {
    passes(xv_blocks16(ROWS), |v, dt| update_x_xv16(v, dt))
}
/// The `SoaVec` column zip over `ROWS` particles.
fn zip_rows<const ROWS: usize>() -> Runner {
    passes((0..ROWS).map(particle).collect(), update_x_zip)
}
fn tiles_x_aos() -> Runner {
    let mut v: Vec<Particle> = (0..PASS_N).map(particle).collect();
    Box::new(move || {
        for _ in 0..PASSES {
            for p in &mut v {
                p.x += p.vx * DT;
            }
            black_box(&v);
        }
        0
    })
}
fn tiles_x_soa_rs() -> Runner {
    let mut v = soa_rs::Soa::<sr::Particle>::with_capacity(PASS_N);
    (0..PASS_N).for_each(|i| v.push(sr::from(particle(i))));
    Box::new(move || {
        for _ in 0..PASSES {
            let s = v.slices_mut();
            for (x, vx) in s.x.iter_mut().zip(s.vx.iter()) {
                *x += vx * DT;
            }
            black_box(v.x());
        }
        0
    })
}

/// Reads of whole rows (the sum of the 7 fields) at `ROW_READS` random positions (seed 11) of
/// `ROW_N` particles: 16M by default (448 MB, past the last cache level), `ARENA_KIT_ROWS`
/// to change it.
fn row_n() -> usize {
    std::env::var("ARENA_KIT_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16 << 20)
}
const ROW_READS: usize = 1_000_000;

macro_rules! row_reads {
    ($v:ident, $i:ident => $sum:expr) => {{
        let picks = positions(row_n(), ROW_READS, 11);
        Box::new(move || {
            let mut acc = 0.0f32;
            for &$i in &picks {
                acc += $sum;
            }
            black_box(acc);
            0
        })
    }};
}
fn rows_tiles<const N: usize>() -> Runner {
    let v: SoaTiles<Particle, N> = (0..row_n()).map(particle).collect();
    row_reads!(v, i => {
        let p = v.get(i).unwrap();
        p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
    })
}
fn rows_soavec() -> Runner {
    let v: SoaVec<Particle> = (0..row_n()).map(particle).collect();
    row_reads!(v, i => {
        let p = v.get(i).unwrap();
        p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
    })
}
fn rows_aos() -> Runner {
    let v: Vec<Particle> = (0..row_n()).map(particle).collect();
    row_reads!(v, i => {
        let p = &v[i];
        p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
    })
}
fn rows_aosoa() -> Runner {
    let v = HandAosoa::new(row_n());
    row_reads!(v, i => v.row_sum(i))
}
fn rows_soa_rs() -> Runner {
    let mut v = soa_rs::Soa::<sr::Particle>::with_capacity(row_n());
    (0..row_n()).for_each(|i| v.push(sr::from(particle(i))));
    row_reads!(v, i => {
        let p = v.get(i).unwrap();
        p.x + p.y + p.z + p.vx + p.vy + p.vz + p.life
    })
}

/// soa-rs 1.0's `Soa<Particle>` (its own derive), filled from the bench particle.
mod sr {
    use soa_rs::Soars;

    #[derive(Soars, Clone, Copy)]
    pub struct Particle {
        pub x: f32,
        pub y: f32,
        pub z: f32,
        pub vx: f32,
        pub vy: f32,
        pub vz: f32,
        pub life: f32,
    }

    pub fn from(p: super::Particle) -> Particle {
        Particle {
            x: p.x,
            y: p.y,
            z: p.z,
            vx: p.vx,
            vy: p.vy,
            vz: p.vz,
            life: p.life,
        }
    }
}

fn tracked_budget<const W: usize>() -> Runner {
    // A budget never reached, so every allocation takes the check's fast path.
    let mut a = Tracked::new(Arena::with_capacity(ARENA_BYTES), "budgeted", "Bench")
        .with_budget(Budget::fail(1 << 30));
    rounds!(a, i => a.alloc(words::<W>(i)), a.reset())
}
/// The same tracked arena, dereferenced once per round (`let arena: &Arena = &tracked;`): the
/// wrapper's check that its budget is still on the allocator runs once, and every allocation in
/// the loop is the arena's own, under the budget the arena holds.
fn tracked_budget_deref_once() -> Runner {
    let mut a = Tracked::new(Arena::with_capacity(ARENA_BYTES), "budgeted", "Bench")
        .with_budget(Budget::fail(1 << 30));
    Box::new(move || {
        for _ in 0..ARENA_ROUNDS {
            let arena: &Arena = &a;
            for i in 0..ARENA_N {
                black_box(arena.alloc(words::<8>(i)));
            }
            a.reset();
        }
        0
    })
}
fn tracked_none() -> Runner {
    let mut a = Tracked::new(Arena::with_capacity(ARENA_BYTES), "tagged", "Bench");
    rounds!(a, i => a.alloc(words::<8>(i)), a.reset())
}

// ---------------------------------------------------------------------------------------------
// The jobs
// ---------------------------------------------------------------------------------------------

const ARENA_OPS: u64 = (ARENA_N * ARENA_ROUNDS) as u64;

macro_rules! bump_job {
    ($name:literal, $w:literal) => {
        Job {
            name: $name,
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "ours", bump_ours::<$w>),
                (Peer, "bumpalo", bump_bumpalo::<$w>),
                (Peer, "bump-scope", bump_bump_scope::<$w>),
                (Other, "ours-chained", bump_ours_chained::<$w>),
            ],
        }
    };
}

/// A pool churn job. `Handle32` pools (`ours-handle32`) are shown at 100,000 live and more only:
/// a `Handle32` slot retires after 2,048 values, and the wall-clock driver runs a job back to
/// back on one state for 10 ms a sample, so at 1,000 live (100 values per slot per run) the slots
/// ran out within a round.
macro_rules! churn_job {
    ($name:literal, $w:literal, $live:literal) => {
        churn_job!(@ $name, $w, $live, (Other, "ours-handle32", churn_ours32::<$w, $live>))
    };
    ($name:literal, $w:literal, $live:literal, without_handle32) => {
        churn_job!(@ $name, $w, $live,)
    };
    (@ $name:literal, $w:literal, $live:literal, $($extra:expr)?) => {
        Job {
            name: $name,
            ops: CHURN_OPS as u64,
            contestants: &[
                (Ours, "ours", churn_ours::<$w, $live>),
                (Peer, "slotmap", churn_slotmap::<$w, $live>),
                (Peer, "dense-slotmap", churn_dense::<$w, $live>),
                (Peer, "thunderdome", churn_thunderdome::<$w, $live>),
                (Other, "slab", churn_slab::<$w, $live>),
                $($extra)?
            ],
        }
    };
}

macro_rules! heap_job {
    ($name:literal, $live:literal) => {
        Job {
            name: $name,
            ops: HEAP_PAIRS as u64,
            contestants: &[
                (Ours, "ours", heap_ours::<$live>),
                (Peer, "rlsf", heap_rlsf::<$live>),
                (Peer, "talc", heap_talc::<$live>),
            ],
        }
    };
}

fn jobs() -> Vec<Job> {
    let mut jobs = vec![
        bump_job!("bump-64", 8),
        bump_job!("bump-8", 1),
        bump_job!("bump-256", 32),
        Job {
            name: "bump-mixed",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "ours", mixed_ours),
                (Peer, "bumpalo", mixed_bumpalo),
                (Peer, "bump-scope", mixed_bump_scope),
            ],
        },
        Job {
            name: "scope-100",
            ops: SCOPES as u64,
            contestants: &[
                (Ours, "ours", scope_ours),
                (Peer, "bump-scope", scope_bump_scope),
            ],
        },
        Job {
            name: "drop-1type",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "ours", drop1_ours),
                (Peer, "bump-scope", drop1_bump_scope),
                (Peer, "blink-alloc", drop1_blink),
                (Other, "ours-box", drop1_ours_box),
            ],
        },
        Job {
            name: "drop-2types",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "ours", drop_runs_ours::<1>),
                (Peer, "bump-scope", drop2_bump_scope),
                (Peer, "blink-alloc", drop_runs_blink::<1>),
                (Other, "ours-box", drop2_ours_box),
                (Other, "ours-tracked", drop_runs_tracked::<1>),
            ],
        },
        Job {
            name: "drop-runs2",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "ours", drop_runs_ours::<2>),
                (Peer, "bump-scope", drop_runs_bump_scope::<2>),
                (Peer, "blink-alloc", drop_runs_blink::<2>),
                (Other, "ours-box", drop_runs_ours_box::<2>),
            ],
        },
        Job {
            name: "drop-runs8",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "ours", drop_runs_ours::<8>),
                (Peer, "bump-scope", drop_runs_bump_scope::<8>),
                (Peer, "blink-alloc", drop_runs_blink::<8>),
                (Other, "ours-box", drop_runs_ours_box::<8>),
            ],
        },
        churn_job!("pool-churn-64", 8, 100_000),
        churn_job!("pool-churn-8", 1, 100_000),
        churn_job!("pool-churn-256", 32, 100_000),
        churn_job!("pool-churn-64-1k", 8, 1_000, without_handle32),
        churn_job!("pool-churn-64-10k", 8, 10_000, without_handle32),
    ];
    if std::env::var_os("ARENA_KIT_CALLGRIND_1M").is_some() {
        jobs.push(churn_job!("pool-churn-64-1m", 8, 1_000_000));
    }
    jobs.extend([
        Job {
            name: "growable-churn",
            ops: CHURN_OPS as u64,
            contestants: &[
                (Ours, "ours-growable", grow_churn_ours),
                (Peer, "fixed-pool", grow_churn_fixed),
            ],
        },
        Job {
            name: "growable-lookup",
            ops: CHURN_OPS as u64,
            contestants: &[
                (Ours, "ours-growable", grow_lookup_ours),
                (Peer, "fixed-pool", grow_lookup_fixed),
            ],
        },
        Job {
            name: "pool-lookup",
            ops: CHURN_OPS as u64,
            contestants: &[
                (Ours, "ours", lookup_ours),
                (Peer, "slotmap", lookup_slotmap),
                (Peer, "thunderdome", lookup_thunderdome),
            ],
        },
        Job {
            name: "pool-iter",
            ops: (ITER_LIVE * ITER_PASSES) as u64,
            contestants: &[
                (Ours, "ours", iter_ours),
                (Peer, "slotmap", iter_slotmap),
                (Peer, "dense-slotmap", iter_dense),
                (Peer, "thunderdome", iter_thunderdome),
            ],
        },
        Job {
            name: "soapool-churn",
            ops: SOA_OPS as u64,
            contestants: &[
                (Ours, "ours", soa_churn_ours),
                (Peer, "dense-slotmap", soa_churn_dense),
                (Other, "slotmap", soa_churn_slotmap),
            ],
        },
        heap_job!("heap-256", 256),
        heap_job!("heap-4096", 4096),
        heap_job!("heap-100k", 100_000),
        Job {
            name: "chunks8",
            ops: (PASS_N * PASSES) as u64,
            contestants: &[
                (Ours, "ours-chunks8", chunks_ours),
                (Peer, "zip", chunks_zip),
                (Other, "hand-zip", chunks_hand),
                (Other, "std-chunks8", chunks_std),
            ],
        },
        Job {
            name: "tracked-pass",
            ops: (PASS_N * PASSES) as u64,
            contestants: &[
                (Ours, "tracked", tracked_pass),
                (Peer, "untracked", chunks_zip),
            ],
        },
        Job {
            name: "tracked-rows",
            ops: (PASS_N * PASSES) as u64,
            contestants: &[
                (Ours, "tracked", tracked_rows),
                (Peer, "untracked", untracked_rows),
            ],
        },
        Job {
            name: "tiles-x",
            ops: (PASS_N * PASSES) as u64,
            contestants: &[
                (Ours, "ours-tiles8", tiles_x_ours::<8, PASS_N>),
                (Peer, "soavec-zip", chunks_zip),
                (Peer, "hand-aosoa", tiles_x_aosoa::<PASS_N>),
                (Other, "aos", tiles_x_aos),
                (Other, "soa-rs", tiles_x_soa_rs),
                (Other, "ours-tiles16", tiles_x_ours::<16, PASS_N>),
                (Other, "hand-aosoa16", tiles_x_aosoa16::<PASS_N>),
            ],
        },
        Job {
            name: "tiles-x-1m",
            ops: (PASS_1M * PASSES) as u64,
            contestants: &[
                (Ours, "ours-tiles16", tiles_x_ours::<16, PASS_1M>),
                (Peer, "soavec-zip", zip_rows::<PASS_1M>),
                (Peer, "hand-aosoa16", tiles_x_aosoa16::<PASS_1M>),
                (Other, "ours-tiles8", tiles_x_ours::<8, PASS_1M>),
                (Other, "hand-aosoa", tiles_x_aosoa::<PASS_1M>),
                (Other, "xv-blocks16", tiles_x_xv16::<PASS_1M>),
            ],
        },
        Job {
            name: "tiles-row-read",
            ops: ROW_READS as u64,
            contestants: &[
                (Ours, "ours-tiles8", rows_tiles::<8>),
                (Peer, "aos", rows_aos),
                (Peer, "hand-aosoa", rows_aosoa),
                (Other, "soavec", rows_soavec),
                (Other, "soa-rs", rows_soa_rs),
                (Other, "ours-tiles16", rows_tiles::<16>),
            ],
        },
        Job {
            name: "tracked-budget",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "tracked-budget", tracked_budget::<8>),
                (Peer, "untracked", bump_ours::<8>),
                (Other, "tracked-deref-once", tracked_budget_deref_once),
                (Other, "tracked-no-budget", tracked_none),
                (Other, "bumpalo", bump_bumpalo::<8>),
            ],
        },
        Job {
            name: "tracked-budget-8",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "tracked-budget", tracked_budget::<1>),
                (Peer, "untracked", bump_ours::<1>),
            ],
        },
        Job {
            name: "tracked-budget-256",
            ops: ARENA_OPS,
            contestants: &[
                (Ours, "tracked-budget", tracked_budget::<32>),
                (Peer, "untracked", bump_ours::<32>),
            ],
        },
    ]);
    jobs
}

/// `PASSES` x the `x += vx * dt` pass of `chunks8`'s zip peer over a change-tracked `SoaVec` of
/// `PASS_N` particles: a `tick`, then `slices_mut` (which marks every block of every column).
fn tracked_pass() -> Runner {
    let mut v: TrackedSoaVec<Particle> = (0..PASS_N).map(particle).collect();
    Box::new(move || {
        for _ in 0..PASSES {
            black_box(v.tick());
            let s = v.slices_mut();
            for (x, vx) in s.x.iter_mut().zip(s.vx.iter()) {
                *x += vx * DT;
            }
            black_box(v.slices().x);
        }
        0
    })
}

/// `PASSES` x `x += vx * dt` row by row through `get_mut` (a row view), over a change-tracked
/// `SoaVec` of `PASS_N` particles (each `get_mut` marks its row's block) or an untracked one.
macro_rules! row_pass {
    ($v:expr, $tick:expr) => {{
        let mut v = $v;
        Box::new(move || {
            for _ in 0..PASSES {
                $tick(&mut v);
                for i in 0..PASS_N {
                    let p = v.get_mut(i).unwrap();
                    *p.x += *p.vx * DT;
                }
                black_box(v.slices().x);
            }
            0
        })
    }};
}

fn tracked_rows() -> Runner {
    row_pass!(
        (0..PASS_N)
            .map(particle)
            .collect::<TrackedSoaVec<Particle>>(),
        |v: &mut TrackedSoaVec<Particle>| {
            black_box(v.tick());
        }
    )
}
fn untracked_rows() -> Runner {
    row_pass!(
        (0..PASS_N).map(particle).collect::<SoaVec<Particle>>(),
        |_: &mut SoaVec<Particle>| {}
    )
}

// ---------------------------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------------------------

fn role_name(role: Role) -> &'static str {
    match role {
        Ours => "ours",
        Peer => "peer",
        Other => "other",
    }
}

/// The value at quantile `q` of sorted `xs`, interpolated linearly.
fn quantile(xs: &[f64], q: f64) -> f64 {
    let pos = q * (xs.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    xs[lo] + (xs[hi] - xs[lo]) * (pos - lo as f64)
}

fn sorted(mut xs: Vec<f64>) -> Vec<f64> {
    xs.sort_by(f64::total_cmp);
    xs
}

/// The length of one wall-clock sample: a contestant's runs are repeated back to back up to it.
const SAMPLE_NS: u128 = 10_000_000;

/// Builds every contestant's state of `job`, in contestant order or in reverse, and returns them
/// in contestant order.
fn build(job: &Job, reversed: bool) -> Vec<Runner> {
    let n = job.contestants.len();
    let mut built: Vec<Option<Runner>> = (0..n).map(|_| None).collect();
    for step in 0..n {
        let k = if reversed { n - 1 - step } else { step };
        built[k] = Some((job.contestants[k].2)());
    }
    built.into_iter().map(|r| r.expect("built")).collect()
}

/// Interleaved rounds of one job: per contestant the median ns per operation, then the
/// per-round ratio ours / best peer (the peer with the lowest median). Every round builds the
/// states afresh (build order alternating every round) and runs each once untimed first; the
/// run order alternates every other round.
fn wall(job: &Job, rounds: usize) {
    // How many back-to-back runs make one sample of about SAMPLE_NS (a single run of a
    // millisecond or less is at the mercy of one context switch on a loaded machine).
    let reps: Vec<u32> = build(job, false)
        .iter_mut()
        .map(|r| {
            black_box(r());
            let start = Instant::now();
            black_box(r());
            let once = start.elapsed().as_nanos().max(1);
            (SAMPLE_NS / once).clamp(1, 1000) as u32
        })
        .collect();
    let n = reps.len();
    let mut times = vec![Vec::with_capacity(rounds); n];
    for round in 0..rounds {
        let mut runners = build(job, round % 2 == 1);
        for r in &mut runners {
            black_box(r()); // warm-up: the fresh state's pages, caches, branch history
        }
        for step in 0..n {
            let k = if (round / 2) % 2 == 0 {
                step
            } else {
                n - 1 - step
            };
            let start = Instant::now();
            for _ in 0..reps[k] {
                black_box(runners[k]());
            }
            let ns = start.elapsed().as_nanos() as f64;
            times[k].push(ns / (f64::from(reps[k]) * job.ops as f64));
        }
    }
    let medians: Vec<f64> = times
        .iter()
        .map(|t| quantile(&sorted(t.clone()), 0.5))
        .collect();
    let ours = job
        .contestants
        .iter()
        .position(|c| c.0 == Ours)
        .expect("ours");
    let best = (0..n)
        .filter(|&k| job.contestants[k].0 == Peer)
        .min_by(|&a, &b| medians[a].total_cmp(&medians[b]))
        .expect("a peer");
    let ratios = sorted(
        times[ours]
            .iter()
            .zip(&times[best])
            .map(|(o, p)| o / p)
            .collect(),
    );
    let cells: Vec<String> = job
        .contestants
        .iter()
        .zip(&medians)
        .map(|(c, m)| format!("{} {m:.2}", c.1))
        .collect();
    println!(
        "| {} | {} | {} | {:.3} | {:.3}-{:.3} |",
        job.name,
        cells.join(", "),
        job.contestants[best].1,
        quantile(&ratios, 0.5),
        quantile(&ratios, 0.05),
        quantile(&ratios, 0.95),
    );
}

fn usage() -> ! {
    eprintln!(
        "usage: callgrind list | callgrind JOB CONTESTANT | callgrind wall [--rounds N] [JOB...]"
    );
    std::process::exit(2)
}

fn main() {
    // `cargo bench` passes `--bench`; ignore it and any other flag but `--rounds`.
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let jobs = jobs();
    match args.first().map(String::as_str) {
        None => usage(),
        Some("list") => {
            for job in &jobs {
                let cs: Vec<String> = job
                    .contestants
                    .iter()
                    .map(|c| format!("{}={}", role_name(c.0), c.1))
                    .collect();
                println!("{} {} {}", job.name, job.ops, cs.join(" "));
            }
        }
        Some("wall") => {
            args.remove(0);
            let mut rounds = 15;
            if let Some(at) = args.iter().position(|a| a == "--rounds") {
                rounds = args
                    .get(at + 1)
                    .and_then(|r| r.parse().ok())
                    .unwrap_or_else(|| usage());
                args.drain(at..at + 2);
            }
            println!(
                "wall clock, {rounds} interleaved rounds, ns per operation (median per contestant){}",
                match option_env!("ARENA_KIT_SYMBOL_ORDER") {
                    Some(_) => ", code laid out in reversed order",
                    None => "",
                }
            );
            println!(
                "| job | contestants | best peer | median ratio | p5-p95 of per-round ratios |"
            );
            println!("| --- | --- | --- | ---: | --- |");
            for job in jobs
                .iter()
                .filter(|j| args.is_empty() || args.iter().any(|a| a == j.name))
            {
                wall(job, rounds);
            }
        }
        Some(name) => {
            let job = jobs
                .iter()
                .find(|j| j.name == name)
                .unwrap_or_else(|| usage());
            let who = args.get(1).unwrap_or_else(|| usage());
            let c = job
                .contestants
                .iter()
                .find(|c| c.1 == who)
                .unwrap_or_else(|| usage());
            let mut run = (c.2)();
            black_box(run()); // warm-up: pages touched, lazy paths taken
            black_box(counted_region(&mut *run));
            println!("{} {} ops {}", job.name, who, job.ops);
        }
    }
}
