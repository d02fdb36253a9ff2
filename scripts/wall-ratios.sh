#!/usr/bin/env bash
# Wall-clock ratios ours / best peer for every job of benches/callgrind.rs, from two links of the
# same driver: as rustc and the linker lay it out, and with every function in the opposite order
# (lld's --symbol-ordering-file, through benches/build.rs), so a ratio that only reflects code
# placement shows up as a difference between the two tables. Each table: per contestant the
# median ns per operation over ROUNDS interleaved rounds (each round runs every contestant once,
# the order reversed every other round), the median of the per-round ratios ours / best peer and
# the 5th-95th percentile of those ratios (the interval 90% of the rounds fall in). See
# BENCHMARKS.md, "Instruction counts: ours / best peer".
#
#   scripts/wall-ratios.sh [ROUNDS] [JOB...]     (ROUNDS defaults to 15)
#
# Needs the default linker of x86_64-unknown-linux-gnu since Rust 1.90 (rust-lld).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-15}
shift || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build() {
  cargo bench -p arena-kit-benches --bench callgrind --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1
}
driver=$(build)
[ -x "$driver" ] || { echo "could not build the driver" >&2; exit 1; }
cp "$driver" "$tmp/forward"
# Every function of the first link, last one first.
nm -n --defined-only "$tmp/forward" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | tac >"$tmp/order"
driver=$(ARENA_KIT_SYMBOL_ORDER="$tmp/order" build)
cp "$driver" "$tmp/reversed"
first=$(nm -n "$tmp/forward" | awk '/counted_region/ { print $1 }')
second=$(nm -n "$tmp/reversed" | awk '/counted_region/ { print $1 }')
[ "$first" != "$second" ] || { echo "the second link did not move the code" >&2; exit 1; }

echo "wall clock, $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$tmp/forward" wall --rounds "$rounds" "$@"
echo
"$tmp/reversed" wall --rounds "$rounds" "$@"
