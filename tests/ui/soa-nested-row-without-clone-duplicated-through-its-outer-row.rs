use arena_kit::{Soa, SoaVec};

mod unique {
    use arena_kit::Soa;

    /// Owns one heap block, freed by `release`: not `Clone`, so never two owners.
    #[derive(Soa)]
    pub struct Block {
        addr: usize,
    }

    impl Block {
        pub fn new() -> Block {
            Block { addr: Box::into_raw(Box::new(0u64)) as usize }
        }

        pub fn release(self) {
            // SAFETY: `addr` came from `Box::into_raw` in `new`, and a `Block` is never
            // duplicated, so this is its one release.
            drop(unsafe { Box::from_raw(self.addr as *mut u64) });
        }
    }
}

/// `Clone`, by making a new block rather than cloning the one it holds.
#[derive(Soa)]
struct Holder {
    #[soa(nested)]
    block: unique::Block,
}

impl Clone for Holder {
    fn clone(&self) -> Self {
        Holder { block: unique::Block::new() }
    }
}

fn main() {
    // Cloning the container clones the nested row's columns, not through `Holder::clone`: a
    // nested row that is not `Clone` must not be duplicated that way.
    let v: SoaVec<Holder> = [Holder { block: unique::Block::new() }].into();
    let copy = v.clone();
    for h in v.into_iter().chain(copy) {
        h.block.release();
    }
}
