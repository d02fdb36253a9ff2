// A `FreeListHeap` borrows the buffer it manages: it cannot outlive it.
use arena_kit::prelude::*;
use core::mem::MaybeUninit;

fn main() {
    let heap;
    {
        let mut buf = [MaybeUninit::<u8>::uninit(); 1024];
        heap = FreeListHeap::from_buffer(&mut buf);
    }
    println!("{}", heap);
}
