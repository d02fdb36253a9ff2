//! `FreeListHeap` against rlsf, talc, linked_list_allocator and the system allocator (glibc
//! malloc), side by side in one run: random alloc/free of 16 to 4096 bytes in a 64 MiB region
//! with 256 and with 4,096 live blocks. Each iteration frees a random live block and allocates a
//! new random size in its place: two operations.
//!
//! Before the criterion runs it prints a table of the same workload with the allocators
//! interleaved (fastest of 15 rounds each), which is robust to load on a shared machine, and the fragmentation each allocator is left with after a million
//! operations (4,096 live blocks): `1 - largest allocatable block / free bytes`, the largest
//! block found by probing with allocations.
//!
//! Run: `cargo bench -p arena-kit-benches --bench heap -- --warm-up-time 1 --measurement-time 3`

use arena_kit::heap::{Fit, FreeListHeap};
use core::alloc::Layout;
use core::ptr::NonNull;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::alloc::{GlobalAlloc, System};
use std::hint::black_box;

const REGION: usize = 64 << 20;

/// One allocator under test.
trait Subject {
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>>;
    /// # Safety
    /// `ptr` is live, from `alloc` with `layout`.
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout);
    /// Whether the allocator manages a fixed region (so fragmentation means something).
    fn fixed_region(&self) -> bool {
        true
    }
}

impl Subject for FreeListHeap<'static> {
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        FreeListHeap::try_alloc(self, layout).ok()
    }
    unsafe fn free(&mut self, ptr: NonNull<u8>, _layout: Layout) {
        FreeListHeap::free(self, ptr).unwrap();
    }
}

/// Memory for the peers, given back on drop.
struct Pool(NonNull<u8>);

impl Pool {
    fn new() -> Self {
        // SAFETY: non-zero size.
        let p = unsafe { std::alloc::alloc(Self::layout()) };
        Pool(NonNull::new(p).expect("64 MiB for the benchmark pool"))
    }
    fn layout() -> Layout {
        Layout::from_size_align(REGION, 4096).unwrap()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout; the allocator using it was dropped first
        // (it is declared before the pool in each subject struct).
        unsafe { std::alloc::dealloc(self.0.as_ptr(), Self::layout()) }
    }
}

struct Rlsf {
    tlsf: rlsf::Tlsf<'static, u32, u16, 24, 16>,
    _pool: Pool,
}

impl Rlsf {
    fn new() -> Self {
        let pool = Pool::new();
        let mut tlsf = rlsf::Tlsf::new();
        // SAFETY: the pool is valid for REGION bytes, outlives `tlsf` (field order) and is used
        // by nothing else.
        unsafe { tlsf.insert_free_block_ptr(NonNull::slice_from_raw_parts(pool.0, REGION)) };
        Rlsf { tlsf, _pool: pool }
    }
}

impl Subject for Rlsf {
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        self.tlsf.allocate(layout)
    }
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.tlsf.deallocate(ptr, layout.align()) }
    }
}

struct Talc {
    talc: talc::base::Talc<talc::source::Manual, talc::DefaultBinning>,
    _pool: Pool,
}

impl Talc {
    fn new() -> Self {
        let pool = Pool::new();
        let mut talc = talc::base::Talc::new(talc::source::Manual);
        // SAFETY: as for rlsf.
        unsafe {
            talc.claim(pool.0.as_ptr(), REGION)
                .expect("talc claims the pool")
        };
        Talc { talc, _pool: pool }
    }
}

impl Subject for Talc {
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        // SAFETY: sizes are non-zero.
        unsafe { self.talc.allocate(layout) }
    }
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.talc.deallocate(ptr.as_ptr(), layout) }
    }
}

struct LinkedList {
    heap: linked_list_allocator::Heap,
    _pool: Pool,
}

impl LinkedList {
    fn new() -> Self {
        let pool = Pool::new();
        // SAFETY: as for rlsf.
        let heap = unsafe { linked_list_allocator::Heap::new(pool.0.as_ptr(), REGION) };
        LinkedList { heap, _pool: pool }
    }
}

impl Subject for LinkedList {
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        self.heap.allocate_first_fit(layout).ok()
    }
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.heap.deallocate(ptr, layout) }
    }
}

struct Malloc;

impl Subject for Malloc {
    fn alloc(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        // SAFETY: sizes are non-zero.
        NonNull::new(unsafe { System.alloc(layout) })
    }
    unsafe fn free(&mut self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(ptr.as_ptr(), layout) }
    }
    fn fixed_region(&self) -> bool {
        false
    }
}

/// xorshift64: cheap, deterministic.
struct Rng(u64);

impl Rng {
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    #[inline]
    fn layout(&mut self) -> Layout {
        let size = 16 + (self.next() % (4096 - 16 + 1)) as usize;
        Layout::from_size_align(size, 8).unwrap()
    }
}

/// The workload: `live` random blocks, then free-one-allocate-one steps.
struct Workload<S: Subject> {
    subject: S,
    slots: Vec<(NonNull<u8>, Layout)>,
    rng: Rng,
}

impl<S: Subject> Workload<S> {
    fn new(mut subject: S, live: usize) -> Self {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let slots = (0..live)
            .map(|_| {
                let l = rng.layout();
                (subject.alloc(l).expect("the region holds the live set"), l)
            })
            .collect();
        Workload {
            subject,
            slots,
            rng,
        }
    }

    #[inline]
    fn step(&mut self) {
        let i = (self.rng.next() % self.slots.len() as u64) as usize;
        let (ptr, layout) = self.slots[i];
        // SAFETY: every slot holds a live block with its layout.
        unsafe { self.subject.free(ptr, layout) };
        let l = self.rng.layout();
        let p = self
            .subject
            .alloc(l)
            .expect("the region holds the live set");
        self.slots[i] = (black_box(p), l);
    }

    /// `1 - largest allocatable / free`, probing the largest block by binary search.
    fn fragmentation(&mut self) -> Option<f64> {
        if !self.subject.fixed_region() {
            return None;
        }
        let live: usize = self.slots.iter().map(|(_, l)| l.size()).sum();
        let free = REGION - live;
        let (mut lo, mut hi) = (0usize, free);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            let l = Layout::from_size_align(mid, 8).unwrap();
            match self.subject.alloc(l) {
                Some(p) => {
                    // SAFETY: just allocated with `l`.
                    unsafe { self.subject.free(p, l) };
                    lo = mid;
                }
                None => hi = mid - 1,
            }
        }
        Some(1.0 - lo as f64 / free as f64)
    }
}

impl<S: Subject> Drop for Workload<S> {
    fn drop(&mut self) {
        for (p, l) in self.slots.drain(..) {
            // SAFETY: live blocks with their layouts.
            unsafe { self.subject.free(p, l) };
        }
    }
}

fn ours(fit: Fit) -> FreeListHeap<'static> {
    FreeListHeap::with_capacity(REGION).with_fit(fit)
}

/// Runs `f` with each subject by name.
macro_rules! each_subject {
    ($f:ident) => {
        $f("FreeListHeap (segregated)", || ours(Fit::Segregated));
        $f("FreeListHeap (best fit)", || ours(Fit::Best));
        $f("FreeListHeap (first fit)", || ours(Fit::First));
        $f("rlsf", Rlsf::new);
        $f("talc", Talc::new);
        $f("linked_list_allocator", LinkedList::new);
        $f("glibc malloc", || Malloc);
    };
}

fn report_fragmentation() {
    const OPS: usize = 1_000_000;
    println!("fragmentation after {OPS} operations, 4096 live blocks of 16..=4096 bytes, 64 MiB:");
    fn one<S: Subject>(name: &str, make: impl Fn() -> S) {
        let mut w = Workload::new(make(), 4096);
        for _ in 0..OPS / 2 {
            w.step();
        }
        match w.fragmentation() {
            Some(f) => println!("  {name:<28} {:.2}%", f * 100.0),
            None => println!("  {name:<28} n/a (not a fixed region)"),
        }
    }
    each_subject!(one);
}

/// Criterion times each allocator in turn, so on a shared machine a burst of load lands on one
/// of them. This table alternates them instead: 15 rounds, each running every allocator for a
/// slice of steps, keeping each one's fastest round.
fn report_interleaved() {
    const ROUNDS: usize = 15;
    for live in [256usize, 4096] {
        let mut subjects: Vec<(&str, Box<dyn Stepper>, u64)> = Vec::new();
        macro_rules! add {
            ($name:expr, $make:expr, $steps:expr) => {
                subjects.push(($name, Box::new(Workload::new($make(), live)), $steps))
            };
        }
        add!(
            "FreeListHeap (segregated)",
            || ours(Fit::Segregated),
            50_000
        );
        add!("FreeListHeap (best fit)", || ours(Fit::Best), 50_000);
        add!("FreeListHeap (first fit)", || ours(Fit::First), 5_000);
        add!("rlsf", Rlsf::new, 50_000);
        add!("talc", Talc::new, 50_000);
        add!("linked_list_allocator", LinkedList::new, 1_000);
        add!("glibc malloc", || Malloc, 50_000);
        let mut best = vec![f64::INFINITY; subjects.len()];
        for _ in 0..ROUNDS {
            for (i, (_, w, steps)) in subjects.iter_mut().enumerate() {
                let t = w.run(*steps).as_nanos() as f64 / *steps as f64;
                best[i] = best[i].min(t);
            }
        }
        println!("interleaved, {live} live, fastest of {ROUNDS} rounds, ns per free+alloc pair:");
        for ((name, _, _), t) in subjects.iter().zip(&best) {
            println!("  {name:<28} {t:>9.1}");
        }
    }
}

fn random_alloc_free(c: &mut Criterion) {
    if std::env::var_os("HEAP_BENCH_SKIP_FRAGMENTATION").is_none() {
        report_fragmentation();
    }
    if std::env::var_os("HEAP_BENCH_SKIP_INTERLEAVED").is_none() {
        report_interleaved();
    }
    for live in [256usize, 4096] {
        let mut group = c.benchmark_group(format!("heap/random 16..4096 B, {live} live"));
        let mut one = |name: &str, make: &dyn Fn() -> Box<dyn Stepper>| {
            let mut w = make();
            group.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.iter_custom(|iters| w.run(iters))
            });
        };
        macro_rules! boxed {
            ($make:expr) => {
                &|| Box::new(Workload::new($make(), live)) as Box<dyn Stepper>
            };
        }
        one(
            "FreeListHeap (segregated)",
            boxed!(|| ours(Fit::Segregated)),
        );
        one("FreeListHeap (best fit)", boxed!(|| ours(Fit::Best)));
        one("FreeListHeap (first fit)", boxed!(|| ours(Fit::First)));
        one("rlsf", boxed!(Rlsf::new));
        one("talc", boxed!(Talc::new));
        one("linked_list_allocator", boxed!(LinkedList::new));
        one("glibc malloc", boxed!(|| Malloc));
        group.finish();
    }
}

/// Runs `iters` steps of a workload, timed inside (monomorphised per allocator, no dynamic
/// call per step).
trait Stepper {
    fn run(&mut self, iters: u64) -> std::time::Duration;
}

impl<S: Subject> Stepper for Workload<S> {
    fn run(&mut self, iters: u64) -> std::time::Duration {
        let start = std::time::Instant::now();
        for _ in 0..iters {
            self.step();
        }
        start.elapsed()
    }
}

criterion_group!(benches, random_alloc_free);
criterion_main!(benches);
