#!/usr/bin/env bash
# What a kernel change changes in the program a GPU compiles, without a GPU: the kernels directory
# at a git revision and as it is now, one kernel compiled for each given configuration by clang-15
# to LLVM IR for NVPTX at -O0 (the front end's own output: constants folded, comments, macros and
# parentheses gone, every branch kept), the two compared with the inline PTX's source positions
# left out. Prints "same" or where the IR starts to differ, per configuration; exits 1 where any
# differs.
# A mechanical refactor of a kernel should print "same" for every configuration and both copy
# paths (CP_ASYNC 0 and 1); whatever it prints is what the GPU still has to check. Evidence for a
# note, never a substitute for the suite on the GPU (NVIDIA's own front end is not clang's).
# Needs: clang-15 (Debian's clang-15 package; no libclc, no CUDA).
# Usage: scripts/kernel-ir-diff.sh KERNEL.cl REV "-DNAME=VALUE ..." ["-D..." ...]
#   e.g. scripts/kernel-ir-diff.sh kernels/matmul_staged.cl 94e2110 "-DCP_ASYNC=1 -DMWG=128
#        -DNWG=32 -DKWG=16 -DMDIMC=16 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=3 -DKSLICE=1
#        -DA_DIRECT=2 -DSPREAD_COPIES=0"
set -euo pipefail
if (($# < 3)); then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
command -v clang-15 > /dev/null || {
  echo "kernel-ir-diff: clang-15 not found" >&2
  exit 1
}
kernel=$1 rev=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
directory=$(dirname "$kernel")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/before" "$work/after"
git -C "$root" archive "$rev" "$directory" | tar -x -C "$work/before"
mkdir -p "$work/after/$directory"
cp -r "$root/$directory/." "$work/after/$directory/"
status=0
for defines in "$@"; do
  for side in before after; do
    # The kernels' inline PTX is written `asm(...)`, which NVIDIA's compiler takes and clang's
    # OpenCL mode spells __asm__.
    # shellcheck disable=SC2086  # the defines are separate words
    clang-15 -x cl -cl-std=CL2.0 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
      -Dasm=__asm__ -O0 -g0 -emit-llvm -S $defines "$work/$side/$kernel" -o - |
      grep -v -e '^; ModuleID' -e '^source_filename' -e '^![0-9]* = !{i64 [0-9]*}$' \
        > "$work/$side.ll"
  done
  echo "== $defines"
  if diff -u "$work/before.ll" "$work/after.ll" > "$work/diff"; then
    echo "same"
  else
    # Numbered values shift after the first change: its first lines say where it starts.
    grep -e '^[-+][^-+]' "$work/diff" > "$work/changed" || true
    echo "differs: $(wc -l < "$work/changed") lines of IR changed or renumbered; the first 30:"
    head -30 "$work/changed" | sed 's/^/  /'
    status=1
  fi
done
exit $status
