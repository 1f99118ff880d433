#!/usr/bin/env bash
# Submits a study to a running coordinator and N Sift workers to Slurm as one job array; prints the
# job id (stdout, alone, for scripts) once sbatch accepted it.
#
#   deploy/slurm/sift-slurm.sh --coordinator head:7070 --workers 8 --partition spot \
#       [--config examples/fashion_mnist_mlp.yaml] [--time 04:00:00] [-- other sbatch options]
#
# The token, if the coordinator wants one, comes from SIFT_TOKEN_FILE (a file readable on the
# compute nodes) or SIFT_TOKEN; it is passed in the environment, never on a command line.
# `sift` and `sift-worker` are found on PATH unless SIFT / SIFT_WORKER name them.
set -euo pipefail

usage() {
  sed -n '2,10p' "$0" >&2
  exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
coordinator="" workers="" partition="" config="" time_limit=""
while (($#)); do
  case "$1" in
    --coordinator) coordinator=${2:?--coordinator needs host:port}; shift 2 ;;
    --workers) workers=${2:?--workers needs a count}; shift 2 ;;
    --partition) partition=${2:?--partition needs a name}; shift 2 ;;
    --config) config=${2:?--config needs a study config}; shift 2 ;;
    --time) time_limit=${2:?--time needs a Slurm time}; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) echo "sift-slurm.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ -n "$coordinator" ]] || { echo "sift-slurm.sh: --coordinator host:port is required" >&2; exit 2; }
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || { echo "sift-slurm.sh: --workers must be a positive count, not '$workers'" >&2; exit 2; }

if [[ -n "${SIFT_TOKEN_FILE:-}" ]]; then
  [[ -r "$SIFT_TOKEN_FILE" ]] || { echo "sift-slurm.sh: cannot read SIFT_TOKEN_FILE $SIFT_TOKEN_FILE" >&2; exit 2; }
elif [[ -n "${SIFT_TOKEN:-}" ]]; then
  echo "sift-slurm.sh: SIFT_TOKEN travels in the job's environment; prefer SIFT_TOKEN_FILE" >&2
fi
if [[ -n "$config" ]]; then
  # The study exists before any worker asks for work; `sift submit` says which id it got.
  # In a subshell's environment, not on env's command line, so `ps` never shows the token.
  (
    if [[ -n "${SIFT_TOKEN_FILE:-}" ]]; then
      SIFT_TOKEN=$(<"$SIFT_TOKEN_FILE")
      export SIFT_TOKEN
    fi
    "${SIFT:-sift}" submit "$config" --coordinator "$coordinator" >&2
  )
fi

args=(--parsable --array="0-$((workers - 1))"
  --export="ALL,SIFT_COORDINATOR=$coordinator,SIFT_SLURM_DIR=$here")
[[ -z "$partition" ]] || args+=(--partition="$partition")
[[ -z "$time_limit" ]] || args+=(--time="$time_limit")
job=$(sbatch "${args[@]}" "$@" "$here/sift-worker.sbatch")
echo "${job%%;*}"
