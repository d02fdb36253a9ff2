#!/usr/bin/env bash
# Wall-clock ratios ours / best peer for every job of benches/callgrind.rs, from two links of the
# same driver: as rustc and the linker lay it out, and with every function in the opposite order
# (lld's --symbol-ordering-file, through benches/build.rs), so a ratio that only reflects code
# placement shows up as a difference between the two tables. Each table: per contestant the
# median ns per operation over ROUNDS interleaved rounds (each round builds every contestant's
# state afresh, in reverse order every other round, and runs every contestant once, in reverse
# order every other pair of rounds), the median of the per-round ratios ours / best peer and
# the 5th-95th percentile of those ratios (the interval 90% of the rounds fall in). See
# BENCHMARKS.md, "Instruction counts: ours / best peer".
#
#   scripts/wall-ratios.sh [ROUNDS] [JOB...]     (ROUNDS defaults to 15)
#
# On x86-64 both links are built with `-C llvm-args=-x86-branches-within-32B-boundaries`, which
# pads code so that no jump crosses or ends on a 32-byte boundary. Intel cores from Skylake to
# Cascade Lake run a loop whose jump does so from the legacy decoders instead of the micro-op
# cache (the microcode fix for the "JCC erratum"): on 2026-12-04 the same 13-instruction `bump-8`
# loop took 1.18 ns per allocation for `ours` and 0.90 for `ours-chained`, whose loop sat 16 bytes
# further on, and every peer's loop is exposed to it alike. (The virtual machine only says "Intel
# Xeon Processor"; on 2026-12-06 its /proc/cpuinfo flags listed AVX-512 FP16 and AMX, a Sapphire
# Rapids-class core, which the erratum does not concern. The padding stays, so that every run is
# built alike.) Padding takes that accident out of every contestant's figure. It changes
# the code, so it has a target directory of its own (`$CARGO_TARGET_DIR/wall-padded`) and the
# instruction counts (`scripts/callgrind-ratios.sh`) are of the unpadded build.
# ARENA_KIT_WALL_PAD=0 measures the unpadded build instead.
#
# Each link then runs twice, with its data placed two ways: as glibc places it (every block of
# 128 KiB or more mapped on pages of its own, so an arena or region starts 16 bytes past a page
# boundary) and with GLIBC_TUNABLES=glibc.malloc.mmap_threshold raised past the largest block,
# so that blocks come from the heap's top at other offsets. Data placement alone moves these
# loops of a few nanoseconds: on 2026-12-04 `ours` and `ours-chained`, the same instructions,
# took 0.90 and 1.20 ns per `bump-8` allocation with the second placement and 0.90 and 0.89
# with the first, run after run and in both code layouts (cycling the stack's depth over the
# rounds changed nothing, so it is not the stack). A ratio is only as good as its agreement
# across the four tables (two code layouts, two data placements).
#
# Needs the default linker of x86_64-unknown-linux-gnu since Rust 1.90 (rust-lld).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-15}
shift || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
heap_placed="glibc.malloc.mmap_threshold=1073741824"
padding="unpadded"
if [ "${ARENA_KIT_WALL_PAD:-1}" != 0 ] && [ "$(uname -m)" = x86_64 ]; then
  export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C llvm-args=-x86-branches-within-32B-boundaries"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/wall-padded"
  padding="jumps kept off 32-byte boundaries"
fi

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

echo "wall clock, $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD), $padding, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for binary in forward reversed; do
  echo
  echo "data placed by the default allocator (blocks of 128 KiB and more mapped on their own):"
  "$tmp/$binary" wall --rounds "$rounds" "$@"
  echo
  echo "data placed from the heap's top (GLIBC_TUNABLES=$heap_placed):"
  GLIBC_TUNABLES=$heap_placed "$tmp/$binary" wall --rounds "$rounds" "$@"
done
