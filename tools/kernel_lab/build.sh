#!/bin/sh
# Builds the kernel lab into <repo>/.carry/lab/ (ignored by git; carried to the GPU machine with its libs).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/.carry/lab"
mkdir -p "$out"
g++ -O2 -std=c++20 -Wall -Wextra -o "$out/kernel_lab" "$root/tools/kernel_lab/kernel_lab.cpp" -lOpenCL -lclblast
# Runtime libraries the GPU machine lacks (it has the NVIDIA ICD only).
cp -L /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 /usr/lib/x86_64-linux-gnu/libclblast.so.1 "$out/"
echo "built $out/kernel_lab"
