//! The facade's integration tests, in one binary: the derives as a user writes them, the worked
//! layout numbers, the serde and rayon features, the tour's one-screen stops, and a long game-loop soak
//! (`ARENA_KIT_SOAK_FRAMES=20000 cargo test --release --test all soak` for the long form). The
//! trybuild cases are `tests/ui.rs`, a binary of their own.

mod enum_layouts;
// Public, so the workspace's `missing_docs` lint checks what the derive generates for enums.
pub mod enum_table;
pub mod game_loop_soak;
mod layout_lines;
pub mod layout_snapshot;
pub mod layout_worked_examples;
// Public, so the workspace's `missing_docs` lint checks what the derive generates.
pub mod soa_derive;
pub mod soa_features;
mod tour;
