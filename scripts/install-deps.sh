#!/usr/bin/env bash
# Installs Sift's build and run dependencies from Debian packages. Idempotent: it only calls apt
# when a package is missing, so the README commands can run it every time.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ccache
  libtorch-dev libopenblas0-openmp libjemalloc2
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libeigen3-dev nlohmann-json3-dev libspdlog-dev libgtest-dev libgmock-dev
  libsqlitecpp-dev libsqlite3-dev sqlite3 libyaml-cpp-dev libcli11-dev zlib1g-dev
  openssl libssl-dev  # libssl-dev: TLS on the --http port (coordinator/http/stream.cc)
  chromium  # headless, for the HTML report's tests (tests/coordinator/report/html/html_report_browser_test.cc)
  dataset-fashion-mnist
  clang libclang-rt-14-dev clang-format
  libpqxx-dev postgresql-15
  python3-xgboost  # 1.5 MB with its library: tests/integration/command_trial_test.cc trains with it
)
# clang and its libFuzzer runtime build the fuzz targets (scripts/fuzz.sh, run by ./sift.sh test);
# clang-format checks the layout of every C++ file (tests/scripts/format_test.sh).
# libpqxx-dev builds the PostgreSQL store (`--db postgresql://`; without it sift builds and
# says so); postgresql-15 is the server its tests start in a temp dir (tests/pg_server.h).
# Benchmark references (PyTorch eager, Optuna), only with --bench.
BENCH_PACKAGES=(python3-torch python3-optuna python3-numpy)
# A single-node Slurm for tests/deploy (and deploy/slurm on a workstation), only with --slurm.
SLURM_PACKAGES=(slurmctld slurmd slurm-client munge)
# The data of examples/sklearn/ (and examples/xgboost/'s), the models of examples/torchscript/ and
# examples/command/'s PyTorch train.py (their setup.sh asks), only with --examples.
EXAMPLE_PACKAGES=(python3-sklearn python3-torch)

want=("${PACKAGES[@]}")
for arg in "$@"; do
  case "$arg" in
    --bench) want+=("${BENCH_PACKAGES[@]}") ;;
    --slurm) want+=("${SLURM_PACKAGES[@]}") ;;
    --examples) want+=("${EXAMPLE_PACKAGES[@]}") ;;
    --package=*) want+=("${arg#--package=}") ;;  # just what one example needs
    # Rendering (kubectl kustomize; any kubectl already on PATH will do) and validating, offline
    # against the API's models, deploy/kubernetes.
    --kubernetes)
      command -v kubectl >/dev/null || want+=(kubernetes-client)
      want+=(python3-kubernetes)
      ;;
    *) echo "install-deps.sh: unknown option '$arg' (known: --bench --slurm --kubernetes --examples --package=NAME)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "[sift] installing: ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
