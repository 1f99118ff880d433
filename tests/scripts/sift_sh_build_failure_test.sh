#!/usr/bin/env bash
# A failed build must fail `sift.sh`, even when ninja prints nothing but progress lines (the
# filter then matches nothing, which once hid ninja's exit status). Fake cmake and ninja stand in
# for the real ones so the check takes a second.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FAKE=$(mktemp -d)
trap 'rm -rf "$FAKE"' EXIT
printf '#!/bin/sh\nexit 0\n' >"$FAKE/cmake"
printf '#!/bin/sh\necho "[1/2] Building CXX object x.o"\nexit 1\n' >"$FAKE/ninja"
printf '#!/bin/sh\necho "ctest ran" >&2\nexit 0\n' >"$FAKE/ctest"
chmod +x "$FAKE/cmake" "$FAKE/ninja" "$FAKE/ctest"

out=$(PATH="$FAKE:$PATH" SIFT_BUILD_DIR="$FAKE/build" SIFT_SKIP_FUZZ=1 \
  bash "$ROOT/sift.sh" test 2>&1)
code=$?
if [[ $code -eq 0 ]]; then
  echo "FAIL: sift.sh test exited 0 after a failed build:"
  echo "$out"
  exit 1
fi
if [[ "$out" == *"ctest ran"* ]]; then
  echo "FAIL: tests ran after a failed build"
  exit 1
fi
echo "ok: a failed build fails sift.sh (exit $code)"
