use arena_kit::soa::ToValue;
use arena_kit::{SoaPool, SoaTiles, SoaVec};

mod unique {
    use arena_kit::Soa;

    /// Owns one heap block, freed by `release`: not `Clone`, so never two owners.
    #[derive(Soa)]
    #[soa(tiled)]
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

fn main() {
    // Containers of a row that is not `Clone` are not `Clone`, and no view makes a second row:
    // either would release the same block twice.
    let v: SoaVec<unique::Block> = [unique::Block::new()].into();
    let copy = v.clone();
    let mut more = SoaVec::new();
    more.extend_from_slice(v.as_soa_slice());
    let again = v.get(0).unwrap().to_value();
    let tiles: SoaTiles<unique::Block, 4> = SoaTiles::new();
    let _ = tiles.clone();
    let pool: SoaPool<unique::Block> = SoaPool::with_capacity(1);
    let _ = pool.clone();
    for b in v.into_iter().chain(copy).chain(more).chain([again]) {
        b.release();
    }
}
