//! xorshift64 (13, 7, 17): cheap, deterministic random numbers for the benches' workloads.

/// xorshift64 (13, 7, 17): cheap and deterministic.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`, spread by a multiply so that a small seed does not start with
    /// small, correlated outputs.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next value.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in `0..n` (the modulo bias is far below anything measured here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
