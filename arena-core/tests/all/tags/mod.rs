//! Memory tags: reports and budgets from real allocators, the thin `Tracked` wrapper, serde, the
//! allocation recorder.

mod attacks;
mod pictures;
mod recorder;
mod reports_and_budgets;
mod serde;
mod tracked_arena_fast_path;
mod tracked_deref;
mod tracked_forms;
