#!/bin/sh
# Instructions per iteration of one criterion benchmark, counted by callgrind: repeatable where
# wall-clock timing on a loaded machine is not. See BENCHMARKS.md ("Instruction counts").
#
#   scripts/instructions-per-iteration.sh BENCH_BINARY FILTER TOGGLE
#
# BENCH_BINARY: the bench executable (`cargo bench -p arena-kit-benches --bench pool --no-run` prints its path)
# FILTER:       criterion's benchmark-name filter
# TOGGLE:       the function callgrind counts inside, e.g. 'criterion::bencher::Bencher*::iter*'
# The iteration count is the most frequent per-instruction execution count: every instruction of
# the loop body runs once per iteration. Needs valgrind and bc.
set -eu
out=$(mktemp)
HEAP_BENCH_SKIP_INTERLEAVED=1 HEAP_BENCH_SKIP_FRAGMENTATION=1 valgrind --tool=callgrind \
  --dump-instr=yes --compress-pos=no --compress-strings=no --callgrind-out-file="$out" \
  --toggle-collect="$3" "$1" --bench --profile-time 2 "$2" >/dev/null 2>&1
total=$(awk '/^(summary|totals):/ {print $2; exit}' "$out")
iters=$(awk '/^0x[0-9a-f]+ [0-9]+ [0-9]+$/ && $3 > 100000 {print $3}' "$out" \
  | sort | uniq -c | sort -rn | awk 'NR==1 {print $2}')
echo "$2: $total instructions / $iters iterations = $(echo "scale=1; $total / $iters" | bc)"
rm -f "$out"
