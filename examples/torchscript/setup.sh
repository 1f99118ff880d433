#!/usr/bin/env bash
# Setup for the examples in this folder (sift.sh runs it before `run`): installs Debian's
# python3-torch when missing and exports the CNN at the widths fashion_mnist.yaml searches
# (models/cnn_{8,16,32}.pt), each with a `dropout_p` attribute.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
bash "$ROOT/scripts/install-deps.sh" --examples
mkdir -p "$HERE/models"
for width in 8 16 32; do
  if [[ ! -f "$HERE/models/cnn_$width.pt" ]]; then
    # Debian's interpreter: the one python3-torch installs into (a pyenv python3 may shadow it).
    /usr/bin/python3 "$HERE/export_model.py" --model cnn --width "$width" \
      --out "$HERE/models/cnn_$width.pt"
  fi
done
