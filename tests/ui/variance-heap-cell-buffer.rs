// `HeapCell<'buf>` is invariant in `'buf` (its heap sits in a `RefCell`): a heap cell is used
// through shared references as an allocator, so its buffer lifetime is fixed where it is made.
use arena_kit::heap::HeapCell;

fn shorten<'a: 'b, 'b>(x: HeapCell<'a>) -> HeapCell<'b> {
    x
}

fn main() {}
