#!/usr/bin/env python3
"""Prints a small list of feature sets (as bit masks over FEATURES) in which, for any three
features, every on/off combination of them that some feature set can have appears: a covering
array of strength 3, chosen greedily. `.ci/run` runs clippy on these sets (FEATURE_SETS there)
and verifies the cover itself; run this after changing FEATURES or IMPLIES and paste its masks."""

import itertools

# Keep in step with FEATURES and FEATURE_IMPLIES in .ci/run.
FEATURES = ["alloc", "std", "allocator-api2", "log", "debug-checks", "serde", "rayon"]
IMPLIES = {"std": ["alloc"], "serde": ["alloc"], "rayon": ["std"]}


def closure(mask):
    on = {f for i, f in enumerate(FEATURES) if mask >> i & 1}
    while True:
        more = {g for f in on for g in IMPLIES.get(f, [])} - on
        if not more:
            return sum(1 << FEATURES.index(f) for f in on)
        on |= more


def combos(mask):
    n = len(FEATURES)
    return {(t, tuple(mask >> i & 1 for i in t)) for t in itertools.combinations(range(n), 3)}


# Each distinct set, keyed by what it turns on, with the smallest mask that asks for it.
distinct = {}
for m in range(1 << len(FEATURES)):
    distinct.setdefault(closure(m), m)

left = set().union(*(combos(e) for e in distinct))
chosen = []
while left:
    # The set covering the most combinations still missing; among equals, the fewest features.
    best = max(distinct, key=lambda e: (len(combos(e) & left), -bin(e).count("1")))
    chosen.append(distinct[best])
    left -= combos(best)

print(f"# {len(chosen)} of {len(distinct)} distinct feature sets")
for m in chosen:
    print(m, " ".join(f for i, f in enumerate(FEATURES) if closure(m) >> i & 1) or "(none)")
print("FEATURE_SETS=(" + " ".join(map(str, chosen)) + ")")
