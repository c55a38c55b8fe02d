#!/usr/bin/env bash
# The HTML report's layout in headless Chromium at 1,000 px: a matmul key, a long winner's name
# and a parameter of 10 values (tunekit_report_sample --layout). layout_check.js, added to a copy
# of the page, measures the boxes: no chart's labels overlap, and the summary table is not
# clipped. Exits 77 (CTest: skipped) without Chromium.
# Usage: browser_layout_test.sh <tunekit> <tunekit_report_sample> <work dir>
set -euo pipefail
tunekit=$1 sample=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/browser.sh"
find_browser "measure the HTML report's layout in"
rm -rf "$work" && mkdir -p "$work"
"$sample" --layout "$work/cache" >/dev/null
"$tunekit" --cache-dir "$work/cache" report --html "$work/report.html" >/dev/null
cp "$here/layout_check.js" "$work/layout_check.js"
# The page with the measuring script added at its end (after the report's own script).
sed 's|</body></html>|<script src="layout_check.js"></script></body></html>|' "$work/report.html" \
  >"$work/measured.html"
grep -q 'layout_check.js' "$work/measured.html" || { echo "could not add the script" >&2; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check
       --disable-extensions --user-data-dir="$work/profile" --virtual-time-budget=5000
       --hide-scrollbars --window-size=1000,3000)
timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$work/measured.html" \
  >"$work/dom.html" 2>"$work/chromium.log" || { cat "$work/chromium.log" >&2; exit 1; }
timeout 60 "$browser" "${flags[@]}" --screenshot="$work/layout.png" "file://$work/report.html" \
  >>"$work/chromium.log" 2>&1 || true
verdict=$(sed -n '/<pre id="layout"/,/<\/pre>/p' "$work/dom.html")
echo "$verdict"
[[ -n $verdict ]] || { echo "browser_layout_test.sh: the measuring script did not run" >&2; exit 1; }
[[ $verdict == *'data-width="1000"'* ]] || { echo "browser_layout_test.sh: not measured at 1000 px" >&2; exit 1; }
[[ $verdict != *'data-charts="0"'* ]] || { echo "browser_layout_test.sh: no chart" >&2; exit 1; }
[[ $verdict == *'data-state="ok"'* ]] || { echo "browser_layout_test.sh: layout problems (screenshot: $work/layout.png)" >&2; exit 1; }
echo "browser_layout_test.sh: ok (screenshot: $work/layout.png)"
