// The CPU backward kernel of ps_roi_pool (ps_roi_pool_bwd_cpu) against a C++ model of
// torchvision's CPU backward (zero-fill grad_input, then for every roi, output channel and bin
// add grad_output / area to the bin's pixels), alternating run by run in one process (bench
// record 2026-11-29f). The main job's reduced shape by default: input [2, 7 * 49, 50, 76], rois
// as the benchmark draws them (boxes 8-200 px on an 800 x 1216 image), spatial_scale 1/16.
// GAP_US=N sleeps N microseconds before each call of ours (the benchmark's alternation leaves
// each side's run after the other side's); ALL=1 prints every run of ours. Prints each side's
// median and min, and the largest difference between the two gradients (0: the same sums in
// the same order).
//
// Build (from the repository root, after a build in build/):
//   g++ -std=c++17 -O2 -march=native -Ibuild/halide -I/usr/include/halide14 docs/bench/drivers/ps_roi_pool_backward.cpp \
//     build/halide/libps_roi_pool_bwd_cpu.a build/halide/libdeform_conv2d_fwd_cuda.runtime.a -o OUT/psp -ldl -lpthread
// Run (the benchmark's heap settings; HL_NUM_THREADS 1 or 2):
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647 HL_NUM_THREADS=1 [GAP_US=5000] OUT/psp CO K RUNS
// e.g. `7 75 41` (the reduced shape: 7 output channels, 75 rois) or `21 300 11` (the standard one).
#include <HalideBuffer.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "driver_timing.h"
#include "ps_roi_pool_bwd_cpu.h"

using Halide::Runtime::Buffer;

namespace {

using driver_timing::ms;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s CO K RUNS\n", argv[0]);
    return 2;
  }
  const int N = 2, Co = std::atoi(argv[1]), PH = 7, PW = 7, H = 50, W = 76, K = std::atoi(argv[2]), runs = std::atoi(argv[3]);
  const int C = Co * PH * PW;
  const double s = 1.0 / 16;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> side(8, 200), unit(0, 1);
  Buffer<float> rois(5, K);
  for (int k = 0; k < K; ++k) {
    const double w = side(rng), h = side(rng), x1 = unit(rng) * (1216 - w), y1 = unit(rng) * (800 - h);
    rois(0, k) = float(int(unit(rng) * N) % N);
    rois(1, k) = float(x1), rois(2, k) = float(y1), rois(3, k) = float(x1 + w), rois(4, k) = float(y1 + h);
  }
  Buffer<float> gout(PW, PH, Co, K);
  std::uniform_real_distribution<float> u(-1, 1);
  gout.for_each_value([&](float& v) { v = u(rng); });
  std::vector<float> ours(size_t(N) * C * H * W), model(ours.size());
  // grad_input as the glue passes it: [N, C, H, W] seen as (x, y, pw, ph, c, n).
  const int plane = H * W;
  halide_dimension_t dims[6] = {{0, W, 1}, {0, H, W}, {0, PW, plane}, {0, PH, PW * plane}, {0, Co, PH * PW * plane}, {0, N, C * plane}};
  Buffer<float> gin(ours.data(), 6, dims);
  // torchvision's loop: bins in double as SPEC §11 forms them (round half away from zero).
  auto peer_model = [&] {
    std::memset(model.data(), 0, model.size() * sizeof(float));
    for (int k = 0; k < K; ++k) {
      const int n = int(rois(0, k));
      const int sw = int(std::round(rois(1, k) * s)), sh = int(std::round(rois(2, k) * s));
      const int ew = int(std::round(rois(3, k) * s)), eh = int(std::round(rois(4, k) * s));
      const double bw = std::max(ew - sw, 1) / double(PW), bh = std::max(eh - sh, 1) / double(PH);
      for (int c = 0; c < Co; ++c)
        for (int ph = 0; ph < PH; ++ph)
          for (int pw = 0; pw < PW; ++pw) {
            const int hs = std::clamp(int(std::floor(ph * bh)) + sh, 0, H - 1), he = std::clamp(int(std::ceil((ph + 1) * bh)) + sh, 0, H - 1);
            const int ws = std::clamp(int(std::floor(pw * bw)) + sw, 0, W - 1), we = std::clamp(int(std::ceil((pw + 1) * bw)) + sw, 0, W - 1);
            if (he <= hs || we <= ws) continue;
            const float v = gout(pw, ph, c, k) / float((he - hs) * (we - ws));
            float* p = model.data() + ((size_t(n) * C + (c * PH + ph) * PW + pw) * H) * W;
            for (int y = hs; y < he; ++y)
              for (int x = ws; x < we; ++x) p[y * W + x] += v;
          }
    }
  };
  const char* gap = std::getenv("GAP_US");
  std::vector<double> a, b;
  for (int r = 0; r < runs; ++r) {
    if (gap) usleep(useconds_t(std::atoi(gap)));
    a.push_back(ms([&] {
      if (ps_roi_pool_bwd_cpu(nullptr, gin, rois, gout, s, gin) != 0) std::exit(1);
    }));
    b.push_back(ms(peer_model));
  }
  double diff = 0;
  for (size_t i = 0; i < ours.size(); ++i) diff = std::max(diff, double(std::fabs(ours[i] - model[i])));
  if (std::getenv("ALL")) {
    for (double v : a) std::printf("%.2f ", v);
    std::printf("\n");
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::printf("ours %.3f ms (min %.3f)  torchvision's loop %.3f ms (min %.3f)  max |ours - model| %g\n", a[a.size() / 2], a[0],
              b[b.size() / 2], b[0], diff);
  return 0;
}
