#!/usr/bin/env bash
# Test files are compiled four to a unit (tests/CMakeLists.txt, SIFT_UNITY_TESTS), so a file's
# helpers go in a namespace named after the file: an anonymous one is shared by the whole unit,
# and two files' helpers of the same name would collide depending on how files are batched.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
if grep -rn --include='*_test.cc' '^namespace {' tests; then
  echo "FAIL: the test files above use an anonymous namespace; name it after the file" \
    "(e.g. 'namespace store_test {')"
  exit 1
fi
echo "every test file's helpers are in a namespace of its own"
