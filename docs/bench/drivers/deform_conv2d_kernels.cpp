// deform_conv2d CPU kernels of two revisions (a, b) in one process, alternating run by run, on
// the benchmark's data (input, weight and grad_output uniform in [-1, 1], offsets in [-2, 2],
// mask in [0, 1], 3x3, padding 1; bias zero): the forward, Gcol = W^T grad_output image by
// image as the backward runs it, the backward's whole image loop as the glue runs it (Gcol,
// grad_input, grad_offset/grad_mask), and grad_weight (with the glue's number of chunks).
// Prints each kernel's median and min per side, and the largest difference between the sides'
// outputs relative to the largest output (0 where both sum in the same order).
//
// Build (from the repository root, with the build's Halide 14; OUT a scratch folder, REV the
// revision to compare the working tree with):
//   G=/usr/src/halide14/GenGen.cpp; mkdir -p $OUT/a && git archive REV halide/generators | tar -x -C $OUT/a
//   for s in a b; do src=$([ $s = a ] && echo $OUT/a || echo .)/halide/generators
//     g++ -std=c++17 -O1 -I/usr/include/halide14 -I$src $src/deform_conv2d_generator.cpp $G -o $OUT/gen_$s -lHalide14 -ldl -lpthread
//     rt=$([ $s = a ] && echo "" || echo -no_runtime)
//     for k in forward:fwd gcol:gcol grad_input:gi grad_offset_mask:gom grad_weight:gw; do
//       $OUT/gen_$s -g deform_conv2d_${k%:*} -f ${s}_${k#*:} -o $OUT -e static_library,h target=host-user_context$rt; rt=-no_runtime
//     done; done
//   g++ -std=c++17 -O2 -I$OUT -I/usr/include/halide14 -Idocs/bench/drivers docs/bench/drivers/deform_conv2d_kernels.cpp $OUT/[ab]_*.a -o $OUT/dcn -ldl -lpthread
// Run as the benchmark runs (its heap setting; HL_NUM_THREADS=1 measures the work alone):
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647 HL_NUM_THREADS=1 $OUT/dcn N C HW RUNS
// e.g. `4 128 64 9` (the standard shape N4 C128 64x64) or `1 32 56 21` (reduced).
#include <HalideBuffer.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "a_fwd.h"
#include "a_gcol.h"
#include "a_gi.h"
#include "a_gom.h"
#include "a_gw.h"
#include "b_fwd.h"
#include "b_gcol.h"
#include "b_gi.h"
#include "b_gom.h"
#include "b_gw.h"
#include "driver_timing.h"

using Halide::Runtime::Buffer;

namespace {

// Image n of a buffer whose outermost dimension is the batch, at 0 (as the glue's image()).
Buffer<float> image(Buffer<float>& b, int n) {
  const int last = b.dimensions() - 1;
  Buffer<float> v = b.cropped(last, n, 1);
  v.translate(last, -n);
  return v;
}

// The glue's Gcol scratch for one image: (c, j, i, ox, oy, n) stored c, ox, j, i, oy; channels
// rounded up to 64 and ox to 24 (a whole number of either side's tiles), with the glue's 64
// floats of slack at the end for the readers' view (64 more channels per row).
Buffer<float> gcol_scratch(int C, int W, std::vector<float>& memory) {
  const int ext[] = {(C + 63) / 64 * 64, 3, 3, (W + 23) / 24 * 24, W, 1};
  std::vector<halide_dimension_t> dims(6);
  int stride = 1;
  for (int d : {0, 3, 1, 2, 4, 5}) dims[d] = {0, ext[d], stride, 0}, stride *= ext[d];
  memory.assign(size_t(stride) + 64, 0.0f);
  return Buffer<float>(memory.data(), 6, dims.data());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: dcn N C HW RUNS\n");
    return 2;
  }
  const int N = std::atoi(argv[1]), C = std::atoi(argv[2]), HW = std::atoi(argv[3]), runs = std::atoi(argv[4]);
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> unit(-1, 1), spread(-2, 2), zero_one(0, 1);
  // The generator's layouts (its header): input (x, y, c, n), offset (ox, oy, comp, j, i, d, n),
  // mask (ox, oy, j, i, d, n), weight (j, i, cg, oo, g), bias (oo, g), output (ox, oy, oo, g, n).
  Buffer<float> in(HW, HW, C, N), off(HW, HW, 2, 3, 3, 1, N), mask(HW, HW, 3, 3, 1, N), w(3, 3, C, C, 1), bias(C, 1);
  in.for_each_value([&](float& v) { v = unit(rng); });
  off.for_each_value([&](float& v) { v = spread(rng); });
  mask.for_each_value([&](float& v) { v = zero_one(rng); });
  w.for_each_value([&](float& v) { v = unit(rng); });
  bias.fill(0.0f);
  Buffer<float> gout(HW, HW, C, 1, N);
  gout.for_each_value([&](float& v) { v = unit(rng); });
  Buffer<float> out[2] = {Buffer<float>(HW, HW, C, 1, N), Buffer<float>(HW, HW, C, 1, N)};
  std::vector<float> gcol_memory[2];
  Buffer<float> gcol[2] = {gcol_scratch(C, HW, gcol_memory[0]), gcol_scratch(C, HW, gcol_memory[1])};
  auto gcols = [&](int s) {
    for (int n = 0; n < N; ++n) {
      Buffer<float> g = image(gout, n);
      (s ? b_gcol : a_gcol)(nullptr, w, g, gcol[s]);
    }
  };
  // The glue's chunks (weight_chunks): the largest divisor of the rows up to 16 (the weight
  // here is far below its memory cap).
  int chunks = 1;
  for (int t = std::min(16, N * HW); t > 1; --t)
    if (N * HW % t == 0) {
      chunks = t;
      break;
    }
  Buffer<float> gw[2] = {Buffer<float>(3, 3, C, C, 1), Buffer<float>(3, 3, C, C, 1)};
  Buffer<float> gb[2] = {Buffer<float>(C, 1), Buffer<float>(C, 1)};
  // The glue's image loop of the backward: Gcol, then grad_input and grad_offset/grad_mask
  // reading it (their view of Gcol has 64 more channels per row: the glue's gcol_r_).
  Buffer<float> gin[2] = {Buffer<float>(HW, HW, C, N), Buffer<float>(HW, HW, C, N)};
  Buffer<float> goff[2] = {Buffer<float>(HW, HW, 2, 3, 3, 1, N), Buffer<float>(HW, HW, 2, 3, 3, 1, N)};
  Buffer<float> gmask[2] = {Buffer<float>(HW, HW, 3, 3, 1, N), Buffer<float>(HW, HW, 3, 3, 1, N)};
  auto images = [&](int s) {
    Buffer<float> r = gcol[s].alias();
    r.raw_buffer()->dim[0].extent += 64;
    for (int n = 0; n < N; ++n) {
      Buffer<float> g = image(gout, n), x = image(in, n), o = image(off, n), m = image(mask, n);
      Buffer<float> gi = image(gin[s], n), go = image(goff[s], n), gm = image(gmask[s], n);
      (s ? b_gcol : a_gcol)(nullptr, w, g, gcol[s]);
      (s ? b_gi : a_gi)(nullptr, x, o, m, w, 1, 1, 1, 1, 1, 1, g, r, gi);
      (s ? b_gom : a_gom)(nullptr, x, o, m, w, 1, 1, 1, 1, 1, 1, g, r, go, gm);
    }
  };
  std::vector<driver_timing::Kernel> kernels = {
      {"forward",
       {[&] { a_fwd(nullptr, in, off, mask, w, 1, 1, 1, 1, 1, 1, bias, out[0]); },
        [&] { b_fwd(nullptr, in, off, mask, w, 1, 1, 1, 1, 1, 1, bias, out[1]); }},
       out},
      // Gcol's rounded-up channels and columns are left out (each side may fill them differently).
      {"gcol", {[&] { gcols(0); }, [&] { gcols(1); }}, gcol, [&](const int* p) { return p[0] < C && p[3] < HW; }},
      // grad_input compared (grad_offset/grad_mask are computed from the same Gcol).
      {"gcol+gi+gom", {[&] { images(0); }, [&] { images(1); }}, gin},
      {"grad_weight",
       {[&] { a_gw(nullptr, in, off, mask, w, 1, 1, 1, 1, 1, 1, gout, chunks, gw[0], gb[0]); },
        [&] { b_gw(nullptr, in, off, mask, w, 1, 1, 1, 1, 1, 1, gout, chunks, gw[1], gb[1]); }},
       gw},
  };
  std::printf("deform_conv2d N%d C%d %dx%d, %d runs alternating (ms)\n", N, C, HW, HW, runs);
  driver_timing::time_alternating(kernels, runs);
  return 0;
}
