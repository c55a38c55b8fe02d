#!/usr/bin/env bash
# matmul on the shapes real programs use (issue 16) on the GPU machine, from the binaries of
# scripts/gpu-carry.sh, run from the repository root there:
#   scripts/gpu-shapes.sh [LIST [FROM [TO]]]
# LIST: real (default), real-small, held-out or held-out-small; FROM/TO: the 1-based range of its shapes (a device call is
# limited to 10 minutes: split the list over calls). DEVICE=substring picks another OpenCL device.
# 1. cuBLAS (PyTorch, fp32, TF32 off) on the same shapes: cublas_shapes.py;
# 2. one bench_ops process per shape (tunekit tuned at the default level, then CLBlast), all
#    sharing one cache directory ($WORK/shapes-cache: a later call on the same warm machine
#    skips the keys already tuned, and reports their first call without tuning), each under
#    SHAPE_TIMEOUT (default 240 s) and all within TOTAL_TIMEOUT (default 540 s, under a device
#    call's 10 minutes): the shapes left when it runs out are named, to pass as FROM next time;
# 3. cuBLAS again on the same shapes (lines "cuBLAS-again ..."; CUBLAS_AGAIN=0 skips it);
# 4. the keys tuned and the tuning time over every shape done so far.
# Every line is printed as it comes and appended to $OUT/shapes.log; JSON per shape in
# $WORK/json, packed into $OUT/shapes-json.tar.gz at the end (a device call brings back at most
# 8 files from $OUT: one file per shape there crowded the log out). WORK: SHAPES_WORK, default
# /tmp/tunekit-shapes (outside $OUT, which each call starts empty).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.carry/gpu
out=${OUT:-/tmp}
work=${SHAPES_WORK:-/tmp/tunekit-shapes}
mkdir -p "$work/json"
list=${1:-real}
source "$root/scripts/gpu-env.sh"  # NVIDIA's ICD, the carried libraries
export TUNEKIT_CACHE_DIR=$work/shapes-cache CUDA_CACHE_DISABLE=1
unset TUNEKIT_LEVEL
log=$out/shapes.log
say() { echo "$@" | tee -a "$log"; }
mapfile -t all < <("$bin/bench_ops" --print-shapes "$list")
from=${2:-1}
to=${3:-${#all[@]}}
shapes=("${all[@]:$((from - 1)):$((to - from + 1))}")
say "# matmul shapes $list $from-$to: $(sed -n 1p "$bin/BUILD"), $(date -u +%Y-%m-%dT%H:%M:%SZ), level balanced"
if [[ -f $bin/cublas_shapes.py ]]; then
  timeout "${CUBLAS_TIMEOUT:-120}" python3 "$bin/cublas_shapes.py" "${shapes[@]}" 2>&1 | tee -a "$log"
else
  say "cublas_shapes.py not carried: no cuBLAS numbers"
fi
index=$from
for shape in "${shapes[@]}"; do
  left=$((${TOTAL_TIMEOUT:-540} - SECONDS))
  if ((left < 30)); then
    say "out of time: shapes $index-$to not run (scripts/gpu-shapes.sh $list $index $to)"
    break
  fi
  limit=$((left < ${SHAPE_TIMEOUT:-240} ? left : ${SHAPE_TIMEOUT:-240}))
  index=$((index + 1))
  timeout "$limit" "$bin/bench_ops" --device "${DEVICE:-NVIDIA}" --only matmul --shapes "$shape" \
    --reps 10 --json "$work/json/shape-$shape.json" 2>&1 |
    grep --line-buffered -E "^matmul |bench_ops:" | tee -a "$log"
  status=${PIPESTATUS[0]}
  [[ $status -eq 0 ]] || say "$shape: bench_ops exit $status (124: over its $limit s)"
done
# cuBLAS again, at the end of the same call: its spread within one machine start (small shapes'
# cuBLAS times have moved by up to 20% between the two ends of a call, and more between starts).
if [[ -f $bin/cublas_shapes.py && ${CUBLAS_AGAIN:-1} == 1 ]]; then
  say "# cuBLAS again, at the end of the call"
  timeout "${CUBLAS_TIMEOUT:-120}" python3 "$bin/cublas_shapes.py" "${shapes[@]}" 2>&1 |
    sed 's/^cuBLAS /cuBLAS-again /' | tee -a "$log"
fi
# Over every shape of this cache directory so far: distinct keys and the first calls' time.
python3 - "$work/json" <<'PY' 2>&1 | tee -a "$log"
import glob, json, sys
rows = []
for path in sorted(glob.glob(sys.argv[1] + "/shape-*.json")):
    rows += [r for r in json.load(open(path)) if r.get("op") == "matmul"]
keys = {r["key"] for r in rows}
print(f"{len(rows)} shapes, {len(keys)} distinct keys, {sum(r['tuning_seconds'] for r in rows):.1f} s of first calls")
PY
tar -czf "$out/shapes-json.tar.gz" -C "$work" json
