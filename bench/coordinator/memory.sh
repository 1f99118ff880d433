#!/usr/bin/env bash
# How the coordinator's memory grows with what clients create: RSS of a real `sift coordinator`
# after N studies created over gRPC (`sift submit`), and after as many refused calls (an invalid
# config), which create nothing and so must not grow it.
#   bench/coordinator/memory.sh [BUILD_DIR] [N]     # defaults: build, 2000
set -euo pipefail
BUILD=${1:-build}
N=${2:-2000}
SIFT=$BUILD/bin/sift
DIR=$(mktemp -d)
trap 'kill "$PID" 2>/dev/null; rm -rf "$DIR"' EXIT

"$SIFT" coordinator --listen 127.0.0.1:0 --db "$DIR/sift.db" --max-running-studies $((N + 10)) \
  >"$DIR/log" 2>&1 &
PID=$!
for _ in $(seq 100); do grep -q "listening on" "$DIR/log" && break; sleep 0.1; done
ADDR=127.0.0.1:$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$DIR/log")
rss() { awk '/VmRSS/ {print $2}' "/proc/$PID/status"; }

printf 'name: m\nsearch_space:\n  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n' \
  >"$DIR/ok.yaml"
printf 'name: m\nsearch_space:\n  lr: {type: float, low: 0, high: 1.0e-1, scale: log}\n' \
  >"$DIR/bad.yaml"
submit() {  # N submissions, 8 at a time
  seq "$N" | xargs -P 8 -I{} sh -c "'$SIFT' submit '$1' --coordinator $ADDR >/dev/null 2>&1 || true"
}

# Refused calls twice, before and after the studies: the first batch also pays for warm-up
# (gRPC threads, allocator arenas, SQLite's page cache); a leak would grow the second as much.
start=$(rss)
submit "$DIR/bad.yaml"
after_bad=$(rss)
submit "$DIR/ok.yaml"
after_ok=$(rss)
submit "$DIR/bad.yaml"
after_bad2=$(rss)
per() { echo "$((($2 - $1) * 1024 / N)) B"; }
echo "coordinator RSS (KB): start $start; +$N refused CreateStudy $after_bad ($(per "$start" \
  "$after_bad")/call); +$N studies $after_ok ($(per "$after_bad" "$after_ok")/study);" \
  "+$N refused again $after_bad2 ($(per "$after_ok" "$after_bad2")/call)"
