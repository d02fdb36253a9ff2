#!/usr/bin/env bash
# Measures what #[derive(Layout)] and its assertions cost `cargo check` on a 300-field struct.
# Generates three throwaway crates under target/compile-cost/ that depend on this checkout:
#   plain:   300-field struct, no derive
#   derive:  the same with #[derive(Layout)]
#   asserts: the same with #[derive(Layout)] and every passing assertion
#   failing: the same with a failing size assertion (the message path), expected to fail
# and prints the wall time of a warm `cargo check` of each (dependencies built first).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/compile-cost"
fields=${FIELDS:-300}
mkdir -p "$out"

gen() { # name, attributes
    local dir="$out/$1"
    mkdir -p "$dir/src"
    cat > "$dir/Cargo.toml" <<TOML
[package]
name = "cost-$1"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
arena-kit = { path = "$root" }
[workspace]
TOML
    {
        echo "#![allow(dead_code)]"
        echo "use arena_kit::Layout;"
        echo "$2"
        echo "#[repr(C)]"
        echo "pub struct Big {"
        for i in $(seq 1 "$fields"); do
            case $((i % 4)) in
                0) echo "    f$i: u8,";; 1) echo "    f$i: u64,";; 2) echo "    f$i: u16,";; 3) echo "    f$i: u32,";;
            esac
        done
        echo "}"
    } > "$dir/src/lib.rs"
}

gen plain ""
gen derive "#[derive(Layout)]"
gen asserts "#[derive(Layout)] #[layout(max_size = 100000, align = 8, max_padding = 100000)]"
gen failing "#[derive(Layout)] #[layout(size = 8)]"

for c in plain derive asserts failing; do
    (cd "$out/$c" && cargo check -q >/dev/null 2>&1 || true)  # build dependencies once
    touch "$out/$c/src/lib.rs"
    start=$(date +%s%N)
    (cd "$out/$c" && cargo check -q >/dev/null 2>&1) && status=ok || status=failed
    end=$(date +%s%N)
    printf '%-8s %4d fields  cargo check %6.0f ms  (%s)\n' "$c" "$fields" "$(( (end - start) / 1000000 ))" "$status"
done
