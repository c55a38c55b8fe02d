#!/usr/bin/env bash
# tunekit cache export, clear, import and clear <op> on a seeded cache, checked with cache ls.
# Usage: cache_roundtrip.sh <tunekit> <tunekit_report_sample> <work dir>
set -euo pipefail
tunekit=$1 sample=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
export TUNEKIT_CACHE_DIR="$work/cache"
"$sample" "$TUNEKIT_CACHE_DIR" >/dev/null
fail() { echo "cache_roundtrip.sh: $*" >&2; exit 1; }

"$tunekit" cache export "$work/bundle.json" | grep -q "exported 4 results" || fail "export"
"$tunekit" cache clear | grep -q "removed 4 results of every op" || fail "clear"
"$tunekit" cache ls | grep -q "no tuning results" || fail "ls after clear"
"$tunekit" cache import "$work/bundle.json" >"$work/import.out" 2>&1 || fail "import"
# The remembered failure (always_failing) holds only where it happened: left out, and said.
grep -q "imported 3 results" "$work/import.out" || fail "import: $(cat "$work/import.out")"
grep -q "left out 1 remembered failure" "$work/import.out" || fail "import: the failure left out unsaid"
"$tunekit" cache ls | grep -Eq "matmul +1 +1" || fail "ls after import"
"$tunekit" cache clear matmul | grep -q "removed 1 results of 'matmul'" || fail "clear matmul"
if "$tunekit" cache show matmul >/dev/null 2>&1; then fail "show of a cleared op succeeded"; fi
"$tunekit" cache show reduce | grep -q "\* vector4" || fail "show reduce"
if "$tunekit" cache show always_failing >/dev/null 2>&1; then fail "a failure was imported"; fi
set +e
"$tunekit" cache import "$work/missing.json" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "import of a missing file is not a runtime failure (docs/cli.md)"
echo "garbage" >"$work/garbage.json"
"$tunekit" cache import "$work/garbage.json" >"$work/garbage.out" 2>&1
[[ $? -eq 1 ]] || fail "import of a garbage file is not a runtime failure"
set -e
grep -q "garbage.json" "$work/garbage.out" || fail "the import error does not name the file"
# Hostile or careless input: usage errors (2) that delete nothing, refused bundles (1).
expect_status() {
  local want=$1 pattern=$2
  shift 2
  local out status
  out=$("$@" 2>&1)
  status=$?
  [[ $status -eq $want ]] || fail "exit status $status, expected $want: $* ($out)"
  grep -Eq -- "$pattern" <<<"$out" || fail "output of $* does not match /$pattern/: $out"
}
set +e
expect_status 2 "cache-dir.*empty" "$tunekit" --cache-dir "" cache clear
expect_status 2 "op.*empty" "$tunekit" cache clear ""
expect_status 2 "html.*empty" "$tunekit" report --html ""
expect_status 2 "op.*empty" "$tunekit" report --op ""
expect_status 2 "level.*empty" "$tunekit" tune transpose --size 16 --level ""
"$sample" --forged-bundle "$work/forged.json" || fail "writing the forged bundle"
expect_status 1 "median.*nothing imported" "$tunekit" cache import "$work/forged.json"
echo x >"$work/a-file"
expect_status 1 "not a directory" "$tunekit" --cache-dir "$work/a-file" cache ls
expect_status 1 "not a directory" "$tunekit" --cache-dir "$work/a-file" report
set -e
"$tunekit" cache show reduce | grep -q "\* vector4" || fail "a refused command deleted results"
# `cache clear reduce` leaves the op file of "reduce.json.corrupt-x" alone (names match exactly).
cp "$TUNEKIT_CACHE_DIR/v2/reduce.json" "$TUNEKIT_CACHE_DIR/v2/reduce.json.corrupt-x.json"
"$tunekit" cache clear reduce >/dev/null
[[ -f "$TUNEKIT_CACHE_DIR/v2/reduce.json.corrupt-x.json" ]] || fail "clear reduce removed another op's file"
echo "cache round trip ok"
