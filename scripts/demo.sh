#!/usr/bin/env bash
# The main job: tune on this machine and show the result.
set -euo pipefail
build=${1:-build/release}
export TUNEKIT_LOG=${TUNEKIT_LOG:-info}
echo "== host runtime: tuning sort algorithms =="
"$build/examples/host_sort" 1000 100000
