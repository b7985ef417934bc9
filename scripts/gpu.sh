#!/usr/bin/env bash
# The CUDA checks, for a machine with an NVIDIA GPU that has no compiler or Halide of its own:
#
#   bash scripts/gpu.sh pack          # here, after a build: the binaries the GPU run needs -> .gpu/
#   bash scripts/gpu.sh run [OUTDIR]  # there, in a copy of the repo with .gpu/ beside it
#
# `run` checks halide-cuda against the reference (the Halide agreement suites, a 300-case
# campaign) and benchmarks it against torchvision's CUDA kernels (`oplab bench` times
# halide-cuda against the peer on the GPU, halide-cpu against the peer on the CPU), writing
# logs and JSON to OUTDIR (default out/gpu). The kernels were compiled ahead of time here; the
# GPU machine needs only its driver and a Python with torch and torchvision (python3 on PATH,
# or OPLAB_PYTHON). Record what it prints under docs/bench/ with the date and this command.
set -uo pipefail
cd "$(dirname "$0")/.."

TESTS=(test_halide_roi_ops test_halide_deform_conv2d test_halide_interpolate test_float_agreement)

# The CPU kernels of the everyday build are compiled for this machine's processor (host),
# which the GPU machine's may not match (an instruction it lacks would kill the run), so the
# pack is a build of its own, build-gpu/, whose CPU kernels use the same portable x86-64 target
# as the CUDA kernels' host part. The first pack takes as long as a full build.
PORTABLE_CPU_TARGET=x86-64-linux-sse41-avx-avx2-fma-f16c

pack() {
  bash scripts/setup.sh >/dev/null || exit 1  # packages, and the everyday build
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPLAB_HALIDE_CPU_TARGET="$PORTABLE_CPU_TARGET" >/dev/null || exit 1
  cmake --build build-gpu -j"$(nproc)" --target oplab "${TESTS[@]}" || exit 1
  rm -rf .gpu && mkdir -p .gpu/lib
  cp build-gpu/cli/oplab .gpu/
  for t in "${TESTS[@]}"; do cp "build-gpu/tests/$t" .gpu/; done
  # The peer's bridge beside the programs, where they look for it (peer/torchvision_backend.cpp).
  cp peer/*.py .gpu/
  # Shared libraries a bare machine may lack (the report's Markdown renderer).
  ldd build-gpu/cli/oplab | awk '/libcmark/ {print $3}' | xargs -r -I{} cp {} .gpu/lib/
  du -sh .gpu
}

run() {
  local out="${1:-out/gpu}"
  [ -x .gpu/oplab ] || { echo "gpu.sh run: no .gpu/ (run 'bash scripts/gpu.sh pack' where the build is)"; exit 1; }
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The first Python that has torch and torchvision (the peer), unless OPLAB_PYTHON says.
  if [ -z "${OPLAB_PYTHON:-}" ]; then
    for p in "$(command -v python3)" /usr/bin/python3 /usr/local/bin/python3 /opt/conda/bin/python3; do
      if [ -x "$p" ] && "$p" -c 'import torch, torchvision' 2>/dev/null; then OPLAB_PYTHON="$p"; break; fi
    done
  fi
  export OPLAB_PYTHON="${OPLAB_PYTHON:-python3}"
  local status=0
  step() { echo; echo "== $*"; "$@" || status=1; }
  (nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true) | tee "$out/gpu.txt"
  "$OPLAB_PYTHON" -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())' | tee -a "$out/gpu.txt"
  step .gpu/oplab backends
  for t in "${TESTS[@]}"; do
    step ".gpu/$t" --gtest_output="json:$out/$t.json"
  done
  step .gpu/oplab campaign --backend halide-cuda --cases 300 --seed 1 --out "$out/campaign"
  step .gpu/oplab bench --repeats 20 --warmup 5 --threads "$(nproc)" --out "$out/bench.json"
  echo
  echo "gpu.sh run: exit $status; logs and JSON in $out"
  return $status
}

case "${1:-}" in
  pack) pack ;;
  run) shift; run "$@" ;;
  *) echo "usage: bash scripts/gpu.sh pack | run [OUTDIR]"; exit 2 ;;
esac
