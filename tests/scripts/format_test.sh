#!/usr/bin/env bash
# Every C++ file in the repository is laid out as .clang-format says, so a diff shows what
# changed and not whose editor saved it. Fails naming each file and line that differs;
# `scripts/format.sh` rewrites them in place.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
if ! command -v clang-format >/dev/null; then
  echo "FAIL: clang-format is not installed (scripts/install-deps.sh installs it)"
  exit 1
fi
source scripts/cxx_files.sh
# --Werror makes each difference an "error: code should be clang-formatted" line.
out=$(cxx_files | xargs -0 clang-format --dry-run --Werror 2>&1)
if [[ -n "$out" ]]; then
  echo "$out" | grep 'error:' | head -40
  echo "FAIL: $(echo "$out" | grep 'error:' | cut -d: -f1 | sort -u | wc -l) files are not" \
    "formatted (above, first 40 lines); run scripts/format.sh"
  exit 1
fi
echo "$(cxx_files | tr -cd '\0' | wc -c) C++ files formatted ($(clang-format --version))"
