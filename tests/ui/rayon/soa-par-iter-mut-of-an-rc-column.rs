use std::rc::Rc;

use arena_kit::prelude::*;
use rayon::prelude::*;

#[derive(Soa)]
pub struct Shared {
    pub rc: Rc<u32>,
}

fn main() {
    let keep = Rc::new(0);
    let mut v = SoaVec::new();
    v.push(Shared { rc: Rc::clone(&keep) });
    // An `Rc` moved to another thread would race on its count: its column is not `Send`.
    v.par_iter_mut().for_each(|s| *s.rc = Rc::clone(&*s.rc));
}
