//! With `ARENA_KIT_SYMBOL_ORDER=FILE` set, the bench binaries are linked with lld's
//! `--symbol-ordering-file=FILE`, which places the listed functions in that order.
//! `scripts/wall-ratios.sh` uses it to link the callgrind driver a second time with all of its
//! code in the opposite order, so a wall-clock ratio can be checked against code placement.
//! Unset (the normal case), it does nothing.

fn main() {
    println!("cargo:rerun-if-env-changed=ARENA_KIT_SYMBOL_ORDER");
    if let Some(file) = std::env::var_os("ARENA_KIT_SYMBOL_ORDER") {
        let file = file
            .to_str()
            .expect("ARENA_KIT_SYMBOL_ORDER is a UTF-8 path");
        println!("cargo:rerun-if-changed={file}");
        println!("cargo:rustc-link-arg-benches=-Wl,--symbol-ordering-file={file}");
        println!("cargo:rustc-link-arg-benches=-Wl,--no-warn-symbol-ordering");
    }
}
