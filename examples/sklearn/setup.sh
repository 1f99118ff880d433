#!/usr/bin/env bash
# Setup for the examples in this folder (sift.sh runs it before `run`): installs Debian's
# python3-sklearn when missing and writes its breast_cancer and diabetes data as tidy CSVs.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
bash "$ROOT/scripts/install-deps.sh" --examples
if [[ ! -f "$HERE/data/breast_cancer.csv" || ! -f "$HERE/data/diabetes.csv" ]]; then
  # Debian's interpreter: the one python3-sklearn installs into (a pyenv python3 may shadow it).
  /usr/bin/python3 "$HERE/make_csvs.py" "$HERE/data"
fi
