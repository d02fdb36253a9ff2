use arena_kit::soa::ToValue;
use arena_kit::{SoaPool, SoaTiles, SoaVec};

mod ids {
    use arena_kit::Soa;
    use std::sync::atomic::{AtomicU32, Ordering};

    static NEXT: AtomicU32 = AtomicU32::new(0);

    /// A unique id: `Clone` gives the copy an id of its own, so no two `Unique`s share one (what
    /// `unsafe` code elsewhere in this module may rely on). Its fields are private and it has no
    /// `#[soa(plain)]`: cloning it field by field would share the id.
    #[derive(Soa)]
    #[soa(tiled)]
    pub struct Unique {
        id: u32,
    }

    impl Unique {
        pub fn new() -> Unique {
            Unique { id: NEXT.fetch_add(1, Ordering::Relaxed) }
        }
    }

    impl Clone for Unique {
        fn clone(&self) -> Self {
            Unique::new()
        }
    }
}

fn main() {
    // Every container clone, `extend_from_slice` and `to_value` build rows field by field,
    // skipping `Unique::clone`: refused for a row that is not plain.
    let v: SoaVec<ids::Unique> = [ids::Unique::new()].into();
    let _ = v.clone();
    let mut more = SoaVec::new();
    more.extend_from_slice(v.as_soa_slice());
    let _ = v.get(0).unwrap().to_value();
    let tiles: SoaTiles<ids::Unique, 4> = SoaTiles::new();
    let _ = tiles.clone();
    let pool: SoaPool<ids::Unique> = SoaPool::with_capacity(1);
    let _ = pool.clone();
}
