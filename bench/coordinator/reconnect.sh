#!/usr/bin/env bash
# How long a worker that kept retrying through a coordinator outage takes to register once the
# coordinator listens again, next to a worker started fresh at that moment (the reference: what
# a reconnect cannot beat). Idle workers are billed, so this is money after every restart.
# Usage: bench/coordinator/reconnect.sh [BUILD_DIR] [OUTAGE_S ...]   (defaults: build, 3 12 30)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/build}/bin"
shift || true
outages=("$@")
[[ ${#outages[@]} -gt 0 ]] || outages=(3 12 30)
ms() { date +%s%3N; }
echo "| outage (s) | retrying worker registered after (s) | fresh worker registered after (s) |"
echo "|---|---|---|"
for outage in "${outages[@]}"; do
  port=$((20000 + RANDOM % 20000))
  dir="$(mktemp -d)"
  "$bin/sift-worker" --coordinator "127.0.0.1:$port" --name retrying --threads 1 \
    --retry-seconds 600 >"$dir/retrying.log" 2>&1 &
  retrying=$!
  sleep "$outage"
  "$bin/sift" coordinator --listen "127.0.0.1:$port" --db "$dir/sift.db" \
    --prices "$root/examples/prices.json" >"$dir/coordinator.log" 2>&1 &
  coordinator=$!
  until grep -q "listening on" "$dir/coordinator.log"; do sleep 0.01; done
  up=$(ms)
  "$bin/sift-worker" --coordinator "127.0.0.1:$port" --name fresh --threads 1 \
    >"$dir/fresh.log" 2>&1 &
  fresh=$!
  r="" f=""
  for _ in $(seq 1 3000); do
    [[ -z "$r" ]] && grep -q "registered as" "$dir/retrying.log" && r=$(ms)
    [[ -z "$f" ]] && grep -q "registered as" "$dir/fresh.log" && f=$(ms)
    [[ -n "$r" && -n "$f" ]] && break
    sleep 0.01
  done
  printf "| %s | %s | %s |\n" "$outage" \
    "$(awk -v a="${r:-0}" -v b="$up" 'BEGIN{printf (a ? "%.2f" : "never"), (a-b)/1000}')" \
    "$(awk -v a="${f:-0}" -v b="$up" 'BEGIN{printf (a ? "%.2f" : "never"), (a-b)/1000}')"
  kill "$retrying" "$fresh" "$coordinator" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
done
