#!/usr/bin/env bash
# PoCL: matmul 128 tuned after 64 (a warm start) and alone, at the minimal level, PoCL's own
# kernel cache off (docs/benchmarks.md, "Time to tuned").
# Usage: scripts/measure-warm-start.sh BINARY OUTDIR   (e.g. build/release/tunekit /tmp/warm)
set -uo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 BINARY OUTDIR (a new directory)" >&2; exit 2; }
bin=$1 out=$2
[[ -e "$out" ]] && { echo "$out exists: give a new directory" >&2; exit 2; }
mkdir -p "$out"
export POCL_KERNEL_CACHE=0 TUNEKIT_LEVEL=minimal
/usr/bin/time -f "64 in warm dir: %e s" "$bin" --cache-dir "$out"/warm tune matmul --size 64 --no-progress > "$out"/warm-64.log 2>&1
/usr/bin/time -f "128 in warm dir: %e s" "$bin" --cache-dir "$out"/warm tune matmul --size 128 --no-progress > "$out"/warm-128.log 2>&1
/usr/bin/time -f "128 in cold dir: %e s" "$bin" --cache-dir "$out"/cold tune matmul --size 128 --no-progress > "$out"/cold-128.log 2>&1
for f in warm-64 warm-128 cold-128; do tail -1 "$out/$f.log"; echo "  measured $(grep -cE ' (measured|dropped|winner)' "$out/$f.log")"; grep -E '^\s+\*' "$out/$f.log"; done
