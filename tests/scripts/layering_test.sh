#!/usr/bin/env bash
# The layers of docs/architecture.md, checked on every #include: search/ is pure (only search/),
# common/ depends on search/ and itself, and coordinator/ and worker/ both depend on common/ and
# search/ but never on each other. A new upward or sideways include fails here, naming the line.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
bad=0
check() {  # check DIR FORBIDDEN_PREFIX...
  local dir=$1
  shift
  for prefix in "$@"; do
    # -I: skip binary files; only quoted project includes matter.
    if grep -rnI --include='*.cc' --include='*.h' --include='*.in' "^#include \"$prefix/" "$dir"; then
      echo "FAIL: $dir/ must not include $prefix/ (above)"
      bad=1
    fi
  done
}
check search common coordinator worker proto sift
check common coordinator worker
check coordinator worker
check worker coordinator
if [[ $bad -eq 0 ]]; then
  echo "layers hold: search <- common <- {coordinator, worker}"
fi
exit $bad
