// The layout and storage comparison of deform_roi_pool's forward (bench record 2026-11-28c):
// the NCHW float32 kernel (halide-cpu's), the NHWC kernel with float32 storage (the generator's
// half=false, which no backend ships) and the NHWC float16 kernel (halide-cpu-f16's), each on
// the benchmark's standard shape (input [2, 256, 200, 304], 1000 boxes of 8-200 px on an
// 800 x 1216 image, 7 x 7 bins, scale 1/4, sampling_ratio 2, gamma 0.1, offsets in
// [-0.5, 0.5]), in one process, alternating run by run, the buffers laid out once. Prints each
// side's median, min and max over the runs, and a checksum of each output (float16 rounds the
// inputs, so its sum differs in the last digits).
//
// Build (from the repository root, with the build's Halide 14; OUT any scratch folder):
//   G=/usr/src/halide14/GenGen.cpp; H="-I/usr/include/halide14 -Ihalide/generators"
//   g++ -std=c++17 -O1 $H halide/generators/deform_roi_pool_generator.cpp $G -o $OUT/gen_nchw -lHalide14 -ldl -lpthread
//   g++ -std=c++17 -O1 $H halide/generators/deform_roi_pool_nhwc_generator.cpp $G -o $OUT/gen_nhwc -lHalide14 -ldl -lpthread
//   $OUT/gen_nchw -g deform_roi_pool_forward -o $OUT -e static_library,h -f drp_nchw_f32 target=host-user_context has_offset=true
//   $OUT/gen_nhwc -g deform_roi_pool_nhwc_forward -o $OUT -e static_library,h -f drp_nhwc_f32 target=host-user_context-no_runtime has_offset=true half=false
//   $OUT/gen_nhwc -g deform_roi_pool_nhwc_forward -o $OUT -e static_library,h -f drp_nhwc_f16 target=host-user_context-no_runtime has_offset=true half=true
//   g++ -std=c++17 -O2 -I$OUT -I/usr/include/halide14 docs/bench/drivers/deform_roi_pool_layouts.cpp $OUT/drp_*.a -o $OUT/layouts -ldl -lpthread
// Run as the benchmark runs (its heap setting, 2 threads):
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647 HL_NUM_THREADS=2 $OUT/layouts 15
// and one kernel alone under a profiler:
//   perf stat -e task-clock,cycles,instructions,cache-misses,L1-dcache-load-misses $OUT/layouts 10 nhwc
#include <HalideBuffer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "drp_nchw_f32.h"
#include "drp_nhwc_f16.h"
#include "drp_nhwc_f32.h"

using Halide::Runtime::Buffer;

namespace {

constexpr int N = 2, C = 256, H = 200, W = 304, K = 1000, P = 7, SR = 2;
constexpr double kScale = 0.25, kGamma = 0.1;

uint16_t half_bits(float v) {
  const _Float16 h = static_cast<_Float16>(v);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

float half_value(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return float(h);
}

template <class F>
double ms(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void report(const char* name, std::vector<double> t, double checksum) {
  std::sort(t.begin(), t.end());
  std::printf("%-28s median %8.2f ms  min %8.2f  max %8.2f  checksum %.6g\n", name, t[t.size() / 2], t.front(), t.back(),
              checksum);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 15;
  // A second argument (nchw, nhwc or f16) runs that kernel alone, `runs` times, for a profiler.
  const std::string only = argc > 2 ? argv[2] : "";
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<float> unit(-1, 1), half_unit(-0.5f, 0.5f), size(8, 200), u01(0, 1);
  // NCHW (Halide x, y, c, n) and NHWC (c, x, y, n) copies of one feature map.
  Buffer<float> nchw(W, H, C, N), nhwc(C, W, H, N);
  Buffer<uint16_t> nhwc_h(C, W, H, N);
  nchw.for_each_element([&](int x, int y, int c, int n) {
    const float v = unit(rng);
    nchw(x, y, c, n) = v, nhwc(c, x, y, n) = v, nhwc_h(c, x, y, n) = half_bits(v);
  });
  Buffer<float> rois(5, K);
  for (int k = 0; k < K; ++k) {
    const float w = size(rng), h = size(rng), x1 = u01(rng) * (1216 - w), y1 = u01(rng) * (800 - h);
    rois(0, k) = float(k % N), rois(1, k) = x1, rois(2, k) = y1, rois(3, k) = x1 + w, rois(4, k) = y1 + h;
  }
  Buffer<float> offset(P, P, 2, K);
  Buffer<uint16_t> offset_h(P, P, 2, K);
  offset.for_each_element([&](int a, int b, int j, int k) {
    const float v = half_unit(rng);
    offset(a, b, j, k) = v, offset_h(a, b, j, k) = half_bits(v);
  });
  // The kernels visit the rois in the glue's cache order (halide/glue/roi_order.h): by
  // image, band of 32 rows and column of the centre.
  Buffer<int32_t> order(K);
  std::vector<int32_t> ord(K);
  std::iota(ord.begin(), ord.end(), 0);
  auto key = [&](int k) {
    const double yc = (rois(2, k) + rois(4, k)) * 0.5 * kScale, xc = (rois(1, k) + rois(3, k)) * 0.5 * kScale;
    return std::make_tuple(double(rois(0, k)), int(yc / 32), xc);
  };
  std::stable_sort(ord.begin(), ord.end(), [&](int a, int b) { return key(a) < key(b); });
  for (int k = 0; k < K; ++k) order(k) = ord[k];
  Buffer<float> out_nchw(P, P, C, K), out_nhwc(C, P, P, K);
  Buffer<uint16_t> out_h(C, P, P, K);
  // float16 buffers are passed with the float16 type (the bits are the same).
  halide_buffer_t in_h_raw = *nhwc_h.raw_buffer(), off_h_raw = *offset_h.raw_buffer(), out_h_raw = *out_h.raw_buffer();
  for (halide_buffer_t* b : {&in_h_raw, &off_h_raw, &out_h_raw}) b->type = halide_type_t(halide_type_float, 16);
  const int grid = SR;

  auto nchw_call = [&] {
    if (drp_nchw_f32(nullptr, nchw, rois, kScale, SR, kGamma, P, P, grid, order, offset, out_nchw)) std::abort();
  };
  auto nhwc_call = [&] {
    if (drp_nhwc_f32(nullptr, kScale, SR, kGamma, P, P, grid, rois, order, nhwc, offset, out_nhwc)) std::abort();
  };
  auto half_call = [&] {
    if (drp_nhwc_f16(nullptr, kScale, SR, kGamma, P, P, grid, rois, order, &in_h_raw, &off_h_raw, &out_h_raw)) std::abort();
  };
  if (!only.empty()) {
    for (int i = 0; i < runs; ++i) only == "nchw" ? nchw_call() : only == "nhwc" ? nhwc_call() : half_call();
    return 0;
  }
  std::vector<double> t_nchw, t_nhwc, t_half;
  for (int i = 0; i < 2; ++i) nchw_call(), nhwc_call(), half_call();  // warm-up
  for (int i = 0; i < runs; ++i) {
    t_nchw.push_back(ms(nchw_call));
    t_nhwc.push_back(ms(nhwc_call));
    t_half.push_back(ms(half_call));
  }
  double s1 = 0, s2 = 0, s3 = 0, diff = 0;
  out_nchw.for_each_element([&](int pw, int ph, int c, int k) {
    s1 += out_nchw(pw, ph, c, k), s2 += out_nhwc(c, pw, ph, k), s3 += half_value(out_h(c, pw, ph, k));
    diff = std::max(diff, double(std::abs(out_nchw(pw, ph, c, k) - out_nhwc(c, pw, ph, k))));
  });
  report("NCHW float32 (halide-cpu)", t_nchw, s1);
  report("NHWC float32 (not shipped)", t_nhwc, s2);
  report("NHWC float16 (halide-cpu-f16)", t_half, s3);
  std::printf("largest |NCHW - NHWC| float32 difference: %g (same sums in the same order: 0 expected)\n", diff);
  const double bytes_f32 = 4.0 * (double(N) * C * H * W + double(K) * C * P * P + double(K) * 2 * P * P + 5.0 * K);
  const double bytes_f16 = bytes_f32 / 2 + 2.0 * 5 * K;
  std::sort(t_nchw.begin(), t_nchw.end()), std::sort(t_nhwc.begin(), t_nhwc.end()), std::sort(t_half.begin(), t_half.end());
  std::printf("GB/s moved (inputs + output once): NCHW %.1f, NHWC f32 %.1f, NHWC f16 %.1f\n",
              bytes_f32 / t_nchw[runs / 2] / 1e6, bytes_f32 / t_nhwc[runs / 2] / 1e6, bytes_f16 / t_half[runs / 2] / 1e6);
}
