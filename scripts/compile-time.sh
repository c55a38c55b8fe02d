#!/usr/bin/env bash
# How long a user's file takes to compile (g++ -O2 -c) against the headers of revision BASE and
# against this working tree's, side by side: the runs alternate, and each side prints the median
# of N runs of CPU time (user + sys: what load on a shared machine changes least) and wall time.
# Usage: scripts/compile-time.sh BASE [FILE] [N]
#   FILE: default bench/compile_time/user_matmul.cpp (includes tunekit/cl.hpp and
#   tunekit/ops/matmul.hpp); N: default 3.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$1
file=${2:-bench/compile_time/user_matmul.cpp}
runs=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$base" include | tar -x -C "$work"
flags=(-O2 -std=c++20 -DCL_HPP_TARGET_OPENCL_VERSION=300 -DCL_HPP_MINIMUM_OPENCL_VERSION=200)
for ((i = 0; i < runs; ++i)); do
  for side in base tree; do
    include=$PWD/include
    [[ $side == base ]] && include=$work/include
    /usr/bin/time -f "$side %e %U %S" -a -o "$work/times" \
      g++ "${flags[@]}" -I"$include" -c "$file" -o "$work/out.o"
  done
done
python3 - "$work/times" "$base" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for side, name in (("base", sys.argv[2]), ("tree", "working tree")):
    r = [x for x in rows if x[0] == side]
    cpu = sorted(float(x[2]) + float(x[3]) for x in r)
    wall = sorted(float(x[1]) for x in r)
    print(f"{name}: CPU {statistics.median(cpu):.2f} s (runs {', '.join(f'{c:.2f}' for c in cpu)}), "
          f"wall {statistics.median(wall):.2f} s")
PY
