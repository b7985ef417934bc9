#!/usr/bin/env bash
# The CUDA checks, for a machine with an NVIDIA GPU that has no compiler or Halide of its own:
#
#   bash scripts/gpu.sh pack          # here, after a build: the binaries the GPU run needs -> .gpu/
#   bash scripts/gpu.sh run [OUTDIR]  # there, in a copy of the repo with .gpu/ (or .gpu/bundle.tar.xz alone)
#
# `run` checks halide-cuda against the reference (the Halide agreement suites, a campaign),
# judges torch's own CUDA kernels (torchvision-cuda-f32, -f16) against the reference by the
# precision rule, measures which type torch's half kernels add in, and benchmarks halide-cuda
# against torchvision's CUDA kernels (`oplab bench --device cuda`, device-synchronised),
# writing logs and JSON to OUTDIR (default out/gpu). The kernels were compiled ahead of time
# here; the GPU machine needs only its driver and a Python with torch and torchvision (python3
# on PATH, or OPLAB_PYTHON). Every step has a time limit, so that the whole run fits a short
# lease (about 6 minutes on an H100); set OPLAB_GPU_CASES to change the campaigns' size.
# Record what it prints under docs/bench/ with the date and this command.
set -uo pipefail
cd "$(dirname "$0")/.."

TESTS=(test_halide_roi_ops test_halide_ps_roi_ops test_halide_deform_conv2d test_halide_interpolate
       test_halide_grid_sample test_halide_ms_deform_attn test_halide_deform_roi_pool_f16 test_float_agreement
       test_peer_torchvision)

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
  cp scripts/torch_accumulation_probe.py scripts/torch_cases_on_device.py .gpu/
  # Shared libraries a bare machine may lack (OpenCV and what it pulls in, the report's Markdown
  # renderer): every one but the C and C++ runtimes, which the machine has, newer (ours would
  # reach torch in the bridge through LD_LIBRARY_PATH and break it).
  for bin in .gpu/oplab .gpu/test_*; do ldd "$bin"; done |
    awk '$3 ~ /^\// && $1 !~ /^(libc|libm|libstdc\+\+|libgcc_s|libz|libpthread|libdl|librt)\.so/ {print $3}' |
    sort -u | xargs -r -I{} cp -L {} .gpu/lib/
  strip .gpu/oplab .gpu/test_* .gpu/lib/*
  # What travels to the GPU machine (64 MiB at most): the binaries share most of their bytes
  # (the kernels), which xz's 64 MiB window finds across files: ~200 MB become ~15.
  tar cf - -C .gpu --exclude=bundle.tar.xz . | xz -9 -T2 > .gpu/bundle.tar.xz || exit 1
  du -sh .gpu .gpu/bundle.tar.xz
}

run() {
  local out="${1:-out/gpu}"
  # Carried alone (.gpu/bundle.tar.xz), the pack is unpacked beside it first.
  if [ ! -x .gpu/oplab ] && [ -f .gpu/bundle.tar.xz ]; then tar xJf .gpu/bundle.tar.xz -C .gpu || exit 1; fi
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
  local status=0 cases="${OPLAB_GPU_CASES:-1000}"
  # Each step under a time limit (seconds first), cut to what is left of the whole run's
  # OPLAB_GPU_DEADLINE seconds (default 480): one that hangs costs its limit, not the lease,
  # and a step with no time left is skipped, saying so.
  local deadline=$((SECONDS + ${OPLAB_GPU_DEADLINE:-480}))
  step() {
    local limit=$1 left=$((deadline - SECONDS)); shift
    [ "$limit" -gt "$left" ] && limit=$left
    echo; echo "== $* (limit ${limit}s, $(date -u +%T))"
    if [ "$limit" -lt 5 ]; then echo "== skipped: the run's deadline has passed"; status=1; return; fi
    timeout -k 5 "$limit" "$@" || { echo "== exit $? from: $*"; status=1; }
  }
  (nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true) | tee "$out/gpu.txt"
  "$OPLAB_PYTHON" -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, torch.cuda.is_available(), "tf32 matmul", torch.backends.cuda.matmul.allow_tf32)' | tee -a "$out/gpu.txt"
  # The most telling first: our CUDA kernels against the reference, then the suites, the
  # benchmark, torch's CUDA kernels, and which type torch's half kernels add in.
  # The GPU's copy bandwidth (bytes read + written, 1 GiB device-to-device, best of 10): the
  # limit the memory-bound rows of the benchmark are read against.
  "$OPLAB_PYTHON" -c '
import torch, time
a = torch.empty(1 << 28, device="cuda"); b = torch.empty_like(a); best = 0
for _ in range(10):
    torch.cuda.synchronize(); t = time.perf_counter(); b.copy_(a); torch.cuda.synchronize()
    best = max(best, 2 * a.numel() * 4 / (time.perf_counter() - t) / 1e9)
print("gpu copy bandwidth %.0f GB/s (read + write, best of 10)" % best)' 2>&1 | tee -a "$out/gpu.txt"
  step 30 .gpu/oplab backends
  step 100 .gpu/oplab campaign --backend halide-cuda --backend halide-cuda-f16 --cases "$cases" --seed 1 --out "$out/campaign"
  for t in "${TESTS[@]}"; do
    local filter='*'
    [ "$t" = test_peer_torchvision ] && filter='*Cuda*:*Bench*'  # the rest is the CPU peer's
    step 60 ".gpu/$t" --gtest_filter="$filter" --gtest_output="json:$out/$t.json"
  done
  step 120 .gpu/oplab bench --device cuda --repeats 20 --warmup 5 --out "$out/bench.json"
  step 120 .gpu/oplab campaign --backend torchvision-cuda-f32 --backend torchvision-cuda-f16 --cases "$((cases / 2))" --seed 1 --out "$out/campaign-torch-cuda"
  for dt in float16 bfloat16; do
    step 30 "$OPLAB_PYTHON" .gpu/torch_accumulation_probe.py --device cuda --dtype $dt | tee -a "$out/accumulation.jsonl"
  done
  echo
  echo "gpu.sh run: exit $status; logs and JSON in $out"
  return $status
}

case "${1:-}" in
  pack) pack ;;
  run) shift; run "$@" ;;
  *) echo "usage: bash scripts/gpu.sh pack | run [OUTDIR]"; exit 2 ;;
esac
