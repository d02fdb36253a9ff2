// The `&Arena` a `scratch` closure gets lives only for the call: it cannot be kept in a cell
// outside it (to allocate from after the arena was reset, or from a later, nested call).
use std::cell::Cell;

use arena_kit::{Arena, scratch};

fn main() {
    let kept: Cell<Option<&Arena>> = Cell::new(None);
    scratch(|a| kept.set(Some(a)));
    if let Some(a) = kept.get() {
        a.alloc(1u32);
    }
}
