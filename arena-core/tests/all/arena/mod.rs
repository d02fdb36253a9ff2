//! The arena: bump allocation, pages and limits, markers and scopes, drops, frames, workers.
mod allocator_provenance;
mod budget;
mod cursor_usage;
mod drops;
mod frames;
mod hostile_inputs;
mod model;
mod pages;
mod panic_safety;
mod reentrancy;
mod review_findings;
mod rewind_accounting;
mod safe_code_attacks;
mod steady_growth;
mod worked_examples;
mod workers;
