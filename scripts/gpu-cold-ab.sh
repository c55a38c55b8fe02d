#!/usr/bin/env bash
# Cold matmul tunings by two tunekit binaries, alternated, on the GPU machine: the driver's
# compile cache off (CUDA_CACHE_DISABLE=1) and a fresh cache directory for every tuning. Prints
# each tuning's wall time and its report's "tuned in", "time:" (waiting for builds) and winner
# lines. For a kernel or build change: the build wait and the winner, before against after.
# Usage (from the repository root there, binaries from scripts/gpu-carry.sh):
#   scripts/gpu-cold-ab.sh A_BINARY B_BINARY ROUNDS LEVEL MxNxK...
# e.g. scripts/gpu-cold-ab.sh .carry/exp/tunekit_old .carry/gpu/tunekit 2 balanced 64x11008x4096
set -uo pipefail
if (($# < 5)); then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
a=$1 b=$2 rounds=$3 level=$4
shift 4
source "$root/scripts/gpu-env.sh"  # NVIDIA's ICD, the carried libraries
source "$root/scripts/gpu-tuning-report.sh"  # wall_since, report_summary
export CUDA_CACHE_DISABLE=1 TUNEKIT_PROGRESS=off TUNEKIT_LOG=info
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# tune LABEL BINARY M N K: one cold tuning in its own cache directory.
tune() {
  local label=$1 binary=$2 m=$3 n=$4 k=$5
  local dir
  dir=$(mktemp -d "$work/cache.XXXXXX")
  local started=$EPOCHREALTIME
  timeout 300 "$binary" --cache-dir "$dir" tune matmul --level "$level" --m "$m" --n "$n" \
    --k "$k" > "$dir.log" 2>&1
  local status=$?
  echo "$label $m x $n x $k ($level): exit $status, $(wall_since "$started") s wall"
  ((status == 0)) || tail -3 "$dir.log"
  report_summary "$dir.log"
}
for ((round = 1; round <= rounds; ++round)); do
  for shape in "$@"; do
    IFS=x read -r m n k <<< "$shape"
    tune A "$a" "$m" "$n" "$k"
    tune B "$b" "$m" "$n" "$k"
  done
done
