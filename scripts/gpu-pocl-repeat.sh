#!/usr/bin/env bash
# bench_repeat on the GPU machine's own CPU through its PoCL (a device nobody tuned for), from the
# repository root there (binaries from scripts/gpu-carry.sh). Only the carried OpenCL loader,
# CLBlast, xxhash and hiredis go on LD_LIBRARY_PATH: the carried libstdc++ is older than the one
# that machine's PoCL needs. The output goes to $OUT/$NAME.txt (NAME defaults to "repeat").
# Usage: [NAME=x] [T=seconds] scripts/gpu-pocl-repeat.sh BENCH_REPEAT_ARGS...
#   e.g. scripts/gpu-pocl-repeat.sh --size 256 --runs 5 --start-points off --device Portable
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p /etc/OpenCL/vendors
echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
mkdir -p /tmp/libs
for l in libOpenCL.so.1 libclblast.so.1 libxxhash.so.0 libhiredis.so.0.14; do
  cp "$root/.carry/gpu/$l" /tmp/libs/
done
export LD_LIBRARY_PATH=/tmp/libs
cat "$root/.carry/gpu/BUILD"
POCL_KERNEL_CACHE=0 timeout "${T:-560}" "$root/.carry/gpu/bench_repeat" "$@" 2>&1 |
  tee "${OUT:-.}/${NAME:-repeat}.txt"
