#!/usr/bin/env bash
# The GPU check of issue 15, on any Linux host with an NVIDIA GPU and a CUDA PyTorch: builds the
# trainer, its tests and trainer_bench against that PyTorch's LibTorch (docs/gpu.md), runs the
# tests (the CUDA ones included), and prints the throughput table: Sift against PyTorch eager and
# PyTorch with the data on the GPU and a CUDA graph, measured in the same run. Downloads nothing.
#
#   scripts/gpu-check.sh [build-dir]       default build dir: build-gpu in the checkout
#   PYTHON=python3.12 scripts/gpu-check.sh  the Python whose torch to build against
#   SIFT_DATA_DIR=/data/fashion-mnist ...   the four Fashion-MNIST IDX .gz files
#   EPOCHS=3 ROWS="mlp:256:fp32 ..." ...    fewer or other rows (model:batch:precision)
#
# Exit status: 0 all passed and the table printed; 1 a build, test or benchmark failed; 2 this
# host cannot run the check (no GPU, no CUDA PyTorch, no data, missing build tools).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
PYTHON=${PYTHON:-python3}
EPOCHS=${EPOCHS:-3}
ROWS=${ROWS:-"mlp:256:fp32 mlp:256:bf16 mlp:1024:bf16 cnn:1024:bf16"}
JOBS=${SIFT_JOBS:-$(nproc)}

cannot() {  # cannot MESSAGE: this host cannot run the check
  echo "gpu-check: cannot run here: $*" >&2
  exit 2
}

# 1. The host: a GPU, the driver, a CUDA PyTorch, the data, the build tools.
if ! command -v nvidia-smi >/dev/null 2>&1; then
  cannot "no NVIDIA GPU: nvidia-smi is not installed (this check needs an NVIDIA GPU and its driver)"
fi
if ! GPUS=$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1) ||
    [ -z "$GPUS" ]; then
  cannot "no NVIDIA GPU: nvidia-smi lists none ($GPUS)"
fi
if ! TORCH_INFO=$("$PYTHON" -c 'import torch, sys
if not torch.cuda.is_available(): sys.exit("torch %s: torch.cuda.is_available() is False" % torch.__version__)
print(torch.__version__, torch.version.cuda, torch.utils.cmake_prefix_path)' 2>&1); then
  cannot "$PYTHON has no CUDA PyTorch: ${TORCH_INFO##*$'\n'}"
fi
read -r TORCH_VERSION TORCH_CUDA TORCH_PREFIX <<<"$TORCH_INFO"
DATA=""
for d in "${SIFT_DATA_DIR:-}" /usr/share/datasets/fashion-mnist "$HOME/.cache/fashion-mnist" \
    "$ROOT/data/FashionMNIST/raw"; do
  if [ -n "$d" ] && [ -f "$d/train-images-idx3-ubyte.gz" ] && [ -f "$d/t10k-labels-idx1-ubyte.gz" ]; then
    DATA=$d
    break
  fi
done
[ -n "$DATA" ] || cannot "no Fashion-MNIST: set SIFT_DATA_DIR to a folder with the four IDX .gz files"
for tool in cmake ninja g++; do
  command -v $tool >/dev/null 2>&1 || cannot "$tool is not installed (docs/gpu.md lists the packages)"
done

echo "# $(date -Is) $(uname -n): $GPUS"
echo "# torch $TORCH_VERSION (CUDA $TORCH_CUDA) from $TORCH_PREFIX; data $DATA; build $BUILD"

# 2. Build against that LibTorch: the trainer, its tests, the benchmark (no gRPC needed).
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIFT_WITH_GRPC=OFF \
  -DSIFT_BUILD_BENCH=ON -DSIFT_BUILD_TESTS=ON -DSIFT_TORCH_FROM_PYTHON=ON \
  -DSIFT_PYTHON="$(command -v "$PYTHON")" | grep -E 'LibTorch|fmt|CUDA' || true
ninja -C "$BUILD" -j "$JOBS" worker_trainer_test common_test trainer_bench

# 3. The tests: every trainer test (the CUDA ones now run instead of skipping), the filesystem
# helper's, and the layers again without oneDNN's gemm symbols, as a pip LibTorch leaves them.
export SIFT_DATA_DIR=$DATA
"$BUILD/tests/worker/worker_trainer_test"
"$BUILD/tests/common/common_test"
SIFT_NO_ONEDNN_SGEMM=1 SIFT_NO_ONEDNN_BF16=1 SIFT_EXPECT_NO_ONEDNN=1 \
  "$BUILD/tests/worker/worker_trainer_test" --gtest_filter='Sgemm*:FusedLinear*:Bf16Mlp*'

# 4. The table, each row's three figures measured one after the other in this run.
BENCH="$BUILD/bench/worker/trainer_bench"
REF="$ROOT/bench/worker/pytorch_cuda_reference.py"
figure() {  # figure COMMAND...: the samples_per_second of the command's key=value line
  local line
  line=$("$@" 2>/dev/null | grep -E '^impl=' | tail -1)
  [ -n "$line" ] || { echo "gpu-check: no figure from: $*" >&2; exit 1; }
  sed -E 's/.*samples_per_second=([0-9.]+).*/\1/' <<<"$line"
}
echo
echo "| model, batch, precision | Sift | PyTorch eager | PyTorch, data on GPU + CUDA graph | Sift / graph |"
echo "|---|---|---|---|---|"
for row in $ROWS; do
  IFS=: read -r model batch precision <<<"$row"
  sift=$(figure "$BENCH" --device=cuda --data="$DATA" --model="$model" --batch="$batch" \
    --precision="$precision" --train=0 --epochs="$EPOCHS" --threads=4)
  eager=$(figure "$PYTHON" "$REF" --mode=eager --data="$DATA" --model="$model" --batch="$batch" \
    --precision="$precision" --epochs="$EPOCHS")
  graph=$(figure "$PYTHON" "$REF" --mode=graph --data="$DATA" --model="$model" --batch="$batch" \
    --precision="$precision" --epochs="$EPOCHS")
  awk -v m="$model" -v b="$batch" -v p="$precision" -v s="$sift" -v e="$eager" -v g="$graph" \
    'BEGIN { printf "| %s %s %s | %.0fk | %.0fk | %.0fk | %.2f |\n", toupper(m), b, p, s/1e3, e/1e3, g/1e3, s/g }'
done
echo
echo "Record this table in bench/README.md (GPU section) with the header lines above."
