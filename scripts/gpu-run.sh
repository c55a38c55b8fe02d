#!/usr/bin/env bash
# Runs one carried binary on the GPU machine: registers NVIDIA's OpenCL driver with the ICD
# loader (the machine has the driver but no .icd file) and uses the carried libraries.
# Usage (from the repository root there): scripts/gpu-run.sh BINARY [ARGS...]
set -euo pipefail
mkdir -p /etc/OpenCL/vendors
echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
root=$(cd "$(dirname "$0")/.." && pwd)
export LD_LIBRARY_PATH="$root/.carry/gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
binary=$1
shift
exec "$root/.carry/gpu/$binary" "$@"
