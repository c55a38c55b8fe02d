#!/usr/bin/env bash
# Runs a command and checks its exit status and output (stdout and stderr together).
# Usage: expect.sh <status> <extended regex the output must match> <command> [args...]
set -uo pipefail
want=$1 pattern=$2
shift 2
output=$("$@" 2>&1)
got=$?
printf '%s\n' "$output"
if [[ $got -ne $want ]]; then
  echo "expect.sh: exit status $got, expected $want: $*" >&2
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$output"; then
  echo "expect.sh: output does not match /$pattern/: $*" >&2
  exit 1
fi
