# Sourced by the browser tests: sets $browser to the Chromium to run (TUNEKIT_TEST_BROWSER names
# one, "none" skips), else the first one found; without one, says why and exits 77 (CTest:
# skipped). Usage: find_browser "<what the test would have checked>"
find_browser() {
  browser=${TUNEKIT_TEST_BROWSER:-}
  if [[ -z $browser ]]; then
    for candidate in chromium chromium-browser google-chrome; do
      if command -v "$candidate" >/dev/null; then browser=$(command -v "$candidate"); break; fi
    done
  fi
  if [[ -z $browser || $browser == none ]] || ! command -v "$browser" >/dev/null; then
    echo "SKIPPED: no Chromium to $1 (scripts/install-deps.sh installs it)"
    exit 77
  fi
}
