#!/usr/bin/env bash
# Cold matmul tunings on the GPU machine with TUNEKIT_BUILD_PROCESSES set to each of a list
# (0: every build in the process; N: N tunekit-build-helper processes, docs/opencl.md "Building
# in helper processes"), alternated round by round, under both states of NVIDIA's compile cache:
# off (CUDA_CACHE_DISABLE=1), and on in a fresh, empty CUDA_CACHE_PATH for each tuning (a user's
# first run: the cache is the driver's default, and nothing of an earlier run is in it). A fresh
# tunekit cache directory each. Prints each tuning's wall time, its report's "tuned in", "time:"
# and winner lines and how many candidates it measured; in the first round, the GPU memory of
# every process 6 s into each tuning (the helpers' contexts).
# Usage (repository root there, binaries from scripts/gpu-carry.sh, which carries the helper):
#   scripts/gpu-build-processes.sh ROUNDS "0 4" MxNxK...
set -uo pipefail
if (($# < 3)); then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=$1 processes=$2
shift 2
source "$root/scripts/gpu-env.sh"  # NVIDIA's ICD, the carried libraries
source "$root/scripts/gpu-tuning-report.sh"  # wall_since, measured_count, report_summary
bin=$root/.carry/gpu/tunekit
[[ -x $root/.carry/gpu/tunekit-build-helper ]] || { echo "no tunekit-build-helper beside $bin" >&2; exit 2; }
export TUNEKIT_PROGRESS=off TUNEKIT_LOG=info TUNEKIT_DEVICE=${TUNEKIT_DEVICE:-NVIDIA}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((round = 1; round <= rounds; ++round)); do
  for shape in "$@"; do
    IFS=x read -r m n k <<< "$shape"
    for driver_cache in off fresh; do
      for p in $processes; do
        dir=$(mktemp -d "$work/cache.XXXXXX")
        if [[ $driver_cache == off ]]; then
          cache_env=(CUDA_CACHE_DISABLE=1)
        else
          cache_env=(CUDA_CACHE_DISABLE=0 "CUDA_CACHE_PATH=$(mktemp -d "$work/nv.XXXXXX")")
        fi
        # The wall time taken beside the tuning, so that the sampling below does not add to it.
        (
          started=$EPOCHREALTIME
          env "${cache_env[@]}" TUNEKIT_BUILD_PROCESSES="$p" timeout 300 "$bin" --cache-dir "$dir" \
            tune matmul --m "$m" --n "$n" --k "$k" --no-progress > "$dir.log" 2>&1
          echo $? > "$dir.status"
          wall_since "$started" > "$dir.wall"
        ) &
        tuning=$!
        # The GPU memory each process holds 6 s in (a helper keeps a context), first round only.
        if ((round == 1)); then
          sleep 6
          echo "  helper processes 6 s in: $(pgrep -c -f tunekit-build-helper || true)"
          if command -v nvidia-smi > /dev/null; then
            nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader |
              sed 's/^/  gpu memory: /'
          fi
        fi
        wait "$tuning"
        status=$(cat "$dir.status")
        wall=$(cat "$dir.wall")
        echo "round $round, $shape, driver cache $driver_cache, build processes $p: exit $status, $wall s wall, $(measured_count "$dir.log") measured"
        ((status == 0)) || tail -3 "$dir.log"
        grep -m1 "build helpers" "$dir.log"
        report_summary "$dir.log"
      done
    done
  done
done
