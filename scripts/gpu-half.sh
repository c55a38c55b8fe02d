#!/usr/bin/env bash
# f16 and bf16 matmul against cuBLAS in the same call (issue 33's table), on the GPU machine from
# the binaries of scripts/gpu-carry.sh, run from the repository root there:
#   scripts/gpu-half.sh [SIZES] [DTYPES]     (defaults: 2048,4096,8192 and f16,bf16)
# DTYPES may also name tf32: f32 inputs with `--math tf32` against cuBLAS with TF32 allowed.
# Per dtype: cuBLAS (bench/cublas_half.py: PyTorch, batched timing), then one default-level
# tuning per size, each in a fresh cache directory (`tunekit tune matmul`, NVIDIA's compile cache
# off), then cuBLAS again: its own speed moves between runs (4096 f16: 680-760 TFLOP/s), so the
# table gives our share of each cuBLAS run. The winner's rate is the median of its confirmed row.
# Every line is printed as it comes and appended to $OUT/half.log; the table ends it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp}
sizes=${1:-2048,4096,8192}
dtypes=${2:-f16,bf16}
read -ra size_list <<< "${sizes//,/ }"
read -ra dtype_list <<< "${dtypes//,/ }"
for n in "${size_list[@]}"; do
  [[ $n =~ ^[1-9][0-9]{0,4}$ ]] || { echo "gpu-half.sh: size '$n' is not 1-99999" >&2; exit 2; }
done
for t in "${dtype_list[@]}"; do
  [[ $t == f16 || $t == bf16 || $t == tf32 ]] ||
    { echo "gpu-half.sh: dtype '$t' is not f16, bf16 or tf32" >&2; exit 2; }
done
export CUDA_CACHE_DISABLE=1
unset TUNEKIT_LEVEL
log=$out/half.log
echo "# matmul f16/bf16 against cuBLAS, sizes $sizes: $(sed -n 1p "$root/.carry/gpu/BUILD" 2>/dev/null), $(date -u +%Y-%m-%dT%H:%M:%SZ), level balanced" | tee -a "$log"

# cuBLAS's TFLOP/s for dtype $1 at each size, one "size rate" line each.
cublas() {
  timeout "${CUBLAS_TIMEOUT:-90}" python3 "$root/bench/cublas_half.py" "$1" "${size_list[@]}" 2>&1 |
    tee -a "$log" | awk '/^cuBLAS/ { sub(/\^3/, "", $3); print $3, $6 }'
}

table=()
for t in "${dtype_list[@]}"; do
  before=$(cublas "$t")
  declare -A ours=() winner=()
  tune_type=(--dtype "$t")
  [[ $t == tf32 ]] && tune_type=(--dtype f32 --math tf32)
  for n in "${size_list[@]}"; do
    cache=$(mktemp -d)
    result=$(TUNEKIT_DEVICE=${DEVICE:-NVIDIA} TUNEKIT_CACHE_DIR=$cache \
      timeout "${TUNE_TIMEOUT:-120}" "$root/scripts/gpu-run.sh" tunekit tune matmul --size "$n" \
      "${tune_type[@]}" 2>&1 | grep -E "tuned in|confirmed:|^  \* ")
    rm -rf "$cache"
    echo "$result" | tee -a "$log"
    # The winner's row: "  * name  time unit  GFLOP/s ...".
    row=$(echo "$result" | grep -E "^  \* " | head -1)
    ours[$n]=$(echo "$row" | awk '{ printf "%.1f", $5 / 1000 }')
    winner[$n]=$(echo "$row" | awk '{ print $2 }')
  done
  after=$(cublas "$t")
  for n in "${size_list[@]}"; do
    b=$(echo "$before" | awk -v n="$n" '$1 == n { print $2 }')
    a=$(echo "$after" | awk -v n="$n" '$1 == n { print $2 }')
    share=$(awk -v o="${ours[$n]:-0}" -v b="${b:-0}" -v a="${a:-0}" 'BEGIN {
      printf "%s / %s", (b > 0 ? sprintf("%.1f%%", 100 * o / b) : "-"),
                        (a > 0 ? sprintf("%.1f%%", 100 * o / a) : "-") }')
    table+=("| $t $n | ${ours[$n]:--} | ${b:--} / ${a:--} | $share | \`${winner[$n]:--}\` |")
  done
  unset ours winner
done
{
  echo "| size | tunekit TFLOP/s | cuBLAS before / after | of cuBLAS before / after | winner |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${table[@]}"
} | tee -a "$log"
