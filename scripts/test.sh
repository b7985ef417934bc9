#!/usr/bin/env bash
# Set up, then build and run every test with ctest. Arguments go to ctest.
# --sanitize (first argument): the same tests built with ASan+UBSan in build-sanitize/,
# less those labelled no_sanitize (README, "Sanitizers").
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  shift
  bash scripts/setup.sh --sanitize
  cd build-sanitize
  ctest --output-on-failure -j"$(nproc)" -LE no_sanitize "$@"
  exit
fi
bash scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
