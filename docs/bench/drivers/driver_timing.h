// What the bench drivers share: the time of one call, the median of runs, and for the drivers
// of two revisions a kernel of revision a and of revision b, each run alternating with the
// other after one warm-up each, and a line with each side's median and min and the largest
// difference between the sides' outputs relative to the largest output (0 where both sum in
// the same order).
#pragma once

#include <HalideBuffer.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

namespace driver_timing {

inline double ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// max |a - b| / max |a| over the elements `counts` accepts (coordinates, innermost first).
inline double relative_difference(Halide::Runtime::Buffer<float>& a, Halide::Runtime::Buffer<float>& b,
                                  const std::function<bool(const int*)>& counts = nullptr) {
  double worst = 0, scale = 0;
  a.for_each_element([&](const int* p) {
    if (counts && !counts(p)) return;
    worst = std::max(worst, double(std::fabs(a(p) - b(p))));
    scale = std::max(scale, double(std::fabs(a(p))));
  });
  return scale > 0 ? worst / scale : worst;
}

// One kernel: its call in each revision, the output each writes, and which of its elements
// the comparison counts (all when empty).
struct Kernel {
  const char* name;
  std::function<void()> side[2];
  Halide::Runtime::Buffer<float>* result;
  std::function<bool(const int*)> counts;
};

// Times each kernel `runs` times per side, alternating, and prints its line.
inline void time_alternating(std::vector<Kernel>& kernels, int runs) {
  for (Kernel& k : kernels) {
    k.side[0](), k.side[1]();  // warm-up
    std::vector<double> t[2];
    for (int i = 0; i < runs; ++i)
      for (int s : {0, 1}) t[s].push_back(ms(k.side[s]));
    std::printf("%-11s  a median %7.3f min %7.3f   b median %7.3f min %7.3f   a / b %.2f   max |a - b| / max |a| %.1e\n",
                k.name, median(t[0]), *std::min_element(t[0].begin(), t[0].end()), median(t[1]),
                *std::min_element(t[1].begin(), t[1].end()), median(t[0]) / median(t[1]),
                relative_difference(k.result[0], k.result[1], k.counts));
  }
}

}  // namespace driver_timing
