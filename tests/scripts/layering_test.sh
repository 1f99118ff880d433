#!/usr/bin/env bash
# The layers of docs/architecture.md, checked on every #include: search/ is pure (only search/),
# common/ depends on search/ and itself, and coordinator/ and worker/ both depend on common/ and
# search/ but never on each other. A new upward or sideways include fails here, naming the line.
# And LibTorch only where training happens: outside worker/trainer/ no file includes a torch
# header, directly or through the trainer headers it includes (the build enforces it too: only
# sift::trainer's own files get torch's include path).
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
# Inside coordinator/, each folder is a library (coordinator/CMakeLists.txt) and may include only
# the folders before it in this order; its own subfolders are checked as folders of their own.
coordinator_order=(store cost core report report/html rpc http run cli)
for ((i = 0; i < ${#coordinator_order[@]}; i++)); do
  dir=coordinator/${coordinator_order[i]}
  files=$(find "$dir" -maxdepth 1 \( -name '*.cc' -o -name '*.h' \))
  for ((j = i + 1; j < ${#coordinator_order[@]}; j++)); do
    later=coordinator/${coordinator_order[j]}
    # shellcheck disable=SC2086  # one path per word
    if grep -nE "^#include \"$later/[a-z_]+\.h\"" $files; then
      echo "FAIL: $dir/ must not include $later/ (above): it comes later in the coordinator's order"
      bad=1
    fi
  done
done
if stray=$(find coordinator -maxdepth 1 \( -name '*.cc' -o -name '*.h' \)) && [[ -n $stray ]]; then
  echo "$stray"
  echo "FAIL: coordinator/ holds only folders: put these in the folder of their concern"
  bad=1
fi

torch_re='^#include <(torch|ATen|c10)/'
torch_reached() {  # torch_reached HEADER: the torch includes HEADER reaches through quoted includes
  local -A seen=()
  local queue=("$1") f inc
  while ((${#queue[@]})); do
    f=${queue[0]}
    queue=("${queue[@]:1}")
    [[ -n ${seen[$f]:-} || ! -f $f ]] && continue  # generated protos are not in the tree
    seen[$f]=1
    grep -HnE "$torch_re" "$f"
    while read -r inc; do queue+=("$inc"); done < <(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f")
  done
}
outside=$(find search common coordinator worker proto -path worker/trainer -prune -o \
  \( -name '*.cc' -o -name '*.h' \) -print)
# shellcheck disable=SC2086  # one path per word
if grep -nE "$torch_re" $outside; then
  echo "FAIL: only worker/trainer/ includes LibTorch headers (above)"
  bad=1
fi
# shellcheck disable=SC2086
for header in $(grep -hoE '^#include "worker/trainer/[^"]+"' $outside | sort -u | tr -d '"' |
                  sed 's/#include //'); do
  if reached=$(torch_reached "$header") && [[ -n $reached ]]; then
    echo "$reached"
    echo "FAIL: $header is included outside worker/trainer/ and reaches LibTorch (above)"
    bad=1
  fi
done
if [[ $bad -eq 0 ]]; then
  echo "layers hold: search <- common <- {coordinator, worker}; coordinator/ ${coordinator_order[*]}; LibTorch only in worker/trainer/"
fi
exit $bad
