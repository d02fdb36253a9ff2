#!/usr/bin/env bash
# Compares what #[derive(Layout)] says about a table of enums (tests/all/enum_table.rs, printed by
# the enum_layouts example) with rustc's own -Zprint-type-sizes for the same nightly build:
# size, alignment, the tag (explicit: rustc's discriminant has its size; inferred: rustc has a
# discriminant no larger; niche: rustc has none, or one inside a payload's padding), each
# variant's field bytes and, where the repr specifies them, each field's offset (rustc lists a
# variant's fields and padding in memory order after the discriminant). Prints a table and exits
# non-zero on any mismatch.
#
#   scripts/enum-layouts-vs-rustc.sh        (needs a nightly toolchain: rustup toolchain add nightly)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}/enum-layouts-nightly"
out="$CARGO_TARGET_DIR/compare"
mkdir -p "$out"
cd "$root"
# print-type-sizes prints only what is compiled, and nothing an incremental build reuses: make
# sure the example is compiled, in full.
export CARGO_INCREMENTAL=0
touch examples/enum_layouts.rs
cargo +nightly rustc -q -p arena-kit --example enum_layouts -- -Zprint-type-sizes > "$out/rustc.txt"
"$CARGO_TARGET_DIR/debug/examples/enum_layouts" > "$out/ours.txt"
rustc +nightly --version
python3 - "$out/rustc.txt" "$out/ours.txt" <<'PY'
import re, sys

rustc = {}  # type name -> {size, align, disc, variants: {name: [(field, offset, size)]}}
cur = None
var = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"print-type-size type: `(.*)`: (\d+) bytes, alignment: (\d+) bytes", line)
    if m:
        name = re.sub(r"^(?:\w+::)*", "", m.group(1).split("<")[0]) + (
            "<" + m.group(1).split("<", 1)[1] if "<" in m.group(1) else "")
        cur = rustc.setdefault(name, {"size": int(m.group(2)), "align": int(m.group(3)),
                                      "disc": None, "variants": {}})
        var = None
        continue
    if cur is None:
        continue
    m = re.match(r"print-type-size     discriminant: (\d+) bytes", line)
    if m:
        cur["disc"] = int(m.group(1))
        continue
    m = re.match(r"print-type-size     variant `(.*)`: (\d+) bytes", line)
    if m:
        var = cur["variants"].setdefault(m.group(1), [])
        pos = [cur["disc"] or 0]
        continue
    if var is None:
        continue
    m = re.match(r"print-type-size         padding: (\d+) bytes", line)
    if m:
        pos[0] += int(m.group(1))
        continue
    m = re.match(r"print-type-size         field `\.(.*)`: (\d+) bytes", line)
    if m:
        var.append((m.group(1), pos[0], int(m.group(2))))
        pos[0] += int(m.group(2))

rows, bad, checked_variants, checked_offsets = [], 0, 0, 0
enums = {}
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "enum":
        enums[f[1]] = {"size": int(f[2]), "align": int(f[3]), "kind": f[4], "bytes": int(f[5]),
                       "size_of": int(f[6]), "align_of": int(f[7]), "variants": []}
    else:
        fields = [tuple(x.split(":")) for x in f[5].split(",") if x]
        enums[f[1]]["variants"].append((f[2], int(f[3]), int(f[4]), fields))

print(f"{'enum':18} {'size':>9} {'align':>7} {'tag (ours / rustc)':34} {'variants':>8}  result")
for name, e in enums.items():
    r = rustc.get(name)
    problems = []
    if r is None:
        problems.append("rustc printed no such type")
        r = {"size": "?", "align": "?", "disc": None, "variants": {}}
    if e["size"] != e["size_of"] or e["align"] != e["align_of"]:
        problems.append("size_of/align_of differ")
    if r["size"] != e["size"]:
        problems.append(f"size: rustc {r['size']}")
    if r["align"] != e["align"]:
        problems.append(f"align: rustc {r['align']}")
    d = r["disc"]
    kind, n = e["kind"], e["bytes"]
    if kind == "explicit" and d != n:
        problems.append(f"tag: rustc {d}")
    if kind == "inferred" and not (d is not None and d <= n):
        problems.append(f"tag: rustc {d}")
    if kind == "none" and d is not None:
        problems.append(f"tag: rustc {d}")
    tag = {"explicit": f"{n} explicit", "inferred": f"{n} inferred",
           "niche": "niche/padding", "none": "none"}[kind]
    rtag = "none" if d is None else f"{d}"
    if kind == "niche" and d is not None:
        rtag += " (in padding)"
    for vname, payload, fields_size, fields in e["variants"]:
        rv = r["variants"].get(vname)
        if rv is None:
            if fields_size:
                problems.append(f"{vname}: rustc printed no such variant")
            continue
        checked_variants += 1
        if sum(s for _, _, s in rv) != fields_size:
            problems.append(f"{vname}: field bytes rustc {sum(s for _, _, s in rv)}")
        if kind == "explicit":
            theirs = {f: (o, s) for f, o, s in rv}
            for fname, off, size in fields:
                checked_offsets += 1
                if theirs.get(fname) != (int(off), int(size)):
                    problems.append(f"{vname}.{fname}: ours {off}:{size}, rustc {theirs.get(fname)}")
    bad += bool(problems)
    print(f"{name:18} {e['size']:>4}/{r['size']:<4} {e['align']:>3}/{r['align']:<3} "
          f"{tag + ' / ' + rtag:34} {len(e['variants']):>8}  "
          + ("ok" if not problems else "MISMATCH: " + "; ".join(problems)))
print(f"{len(enums)} enums, {checked_variants} variants' field bytes and {checked_offsets} field "
      f"offsets compared, {bad} mismatched")
sys.exit(1 if bad else 0)
PY
