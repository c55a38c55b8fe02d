# shellcheck shell=bash
# Sourced by the gpu-*.sh scripts that time `tunekit tune` processes on the GPU machine
# (gpu-cold-ab.sh, gpu-build-threads.sh, gpu-time-to-tuned.sh): the one owner of how a process's
# wall time is taken and of what is read from the report it prints.

# wall_since START: the seconds since $EPOCHREALTIME read START, to a tenth.
wall_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# measured_count REPORT: how many candidates the tuning measured: the table's rows (measured,
# dropped or the winner, "winner, tied" too) and the "N more measured" lines it folds them into
# (the rows alone undercount).
measured_count() {
  local shown folded
  shown=$(grep -cE " (measured|dropped|winner)( |,|$)" "$1")
  folded=$(awk '/^ +[0-9]+ more measured/ { n += $1 } END { print n + 0 }' "$1")
  echo $((shown + folded))
}

# report_summary REPORT: its "tuned in", "time:" (waiting for builds, prepared ahead) and winner
# lines, cut to 200 columns.
report_summary() { grep -E "tuned in|^    time:|^  \*" "$1" | cut -c1-200; }
