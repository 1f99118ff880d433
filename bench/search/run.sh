#!/usr/bin/env bash
# Builds the search benchmarks and runs them, with Optuna 3.1 measured in the same run.
# Usage: bench/search/run.sh [speed|quality|quality-long|mo|tpe|decision|curves|all]   (BUILD_DIR defaults to /tmp/build-search)
set -euo pipefail
# The references (Optuna, PyTorch) are Debian packages; install them if missing.
bash "$(cd "$(dirname "$0")/../.." && pwd)/scripts/install-deps.sh" --bench
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-/tmp/build-search}"
what="${1:-all}"
py=/usr/bin/python3  # has Optuna 3.1 and numpy
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DSIFT_WITH_TORCH=OFF -DSIFT_WITH_GRPC=OFF \
    -DSIFT_BUILD_BENCH=ON >/dev/null
fi
ninja -C "$build" -j"${SIFT_JOBS:-2}" search_speed_bench search_quality_bench search_tpe_suggest \
  search_decision_bench search_curve_replay search_mo_quality_bench >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ "$what" == speed || "$what" == all ]]; then
  "$py" "$here/optuna_reference.py" speed > "$tmp/optuna_speed.txt"
  "$build/bench/search/search_speed_bench" "$tmp/optuna_speed.txt"
fi
if [[ "$what" == quality || "$what" == all ]]; then
  "$py" "$here/optuna_reference.py" quality > "$tmp/optuna_quality.txt"
  "$build/bench/search/search_quality_bench" "$tmp/optuna_quality.txt"
fi
if [[ "$what" == quality-long ]]; then  # the bounded TPE / BOHB models against the exact ones
  "$build/bench/search/search_quality_bench" "" \
    "tpe,tpe:max_above=0,bohb,bohb:max_good=0:max_bad=0" long
  "$build/bench/search/search_quality_bench" "" "gp,gp:max_points=0" 100,150,250
fi
if [[ "$what" == mo || "$what" == all ]]; then  # several objectives: hypervolume
  "$py" "$here/mo_reference.py" > "$tmp/optuna_mo.txt"
  "$build/bench/search/search_mo_quality_bench" "$tmp/optuna_mo.txt"
fi
if [[ "$what" == tpe || "$what" == all ]]; then
  "$py" "$here/tpe_vs_optuna.py" "$build/bench/search/search_tpe_suggest"
fi
if [[ "$what" == decision || "$what" == all ]]; then
  "$build/bench/search/search_decision_bench"
fi
if [[ "$what" == curves || "$what" == all ]]; then  # recorded curves: bench/search/record_curves.py
  "$build/bench/search/search_curve_replay" "$here"/curves/*.csv
fi
