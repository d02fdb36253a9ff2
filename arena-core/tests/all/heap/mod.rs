//! The free-list heap: errors, huge requests, guards, the allocator interfaces, locking, the block walk.
mod alloc_api;
mod attacks;
mod boundary_tags;
mod budget;
mod cell_panic_budget;
mod cell_reentry;
mod errors;
mod guard_pointers;
mod guarded_attacks;
mod huge_requests;
mod locked_attacks;
mod locked_reentry;
mod locked_teardown;
mod memory_map_limits;
mod model;
mod review_findings;
mod validated_frees;
