// A pool or side table drops its values when it is dropped, so a value whose `Drop` reads a
// borrow keeps that borrow alive until then, as in a `Vec`. Each block below must fail to
// compile: the `String` is freed first, and the value's `Drop` would read it.
use arena_kit::pool::{Pool, SecondaryPool, SparseSecondaryPool};

struct Reads<'a>(&'a String);

impl Drop for Reads<'_> {
    fn drop(&mut self) {
        println!("{}", self.0);
    }
}

fn pool() {
    let mut pool = Pool::with_capacity(1);
    let text = String::from("freed");
    pool.insert(Reads(&text));
}

fn into_iter() {
    let mut pool = Pool::with_capacity(1);
    let _values;
    let text = String::from("freed");
    pool.insert(Reads(&text));
    _values = pool.into_iter();
}

fn dense_table() {
    let mut keys = Pool::with_capacity(1);
    let mut table = SecondaryPool::new();
    let text = String::from("freed");
    table.insert(keys.insert(()), Reads(&text));
}

fn sparse_table() {
    let mut keys = Pool::with_capacity(1);
    let mut table = SparseSecondaryPool::new();
    let text = String::from("freed");
    table.insert(keys.insert(()), Reads(&text));
}

fn main() {
    pool();
    into_iter();
    dense_table();
    sparse_table();
}
