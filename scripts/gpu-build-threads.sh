#!/usr/bin/env bash
# Cold matmul tunings on the GPU machine with TUNEKIT_BUILD_THREADS set to each of a list, the
# settings alternated round by round; the driver's compile cache off (CUDA_CACHE_DISABLE=1), a
# fresh cache directory each. Prints the wall time, the report's "tuned in", "time:" (waiting
# for builds, candidates prepared ahead) and winner lines, and how many candidates the tuning
# measured (the table's rows and the "N more measured" it folds), so that the builds started for
# candidates never measured show; then what a process costs around a tuning: the same key served
# by the cache, and `tunekit devices`.
# Usage (repository root there, binaries from scripts/gpu-carry.sh):
#   scripts/gpu-build-threads.sh ROUNDS "4 2 1" MxNxK...
set -uo pipefail
if (($# < 3)); then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=$1 threads=$2
shift 2
source "$root/scripts/gpu-env.sh"  # NVIDIA's ICD, the carried libraries
source "$root/scripts/gpu-tuning-report.sh"  # wall_since, measured_count, report_summary
bin=$root/.carry/gpu/tunekit
export CUDA_CACHE_DISABLE=1 TUNEKIT_PROGRESS=off TUNEKIT_LOG=info TUNEKIT_DEVICE=${TUNEKIT_DEVICE:-NVIDIA}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((round = 1; round <= rounds; ++round)); do
  for shape in "$@"; do
    IFS=x read -r m n k <<< "$shape"
    for t in $threads; do
      dir=$(mktemp -d "$work/cache.XXXXXX")
      started=$EPOCHREALTIME
      TUNEKIT_BUILD_THREADS=$t timeout 300 "$bin" --cache-dir "$dir" tune matmul --m "$m" --n "$n" \
        --k "$k" --no-progress > "$dir.log" 2>&1
      status=$?
      wall=$(wall_since "$started")
      echo "round $round, $shape, build threads $t: exit $status, $wall s wall, $(measured_count "$dir.log") measured"
      ((status == 0)) || tail -3 "$dir.log"
      report_summary "$dir.log"
      if ((round == 1)) && [[ $t == "${threads%% *}" ]]; then
        started=$EPOCHREALTIME
        timeout 120 "$bin" --cache-dir "$dir" tune matmul --m "$m" --n "$n" --k "$k" --no-progress > /dev/null 2>&1
        echo "  the same key from the cache, a new process: exit $?, $(wall_since "$started") s wall"
      fi
    done
  done
done
started=$EPOCHREALTIME
timeout 60 "$bin" devices > /dev/null 2>&1
echo "tunekit devices: exit $?, $(wall_since "$started") s wall"
