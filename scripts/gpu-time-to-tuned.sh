#!/usr/bin/env bash
# Time to a tuned matmul on the GPU machine (issue 18's targets), with NVIDIA's own compile cache
# off (CUDA_CACHE_DISABLE=1) and the default level, from the repository root there:
#   scripts/gpu-time-to-tuned.sh [LOG]       (binaries from scripts/gpu-carry.sh)
# 1. nothing cached: matmul 2048 in an empty cache directory;
# 2. a second process, the kernels built once: the results cleared, the program binaries kept;
# 3. a new shape whose neighbours are tuned: 4096, then 2048x4096x2048;
# 4. the same new shape tuned in an empty directory (the winner to compare with);
# 5. as a user runs it, NVIDIA's compile cache on (a fresh CUDA_CACHE_PATH): 2048 in an empty
#    directory, then a second process with the results cleared (step 2 with the driver's cache);
# 6. in one process (as Triton's per-shape figure), the driver's cache off again: 2048^3, 4096^3,
#    then 2048x4096x2048, each first call's time (bench_ops, which also runs CLBlast).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.carry/gpu
log=${1:-${OUT:-/tmp}/h100-time-to-tuned.log}
source "$root/scripts/gpu-env.sh"  # NVIDIA's ICD, the carried libraries
source "$root/scripts/gpu-tuning-report.sh"  # wall_since, measured_count
export TUNEKIT_DEVICE=${TUNEKIT_DEVICE:-NVIDIA} CUDA_CACHE_DISABLE=1 TUNEKIT_LOG=info
unset TUNEKIT_LEVEL
work=$(mktemp -d)
: > "$log"
: > "${log%.log}-tables.log"
say() { echo "$@" | tee -a "$log"; }
# tune NAME DIR ARGS...: one process, its wall time and the winner's line.
tune() {
  local name=$1 dir=$2
  shift 2
  local started=$EPOCHREALTIME
  timeout "${TUNE_TIMEOUT:-300}" "$bin/tunekit" --cache-dir "$dir" tune matmul "$@" --no-progress > "$work/$name.out" 2>&1
  local status=$?
  say "$name: matmul $* -> exit $status, wall $(wall_since "$started") s"
  grep -E "started from|^ +time: |^ +\* " "$work/$name.out" | head -4 | tee -a "$log"
  say "  candidates measured: $(measured_count "$work/$name.out")"
  { echo "## $name"; cat "$work/$name.out"; } >> "${log%.log}-tables.log"
}
say "# time to tuned: $(sed -n 1p "$bin/BUILD"), $(date -u +%Y-%m-%dT%H:%M:%SZ), CUDA_CACHE_DISABLE=1, level balanced"
tune cold "$work/a" --size 2048
"$bin/tunekit" --cache-dir "$work/a" cache clear matmul > /dev/null 2>&1
tune binaries-kept "$work/a" --size 2048
tune neighbour-4096 "$work/a" --size 4096
tune new-shape "$work/a" --m 2048 --n 4096 --k 2048
tune new-shape-alone "$work/b" --m 2048 --n 4096 --k 2048
say "# NVIDIA's compile cache on (CUDA_CACHE_PATH=$work/nv, empty at first)"
unset CUDA_CACHE_DISABLE
export CUDA_CACHE_PATH=$work/nv
tune driver-cache-cold "$work/c" --size 2048
"$bin/tunekit" --cache-dir "$work/c" cache clear matmul > /dev/null 2>&1
tune driver-cache-second-process "$work/c" --size 2048
say "# one process, CUDA_CACHE_DISABLE=1, an empty cache directory: first call of each shape"
export CUDA_CACHE_DISABLE=1
unset CUDA_CACHE_PATH
TUNEKIT_CACHE_DIR="$work/d" timeout "${TUNE_TIMEOUT:-300}" "$bin/bench_ops" --device "$TUNEKIT_DEVICE" \
  --only matmul --shapes 2048x2048x2048,4096x4096x4096,2048x4096x2048 2>&1 |
  grep -E "^matmul [0-9]" | sed -E 's/, key .*//' | tee -a "$log"
rm -rf "$work"
