#!/usr/bin/env bash
# Builds a libFuzzer target with clang++ (libFuzzer + AddressSanitizer + UBSan) and runs it on a
# copy of its seed corpus (fuzz/corpus/<target>/; the cache loader's: fuzz/corpus/cache/), under build/fuzz/<target>/.
#
#   fuzz/run.sh [TARGET] [SECONDS, default 180] [extra libFuzzer flags]
#   fuzz/run.sh all [SECONDS]        every target in turn, SECONDS each
#
# Targets: cache_loader (the default; `fuzz/run.sh 180` still fuzzes it), report (forged
# entries through the HTML report; seeds: the cache loader's), settings, replay_table, stored_peak,
# build_reply (a build helper's replies), device_selector (needs an OpenCL device: PoCL in CI). Every input is given at most 10 s: the
# report target exists to catch loops that never end.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
# The targets and their sources: fuzz/sources.txt (shared with fuzz/CMakeLists.txt).
sources_of() { sed -n "s/^$1: *//p" "$here/sources.txt"; }
mapfile -t targets < <(sed -n 's/^\([a-z_]*\):.*/\1/p' "$here/sources.txt" | grep -vx core)
target=cache_loader
if [[ $# -gt 0 && ! "$1" =~ ^[0-9]+$ ]]; then target="$1"; shift; fi
seconds="${1:-180}"
shift || true
if [[ "$target" == all ]]; then
  for t in "${targets[@]}"; do "$0" "$t" "$seconds" "$@"; done
  exit 0
fi
if [[ " ${targets[*]} " != *" $target "* ]]; then
  echo "fuzz/run.sh: unknown target '$target' (${targets[*]}, all)" >&2
  exit 2
fi
read -ra sources <<< "$(sources_of "$target")"
read -ra core <<< "$(sources_of core)"
sources=("${sources[@]/#/$root/}")
core=("${core[@]/#/$root/}")
libs=(-lxxhash)
extra=()
if [[ "$target" == device_selector ]]; then
  libs+=(-lOpenCL)
  extra=(-DCL_HPP_TARGET_OPENCL_VERSION=300 -DCL_HPP_MINIMUM_OPENCL_VERSION=200)
  # PoCL is not instrumented; its allocations that outlive one input are its own caches.
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
out="${TUNEKIT_FUZZ_DIR:-$root/build/fuzz}/$target"
mkdir -p "$out/corpus" "$out/artifacts"
cxx="${CXX_FUZZ:-clang++}"
# Every sanitizer report stops the run; what UBSan leaves out: cmake/ubsan-ignorelist.txt.
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -fsanitize-ignorelist="$root/cmake/ubsan-ignorelist.txt"
       -I"$root/include" "${extra[@]}")
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
all_sources=("$here/fuzz_$target.cpp" "${sources[@]}" "${core[@]}")
binary="$out/fuzz_$target"
# One object per source, compiled on every core and shared by the targets that compile it with the
# same flags (CI builds two targets: most of their sources are the same).
objects_dir="${TUNEKIT_FUZZ_DIR:-$root/build/fuzz}/objects-$(printf '%s\n' "$cxx" "${flags[@]}" | sha1sum | cut -c1-12)"
mkdir -p "$objects_dir"
object_of() { local rel="${1#"$root"/}"; echo "$objects_dir/${rel//\//_}.o"; }
stale=()
for source in "${all_sources[@]}"; do
  object="$(object_of "$source")"
  if [[ ! -f "$object" || -n "$(find "$source" "$root/include" "$root/src" "$here/run.sh" "$root/cmake/ubsan-ignorelist.txt" -newer "$object" 2>/dev/null | head -1)" ]]; then
    stale+=("$source")
  fi
done
if ((${#stale[@]} > 0)); then
  echo "compiling ${#stale[@]} sources for $binary" >&2
  export -f object_of
  export root objects_dir
  # Each job gets the compiler and its flags, then one source as its last argument (never
  # pasted into the script's text).
  printf '%s\0' "${stale[@]}" |
    xargs -0 -n 1 -P "$(nproc)" bash -c 'exec "${@:1:$#-1}" -c "${!#}" -o "$(object_of "${!#}")"' \
      compile "$cxx" "${flags[@]}"
fi
objects=()
for source in "${all_sources[@]}"; do objects+=("$(object_of "$source")"); done
if [[ ! -x "$binary" || -n "$(find "${objects[@]}" -newer "$binary" 2>/dev/null | head -1)" ]]; then
  "$cxx" "${flags[@]}" "${objects[@]}" "${libs[@]}" -o "$binary"
fi
seeds="$here/corpus/$target"
[[ "$target" == cache_loader || "$target" == report ]] && seeds="$here/corpus/cache"
cp -n "$seeds"/* "$out/corpus/" 2>/dev/null || true
dict=()
[[ -f "$here/$target.dict" ]] && dict=(-dict="$here/$target.dict")
exec "$binary" "$out/corpus" -max_total_time="$seconds" -max_len=65536 "${dict[@]}" \
  -timeout=10 -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$@"
