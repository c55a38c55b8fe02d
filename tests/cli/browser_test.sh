#!/usr/bin/env bash
# Opens the HTML report of a seeded cache in headless Chromium: the page's script must report
# that every chart rendered (#status data-state="ok", with the expected counts) and no script
# error; a screenshot is left in the work dir. Exits 77 (CTest: skipped) without Chromium.
# Usage: browser_test.sh <tunekit> <tunekit_report_sample> <work dir>
set -euo pipefail
tunekit=$1 sample=$2 work=$3
. "$(dirname "$0")/browser.sh"
find_browser "test the HTML report in"
rm -rf "$work" && mkdir -p "$work"
"$sample" "$work/cache" >/dev/null
"$tunekit" --cache-dir "$work/cache" report --html "$work/report.html" >/dev/null

# A fresh profile per run, no sandbox (CI runs as root), no GPU; the DOM after the scripts ran.
flags=(--headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check
       --disable-extensions --user-data-dir="$work/profile" --virtual-time-budget=5000)
timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$work/report.html" \
  >"$work/dom.html" 2>"$work/chromium.log" || { cat "$work/chromium.log" >&2; exit 1; }
timeout 60 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1100,2600 \
  --screenshot="$work/report.png" "file://$work/report.html" >>"$work/chromium.log" 2>&1 || true

status=$(grep -o '<p id="status"[^>]*>[^<]*' "$work/dom.html" || true)
echo "status element: $status"
fail() { echo "browser_test.sh: $*" >&2; exit 1; }
[[ $status == *'data-state="ok"'* ]] || fail "the report's script did not finish cleanly"
# The samples: bar charts for matmul, reduce and the escaping op; 3 scatters for matmul's space.
[[ $status == *'data-charts="6"'* ]] || fail "expected 6 charts"
grep -q 'class="bar win"' "$work/dom.html" || fail "no winner bar in the DOM"
if grep -q '<script>alert' "$work/dom.html"; then fail "unescaped markup reached the DOM"; fi
[[ -s $work/report.png ]] || fail "no screenshot"
echo "screenshot: $work/report.png"
