#!/usr/bin/env bash
# Runs the six experiments of Kondo, Anderson and McLeod (2007) (the mix
# experiments at both slacks) and copies their plots into the book.
#
#   scripts/reproduce-paper.sh [OUT]     # OUT defaults to target/paper
#
# Each sweep's full output (results.csv, summary.csv, plots, manifest.json)
# stays under OUT/<sweep>; the SVGs go to book/src/paper/<sweep>-<metric>.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/paper}"
cargo build --release --quiet --bin vcsim
vcsim="${CARGO_TARGET_DIR:-target}/release/vcsim"
mkdir -p "$out" book/src/paper
status=0
start=$(date +%s.%N)
for f in scenarios/paper/[0-9]-*.toml; do
  name=$(basename "$f" .toml)
  echo "== $name"
  "$vcsim" sweep "$f" --out "$out/$name" || status=$?
  for svg in "$out/$name"/*.svg; do
    cp "$svg" "book/src/paper/$name-$(basename "$svg")"
  done
done
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "all sweeps: %.1f s wall time\n", b - a }'
exit $status
