#!/usr/bin/env bash
# Installs the Debian packages nuphar-cpp builds and tests with. Safe to re-run: packages
# already present are skipped, and apt is only asked when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libcli11-dev libeigen3-dev llvm-14-dev zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev libedit-dev libffi-dev
  libgtest-dev libgmock-dev libbenchmark-dev libdnnl-dev
  python3-onnx python3-numpy
  pybind11-dev python3-dev python3-pytest  # the `nuphar` Python module (python/) and its tests
  nlohmann-json3-dev
  chromium  # headless browser for report_browser_test (rnn_benchmark's report.html)
  clang-14 libclang-rt-14-dev  # libFuzzer for scripts/fuzz.sh (tests/fuzz)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
