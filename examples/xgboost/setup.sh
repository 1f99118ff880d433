#!/usr/bin/env bash
# Setup for xgboost.yaml (sift.sh runs it before `run`): Debian's python3-xgboost (in the base
# packages: the integration test needs it) and python3-sklearn, whose diabetes data
# ../sklearn/setup.sh writes as a CSV. Idempotent: apt runs only for a missing package.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../../scripts/install-deps.sh" --package=python3-sklearn
if [[ ! -f "$HERE/../sklearn/data/diabetes.csv" ]]; then
  /usr/bin/python3 "$HERE/../sklearn/make_csvs.py" "$HERE/../sklearn/data"
fi
