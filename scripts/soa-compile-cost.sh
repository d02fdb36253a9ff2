#!/usr/bin/env bash
# What #[derive(Soa)] costs the compiler, against soa-rs 1.0 and soa_derive 0.14:
#  1. expansion size: lines of `-Zunpretty=expanded` output (formatted with rustfmt) that the derive
#     adds for a 7-field Particle, over the same crate without a derive;
#  2. `cargo check` time of a crate with 50 derived 7-field structs (warm: dependencies built, the
#     crate's own source touched), three runs each.
# Generates throwaway crates under target/soa-compile-cost/. Needs the nightly toolchain for (1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/soa-compile-cost"
structs=${STRUCTS:-50}
mkdir -p "$out"
export CARGO_TARGET_DIR="$out/target"

gen() { # name, dependency line, use line, derive attribute, count
    local dir="$out/$1"
    mkdir -p "$dir/src"
    cat > "$dir/Cargo.toml" <<TOML
[package]
name = "soa-cost-$1"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
$2
[workspace]
TOML
    {
        echo "#![allow(dead_code)]"
        echo "$3"
        for i in $(seq 1 "$5"); do
            echo "$4"
            echo "pub struct Particle$i { pub x: f32, pub y: f32, pub z: f32, pub vx: f32, pub vy: f32, pub vz: f32, pub life: f32 }"
        done
    } > "$dir/src/lib.rs"
}

ours="arena-kit = { path = \"$root\" }"
soars='soa-rs = "1.0.1"'
soaderive='soa_derive = "0.14.0"'
variants=(plain ours soars soaderive)
dep() { case $1 in plain) echo "";; ours) echo "$ours";; soars) echo "$soars";; soaderive) echo "$soaderive";; esac; }
use() { case $1 in plain) echo "";; ours) echo "use arena_kit::Soa;";; soars) echo "use soa_rs::Soars;";; soaderive) echo "use soa_derive::StructOfArray;";; esac; }
attr() { case $1 in plain) echo "";; ours) echo "#[derive(Soa)]";; soars) echo "#[derive(Soars)]";; soaderive) echo "#[derive(StructOfArray)]";; esac; }

echo "== expansion of one 7-field struct (rustfmt-formatted lines) =="
for v in "${variants[@]}"; do
    gen "one-$v" "$(dep "$v")" "$(use "$v")" "$(attr "$v")" 1
    lines=$(cd "$out/one-$v" && cargo +nightly rustc -q --offline -- -Zunpretty=expanded 2>/dev/null \
        | rustfmt --edition 2024 2>/dev/null | grep -cv '^\s*$' || true)
    echo "$v: $lines"
done

echo "== cargo check of $structs derived structs (ms, warm) =="
for v in "${variants[@]}"; do
    gen "many-$v" "$(dep "$v")" "$(use "$v")" "$(attr "$v")" "$structs"
    (cd "$out/many-$v" && cargo check -q --offline >/dev/null 2>&1)
    times=()
    for _ in 1 2 3; do
        touch "$out/many-$v/src/lib.rs"
        start=$(date +%s%N)
        (cd "$out/many-$v" && cargo check -q --offline >/dev/null 2>&1)
        times+=($(( ($(date +%s%N) - start) / 1000000 )))
    done
    echo "$v: ${times[*]}"
done
