#!/usr/bin/env bash
# Installs what is missing (Debian 12, as root or with sudo), then configures and builds
# into build/. Idempotent and quick when everything is already there.
# --sanitize: configures and builds the ASan+UBSan build into build-sanitize/ instead
# (OPLAB_SANITIZE=ON, RelWithDebInfo; README, "Sanitizers").
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
configure=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  build_dir=build-sanitize
  configure=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPLAB_SANITIZE=ON)
fi

PACKAGES=(cmake ninja-build g++ git libgtest-dev librapidcheck-dev nlohmann-json3-dev libcli11-dev
          libhalide14-0-dev libcmark-gfm-dev libcmark-gfm-extensions-dev python3-jsonschema
          python3-torchvision gnuplot-nox pocl-opencl-icd)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake -S . -B "$build_dir" -G Ninja "${configure[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
