#!/usr/bin/env bash
# Prints the Debian packages that provide the shared libraries a binary links directly, one a
# line, so a runtime image installs those (apt adds their own dependencies) and none of the -dev
# packages the build stage needed.
#   runtime-packages.sh build/bin/sift-worker
set -euo pipefail
binary=${1:?usage: runtime-packages.sh BINARY}
ldd "$binary" >/dev/null || { echo "runtime-packages.sh: $binary is not a dynamic executable" >&2; exit 2; }
owner() {
  # Alternatives (libblas.so.3) are symlinks no package owns: ask about the file they point to.
  # Bookworm's merged /usr means a library may be registered under /lib or /usr/lib.
  local path=$1 real
  real=$(readlink -f "$path")
  for candidate in "$real" "$path" "/usr$real" "${real#/usr}"; do
    dpkg-query -S "$candidate" 2>/dev/null | head -n1 | cut -d: -f1 && return 0
  done
  # Not from a package (PyTorch's LibTorch in /opt): the image must copy it itself.
  echo "runtime-packages.sh: no package owns $path; copy it into the image" >&2
}
needed=" $(objdump -p "$binary" | awk '$1 == "NEEDED" { printf "%s ", $2 }')"
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r soname lib; do
  if [[ "$needed" == *" $soname "* ]]; then owner "$lib"; fi
done | sort -u
