#!/usr/bin/env bash
# Setup for the examples in this folder (sift.sh runs it before `run`): installs Debian's
# python3-torch when missing and exports the CNN at the widths fashion_mnist.yaml searches
# (models/cnn_{8,16,32}.pt), each with a `dropout_p` attribute.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
bash "$ROOT/scripts/install-deps.sh" --examples
mkdir -p "$HERE/models"
if [[ ! -f "$HERE/models/cnn_8.pt" || ! -f "$HERE/models/cnn_16.pt" ||
      ! -f "$HERE/models/cnn_32.pt" ]]; then
  # Debian's interpreter: the one python3-torch installs into (a pyenv python3 may shadow it).
  # One interpreter for the three files: importing torch takes seconds.
  /usr/bin/python3 - "$HERE" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import export_model
for width in (8, 16, 32):
    print(export_model.export("cnn", width, out=f"{sys.argv[1]}/models/cnn_{width}.pt"))
PY
fi
