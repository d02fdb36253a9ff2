// A `SoaVec` of rows that borrow (`Named<'n>`) iterates in parallel like one of `'static` rows:
// the `for<'x> T::Ref<'x>: Send` bounds of `SoaVec::par_iter`/`par_iter_mut` must not demand
// `T: 'static`, so this compiles.
use arena_kit::prelude::*;
use rayon::prelude::*;

#[derive(Soa)]
pub struct Named<'n> {
    pub name: &'n str,
    pub score: u32,
}

fn main() {
    let text = String::from("abcdef");
    let mut v: SoaVec<Named<'_>> = (0..6)
        .map(|k| Named { name: &text[k..], score: k as u32 })
        .collect();
    v.par_iter_mut().for_each(|r| *r.score += r.name.len() as u32);
    let total: u32 = v.par_iter().map(|r| *r.score).sum();
    assert_eq!(total, 36);
}
