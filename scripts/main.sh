#!/usr/bin/env bash
# The main job: set up, then run the default campaign (every op on every backend that can
# run here, against the reference) and the reduced benchmark, writing results under out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/cli/oplab backends
./build/cli/oplab campaign --out out/campaign "$@"
./build/cli/oplab bench --reduced --repeats 3 --warmup 1 --out out/bench.json
