// The two CPU kernels of nearest 2-D's backward at 2x on both axes, alternating run by run in
// one process (bench record 2026-11-29e): the two passes through the inverse tables
// (interp_nearest2_bwd_cpu, which every other nearest 2-D backward still runs) and the one
// pass (interp_nearest2x2_bwd_cpu). grad_output uniform in [0, 1), [P planes, 2H, 2W] ->
// [P, H, W]. With FLUSH set, 64 MB are written before each call, as the benchmark's peers
// between our runs leave the caches; without, the data stay in cache. Prints each kernel's
// median and min, and how many outputs differ in value (the sums are the same; only a zero's
// sign may differ).
//
// Build (from the repository root, after a build in build/):
//   g++ -std=c++17 -O2 -Ibuild/halide -I/usr/include/halide14 docs/bench/drivers/interp_nearest_backward.cpp \
//     build/halide/libinterp_nearest2_bwd_cpu.a build/halide/libinterp_nearest2x2_bwd_cpu.a \
//     build/halide/libdeform_conv2d_fwd_cuda.runtime.a -o OUT/nearest_bwd -ldl -lpthread
// Run (the benchmark's heap settings; HL_NUM_THREADS 1 or 2):
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647 HL_NUM_THREADS=1 [FLUSH=1] OUT/nearest_bwd P H W RUNS
// e.g. `128 64 64 41` (the main job's reduced shape, [2, 64, 64, 64] -> 128 x 128).
#include <HalideBuffer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "driver_timing.h"
#include "interp_nearest2_bwd_cpu.h"
#include "interp_nearest2x2_bwd_cpu.h"

using Halide::Runtime::Buffer;

namespace {

using driver_timing::ms;

using Kernel = int (*)(const void*, halide_buffer_t*, double, double, double, bool, bool, int, int, int, int, int, int,
                       int, int, int, halide_buffer_t*);

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s PLANES H W RUNS\n", argv[0]);
    return 2;
  }
  const int P = std::atoi(argv[1]), H = std::atoi(argv[2]), W = std::atoi(argv[3]), runs = std::atoi(argv[4]);
  Buffer<float> go(2 * W, 2 * H, 1, P), two(W, H, 1, P), one(W, H, 1, P);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  go.for_each_value([&](float& v) { v = u(rng); });
  std::vector<float> junk(size_t(16) << 20);
  const bool flush = std::getenv("FLUSH") != nullptr;
  auto call = [&](Kernel k, Buffer<float>& gi) {
    if (flush)
      for (size_t i = 0; i < junk.size(); i += 16) junk[i] += 1.0f;
    // scale 1/2 per axis, reach 2, x_path = y_path = 1 (kXUpsample2), as the glue passes them
    return ms([&] {
      if (k(nullptr, go, 0.5, 0.5, 1.0, false, false, 2, 2, 1, 1, 1, 0, W, H, 1, gi) != 0) std::exit(1);
    });
  };
  std::vector<double> t2, t1;
  for (int r = 0; r < runs; ++r) {
    t2.push_back(call(interp_nearest2_bwd_cpu, two));
    t1.push_back(call(interp_nearest2x2_bwd_cpu, one));
  }
  size_t differ = 0;
  for (int p = 0; p < P; ++p)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) differ += two(x, y, 0, p) != one(x, y, 0, p);
  std::sort(t2.begin(), t2.end());
  std::sort(t1.begin(), t1.end());
  std::printf("two passes %.3f ms (min %.3f)  one pass %.3f ms (min %.3f)  outputs that differ: %zu\n", t2[t2.size() / 2],
              t2[0], t1[t1.size() / 2], t1[0], differ);
  return 0;
}
