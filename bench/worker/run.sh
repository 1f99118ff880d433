#!/usr/bin/env bash
# Trainer throughput: Sift (C++) against PyTorch eager (Python) on Fashion-MNIST, same models,
# optimiser (Adam), batch (256) and threads (2), measured in the same run, interleaved, best epoch
# of the best of $REPEATS runs (other processes on a 2-core machine steal whole time slices).
# PyTorch runs as written (NCHW, default Adam) and "tuned" with the tricks Sift uses that a
# PyTorch user could apply (pytorch_reference.py --tricks). Builds trainer_bench if needed.
# MODELS="mlp" runs only the MLP rows.
# Usage: bench/worker/run.sh [build-dir]
set -euo pipefail
# The references (Optuna, PyTorch) are Debian packages; install them if missing.
bash "$(cd "$(dirname "$0")/../.." && pwd)/scripts/install-deps.sh" --bench
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${SIFT_BUILD_DIR:-/tmp/build-trainer}}
REPEATS=${REPEATS:-3}
THREADS=${THREADS:-2}
PY=/usr/bin/python3  # Debian's python3-torch 1.13, the same LibTorch the trainer links
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DSIFT_WITH_GRPC=OFF -DSIFT_BUILD_BENCH=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$BUILD" -j2 trainer_bench >/dev/null
BENCH="$BUILD/bench/worker/trainer_bench"

# The settings Sift's workers run with (see README.md), and the environment as shipped.
FAST=(env LD_PRELOAD=$JEMALLOC MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1
      OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=$THREADS)
SHIPPED=(env)

echo "# $(date -Is) $(uname -n) $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "flags: $(grep -o -w -E 'avx512f|avx512_bf16|amx_bf16|avx2' /proc/cpuinfo | sort -u | xargs)"
echo "# shipped env: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} LD_PRELOAD=${LD_PRELOAD:-unset}"
echo "# sift env:    ${FAST[*]:1}"

OUT=$(mktemp)
run() {  # run LABEL COMMAND...: appends "label=... <the command's key=value line>" to $OUT
  local label=$1; shift
  local line
  line=$("$@" 2>/dev/null | grep '^impl=' | tail -1) || true
  [ -n "$line" ] && echo "label=$label $line" | tee -a "$OUT" | cut -c1-160
}

for rep in $(seq "$REPEATS"); do
  echo "# round $rep/$REPEATS"
  for model in ${MODELS:-mlp cnn}; do
    # The MLP's tuned PyTorch also runs its layers on oneDNN's sgemm, as Sift's FusedLinear does.
    if [ $model = mlp ]; then N=12800; SLOW_N=3072; TUNED=cl,foreach,onednn
    else N=2560; SLOW_N=768; TUNED=cl,foreach; fi
    common=(--model=$model --threads=$THREADS --batch=256)
    run "sift-fp32" "${FAST[@]}" "$BENCH" "${common[@]}" --train=$N --epochs=5 --precision=fp32
    run "sift-bf16" "${FAST[@]}" "$BENCH" "${common[@]}" --train=$N --epochs=5 --precision=bf16
    if [ $model = mlp ]; then  # Sift's fused layers on OpenBLAS (at::mm), as before oneDNN
      run "sift-fp32-openblas" "${FAST[@]}" SIFT_NO_ONEDNN_SGEMM=1 "$BENCH" "${common[@]}" --train=$N --epochs=5 --precision=fp32
    fi
    run "sift-fp32-4x64" "${FAST[@]}" "$BENCH" "${common[@]}" --train=$N --epochs=5 --precision=fp32 --micro=64
    run "sift-bf16-4x64" "${FAST[@]}" "$BENCH" "${common[@]}" --train=$N --epochs=5 --precision=bf16 --micro=64
    PT=("${FAST[@]}" $PY "$ROOT/bench/worker/pytorch_reference.py" "${common[@]}" --train=$N --epochs=5)
    run "pytorch-fp32" "${PT[@]}" --precision=fp32
    run "pytorch-bf16" "${PT[@]}" --precision=bf16
    # What Sift does that PyTorch users can do too, one trick at a time and all together.
    run "pytorch-fp32-foreach" "${PT[@]}" --precision=fp32 --tricks=foreach
    if [ $model = cnn ]; then
      run "pytorch-fp32-channels_last" "${PT[@]}" --precision=fp32 --tricks=cl
    else
      run "pytorch-fp32-onednn" "${PT[@]}" --precision=fp32 --tricks=onednn
    fi
    run "pytorch-fp32-tuned" "${PT[@]}" --precision=fp32 --tricks=$TUNED
    run "pytorch-bf16-tuned" "${PT[@]}" --precision=bf16 --tricks=$TUNED
    if [ "$rep" = 1 ]; then  # the shipped environment is 10-40x slower: one short round
      run "sift-fp32-shipped-env" "${SHIPPED[@]}" "$BENCH" "${common[@]}" --train=$SLOW_N --epochs=3 --precision=fp32
      run "pytorch-fp32-shipped-env" "${SHIPPED[@]}" $PY "$ROOT/bench/worker/pytorch_reference.py" "${common[@]}" --train=$SLOW_N --epochs=3 --precision=fp32
    fi
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$ROOT/bench/worker/table.py" "$OUT"
rm -f "$OUT"
