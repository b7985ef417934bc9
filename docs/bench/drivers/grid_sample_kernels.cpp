// The 2-D grid_sample CPU kernels of two revisions (a, b) in one process, alternating run by
// run (bench record 2026-11-29c): the forward, grad_input and grad_grid, each timed alone on
// the benchmark's data (input and grad_output uniform in [-1, 1], the grid uniform in
// [-1.1, 1.1], so that some positions fall outside the image and the padding decides). Prints
// each kernel's median and min per side, and the largest difference between the sides'
// outputs relative to the largest output (0 where both sum in the same order).
//
// Build (from the repository root, with the build's Halide 14; OUT a scratch folder, REV the
// revision to compare the working tree with):
//   G=/usr/src/halide14/GenGen.cpp; mkdir -p $OUT/a && git archive REV halide/generators | tar -x -C $OUT/a
//   for s in a b; do src=$([ $s = a ] && echo $OUT/a || echo .)/halide/generators
//     g++ -std=c++17 -O1 -I/usr/include/halide14 -I$src $src/grid_sample_generator.cpp $G -o $OUT/gen_$s -lHalide14 -ldl -lpthread
//     rt=$([ $s = a ] && echo "" || echo -no_runtime)
//     for k in forward:fwd grad_input:gi grad_grid:gg; do
//       $OUT/gen_$s -g grid_sample_${k%:*} -f ${s}_${k#*:} -o $OUT -e static_library,h target=host-user_context$rt; rt=-no_runtime
//     done; done
//   g++ -std=c++17 -O2 -I$OUT -I/usr/include/halide14 docs/bench/drivers/grid_sample_kernels.cpp $OUT/[ab]_*.a -o $OUT/grid -ldl -lpthread
// Run as the benchmark runs (its heap setting; HL_NUM_THREADS=1 measures the work alone, which
// this VM's two threads measure bimodally, see the record):
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647 HL_NUM_THREADS=1 $OUT/grid N C H W PADDING RUNS
// e.g. `8 64 128 128 zeros 7` (the standard bench shape) or `2 16 128 128 border 21` (reduced).
#include <HalideBuffer.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "a_fwd.h"
#include "a_gg.h"
#include "a_gi.h"
#include "b_fwd.h"
#include "b_gg.h"
#include "b_gi.h"
#include "driver_timing.h"

using Halide::Runtime::Buffer;

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: grid N C H W zeros|border|reflection RUNS\n");
    return 2;
  }
  const int N = std::atoi(argv[1]), C = std::atoi(argv[2]), H = std::atoi(argv[3]), W = std::atoi(argv[4]);
  const std::string pad_name = argv[5];
  const int pad = pad_name == "zeros" ? 0 : pad_name == "border" ? 1 : 2, runs = std::atoi(argv[6]);
  const int mode = 0, ac = 0;  // bilinear, align_corners false: the bench's
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> unit(-1, 1), spread(-1.1f, 1.1f);
  Buffer<float> in(W, H, C, N), grid(2, W, H, N), gout(W, H, C, N);
  in.for_each_value([&](float& v) { v = unit(rng); });
  grid.for_each_value([&](float& v) { v = spread(rng); });
  gout.for_each_value([&](float& v) { v = unit(rng); });
  Buffer<float> out[2] = {Buffer<float>(W, H, C, N), Buffer<float>(W, H, C, N)};
  Buffer<float> gi[2] = {Buffer<float>(W, H, C, N), Buffer<float>(W, H, C, N)};
  Buffer<float> gg[2] = {Buffer<float>(2, W, H, N), Buffer<float>(2, W, H, N)};
  std::vector<driver_timing::Kernel> kernels = {
      {"forward",
       {[&] { a_fwd(nullptr, in, grid, mode, pad, ac, out[0]); }, [&] { b_fwd(nullptr, in, grid, mode, pad, ac, out[1]); }},
       out},
      {"grad_input",
       {[&] { a_gi(nullptr, in, grid, mode, pad, ac, gout, gi[0]); },
        [&] { b_gi(nullptr, in, grid, mode, pad, ac, gout, gi[1]); }},
       gi},
      {"grad_grid",
       {[&] { a_gg(nullptr, in, grid, mode, pad, ac, gout, gg[0]); },
        [&] { b_gg(nullptr, in, grid, mode, pad, ac, gout, gg[1]); }},
       gg},
  };
  std::printf("[%d, %d, %d, %d] %s, %d runs alternating (ms)\n", N, C, H, W, pad_name.c_str(), runs);
  driver_timing::time_alternating(kernels, runs);
  return 0;
}
