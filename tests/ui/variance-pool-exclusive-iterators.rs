// The pool's exclusive iterators are invariant in the value type. `IterMut` must be: a
// `&'static str` slot seen as a `&'short str` one could be given a short borrow the pool keeps.
// `Drain` is, because it holds the `&mut Pool<T>`. Each function below must fail to compile.
use arena_kit::pool::{Drain, IterMut};

fn iter_mut<'p, 'a: 'b, 'b>(x: IterMut<'p, &'a str>) -> IterMut<'p, &'b str> {
    x
}
fn drain<'p, 'a: 'b, 'b>(x: Drain<'p, &'a str>) -> Drain<'p, &'b str> {
    x
}

fn main() {}
