#!/usr/bin/env bash
# The main job: set up, run the default campaign of every check on every backend that can run
# here (differential campaign, fuzz, gradient checks, reduced benchmark, study notebooks) and
# build the report. A check that finds failures does not stop the others: the report shows
# them, and the script exits non-zero at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
oplab=./build/cli/oplab
out=out
rm -rf "$out"
mkdir -p "$out"
status=0
step() { echo; echo "== $*"; "$@" || status=1; }

step $oplab backends
step $oplab campaign --cases 300 --seed 1 --out "$out/campaign"
step $oplab fuzz --op all --backend all --time 60 --seed 1 --keep-going --out "$out/fuzz/default"
# The examples a user copies (examples/backends.json: numpy float32 and float16, the C plugin)
# beside the built-in roi_align backends, and their broken copies, declared seeded bugs: caught.
step $oplab campaign --backends examples/backends.json --op roi_align --cases 300 --seed 1 --out "$out/examples"
step $oplab gradcheck --op all --backend all --cases 30 --seed 1 --out "$out/gradcheck.json"
step $oplab bench --reduced --repeats 7 --warmup 3 --out "$out/bench.json"
mkdir -p "$out/cuda-kernels" && cp build/halide/*_cuda.ptx.json "$out/cuda-kernels/"  # the build's PTX checks
for nb in build/notebooks-cpp/nb_*; do
  step "$nb" --out "$out/notebooks"
done
step $oplab report --from "$out" --out "$out/report" --command "bash scripts/main.sh"
echo
echo "report: $out/report/index.html (Markdown twin: $out/report/index.md)"
exit $status
