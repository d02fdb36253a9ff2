#!/usr/bin/env bash
# Instructions per operation, ours / best peer, for every job of the performance issue, counted
# by callgrind in benches/callgrind.rs (see BENCHMARKS.md, "Instruction counts: ours / best peer").
#
#   scripts/callgrind-ratios.sh [JOB_REGEX]
#
# Builds the driver once (release profile with debug info), then for each (job, contestant) runs
#   valgrind --tool=callgrind --toggle-collect='*counted_region*' <driver> JOB CONTESTANT
# one after the other (one valgrind at a time), so only the job's counted run is counted: no
# setup, no warm-up run. Prints a markdown table: instructions per operation for ours, every
# peer, contestants shown for reference ("other"), the best peer and ours / best peer.
#
# Environment:
#   CACHE_SIM=1               also simulate the caches and print D1 misses (reads + writes) per op
#   ARENA_KIT_CALLGRIND_1M=1  add the pool churn job with 1,000,000 live values (slow setup)
#   CARGO_TARGET_DIR          as for cargo
# Needs valgrind (Debian/Ubuntu: `apt-get install valgrind`) and awk.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-.}

driver=$(cargo bench -p arena-kit-benches --bench callgrind --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -x "$driver" ] || { echo "could not build the callgrind driver" >&2; exit 1; }

cachesim=()
if [ "${CACHE_SIM:-0}" = 1 ]; then cachesim=(--cache-sim=yes); fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# count JOB CONTESTANT: prints "Ir D1misses" for the counted region.
count() {
  valgrind --tool=callgrind "${cachesim[@]}" --toggle-collect='*counted_region*' \
    --callgrind-out-file="$out/cg" "$driver" "$1" "$2" >/dev/null 2>"$out/log" \
    || { cat "$out/log" >&2; exit 1; }
  awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
       /^(summary|totals):/ { d = 0; if ("D1mr" in col) d = $(col["D1mr"] + 1) + $(col["D1mw"] + 1);
                              print $2, d; exit }' "$out/cg"
}

echo "instructions per operation (callgrind, $(date -u +%Y-%m-%d), $(git rev-parse --short HEAD))"
if [ "${CACHE_SIM:-0}" = 1 ]; then echo "with D1 misses per operation in brackets"; fi
echo
echo "| job | ours | peers | other | best peer | ours / best peer |"
echo "| --- | ---: | --- | --- | --- | ---: |"
"$driver" list | grep -E "^($filter)" | while read -r job ops contestants; do
  ours="" peers="" others="" best="" bestv=""
  for rc in $contestants; do
    role=${rc%%=*} name=${rc#*=}
    read -r ir d1 < <(count "$job" "$name")
    per=$(awk -v a="$ir" -v b="$ops" 'BEGIN { printf "%.1f", a / b }')
    cell=$per
    if [ "${CACHE_SIM:-0}" = 1 ]; then
      cell="$per [$(awk -v a="$d1" -v b="$ops" 'BEGIN { printf "%.2f", a / b }')]"
    fi
    case $role in
      ours) ours=$cell oursv=$per ;;
      peer)
        peers="${peers:+$peers, }$name $cell"
        if [ -z "$bestv" ] || awk -v a="$per" -v b="$bestv" 'BEGIN { exit !(a < b) }'; then
          bestv=$per best=$name
        fi ;;
      other) others="${others:+$others, }$name $cell" ;;
    esac
  done
  ratio=$(awk -v a="$oursv" -v b="$bestv" 'BEGIN { printf "%.2f", a / b }')
  echo "| $job | $ours | $peers | ${others:--} | $best $bestv | $ratio |"
done
