// A side table's exclusive views are invariant in the value type, as the pool's are
// (`variance-pool-exclusive-iterators.rs`): through a `&'a str` table seen as a `&'short str`
// one, a short borrow could be stored in a table that outlives it. Each function below must
// fail to compile.
use arena_kit::pool::{secondary, sparse_secondary};

fn iter_mut<'p, 'a: 'b, 'b>(
    x: secondary::IterMut<'p, (), &'a str>,
) -> secondary::IterMut<'p, (), &'b str> {
    x
}
fn values_mut<'p, 'a: 'b, 'b>(
    x: secondary::ValuesMut<'p, (), &'a str>,
) -> secondary::ValuesMut<'p, (), &'b str> {
    x
}
fn drain<'p, 'a: 'b, 'b>(
    x: secondary::Drain<'p, (), &'a str>,
) -> secondary::Drain<'p, (), &'b str> {
    x
}
fn entry<'p, 'a: 'b, 'b>(
    x: secondary::Entry<'p, (), &'a str>,
) -> secondary::Entry<'p, (), &'b str> {
    x
}
fn vacant<'p, 'a: 'b, 'b>(
    x: secondary::VacantEntry<'p, (), &'a str>,
) -> secondary::VacantEntry<'p, (), &'b str> {
    x
}
fn sparse_values_mut<'p, 'a: 'b, 'b>(
    x: sparse_secondary::ValuesMut<'p, (), &'a str>,
) -> sparse_secondary::ValuesMut<'p, (), &'b str> {
    x
}
fn sparse_entry<'p, 'a: 'b, 'b>(
    x: sparse_secondary::Entry<'p, (), &'a str>,
) -> sparse_secondary::Entry<'p, (), &'b str> {
    x
}
fn pool_values_mut<'p, 'a: 'b, 'b>(
    x: arena_kit::pool::ValuesMut<'p, &'a str>,
) -> arena_kit::pool::ValuesMut<'p, &'b str> {
    x
}

fn main() {}
