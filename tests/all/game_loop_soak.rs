//! A game loop that runs every allocator for thousands of frames, the way a shipped game does:
//! a triple-buffered frame arena whose draw lists a render thread checks a frame later, a level
//! arena with a scope per frame and a hard limit, per-call scratch arenas, a pool of enemies with
//! drop glue, struct-of-arrays particles in a `SoaVec` and a `SoaPool`, and a free-list heap for
//! irregular assets. Faults are injected on purpose (requests past a limit, a full pool, stale and
//! foreign handles, double and interior frees, panicking constructors) and must come back as typed
//! errors with nothing corrupted.
//!
//! What it checks, every frame: each allocator against a plain model (contents, lengths, handles),
//! the render thread's view of every published draw list, and, at the end, that no allocator
//! reserved more memory after the first tenth of the run than it held then: a steady loop must not
//! grow.
//!
//! `ARENA_KIT_SOAK_FRAMES=20000 cargo test --release --test all game_loop_soak` runs the long form;
//! the default (2,000 frames) is the one CI runs.
#![deny(unsafe_code)]

use std::alloc::Layout;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;

use arena_kit::prelude::*;

/// A small deterministic generator (xorshift64*), so a failing run can be replayed exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

/// One entry of a frame's draw list; the render thread recomputes `checksum`.
#[derive(Debug, Clone, Copy)]
struct DrawCommand {
    frame: u64,
    index: u32,
    mesh: u32,
    checksum: u64,
}

fn checksum(frame: u64, index: u32, mesh: u32) -> u64 {
    (frame.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(index) << 20 ^ u64::from(mesh))
        .rotate_left(17)
}

/// The particle every SoA container in this loop holds: seven `f32` columns.
#[derive(Soa, Debug, Clone, Copy, PartialEq)]
#[soa(derive(Debug, Clone, Copy, PartialEq))]
struct Particle {
    x: f32,
    y: f32,
    z: f32,
    vx: f32,
    vy: f32,
    vz: f32,
    life: f32,
}

/// A row read back as a value.
fn owned(r: ParticleRef<'_>) -> Particle {
    Particle {
        x: *r.x,
        y: *r.y,
        z: *r.z,
        vx: *r.vx,
        vy: *r.vy,
        vz: *r.vz,
        life: *r.life,
    }
}

impl Particle {
    fn spawn(seed: u64) -> Particle {
        let s = (seed % 1000) as f32;
        Particle {
            x: s,
            y: -s,
            z: 0.5 * s,
            vx: 1.0,
            vy: 2.0,
            vz: -1.0,
            life: 1.0 + (seed % 7) as f32,
        }
    }

    fn step(&mut self, dt: f32) {
        self.x += self.vx * dt;
        self.y += self.vy * dt;
        self.z += self.vz * dt;
        self.life -= dt;
    }
}

/// Live `Enemy` values: every one constructed is dropped exactly once by the end.
static ENEMIES_LIVE: AtomicUsize = AtomicUsize::new(0);

/// A pooled value with drop glue (a heap-allocated name).
#[derive(Debug)]
struct Enemy {
    id: u64,
    hp: i32,
    name: String,
}

impl Enemy {
    fn new(id: u64) -> Enemy {
        ENEMIES_LIVE.fetch_add(1, Ordering::Relaxed);
        Enemy {
            id,
            hp: 100,
            name: format!("enemy-{id}"),
        }
    }
}

impl Drop for Enemy {
    fn drop(&mut self) {
        assert_eq!(
            self.name,
            format!("enemy-{}", self.id),
            "enemy corrupted before drop"
        );
        ENEMIES_LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Frame-arena values with destructors, counted so a lost or doubled drop shows up.
static FRAME_VALUES_LIVE: AtomicUsize = AtomicUsize::new(0);

struct FrameValue(#[allow(dead_code)] String);

impl FrameValue {
    fn new(n: u64) -> FrameValue {
        FRAME_VALUES_LIVE.fetch_add(1, Ordering::Relaxed);
        FrameValue(n.to_string())
    }
}

impl Drop for FrameValue {
    fn drop(&mut self) {
        FRAME_VALUES_LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Panics this test causes on purpose start with this; the panic hook keeps them quiet.
const INJECTED: &str = "injected fault";

/// Keeps the injected panics out of the output; every other panic prints as usual.
fn quiet_injected_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if !message.starts_with(INJECTED) && !message.contains("was made by a different pool") {
            default(info);
        }
    }));
}

fn frame_count() -> usize {
    if cfg!(miri) {
        return 12;
    }
    std::env::var("ARENA_KIT_SOAK_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

/// The largest draw list and the largest single frame-arena request of the run. Frame 2 uses
/// both; every later frame stays at or under half of that frame's bytes, so an arena that serves
/// frame 2 must serve every later frame from the memory it already holds.
const MAX_DRAWS: usize = if cfg!(miri) { 64 } else { 6_000 };
const BIG_REQUEST: usize = if cfg!(miri) { 2_048 } else { 200 * 1024 };
const FRAME_PAGE: usize = if cfg!(miri) { 1_024 } else { 64 * 1024 };

const LEVEL_PAGE: usize = if cfg!(miri) { 1_024 } else { 16 * 1024 };
const LEVEL_LIMIT: usize = if cfg!(miri) { 16 * 1024 } else { 1 << 20 };
/// The busiest level-arena frame: a quarter of the limit.
const LEVEL_PEAK: usize = LEVEL_LIMIT / 4;

const POOL_CAPACITY: usize = if cfg!(miri) { 16 } else { 1_024 };
const PARTICLES_MAX: usize = if cfg!(miri) { 32 } else { 4_096 };
const HEAP_BYTES: usize = if cfg!(miri) { 64 * 1024 } else { 1 << 20 };

/// Memory each allocator holds from the system (or, for fixed-size ones, its capacity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reserved {
    frame_buffers: [usize; 3],
    level: usize,
    scratch: usize,
    pool: usize,
    soa_vec: usize,
    soa_pool: usize,
    heap: usize,
}

impl Reserved {
    fn fields(&self) -> [(&'static str, usize); 9] {
        [
            ("frame buffer 0", self.frame_buffers[0]),
            ("frame buffer 1", self.frame_buffers[1]),
            ("frame buffer 2", self.frame_buffers[2]),
            ("level arena", self.level),
            ("scratch arena", self.scratch),
            ("pool", self.pool),
            ("SoaVec", self.soa_vec),
            ("SoaPool", self.soa_pool),
            ("heap", self.heap),
        ]
    }
}

/// Everything the loop owns, with the models the allocators are compared against.
struct Game {
    rng: Rng,
    frames: FrameArena<3>,
    level: Arena,
    enemies: Pool<Enemy>,
    enemy_model: HashMap<Handle<Enemy>, u64>,
    /// Handles that were removed: every lookup of them must miss.
    stale_enemies: Vec<Handle<Enemy>>,
    next_enemy: u64,
    /// A pool no handle of which may ever be accepted by `enemies`.
    other_pool: Pool<Enemy>,
    particles: SoaVec<Particle>,
    particle_model: Vec<Particle>,
    sparks: SoaPool<Particle>,
    spark_model: HashMap<Handle<Particle>, Particle>,
    heap: FreeListHeap<'static>,
    /// Live heap blocks: pointer, size, fill byte.
    heap_blocks: Vec<(std::ptr::NonNull<u8>, usize, u8)>,
    typed_errors: usize,
}

impl Game {
    fn new() -> Game {
        let mut other_pool = Pool::with_capacity(4);
        other_pool.insert(Enemy::new(u64::MAX));
        Game {
            rng: Rng(0x0005_eed0_fa11),
            frames: FrameArena::chained(FRAME_PAGE),
            level: Arena::chained(LEVEL_PAGE).with_limit(LEVEL_LIMIT),
            enemies: Pool::with_capacity(POOL_CAPACITY),
            enemy_model: HashMap::new(),
            stale_enemies: Vec::new(),
            next_enemy: 0,
            other_pool,
            particles: SoaVec::new(),
            particle_model: Vec::new(),
            sparks: SoaPool::with_capacity(PARTICLES_MAX / 4),
            spark_model: HashMap::new(),
            heap: FreeListHeap::with_capacity(HEAP_BYTES),
            heap_blocks: Vec::new(),
            typed_errors: 0,
        }
    }

    fn reserved(&self) -> Reserved {
        Reserved {
            frame_buffers: [0, 1, 2].map(|i| self.frames.buffer(i).system_bytes()),
            level: self.level.system_bytes(),
            scratch: scratch(|a| a.system_bytes()),
            pool: self.enemies.capacity(),
            soa_vec: self.particles.capacity(),
            soa_pool: self.sparks.capacity(),
            heap: self.heap.capacity(),
        }
    }

    /// Builds this frame's draw list in the frame arena and sends it to the render thread.
    fn build_draw_list(
        &mut self,
        peak: bool,
        to_render: &mpsc::Sender<FrameReader<[DrawCommand]>>,
    ) {
        let draws = if peak {
            MAX_DRAWS
        } else {
            self.rng.range(0, MAX_DRAWS / 2)
        };
        let big = peak || self.rng.chance(50);
        let values = self.rng.range(0, 8);
        let frame = self.frames.begin_frame();
        let number = frame.number();
        let commands = frame.arena().alloc_slice_fill_with(draws, |i| {
            let mesh = (i % 61) as u32;
            DrawCommand {
                frame: number,
                index: i as u32,
                mesh,
                checksum: checksum(number, i as u32, mesh),
            }
        });
        for n in 0..values {
            frame.arena().alloc(FrameValue::new(n as u64));
        }
        if big {
            // a request larger than a page: its page must be reusable by later frames
            let size = if peak { BIG_REQUEST } else { BIG_REQUEST / 4 };
            let blob = frame.arena().alloc_slice_fill_with(size, |i| i as u8);
            assert_eq!(blob[size - 1], (size - 1) as u8);
        }
        to_render
            .send(frame.publish(&*commands).expect("data of this frame"))
            .expect("render thread alive");
    }

    /// Per-frame gameplay temporaries in a scope of the level arena, plus requests past its limit.
    fn level_frame(&mut self, peak: bool) {
        let before = self.level.used();
        let target = if peak {
            LEVEL_PEAK
        } else {
            self.rng.range(0, LEVEL_PEAK / 2)
        };
        let sizes: Vec<usize> = {
            let mut sizes = Vec::new();
            let mut total = 0;
            while total < target {
                let s = self.rng.range(1, 4096);
                total += s;
                sizes.push(s);
            }
            sizes
        };
        let past_limit = self.rng.chance(20);
        let panic_at = self.rng.chance(10).then(|| self.rng.range(0, 15));
        {
            let scope = self.level.scope();
            let mut blocks = Vec::new();
            for (i, &s) in sizes.iter().enumerate() {
                let block = scope.alloc_slice_fill_with(s, |j| (i + j) as u8);
                blocks.push(block);
            }
            for (i, block) in blocks.iter().enumerate() {
                assert!(
                    block.iter().enumerate().all(|(j, &b)| b == (i + j) as u8),
                    "level arena block {i} overwritten"
                );
            }
            if past_limit {
                match scope.try_alloc_layout(Layout::from_size_align(LEVEL_LIMIT, 8).unwrap()) {
                    Err(ArenaError::LimitReached { .. }) => self.typed_errors += 1,
                    other => panic!("a request past the limit gave {other:?}"),
                }
            }
            if let Some(k) = panic_at {
                // a constructor that panics midway through a fill: the values made so far drop
                // once, the arena stays usable
                let r = catch_unwind(AssertUnwindSafe(|| {
                    scope
                        .alloc_slice_fill_with(16, |i| {
                            assert!(i != k, "{INJECTED}: constructor {i} fails");
                            FrameValue::new(i as u64)
                        })
                        .len()
                }));
                assert_eq!(r.is_err(), k < 16);
            }
        }
        assert_eq!(
            self.level.used(),
            before,
            "a scope must give back what it took"
        );
    }

    /// Pathfinding-style temporaries on this thread's scratch arena, nested.
    fn scratch_frame(&mut self) {
        let n = self.rng.range(1, 512);
        let total = scratch(|outer| {
            let a = outer.alloc_slice_fill_with(n, |i| i as u32);
            let inner_sum = scratch(|inner| {
                assert!(
                    !std::ptr::eq(inner, outer),
                    "nested scratch got the same arena"
                );
                let b = inner.alloc_slice_fill_with(n, |i| (i as u32) * 2);
                b.iter().map(|&x| u64::from(x)).sum::<u64>()
            });
            a.iter().map(|&x| u64::from(x)).sum::<u64>() * 2 == inner_sum
        });
        assert!(total, "scratch arenas overlapped");
    }

    /// Spawns and kills enemies, with a full pool, stale and foreign handles.
    fn enemy_frame(&mut self) {
        for _ in 0..self.rng.range(0, 24) {
            let id = self.next_enemy;
            self.next_enemy += 1;
            match self.enemies.try_insert(Enemy::new(id)) {
                Ok(h) => {
                    self.enemy_model.insert(h, id);
                }
                Err(full) => {
                    assert_eq!(self.enemy_model.len(), POOL_CAPACITY);
                    assert_eq!(full.into_inner().id, id, "a full pool hands the value back");
                    self.typed_errors += 1;
                }
            }
        }
        let kills = self.rng.range(0, 24).min(self.enemy_model.len());
        let victims: Vec<Handle<Enemy>> = self.enemy_model.keys().copied().take(kills).collect();
        for h in victims {
            let id = self.enemy_model.remove(&h).unwrap();
            let enemy = self.enemies.remove(h).expect("live handle");
            assert_eq!(enemy.id, id);
            assert!(
                self.enemies.remove(h).is_none(),
                "second remove of one handle"
            );
            self.stale_enemies.push(h);
        }
        if self.stale_enemies.len() > 256 {
            self.stale_enemies.drain(..128);
        }
        for h in &self.stale_enemies {
            assert!(self.enemies.get(*h).is_none(), "stale handle resolved");
        }
        // a handle of another pool must never resolve to one of ours (a panic in debug builds,
        // where the pool tag is checked, is also a refusal)
        // (checked now and then: debug builds panic with a message each time)
        if self.rng.chance(400) {
            let foreign = self.other_pool.iter().next().map(|(h, _)| h).unwrap();
            let got = catch_unwind(AssertUnwindSafe(|| self.enemies.get(foreign).map(|e| e.id)));
            if let Ok(Some(id)) = got {
                assert_eq!(
                    self.enemy_model.get(&foreign),
                    Some(&id),
                    "foreign handle resolved"
                );
            }
        }
        for (h, e) in self.enemies.iter_mut() {
            assert_eq!(self.enemy_model.get(&h), Some(&e.id));
            e.hp -= 1;
        }
        assert_eq!(self.enemies.len(), self.enemy_model.len());
    }

    /// Particles: spawn, step, and remove the dead, in a `SoaVec` and a `SoaPool`.
    fn particle_frame(&mut self, peak: bool) {
        let spawn = if peak {
            PARTICLES_MAX - self.particle_model.len()
        } else {
            self.rng
                .range(0, 64)
                .min(PARTICLES_MAX - self.particle_model.len())
        };
        for _ in 0..spawn {
            let p = Particle::spawn(self.rng.next());
            self.particles.push(p);
            self.particle_model.push(p);
        }
        let dt = 0.25;
        for p in self.particles.iter_mut() {
            *p.x += *p.vx * dt;
            *p.y += *p.vy * dt;
            *p.z += *p.vz * dt;
            *p.life -= dt;
        }
        self.particle_model.iter_mut().for_each(|p| p.step(dt));
        let mut i = 0;
        while i < self.particle_model.len() {
            if self.particle_model[i].life <= 0.0 {
                let gone = self.particles.swap_remove(i);
                assert_eq!(gone, self.particle_model.swap_remove(i));
            } else {
                i += 1;
            }
        }
        assert_eq!(self.particles.len(), self.particle_model.len());
        if self.rng.chance(16) {
            assert!(
                self.particles
                    .iter()
                    .zip(&self.particle_model)
                    .all(|(a, b)| owned(a) == *b),
                "SoaVec rows differ from the model"
            );
        }

        for _ in 0..self.rng.range(0, 16) {
            let p = Particle::spawn(self.rng.next());
            match self.sparks.try_insert(p) {
                Ok(h) => {
                    self.spark_model.insert(h, p);
                }
                Err(full) => {
                    assert_eq!(full.into_inner(), p);
                    self.typed_errors += 1;
                }
            }
        }
        let kills = self.rng.range(0, 16).min(self.spark_model.len());
        let victims: Vec<Handle<Particle>> = self.spark_model.keys().copied().take(kills).collect();
        for h in victims {
            let p = self.spark_model.remove(&h).unwrap();
            assert_eq!(self.sparks.remove(h), Some(p));
            assert!(self.sparks.get(h).is_none(), "stale spark handle resolved");
        }
        for (h, p) in self.sparks.iter() {
            assert_eq!(self.spark_model.get(&h), Some(&owned(p)));
        }
    }

    /// Asset blocks of many sizes in the free-list heap, freed in any order, with bad frees.
    fn heap_frame(&mut self) {
        for _ in 0..self.rng.range(0, 6) {
            let size = self.rng.range(16, 4096);
            let align = 1 << self.rng.range(3, 6);
            let fill = self.rng.next() as u8;
            match self
                .heap
                .try_alloc(Layout::from_size_align(size, align).unwrap())
            {
                Ok(p) => {
                    assert_eq!(p.as_ptr() as usize % align, 0, "misaligned heap block");
                    fill_block(p, size, fill);
                    self.heap_blocks.push((p, size, fill));
                }
                Err(RequestError::OutOfMemory { .. }) => self.typed_errors += 1,
                Err(e) => panic!("heap alloc of {size} B: {e}"),
            }
        }
        let frees = self.rng.range(0, 6).min(self.heap_blocks.len());
        for _ in 0..frees {
            let i = self.rng.range(0, self.heap_blocks.len() - 1);
            let (p, size, fill) = self.heap_blocks.swap_remove(i);
            assert!(
                block_is(p, size, fill),
                "heap block of {size} B overwritten"
            );
            if size > 1 && self.rng.chance(8) {
                let interior = unsafe_free_offset(p, 1);
                assert!(self.heap.free(interior).is_err(), "interior pointer freed");
                self.typed_errors += 1;
            }
            self.heap.free(p).expect("live block");
            if self.rng.chance(8) {
                assert!(self.heap.free(p).is_err(), "double free accepted");
                self.typed_errors += 1;
            }
        }
        if self.rng.chance(64) {
            let huge = Layout::from_size_align(HEAP_BYTES * 2, 8).unwrap();
            assert!(
                self.heap.try_alloc(huge).is_err(),
                "a block larger than the heap"
            );
            self.typed_errors += 1;
        }
        if self.rng.chance(32) {
            self.heap.check().expect("heap consistent");
        }
    }
}

fn fill_block(p: std::ptr::NonNull<u8>, size: usize, fill: u8) {
    block_slice(p, size).fill(fill);
}

fn block_is(p: std::ptr::NonNull<u8>, size: usize, fill: u8) -> bool {
    block_slice(p, size).iter().all(|&b| b == fill)
}

/// The bytes of a live heap block this test owns.
#[allow(unsafe_code)]
fn block_slice<'a>(p: std::ptr::NonNull<u8>, size: usize) -> &'a mut [u8] {
    // SAFETY: `p` is a live block of at least `size` bytes handed out by the heap, used by one
    // caller at a time and not freed while the slice lives (callers drop it immediately).
    unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), size) }
}

/// A pointer `offset` bytes into a block (only ever passed to `free`, never dereferenced).
fn unsafe_free_offset(p: std::ptr::NonNull<u8>, offset: usize) -> std::ptr::NonNull<u8> {
    std::ptr::NonNull::new(p.as_ptr().wrapping_add(offset)).unwrap()
}

#[test]
fn a_steady_game_loop_stays_correct_and_does_not_grow() {
    quiet_injected_panics();
    let frames = frame_count();
    let (to_render, render_rx) = mpsc::channel::<FrameReader<[DrawCommand]>>();
    let render = thread::spawn(move || {
        let mut frames_seen = 0u64;
        let mut last = None;
        for list in render_rx {
            for (i, c) in list.iter().enumerate() {
                assert_eq!(c.frame, list.frame(), "command of another frame");
                assert_eq!(c.index as usize, i, "commands out of order");
                assert_eq!(
                    c.checksum,
                    checksum(c.frame, c.index, c.mesh),
                    "command corrupted"
                );
            }
            if let Some(prev) = last {
                assert!(list.frame() > prev, "frames out of order");
            }
            last = Some(list.frame());
            frames_seen += 1;
            // hold the reader a little, so the writer sometimes waits for the buffer
            if frames_seen.is_multiple_of(97) {
                thread::yield_now();
            }
        }
        frames_seen
    });

    let mut game = Game::new();
    let mut after_first_tenth = None;
    for n in 0..frames {
        // The first frames are the busiest of the run, one for each frame buffer, so that every
        // allocator, each buffer included, has met its peak before the first tenth is measured
        // (with one peak frame, a buffer that had only seen a quiet frame could still grow
        // later: under Miri's 12 frames, the first tenth is 3 frames).
        let peak = n < game.frames.buffer_count();
        game.build_draw_list(peak, &to_render);
        game.level_frame(peak);
        game.scratch_frame();
        game.enemy_frame();
        game.particle_frame(peak);
        game.heap_frame();
        if n + 1 == (frames / 10).max(3) {
            after_first_tenth = Some(game.reserved());
        }
    }
    drop(to_render);
    assert_eq!(render.join().expect("render thread"), frames as u64);

    let start = after_first_tenth.expect("run has a first tenth");
    let end = game.reserved();
    let grown: Vec<String> = start
        .fields()
        .iter()
        .zip(end.fields())
        .filter(|((_, a), (_, b))| b > a)
        .map(|((name, a), (_, b))| format!("{name}: {a} -> {b} bytes"))
        .collect();
    assert!(
        grown.is_empty(),
        "reserved memory grew after the first tenth of {frames} frames: {}",
        grown.join(", ")
    );
    assert!(game.typed_errors > 0, "no fault was injected");

    for (p, size, fill) in std::mem::take(&mut game.heap_blocks) {
        assert!(block_is(p, size, fill));
        game.heap.free(p).expect("live block");
    }
    game.heap.check().expect("heap consistent at the end");
    drop(game);
    assert_eq!(
        ENEMIES_LIVE.load(Ordering::Relaxed),
        0,
        "an enemy was leaked or dropped twice"
    );
    assert_eq!(
        FRAME_VALUES_LIVE.load(Ordering::Relaxed),
        0,
        "a frame value was leaked or dropped twice"
    );
}
