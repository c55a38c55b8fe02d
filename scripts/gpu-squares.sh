#!/usr/bin/env bash
# matmul on the square sizes 1024-8192 on the GPU machine (issue 16's "no regression on the
# squares"), from the binaries of scripts/gpu-carry.sh, run from the repository root there:
#   scripts/gpu-squares.sh [SIZES]     (default 1024,2048,4096,8192)
# cuBLAS (PyTorch, fp32, TF32 off: cublas_shapes.py), then one bench_ops process (tunekit at the
# default level in an empty cache directory, then CLBlast), NVIDIA's compile cache off. Every
# line is printed as it comes and appended to $OUT/squares.log.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.carry/gpu
out=${OUT:-/tmp}
sizes=${1:-1024,2048,4096,8192}
source "$root/scripts/gpu-env.sh"  # NVIDIA's ICD, the carried libraries
TUNEKIT_CACHE_DIR=$(mktemp -d)
export TUNEKIT_CACHE_DIR CUDA_CACHE_DISABLE=1
unset TUNEKIT_LEVEL
log=$out/squares.log
echo "# matmul squares $sizes: $(sed -n 1p "$bin/BUILD"), $(date -u +%Y-%m-%dT%H:%M:%SZ), level balanced" | tee -a "$log"
shapes=()
for n in ${sizes//,/ }; do shapes+=("${n}x${n}x${n}"); done
if [[ -f $bin/cublas_shapes.py ]]; then
  timeout "${CUBLAS_TIMEOUT:-120}" python3 "$bin/cublas_shapes.py" "${shapes[@]}" 2>&1 | tee -a "$log"
fi
timeout "${SQUARES_TIMEOUT:-400}" "$bin/bench_ops" --device "${DEVICE:-NVIDIA}" --only matmul \
  --sizes "$sizes" 2>&1 | grep -E "^matmul [0-9]" | tee -a "$log"
rm -rf "$TUNEKIT_CACHE_DIR"
