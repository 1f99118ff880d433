#!/usr/bin/env bash
# Rewrites every C++ file in place as .clang-format says (tests/scripts/format_test.sh checks it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/cxx_files.sh
cxx_files | xargs -0 clang-format -i
