#!/usr/bin/env bash
# Submits a study to a running coordinator and N Sift workers to Slurm as one job array; prints the
# job id (stdout, alone, for scripts) once sbatch accepted it.
#
#   deploy/slurm/sift-slurm.sh --coordinator head:7070 --workers 8 --partition spot \
#       [--config examples/fashion_mnist_mlp.yaml] [--time 04:00:00] [--token-file user.token]
#       [--worker-token-file /shared/worker.token] [--tls-ca ca.pem] [-- other sbatch options]
#
# Tokens, where the coordinator has --credentials-file (docs/security.md): --token-file is the
# user token `sift submit` uses (else SIFT_TOKEN); --worker-token-file (else SIFT_TOKEN_FILE) is
# the worker token, a file readable on the compute nodes, which the workers read there. Neither
# token is ever on a command line. --tls-ca: the coordinator serves TLS; submit and workers check
# its certificate with this CA file (readable on the nodes). `sift` and `sift-worker` are found on
# PATH unless SIFT / SIFT_WORKER name them.
set -euo pipefail

usage() {
  sed -n '2,15p' "$0" >&2
  exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
coordinator="" workers="" partition="" config="" time_limit="" user_token="" tls_ca=""
worker_token=${SIFT_TOKEN_FILE:-}
while (($#)); do
  case "$1" in
    --coordinator) coordinator=${2:?--coordinator needs host:port}; shift 2 ;;
    --workers) workers=${2:?--workers needs a count}; shift 2 ;;
    --partition) partition=${2:?--partition needs a name}; shift 2 ;;
    --config) config=${2:?--config needs a study config}; shift 2 ;;
    --time) time_limit=${2:?--time needs a Slurm time}; shift 2 ;;
    --token-file) user_token=${2:?--token-file needs a file}; shift 2 ;;
    --worker-token-file) worker_token=${2:?--worker-token-file needs a file}; shift 2 ;;
    --tls-ca) tls_ca=${2:?--tls-ca needs a CA file}; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) echo "sift-slurm.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ -n "$coordinator" ]] || { echo "sift-slurm.sh: --coordinator host:port is required" >&2; exit 2; }
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || { echo "sift-slurm.sh: --workers must be a positive count, not '$workers'" >&2; exit 2; }

for f in "$user_token" "$worker_token" "$tls_ca"; do
  [[ -z "$f" || -r "$f" ]] || { echo "sift-slurm.sh: cannot read $f" >&2; exit 2; }
done
client=(--coordinator "$coordinator")
[[ -z "$tls_ca" ]] || client+=(--tls-ca "$(realpath "$tls_ca")")
if [[ -n "$config" ]]; then
  # The study exists before any worker asks for work; `sift submit` says which id it got.
  submit=("${client[@]}")
  [[ -z "$user_token" ]] || submit+=(--token-file "$user_token")
  "${SIFT:-sift}" submit "$config" "${submit[@]}" >&2
fi

# The workers: the worker token file's path (not the token) and the CA travel in the job's
# environment; sift-entrypoint reads the token on the node. A SIFT_TOKEN of the submitter (a
# user token) must not reach them: the file, when given, takes its place.
export_env="ALL,SIFT_COORDINATOR=$coordinator,SIFT_SLURM_DIR=$here"
if [[ -n "$worker_token" ]]; then
  export_env+=",SIFT_TOKEN_FILE=$(realpath "$worker_token")"
elif [[ -n "${SIFT_TOKEN:-}" ]]; then
  echo "sift-slurm.sh: the workers get SIFT_TOKEN, which must then be a worker token; prefer --worker-token-file" >&2
fi
[[ -z "$tls_ca" ]] || export_env+=",SIFT_TLS_CA=$(realpath "$tls_ca")"

args=(--parsable --array="0-$((workers - 1))"
  --export="$export_env")
[[ -z "$partition" ]] || args+=(--partition="$partition")
[[ -z "$time_limit" ]] || args+=(--time="$time_limit")
job=$(sbatch "${args[@]}" "$@" "$here/sift-worker.sbatch")
echo "${job%%;*}"
