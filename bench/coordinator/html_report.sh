#!/usr/bin/env bash
# `sift report --html` at 10,000 trials: the time to write the page, its size, and in headless
# Chromium the time to first (contentful) paint and until its script has run (the table's first
# rows drawn, every chart counted). Uses the binaries ./sift.sh builds (build/bin/sift and
# build/bin/sift_synthetic_db, a test helper writing synthetic studies through the real Store).
#   bench/coordinator/html_report.sh [TRIALS=10000] [RUNS=3] [CONFIG]
# CONFIG: the study's config (its objectives and constraints), e.g. bench/coordinator/frontier.yaml.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${SIFT_BUILD_DIR:-$ROOT/build}/bin
TRIALS=${1:-10000}
RUNS=${2:-3}
CONFIG=${3:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

"$BIN/sift_synthetic_db" "$WORK/sift.db" "$TRIALS" 1 ${CONFIG:+"$CONFIG"} >/dev/null
start=$(date +%s.%N)
"$BIN/sift" report --db "$WORK/sift.db" --html "$WORK/report.html" 2>/dev/null
end=$(date +%s.%N)
bytes=$(stat -c %s "$WORK/report.html")
gz=$(gzip -c "$WORK/report.html" | wc -c)
echo "trials: $TRIALS; sift report --html: $(echo "$end - $start" | bc) s; file: $((bytes / 1024)) KiB ($((gz / 1024)) KiB gzipped)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); $(chromium --version 2>/dev/null | head -1)"
for run in $(seq 1 "$RUNS"); do
  start=$(date +%s.%N)
  chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/profile" \
    --dump-dom "file://$WORK/report.html" 2>/dev/null >"$WORK/dom.html"
  end=$(date +%s.%N)
  body=$(grep -o '<body[^>]*>' "$WORK/dom.html")
  fcp=$(sed -n 's/.*data-first-contentful-paint="\([0-9]*\)".*/\1/p' <<<"$body")
  ready=$(sed -n 's/.*data-ready-ms="\([0-9]*\)".*/\1/p' <<<"$body")
  echo "run $run: first contentful paint ${fcp:-?} ms; script done ${ready:-?} ms; chromium start to exit $(echo "$end - $start" | bc) s"
done
