use std::cell::Cell;

use arena_kit::prelude::*;
use rayon::prelude::*;

#[derive(Soa)]
pub struct Counter {
    pub hits: Cell<u32>,
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Counter { hits: Cell::new(0) });
    // Shared views on several threads at once would race on a `Cell`: its column is not `Sync`.
    v.par_iter().for_each(|c| c.hits.set(c.hits.get() + 1));
}
