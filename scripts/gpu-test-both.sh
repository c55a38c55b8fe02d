#!/usr/bin/env bash
# The whole GPU suite in one device call: scripts/gpu-test.sh's two parts side by side on the one
# GPU, each with its own log. Run on the GPU machine from the repository root, with the binaries
# of scripts/gpu-carry.sh in .carry/gpu:
#   scripts/gpu-test-both.sh [BUDGET_SECONDS, default 540] [LOG_DIR, default $OUT or docs/data]
# The two parts one after the other took 393 + 253 s on the H100 on 2026-12-07, past one call's
# 600 s; side by side they took about 340 s, in a call of 428 s whose first 91 s tuned the
# held-out shapes (docs/benchmarks.md, "Tiles of 16 and 32 columns"). Each part keeps its own
# temporary directory, cache and HOME (gpu-test.sh makes them), so the two share nothing but the
# device.
# Exits non-zero unless both parts' logs end in "all suites passed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
budget=${1:-540}
logs=${2:-${OUT:-docs/data}}
mkdir -p "$logs"
GPU_TEST_PART=1 GPU_TEST_BUDGET=$budget scripts/gpu-test.sh run "$logs/gpu-tests-part1.log" \
  > /dev/null 2>&1 &
first=$!
GPU_TEST_PART=2 GPU_TEST_BUDGET=$budget scripts/gpu-test.sh run "$logs/gpu-tests-part2.log" \
  > /dev/null 2>&1 &
second=$!
wait "$first"
status1=$?
wait "$second"
status2=$?
for part in 1 2; do
  echo "## part $part ($logs/gpu-tests-part$part.log)"
  sed -n '/^# summary/,$p' "$logs/gpu-tests-part$part.log"
done
echo "part 1 exit $status1, part 2 exit $status2"
[[ $status1 -eq 0 && $status2 -eq 0 ]]
