#!/usr/bin/env bash
# `make demo`: tunes the shipped ops on the default OpenCL device with the tunekit tool, then
# writes the HTML report of everything in the cache and prints a summary.
# Usage: scripts/demo.sh [build dir]   (TUNEKIT_LEVEL, TUNEKIT_DEVICE, ... are honoured)
set -euo pipefail
build=${1:-build/release}
tunekit="$build/tunekit"
report=${TUNEKIT_REPORT:-build/report.html}
# Modest sizes and the quickest level: a few minutes on a small CPU device.
export TUNEKIT_LEVEL=${TUNEKIT_LEVEL:-minimal}

"$tunekit" devices
echo
for op in "matmul --size 256" "reduce --size 1048576" "transpose --size 512"; do
  echo "== tunekit tune $op =="
  # shellcheck disable=SC2086  # $op is the op and its options
  "$tunekit" tune $op
  echo
done
echo "== tunekit report --html $report =="
"$tunekit" report --html "$report"
echo "(tuned again only after \`$tunekit cache clear\`; see docs/cli.md)"
