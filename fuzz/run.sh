#!/usr/bin/env bash
# Builds the cache-loader fuzz target with clang++ (libFuzzer + AddressSanitizer + UBSan) and runs
# it on a copy of the seed corpus.   Usage: fuzz/run.sh [seconds, default 180] [extra libFuzzer flags]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="${TUNEKIT_FUZZ_DIR:-$root/build/fuzz}"
seconds="${1:-180}"
shift || true
mkdir -p "$out/corpus" "$out/artifacts"
cxx="${CXX_FUZZ:-clang++}"
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -fsanitize-recover=pointer-overflow -I"$root/include")
# Every sanitizer report stops the run, except the one in ubsan.supp (see there).
export UBSAN_OPTIONS="suppressions=$here/ubsan.supp:print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
sources=("$root/fuzz/fuzz_cache_loader.cpp" "$root/src/cache/format.cpp" "$root/src/cache/reader.cpp"
         "$root/src/stable_hash.cpp" "$root/src/error.cpp" "$root/src/outcome.cpp")
if [[ ! -x "$out/fuzz_cache_loader" || -n "$(find "${sources[@]}" "$root/include" "$root/src/cache" "$here/fuzz_cache_loader.cpp" -newer "$out/fuzz_cache_loader" 2>/dev/null | head -1)" ]]; then
  echo "building $out/fuzz_cache_loader" >&2
  "$cxx" "${flags[@]}" "${sources[@]}" -lxxhash -o "$out/fuzz_cache_loader"
fi
cp -n "$here"/corpus/cache/* "$out/corpus/" 2>/dev/null || true
exec "$out/fuzz_cache_loader" "$out/corpus" -max_total_time="$seconds" -max_len=65536 \
  -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$@"
