#!/usr/bin/env bash
# Fills .carry/gpu (git-ignored) with what a run on the GPU machine needs: the bench and test
# binaries of a release build, and the shared libraries they load that the machine lacks
# (it has NVIDIA's driver, but no OpenCL loader, CLBlast, xxhash or Debian's libstdc++).
# Then, on the device (`run` with carry [".carry/gpu"]):  scripts/gpu-run.sh bench_ops --device NVIDIA
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=.carry/gpu
mkdir -p "$out"
grep -qx '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
binaries=(bench/bench_ops bench/bench_search bench/record_matmul_space tests/tunekit_core_tests
          tests/cl/tunekit_cl_tests tests/ops/tunekit_ops_tests examples/cl_custom_kernel)
for b in "${binaries[@]}"; do cp "$build/$b" "$out/"; done
cp ../shared/tools/torch_sgemm.py "$out/" 2>/dev/null || true
for lib in libOpenCL.so.1 libclblast.so.1 libxxhash.so.0 libstdc++.so.6 libgcc_s.so.1; do
  path=$(ldd "$out/bench_ops" "$out/record_matmul_space" | awk -v l="$lib" '$1 == l { print $3; exit }')
  [ -n "$path" ] && cp -L "$path" "$out/$lib"
done
du -sh "$out"
