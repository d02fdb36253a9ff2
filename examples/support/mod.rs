//! What the examples share: where the files they write go.
//!
//! Every file an example writes (the tour's pictures, `memory_report`'s chart, `level_heap`'s
//! memory map) goes through [`write_output`]: into `$CARGO_TARGET_DIR` when it is set, else
//! this workspace's `target/`, in a folder `arena-kit-examples/`, whatever directory the
//! example runs from. `scripts/render-pictures.sh` reads them from there.
#![allow(dead_code)]

use std::path::PathBuf;

/// The folder the examples write into: `$CARGO_TARGET_DIR/arena-kit-examples`, else
/// `<workspace>/target/arena-kit-examples`.
pub fn output_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("arena-kit-examples")
}

/// Writes `contents` to `name` in [`output_dir`]; returns the line to print, naming the file
/// written or saying why it could not be.
pub fn write_output(name: &str, contents: &str) -> String {
    let dir = output_dir();
    let path = dir.join(name);
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, contents)) {
        Ok(()) => format!("wrote {}", path.display()),
        Err(e) => format!("could not write {}: {e}", path.display()),
    }
}
