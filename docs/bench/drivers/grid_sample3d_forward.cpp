// The 5-D grid_sample CPU forward (channels-last kernel) of two revisions (a, b) in one
// process, alternating run by run (bench record 2026-12-08): input uniform in [-1, 1], the grid
// uniform in [-1.1, 1.1] as the benchmark's (LOCAL=1: each position near its own voxel instead,
// which separates the cost of the random reads from the rest). Prints each side's median and
// min and the largest difference between the sides' outputs relative to the largest output.
//
// Build (from the repository root, with the build's Halide 14; OUT a scratch folder, REV the
// revision to compare the working tree with):
//   G=/usr/src/halide14/GenGen.cpp; mkdir -p $OUT/a && git archive REV halide/generators | tar -x -C $OUT/a
//   for s in a b; do src=$([ $s = a ] && echo $OUT/a || echo .)/halide/generators
//     g++ -std=c++17 -O1 -I/usr/include/halide14 -I$src $src/grid_sample3d_generator.cpp $G -o $OUT/gen_$s -lHalide14 -ldl -lpthread
//     rt=$([ $s = a ] && echo "" || echo -no_runtime)
//     $OUT/gen_$s -g grid_sample3d_forward -f ${s}_fwd -o $OUT -e static_library,h target=host-user_context$rt
//   done
//   g++ -std=c++17 -O2 -I$OUT -I/usr/include/halide14 -Idocs/bench/drivers docs/bench/drivers/grid_sample3d_forward.cpp $OUT/[ab]_fwd.a -o $OUT/grid3 -ldl -lpthread
// Run as the benchmark runs (its heap setting; HL_NUM_THREADS=1 measures the work alone):
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647 HL_NUM_THREADS=1 $OUT/grid3 N C D H W RUNS
// e.g. `2 16 32 64 64 9` (the standard bench shape) or `2 4 32 64 64 9` (reduced).
#include <HalideBuffer.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "a_fwd.h"
#include "b_fwd.h"
#include "driver_timing.h"

using Halide::Runtime::Buffer;

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: grid3 N C D H W RUNS\n");
    return 2;
  }
  const int N = std::atoi(argv[1]), C = std::atoi(argv[2]), D = std::atoi(argv[3]), H = std::atoi(argv[4]),
            W = std::atoi(argv[5]), runs = std::atoi(argv[6]);
  const int mode = 0, pad = 0, ac = 0;  // trilinear, zeros, align_corners false: the bench's
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> unit(-1, 1), spread(-1.1f, 1.1f);
  // The grid has the input's size: a position per voxel, as the bench's shape.
  Buffer<float> in(W, H, D, C, N), grid(3, W, H, D, N);
  in.for_each_value([&](float& v) { v = unit(rng); });
  grid.for_each_value([&](float& v) { v = spread(rng); });
  if (std::getenv("LOCAL"))
    grid.for_each_element([&](const int* p) {
      const int extent[3] = {W, H, D};
      grid(p) = (2.0f * p[p[0] + 1] + 1) / extent[p[0]] - 1 + 0.01f * unit(rng);
    });
  Buffer<float> out[2] = {Buffer<float>(W, H, D, C, N), Buffer<float>(W, H, D, C, N)};
  std::vector<driver_timing::Kernel> kernels = {
      {"forward",
       {[&] { a_fwd(nullptr, in, grid, mode, pad, ac, out[0]); }, [&] { b_fwd(nullptr, in, grid, mode, pad, ac, out[1]); }},
       out}};
  std::printf("[%d, %d, %d, %d, %d], %d runs alternating (ms)\n", N, C, D, H, W, runs);
  driver_timing::time_alternating(kernels, runs);
  return 0;
}
