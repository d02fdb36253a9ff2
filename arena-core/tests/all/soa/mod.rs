//! SoA containers: `SoaVec`, `SoaPool`, SoA slices from an arena, panics in user conversions.
mod arena;
mod panic_safety;
mod pool;
mod vec;
