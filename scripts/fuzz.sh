#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) in their own directory and runs each briefly from its seed
# corpus (fuzz/corpus/<target>). A crash, leak, hang or sanitizer report fails the script and
# leaves the input in build-fuzz/artifacts/ (replay: build-fuzz/fuzz/<target> <file>).
#   SIFT_FUZZ_SECONDS (30 each)  SIFT_FUZZ_BUILD_DIR (build-fuzz)  SIFT_JOBS (2)
#   scripts/fuzz.sh [target...]  (default: every target)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SIFT_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SECONDS_EACH=${SIFT_FUZZ_SECONDS:-30}
JOBS=${SIFT_JOBS:-2}
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(config_fuzz price_catalog_fuzz framed_file_fuzz idx_fuzz csv_fuzz npy_fuzz
  dir_archive_fuzz http_request_fuzz)

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$ROOT")}
fi
# Only what the targets need: no gRPC, no LibTorch, no tests.
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DSIFT_FUZZ=ON -DSIFT_WITH_GRPC=OFF \
  -DSIFT_WITH_TORCH=OFF -DSIFT_BUILD_TESTS=OFF -DSIFT_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
echo "[fuzz] building ${TARGETS[*]} in $BUILD" >&2
if ! ninja -C "$BUILD" -j "$JOBS" "${TARGETS[@]}" | { grep -v '^\[' || true; }; then
  echo "[fuzz] build failed" >&2
  exit 1
fi

mkdir -p "$BUILD/artifacts"
failed=0
for target in "${TARGETS[@]}"; do
  seeds="$ROOT/fuzz/corpus/${target%_fuzz}"
  corpus="$BUILD/corpus/$target"  # what the fuzzer finds; the seeds stay as committed
  mkdir -p "$corpus"
  log="$BUILD/$target.log"
  # Its own temp folder (dir_archive_fuzz unpacks under $TMPDIR), removed after the run: /tmp
  # gathered one folder per run before.
  tmp="$BUILD/tmp/$target"
  rm -rf "$tmp" && mkdir -p "$tmp"
  if TMPDIR="$tmp" "$BUILD/fuzz/$target" -max_total_time="$SECONDS_EACH" -timeout=10 \
    -rss_limit_mb=2048 -max_len=16384 -artifact_prefix="$BUILD/artifacts/$target-" "$corpus" "$seeds" >"$log" 2>&1; then
    echo "[fuzz] $target: ok, $(grep -o 'Done [0-9]* runs' "$log" | tail -1 | cut -d' ' -f2) runs" \
      "in ${SECONDS_EACH} s" >&2
  else
    echo "[fuzz] $target: FAILED (log $log):" >&2
    grep -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==' "$log" | head -20 >&2 || tail -20 "$log" >&2
    failed=1
  fi
  rm -rf "$tmp"
done
exit "$failed"
