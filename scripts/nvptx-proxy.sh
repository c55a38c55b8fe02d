#!/usr/bin/env bash
# An offline look at what NVIDIA's compiler makes of a kernel configuration, without a GPU: the
# OpenCL C program compiled to PTX by clang-15 with libclc's NVPTX builtins, then by the CUDA
# toolkit's ptxas for sm_90. Prints each step's time, the PTX's length and ptxas's registers.
# A proxy only: NVIDIA's driver has its own front end (NVVM), so the numbers are for comparing
# two versions of a kernel, never for claims; measure on the GPU before keeping a change.
# Checked on matmul_reg.cl and matmul_skinny.cl; matmul_staged.cl's inline PTX does not come
# through (16 registers for a 128 x 128 tile: not the kernel NVIDIA builds).
# Calibration (2026-12-02): the split family at KSPLIT=64 took ptxas 1.0-1.6 s with c197a43's
# sum unrolled per output and per slice, 0.1-0.2 s after; on the H200 the cold tuning of
# 64x11008x4096 waited 30 s for builds before and 17 s after (docs/benchmarks.md).
# Needs: clang-15, libclc-15 (Debian), ptxas (/usr/local/cuda/bin or PATH).
# Usage: scripts/nvptx-proxy.sh KERNEL.cl "-DNAME=VALUE ..." [OUT_PREFIX]
#   e.g. scripts/nvptx-proxy.sh kernels/matmul_reg.cl "-DMWG=64 -DNWG=128 -DKWG=16 -DMDIMC=8
#        -DNDIMC=32 -DVWM=4 -DVWN=4 -DVW=4 -DDB=1 -DKSPLIT=3 -DPADA=4 -DPADB=4"
set -euo pipefail
if (($# < 2)); then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
source_file=$1 defines=$2
out=${3:-$(mktemp -d)/kernel}
libclc=/usr/lib/clc/nvptx64--nvidiacl.bc
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
for need in clang-15 "$libclc" "$ptxas"; do
  if ! command -v "$need" > /dev/null && [[ ! -e $need ]]; then
    echo "nvptx-proxy: $need not found (clang-15, libclc-15 and the CUDA toolkit's ptxas)" >&2
    exit 1
  fi
done
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
started=$EPOCHREALTIME
# NVIDIA's compiler inlines every function; clang may not, and OpenCL C's plain `inline` (C99)
# leaves no definition to call: inlining is forced, as the driver does. NVIDIA takes `asm` (inline
# PTX) in OpenCL C; clang knows it as __asm__.
# shellcheck disable=SC2086  # the defines are words
clang-15 -x cl -cl-std=CL1.2 -target nvptx64-unknown-nvidiacl -march=sm_80 -O3 \
  "-Dinline=__attribute__((always_inline)) inline" -Dasm=__asm__ -Xclang -finclude-default-header \
  -Xclang -mlink-builtin-bitcode -Xclang "$libclc" -I "$(dirname "$source_file")" $defines \
  -S -o "$out.ptx" "$source_file"
compiled=$EPOCHREALTIME
"$ptxas" -arch=sm_90 -v "$out.ptx" -o "$out.cubin" 2> "$out.ptxas.log"
assembled=$EPOCHREALTIME
echo "clang $(elapsed "$started" "$compiled") s, ptxas $(elapsed "$compiled" "$assembled") s," \
  "$(wc -l < "$out.ptx") PTX lines, $(grep -o 'Used [0-9]* registers' "$out.ptxas.log" | head -1)"
