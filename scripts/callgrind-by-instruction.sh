#!/usr/bin/env bash
# Where one contestant's counted events go, instruction by instruction: runs the job under
# callgrind (only `counted_region`, as scripts/callgrind-ratios.sh does) with --dump-instr=yes,
# then prints the total per operation and the instructions with the most events, each with its
# disassembly and function. See BENCHMARKS.md.
#
#   scripts/callgrind-by-instruction.sh JOB CONTESTANT [EVENTS] [TOP]
#
# EVENTS is a comma-separated list of callgrind events: Ir (the default), or with the cache
# model D1mr,D1mw (first-level data read and write misses), Dr, Dw and the others callgrind
# names. TOP is how many instructions to list (default 40).
# Example: scripts/callgrind-by-instruction.sh heap-100k ours D1mr,D1mw 20
# CG_CACHE_OPTS adds callgrind's cache geometry options, e.g. CG_CACHE_OPTS='--LL=2097152,16,64'
# models a 2 MiB last level (a core's L2, when the shared L3 is busy with other work).
# Needs valgrind, objdump (binutils) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
job=$1 contestant=$2 events=${3:-Ir} top=${4:-40}

driver=$(cargo bench -p arena-kit-benches --bench callgrind --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -x "$driver" ] || { echo "could not build the callgrind driver" >&2; exit 1; }
ops=$("$driver" list | awk -v j="$job" '$1 == j { print $2 }')
[ -n "$ops" ] || { echo "no job $job (see: $driver list)" >&2; exit 1; }

cachesim=()
case $events in *D1m*|*DL*|*I1m*|*IL*) cachesim=(--cache-sim=yes ${CG_CACHE_OPTS:-}) ;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind "${cachesim[@]}" --dump-instr=yes --toggle-collect='*counted_region*' \
  --callgrind-out-file="$out/cg" "$driver" "$job" "$contestant" >/dev/null 2>"$out/log" \
  || { cat "$out/log" >&2; exit 1; }

python3 - "$out/cg" "$driver" "$events" "$ops" "$top" <<'PY'
import collections, re, subprocess, sys

cg, binary, wanted, ops, top = sys.argv[1], sys.argv[2], sys.argv[3].split(','), float(sys.argv[4]), int(sys.argv[5])
events, names, fn_of = None, {}, {}
per = collections.defaultdict(collections.Counter)
last, fn, in_call = 0, None, False
for line in open(cg):
    line = line.rstrip('\n')
    if line.startswith('events:'):
        events = line.split()[1:]
        continue
    m = re.match(r'^(c?)fn=\((\d+)\)(?: (.*))?$', line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)  # names are defined once, by fn= or cfn=
        if not m.group(1):
            fn = names.get(m.group(2))
        continue
    if line.startswith('calls='):
        in_call = True  # the next cost line is the call's inclusive cost: not this function's
        continue
    m = re.match(r'^(0x[0-9a-f]+|\+\d+|-\d+|\*)\s+(.*)$', line)
    if not (m and events):
        continue
    a = m.group(1)
    addr = int(a, 16) if a.startswith('0x') else last + int(a) if a[0] in '+-' else last
    last = addr
    if in_call:
        in_call = False
        continue
    values = m.group(2).split()[1:]  # after the line number
    for e, v in zip(events, values):
        if e in wanted:
            per[addr][e] += int(v)
    fn_of[addr] = fn
missing = [e for e in wanted if e not in (events or [])]
if missing:
    sys.exit(f"events not recorded: {missing} (recorded: {events})")
total = collections.Counter()
for c in per.values():
    total.update(c)
print('per operation:', ', '.join(f'{e} {total[e] / ops:.2f}' for e in wanted))
chosen = sorted(per, key=lambda a: sum(per[a][e] for e in wanted), reverse=True)[:top]
asm = {}
dump = subprocess.run(['objdump', '-d', '--no-show-raw-insn', '-M', 'intel', binary],
                      capture_output=True, text=True).stdout
want = set(chosen)
for l in dump.splitlines():
    m = re.match(r'^\s*([0-9a-f]+):\s+(.*)$', l)
    if m and int(m.group(1), 16) in want:
        asm[int(m.group(1), 16)] = m.group(2).strip()
for a in chosen:
    cells = '  '.join(f'{e} {per[a][e] / ops:6.3f}' for e in wanted)
    print(f'{a:8x}  {cells}  {asm.get(a, "?")[:56]:56}  {fn_of.get(a) or ""}')
PY
