//! Pools and generational handles: behaviour, a model, foreign and stale handles, panics, serde.
mod behaviour;
mod budget;
mod foreign_and_stale_handles;
mod growth;
mod handle32;
mod issued_handles;
mod model;
mod panic_safety;
mod parity;
mod secondary;
mod secondary_attacks;
mod secondary_model;
mod secondary_panic_safety;
mod secondary_serde;
mod serde;
mod serde_validation;
mod slot_core;
