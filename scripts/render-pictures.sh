#!/bin/sh
# Regenerates the pictures in docs/: runs the examples that draw them (each writes its SVG to
# target/arena-kit-examples/, or $CARGO_TARGET_DIR's) and converts each SVG to a PNG with
# rsvg-convert (Debian/Ubuntu: `apt-get install librsvg2-bin`). Commit the SVGs and PNGs it
# changes after opening every PNG to look at it. CI does not run it.
#
#   docs/memory-report.{svg,png}      examples/memory_report.rs: five tags on one axis
#   docs/memory-per-tag.{svg,png}     examples/tour.rs, stop 9: tags 64x apart, one panel per tag
#   docs/heap-map.{svg,png}           examples/level_heap.rs: level 2 loaded into a fragmented heap
set -eu
unset ARENA_KIT_SMOKE # the pictures show the full runs

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v rsvg-convert >/dev/null || {
    echo "render-pictures: needs rsvg-convert (apt-get install librsvg2-bin)" >&2
    exit 1
}
target=${CARGO_TARGET_DIR:-$root/target}
case $target in
/*) ;;
*) target=$root/$target ;;
esac
out=$target/arena-kit-examples

for example in memory_report level_heap tour; do
    cargo run --quiet --release --example "$example" >/dev/null
done

render() { # render <svg written by an example> <name in docs/>
    cp "$out/$1" "docs/$2.svg"
    rsvg-convert --background-color=white -o "docs/$2.png" "docs/$2.svg"
    echo "docs/$2.png ($(wc -c <"docs/$2.png") bytes) from $out/$1"
}
render memory-report.svg memory-report
render tour-memory-chart.svg memory-per-tag
render heap-map.svg heap-map
