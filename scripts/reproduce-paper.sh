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
# vcsim sweep replaces its own files in OUT/<sweep>; the book's copies of a
# sweep's plots are replaced the same way, so that a metric dropped from a
# sweep leaves no stale plot behind.
metrics="idleness waste share_violation monotony rpcs rpcs_per_job jobs_on_time jobs_late"
shopt -s nullglob
status=0
start=$(date +%s.%N)
for f in scenarios/paper/[0-9]-*.toml; do
  name=$(basename "$f" .toml)
  echo "== $name"
  "$vcsim" sweep "$f" --out "$out/$name" || status=$?
  for m in $metrics; do
    rm -f "book/src/paper/$name-$m.svg"
  done
  for svg in "$out/$name"/*.svg; do
    cp "$svg" "book/src/paper/$name-$(basename "$svg")"
  done
done
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "all sweeps: %.1f s wall time\n", b - a }'
exit $status
