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
          python3-torchvision python3-numpy python3-pil python3-pytest gnuplot-nox pocl-opencl-icd libopencv-dev
          python3-opencv chromium)

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

# The onnxruntime peer's Node packages (peer/onnxruntime/package-lock.json). --ignore-scripts:
# onnxruntime-node's install script fetches GPU binaries; the CPU binary ships in the package.
# Without node or npm the peer says it cannot run here.
if [ ! -d peer/onnxruntime/node_modules/onnxruntime-node ]; then
  # Node.js and npm from Debian when the machine has none (a machine that has its own is left as it is).
  if ! command -v npm >/dev/null; then
    echo "installing: nodejs npm"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null ||
      echo "apt-get could not install nodejs npm"
  fi
  if command -v npm >/dev/null; then
    (cd peer/onnxruntime && npm ci --ignore-scripts --no-audit --no-fund >/dev/null) ||
      echo "npm ci failed: the onnxruntime peer will not run here"
  else
    echo "no npm: the onnxruntime peer will not run here"
  fi
fi

cmake -S . -B "$build_dir" -G Ninja "${configure[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
