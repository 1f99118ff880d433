#!/usr/bin/env bash
# Renders each overlay of deploy/kubernetes with `kubectl kustomize` and validates the result
# offline: every field against the Kubernetes API models (python3-kubernetes) and Sift's policy
# (tests/deploy/k8s_validate.py). `kubectl apply --dry-run=client` is not used: it needs an API
# server for discovery even with --validate=false.
#   kubernetes_test.sh SOURCE_DIR        exit 0 pass, 1 fail, 77 skip (no kubectl to render with)
set -uo pipefail
SRC=$(cd "$1" && pwd)

if ! command -v kubectl >/dev/null || ! /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
  bash "$SRC/scripts/install-deps.sh" --kubernetes >/dev/null 2>&1 ||
    { echo "SKIP: kubectl or python3-kubernetes missing and scripts/install-deps.sh --kubernetes could not install them"; exit 77; }
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for overlay in cpu gpu cpu-tls; do
  if ! kubectl kustomize "$SRC/deploy/kubernetes/overlays/$overlay" >"$out/$overlay.yaml" 2>"$out/err"; then
    echo "FAIL: kubectl kustomize overlays/$overlay: $(cat "$out/err")"
    status=1
    continue
  fi
  /usr/bin/python3 "$SRC/tests/deploy/k8s_validate.py" "$out/$overlay.yaml" "$overlay" || status=1
done
exit $status
