#!/usr/bin/env bash
# tunekit --store redis://...: cache export, clear, import, ls, show, report on a real
# redis-server started here on a free loopback port (no persistence). Skipped (exit 77) where
# redis-server is not installed.
# Usage: redis_roundtrip.sh <tunekit> <tunekit_report_sample> <work dir>
set -euo pipefail
tunekit=$1 sample=$2 work=$3
command -v redis-server >/dev/null || { echo "redis-server is not installed: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
export TUNEKIT_CACHE_DIR="$work/cache"
unset TUNEKIT_STORE
"$sample" "$TUNEKIT_CACHE_DIR" >/dev/null
fail() { echo "redis_roundtrip.sh: $*" >&2; exit 1; }

server=
trap '[[ -n $server ]] && kill "$server" 2>/dev/null; wait 2>/dev/null || true' EXIT
for attempt in 1 2 3 4 5; do
  port=$(( 20000 + RANDOM % 30000 ))
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    --daemonize no >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break 2; fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.02
  done
  kill "$server" 2>/dev/null || true
  server=
done
[[ -n $server ]] || fail "redis-server did not start"
url="redis://127.0.0.1:$port/0"
store=("$tunekit" --store "$url")

# The local cache's results to the shared store, and back.
"$tunekit" cache export "$work/local.json" | grep -q "exported 4 results" || fail "local export"
"${store[@]}" cache ls | grep -q "no tuning results" || fail "ls of an empty store"
"${store[@]}" cache import "$work/local.json" 2>/dev/null | grep -q "imported 3 results from .* into $url" || fail "import (a remembered failure is never shared)"
"${store[@]}" cache ls | grep -Eq "matmul +1 +1" || fail "ls after import"
"${store[@]}" cache show reduce | grep -q "\* vector4" || fail "show reduce"
"${store[@]}" report | grep -q "matmul" || fail "report"
"${store[@]}" cache import "$work/local.json" --keep-existing | grep -q "imported 0 results" || fail "keep-existing"
"${store[@]}" cache export "$work/remote.json" | grep -q "exported 3 results from $url" || fail "export"
"${store[@]}" cache clear matmul | grep -q "removed 1 results of 'matmul'" || fail "clear matmul"
if "${store[@]}" cache show matmul >/dev/null 2>&1; then fail "show of a cleared op succeeded"; fi
# A bad value under an entry's key is warned of on lines of its own: the listing of the store's
# ops for the message runs before the message is begun, so its warnings never land inside it.
if command -v redis-cli >/dev/null; then
  redis-cli -p "$port" set tunekit:v2:entry:matmul:0123456789abcdef garbage >/dev/null
  if "${store[@]}" cache show matmul >"$work/show_bad.out" 2>&1; then fail "show of a bad entry succeeded"; fi
  grep -Eq "^tunekit: no results for op 'matmul' in $url \(ops with results: [^()]+\)$" \
    "$work/show_bad.out" || fail "the no-results line is broken: $(cat "$work/show_bad.out")"
  redis-cli -p "$port" del tunekit:v2:entry:matmul:0123456789abcdef >/dev/null
fi
"${store[@]}" cache clear | grep -q "removed 2 results of every op" || fail "clear"
"${store[@]}" cache import "$work/remote.json" | grep -q "imported 3 results" || fail "import of the export"
# The local cache was not touched by any of it.
"$tunekit" cache ls | grep -Eq "matmul +1 +1" || fail "the local cache changed"
# A result fetched from the store is written locally by a thread: `tune --store` says "kept"
# only once it is on disk, never "not kept" for it (it used to check before the write).
for machine in a b; do
  TUNEKIT_CACHE_DIR="$work/$machine" TUNEKIT_LEVEL=minimal "${store[@]}" tune transpose \
    --rows 64 --cols 96 --no-progress >"$work/tune_$machine.out" 2>&1 ||
    fail "tune --store on machine $machine: $(cat "$work/tune_$machine.out")"
  grep -q "results kept in $work/$machine" "$work/tune_$machine.out" || fail "tune on $machine: not kept"
done
# ... and says where its result came from: the shared store, not "the persistent cache".
grep -q "from the shared store $url" "$work/tune_b.out" || fail "machine b tuned instead of fetching, or did not name the store"
TUNEKIT_CACHE_DIR="$work/b" "$tunekit" cache ls | grep -Eq "transpose +1" || fail "b's local cache"
set +e
"$tunekit" --store "redis://127.0.0.1:$port/0?x=1" cache ls >"$work/bad.out" 2>&1
[[ $? -eq 2 ]] || fail "a bad --store is not a usage error"
TUNEKIT_STORE="redis://user:pw@127.0.0.1/0" "$tunekit" cache ls >"$work/bad_env.out" 2>&1
[[ $? -eq 2 ]] || fail "a bad TUNEKIT_STORE is not a usage error"
kill "$server"; wait "$server" 2>/dev/null; server=
"${store[@]}" cache ls >"$work/down.out" 2>&1
[[ $? -eq 1 ]] || fail "a store that is down is not a runtime failure"
[[ $(wc -l <"$work/down.out") -eq 1 ]] || fail "a store that is down is more than one line: $(cat "$work/down.out")"
set -e
grep -q "password" "$work/bad_env.out" || fail "the TUNEKIT_STORE error does not say what is wrong"
grep -q "cannot use the result store $url" "$work/down.out" || fail "the error does not name the store"
echo "redis_roundtrip.sh: ok"
