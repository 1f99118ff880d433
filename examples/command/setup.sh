#!/usr/bin/env bash
# Setup for the command-trial example (sift.sh runs it before `run`): Debian's python3-torch,
# which train.py imports.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../../scripts/install-deps.sh" --examples
