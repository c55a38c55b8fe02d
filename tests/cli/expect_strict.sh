#!/usr/bin/env bash
# expect.sh, and more: the output must not match a pattern, and has at most some lines.
# Usage: expect_strict.sh <status> <extended regex the output must match>
#                         <extended regex it must not match, or -> <most lines, or -> <command>...
set -uo pipefail
want=$1 pattern=$2 absent=$3 most=$4
shift 4
output=$("$@" 2>&1)
got=$?
printf '%s\n' "$output"
if [[ $got -ne $want ]]; then
  echo "expect_strict.sh: exit status $got, expected $want: $*" >&2
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$output"; then
  echo "expect_strict.sh: output does not match /$pattern/: $*" >&2
  exit 1
fi
if [[ $absent != - ]] && grep -Eq -- "$absent" <<<"$output"; then
  echo "expect_strict.sh: output matches /$absent/, which it must not: $*" >&2
  exit 1
fi
lines=$(printf '%s\n' "$output" | wc -l)
if [[ $most != - ]] && ((lines > most)); then
  echo "expect_strict.sh: $lines lines of output, at most $most expected: $*" >&2
  exit 1
fi
