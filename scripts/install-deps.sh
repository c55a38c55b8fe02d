#!/usr/bin/env bash
# Installs the Debian packages tunekit needs to build, test and run, when any is missing.
# Usage: scripts/install-deps.sh   (root, or a user with sudo)
# chromium is for the test that opens the HTML report in a headless browser (label: browser);
# without it that test is skipped. (--with-browser, once needed for it, is still accepted.)
# clang and libclang-rt-14-dev (libFuzzer) build the fuzz targets that .ci/run runs; clang-format
# checks the layout of the C++ files (scripts/check-format.sh).
# libhiredis-dev builds the Redis result store; redis-server is for its tests, which start their
# own server on a free loopback port: a redis-server installed here is not left running as a
# service (stopped and disabled right after its installation).
set -euo pipefail

packages=(cmake ninja-build g++ make pkg-config git
  ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd clinfo
  libboost1.81-dev libcereal-dev libxxhash-dev libcli11-dev
  catch2 libbenchmark-dev libclblast-dev chromium clang libclang-rt-14-dev
  libhiredis-dev redis-server clang-format)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "tunekit: installing missing packages: ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "tunekit: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Only a redis-server this script installed: one the machine already had is left as it was.
if [[ " ${missing[*]} " == *" redis-server "* ]]; then
  if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    "${sudo[@]}" systemctl disable --now redis-server >/dev/null 2>&1 || true
  elif command -v service >/dev/null; then
    "${sudo[@]}" service redis-server stop >/dev/null 2>&1 || true
  fi
fi
