//! The debug fill patterns shared by every allocator.
//!
//! Memory handed out fresh is filled with [`FRESH`], memory given back with [`FREED`], and guard
//! bytes around allocations hold [`GUARD`]. A value that reads as `0xDDDD_DDDD` in a debugger was
//! used after it was freed; a guard byte that is no longer `0xFE` was overwritten by an overrun.
//! The fills run when [`ENABLED`] is true: under `debug_assertions`, or with the `debug-checks`
//! feature in release builds.

/// Fills memory freed, rewound or reset, so reads after free show a recognisable pattern.
pub const FREED: u8 = 0xDD;
/// Fills memory just allocated and not yet written by the caller.
pub const FRESH: u8 = 0xCD;
/// Fills the guard bytes placed before and after an allocation to catch overruns.
pub const GUARD: u8 = 0xFE;
/// Whether the debug fills and guard checks run in this build.
pub const ENABLED: bool = cfg!(any(debug_assertions, feature = "debug-checks"));

/// The offset of the first byte of `bytes` that is not `expected`, if any.
pub fn first_mismatch(bytes: &[u8], expected: u8) -> Option<usize> {
    bytes.iter().position(|&b| b != expected)
}
