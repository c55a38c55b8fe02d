#!/usr/bin/env bash
# Fills .carry/gpu (git-ignored) with what a run on the GPU machine needs: the test, bench and
# tool binaries of a release build, the shared libraries they load that the machine lacks (it has
# NVIDIA's driver, but no OpenCL loader, CLBlast, xxhash, hiredis or Debian's libstdc++), and the commit
# they were built from (the machine gets a copy of the working tree without .git).
# Usage: scripts/gpu-carry.sh [BUILD_DIR, default build/release]
# Then, on the device (`run` with carry [".carry/gpu"]): scripts/gpu-test.sh run   (the suite)
#                                                   or scripts/gpu-run.sh bench_ops --device NVIDIA
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=.carry/gpu
rm -rf "$out"
mkdir -p "$out"
mkdir -p "$(git rev-parse --git-common-dir)/info"
exclude="$(git rev-parse --git-common-dir)/info/exclude"
grep -qx '/.carry/' "$exclude" 2>/dev/null || echo '/.carry/' >> "$exclude"
# Required: the suites and the tool; optional: what a build without benchmarks lacks.
required=(tests/tunekit_core_tests tests/tunekit_cache_tests tests/tunekit_cache_child
          tests/tunekit_report_tests tests/cl/tunekit_cl_tests tests/cl/tunekit_program_child
          tests/ops/tunekit_ops_tests tests/tunekit_redis_tests
          examples/cl_custom_kernel examples/cl_softmax examples/cl_conv1d tunekit
          tunekit-build-helper)
optional=(bench/bench_ops bench/bench_search bench/record_matmul_space bench/matmul_shape_oracle bench/bench_builds
          bench/bench_cache bench/bench_repeat tests/cl/libtunekit_opencl_1_2_shim.so)
for b in "${required[@]}"; do cp "$build/$b" "$out/"; done
for b in "${optional[@]}"; do [ -f "$build/$b" ] && cp "$build/$b" "$out/"; done
# Symbols off: the tests, compiled at -O0, would not fit the 64 MiB a run carries.
for b in "${required[@]}" "${optional[@]}"; do
  [ -f "$out/$(basename "$b")" ] && strip --strip-unneeded "$out/$(basename "$b")"
done
cp bench/cublas_shapes.py "$out/"  # ours: batch-timed (see its header)
cp ../shared/tools/torch_sgemm.py "$out/" 2>/dev/null || true
for lib in libOpenCL.so.1 libclblast.so.1 libxxhash.so.0 libhiredis.so.0.14 libstdc++.so.6 libgcc_s.so.1; do
  path=$( (ldd "$out"/* 2>/dev/null || true) | awk -v l="$lib" '$1 == l && !p { p = $3 } END { print p }')
  if [ -n "$path" ]; then cp -L "$path" "$out/$lib"; fi
done
{
  echo "commit $(git rev-parse HEAD)"
  if git diff --quiet HEAD -- . ':!docs/data'; then echo "tree clean"; else echo "tree DIRTY (uncommitted changes)"; fi
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
} > "$out/BUILD"
cat "$out/BUILD"
du -sh "$out"
