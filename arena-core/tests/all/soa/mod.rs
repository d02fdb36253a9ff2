//! SoA containers: `SoaVec`, `SoaPool`, SoA slices from an arena, panics in user conversions.
mod arena;
mod attacks;
mod budget;
mod changes;
mod derive_attacks;
mod indirect;
mod indirect_attacks;
mod panic_safety;
mod pool;
mod pool_invariant_attacks;
mod pool_model;
mod pool_parity;
mod pool_serde;
mod tiles;
mod tiles_attacks;
mod tracked_attacks;
mod vec;
mod vec_parity;
mod view_attacks;

/// What an arena holds: bytes used, live allocations and pending drop records.
fn arena_footprint(arena: &arena_kit_core::arena::Arena) -> (usize, usize, usize) {
    (
        arena.used(),
        arena.allocation_count(),
        arena.pending_drops(),
    )
}
