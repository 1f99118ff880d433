#!/usr/bin/env bash
# The one entry point on a fresh Debian machine: installs what is missing, builds, then runs.
#   ./sift.sh run examples/fashion_mnist_mlp.yaml   the embedded search (any `sift` subcommand works)
#   ./sift.sh test                                  builds, runs every test (ctest), then fuzzes
#                                                   (scripts/fuzz.sh; SIFT_SKIP_FUZZ=1 skips it)
#   ./sift.sh worker ...                            runs sift-worker
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${SIFT_BUILD_DIR:-$ROOT/build}
JOBS=${SIFT_JOBS:-$(nproc)}

if [[ $# -eq 0 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,6p' "$0"
  exit 0
fi

bash "$ROOT/scripts/install-deps.sh"

configure() {
  # Release at -O2 without debug info: the LibTorch translation units compile much faster.
  # ccache, where installed, lets several checkouts of the tree share compiled objects.
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$ROOT")}
    # The LibTorch units include <torch/torch.h> through a precompiled header, which ccache
    # refuses to cache without this (453 of 460 uncacheable calls here); nothing uses __TIME__.
    export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
  fi
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DSIFT_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
}

build() {
  configure
  echo "[sift] building ($JOBS jobs) in $BUILD" >&2
  local start=$SECONDS
  # pipefail gives the pipeline ninja's status (the filter never fails), so a failed build fails.
  if ! ninja -C "$BUILD" -j "$JOBS" "$@" | { grep -v '^\[' || true; }; then
    echo "[sift] build failed" >&2
    exit 1
  fi
  echo "[sift] build done in $((SECONDS - start)) s" >&2
}

case "$1" in
  test)
    shift
    build
    start=$SECONDS
    # Two at a time: the integration tests start several processes each.
    ctest --test-dir "$BUILD" --output-on-failure -j 2 "$@"
    echo "[sift] tests done in $((SECONDS - start)) s" >&2
    # The fuzz targets, briefly, unless a filter picked some tests or SIFT_SKIP_FUZZ=1.
    if [[ "${SIFT_SKIP_FUZZ:-0}" != 1 && " $* " != *" -R"* && " $* " != *" --tests-regex"* ]]; then
      bash "$ROOT/scripts/fuzz.sh"
    fi
    ;;
  worker)
    shift
    build sift-worker
    exec "$BUILD/bin/sift-worker" "$@"
    ;;
  *)
    build sift sift-worker
    # An example folder with a setup.sh (packages to install, data to write) is set up first.
    if [[ "$1" == "run" && $# -ge 2 && -x "$(dirname "$2")/setup.sh" ]]; then
      "$(dirname "$2")/setup.sh"
    fi
    exec "$BUILD/bin/sift" "$@"
    ;;
esac
