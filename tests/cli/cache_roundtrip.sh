#!/usr/bin/env bash
# tunekit cache export, clear, import and clear <op> on a seeded cache, checked with cache ls.
# Usage: cache_roundtrip.sh <tunekit> <tunekit_report_sample> <work dir>
set -euo pipefail
tunekit=$1 sample=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
export TUNEKIT_CACHE_DIR="$work/cache"
"$sample" "$TUNEKIT_CACHE_DIR" >/dev/null
fail() { echo "cache_roundtrip.sh: $*" >&2; exit 1; }

"$tunekit" cache export "$work/bundle.json" | grep -q "exported 3 results" || fail "export"
"$tunekit" cache clear | grep -q "removed 3 results of every op" || fail "clear"
"$tunekit" cache ls | grep -q "no tuning results" || fail "ls after clear"
"$tunekit" cache import "$work/bundle.json" | grep -q "imported 3 results" || fail "import"
"$tunekit" cache ls | grep -Eq "matmul +1 +1" || fail "ls after import"
"$tunekit" cache clear matmul | grep -q "removed 1 results of 'matmul'" || fail "clear matmul"
if "$tunekit" cache show matmul >/dev/null 2>&1; then fail "show of a cleared op succeeded"; fi
"$tunekit" cache show reduce | grep -q "\* vector4" || fail "show reduce"
set +e
"$tunekit" cache import "$work/missing.json" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "import of a missing file is not a usage error"
echo "garbage" >"$work/garbage.json"
"$tunekit" cache import "$work/garbage.json" >"$work/garbage.out" 2>&1
[[ $? -eq 1 ]] || fail "import of a garbage file is not a runtime failure"
set -e
grep -q "garbage.json" "$work/garbage.out" || fail "the import error does not name the file"
echo "cache round trip ok"
