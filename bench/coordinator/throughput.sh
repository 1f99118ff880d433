#!/usr/bin/env bash
# Persisted reports per second through the real coordinator: a load generator of simulated
# workers (loadgen.cc, the real proto over gRPC on loopback, no think time) against
# `sift coordinator` on a fresh SQLite database, for several searcher/scheduler/worker/trial
# settings; then every acknowledged report is counted in the database. Optuna's RDB storage on
# SQLite is measured in the same run as the reference users would pick instead.
#
# Usage: bench/coordinator/throughput.sh [quick|full|kill]   (BUILD_DIR defaults to build-bench)
#   quick: random/fifo at 1, 16 and 64 workers on 2,000 trials, tpe/asha at 16 on 2,000
#   full:  the issue's table (adds 10,000-trial rows)
#   kill:  64 workers, the coordinator killed with SIGKILL 3 s into the load; every report
#          acknowledged before the kill must be in the database
# CLIENT=sync: the load generator's workers as blocking threads (one per worker) instead of
#   gRPC's callback client (the default: the same RPCs, less of the generator's CPU on the cores
#   it shares with the coordinator); CHANNELS: connections the workers share (default 8)
#   row SEARCHER SCHEDULER WORKERS TRIALS: one row. PERF=FILE: `perf record -a` (every process,
#          call graphs by frame pointer) over the load into FILE; PERF_CMD: another perf command
# Printed to stderr after each row: the coordinator's CPU per report by thread name (threads
# alive at the end), the load generator's own, and the writes per group-commit transaction.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-$root/build-bench}"
mode="${1:-quick}"
bash "$root/scripts/install-deps.sh" --bench >/dev/null 2>&1 ||
  echo "[throughput] could not install the Optuna reference (offline?); its rows are skipped" >&2
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}
fi
if [[ ! -f "$build/build.ninja" ]]; then
  # The coordinator as shipped (Release, -O2), without LibTorch: it never trains.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DSIFT_WITH_TORCH=OFF -DSIFT_BUILD_TESTS=OFF \
    -DSIFT_BUILD_BENCH=ON "${launcher[@]}" >/dev/null
fi
ninja -C "$build" -j"${SIFT_JOBS:-2}" sift coordinator_loadgen >/dev/null
# SIFT_BIN: another coordinator binary to measure (a baseline build), with this tree's loadgen.
sift="${SIFT_BIN:-$build/bin/sift}"
loadgen="$build/bench/coordinator/coordinator_loadgen"
epochs=10
tmp="$(mktemp -d)"
coordinator=""
trap '[[ -n "$coordinator" ]] && kill "$coordinator" 2>/dev/null; rm -rf "$tmp"' EXIT

# One row: a fresh coordinator and database, a study, the load, then the row count.
row() {
  local searcher=$1 scheduler=$2 workers=$3 trials=$4 kill_after=${5:-}
  local dir="$tmp/$searcher-$scheduler-$workers-$trials"
  mkdir -p "$dir/data"
  cat >"$dir/study.yaml" <<YAML
name: load-$searcher-$scheduler
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}
  hidden: {type: int, low: 32, high: 512, scale: log}
  dropout: {type: float, low: 0.0, high: 0.5}
  optimizer: {type: categorical, choices: [sgd, adam]}
searcher: {type: $searcher}
scheduler: {type: $scheduler}
budget: {max_trials: $trials, max_epochs: $epochs, max_dollars: 0, max_hours: 0}
parallelism: 0
seed: 1
data: {dir: $dir/data}
worker: {instance_type: local-cpu, market: on-demand, price_per_hour: 0, threads: 0}
YAML
  local port=$((20000 + RANDOM % 20000))
  "$sift" coordinator --listen "127.0.0.1:$port" --db "$dir/sift.db" --lease-timeout 120 \
    >"$dir/coordinator.log" 2>&1 &
  coordinator=$!
  until grep -q "listening on" "$dir/coordinator.log" 2>/dev/null; do sleep 0.05; done
  "$sift" submit --coordinator "127.0.0.1:$port" "$dir/study.yaml" >/dev/null
  local label="$searcher / $scheduler"
  if [[ -n "$kill_after" ]]; then
    label="$label, kill -9 after ${kill_after} s"
    (sleep "$kill_after"; kill -9 "$coordinator") &
  fi
  # Killed, the coordinator fails the workers' calls: the load generator then prints what was
  # acknowledged until then and exits 1.
  local perf_pid=""
  if [[ -n "${PERF:-}" ]]; then
    ${PERF_CMD:-perf record -q -a -e cpu-clock -F 4000 -g} -o "$PERF" 2>/dev/null &
    perf_pid=$!
  fi
  "$loadgen" --coordinator "127.0.0.1:$port" --coordinator-pid "$coordinator" \
    --workers "$workers" --trials "$trials" --label "$label" --channels "${CHANNELS:-8}" \
    --client "${CLIENT:-callback}" --acked "$dir/acked.txt" \
    >"$dir/row.txt" 2>"$dir/loadgen.log" || [[ -n "$kill_after" ]] || {
      cat "$dir/loadgen.log" >&2
      exit 1
    }
  if [[ -n "$perf_pid" ]]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  kill "$coordinator" 2>/dev/null || true  # already gone after a kill -9
  wait "$coordinator" 2>/dev/null || true
  coordinator=""
  # Every acknowledged report (its lease and seq) looked up in the file.
  local acked stored missing
  acked=$(awk -F'|' '{gsub(/ /, "", $9); print $9}' "$dir/row.txt")
  read -r stored missing < <(/usr/bin/python3 -c "
import sqlite3, sys
rows = set(sqlite3.connect(sys.argv[1]).execute('select lease_id, seq from reports').fetchall())
acked = [l.split() for l in open(sys.argv[2])]
print(len(rows), sum((lease, int(seq)) not in rows for lease, seq in acked))" "$dir/sift.db" "$dir/acked.txt")
  local check="all stored ($stored rows)"
  [[ "$missing" == 0 ]] || check="LOST $missing"
  sed "s/| $acked |\$/| $acked acked, $check |/" "$dir/row.txt"
  { grep -E "by thread|generator CPU|while trials" "$dir/loadgen.log"; grep -oE "(group commit|database checkpoints): .*" "$dir/coordinator.log"; } |
    sed "s|^|  $label, $workers: |" >&2 || true
}

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
alloc="$(ldd "$sift" | grep -oE 'tcmalloc|jemalloc|mimalloc' | head -1 || true)"
echo "# $(date -u +%F) $(nproc) cores ($cpu), load $(cut -d' ' -f1-3 /proc/loadavg), $epochs reports per trial, commit $(git -C "$root" rev-parse --short HEAD)${SIFT_BIN:+, coordinator $SIFT_BIN}, allocator ${alloc:-glibc malloc}, gRPC sync server pool (4-64 pollers; since a0c3da7 ReportProgress and Heartbeat on the callback API), SQLite WAL synchronous=NORMAL"
echo "| searcher / scheduler | workers | trials | reports/s | coordinator CPU per report | p50 latency | p99 latency | reports |"
echo "|---|---|---|---|---|---|---|---|"
if [[ "$mode" == row ]]; then
  row "$2" "$3" "$4" "$5"
  exit 0
fi
if [[ "$mode" == kill ]]; then
  row random fifo 64 100000 3
  row tpe asha 64 100000 3
  exit 0
fi
row random fifo 1 2000
row random fifo 16 2000
row random fifo 64 2000
if [[ "$mode" == full ]]; then
  row random fifo 16 10000
  row tpe fifo 16 10000
  row random asha 16 10000
  row tpe asha 16 10000
  row tpe asha 64 10000
else
  row tpe asha 16 2000
fi
# OPTUNA=0 skips the reference (a baseline run of another binary).
if [[ "${OPTUNA:-1}" == 1 ]] && /usr/bin/python3 -c 'import optuna' 2>/dev/null; then
  for w in 1 16; do
    /usr/bin/python3 "$here/optuna_storage.py" "$tmp/optuna-$w.db" "$w" 400 "$epochs"
  done
fi
