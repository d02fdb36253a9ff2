// Generic code over the handle type cannot make a handle up: the constructor the pool uses is
// reachable through the `PoolHandle` bound, but it needs a token only arena-kit can create. (A
// made-up generation could otherwise name a vacant slot.)
use arena_kit::pool::{Handle, PoolHandle};
use core::num::NonZeroU32;

fn forge<H: PoolHandle<u64>>() -> H {
    H::from_parts(0, NonZeroU32::new(2).unwrap())
}

// Nor can it name the token's type to make one.
fn forge_with_token<H: PoolHandle<u64>>(token: arena_kit::pool::key::Token) -> H {
    H::from_parts(0, NonZeroU32::new(2).unwrap(), token)
}

fn main() {
    let _: Handle<u64> = forge();
}
