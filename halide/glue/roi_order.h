#pragma once
// The order in which the CPU RoI kernels visit the rois (RoiOrder in
// halide/generators/roi_sampling.h): sorted by image, then by band of rows of the feature map
// (kBandRows rows, by the box's centre), then by the centre's column. Consecutive rois then
// read overlapping pixels of a channel block while those are still in the core's L2; in input
// order, 1000 random boxes revisit the block's ~8 MB at random. The order changes no value
// (each roi's output is independent) and the kernels write every output at its roi's own index.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>
#include <vector>

#include "core/tensor.h"

namespace oplab::halide_glue {

// Feature-map rows per band: about a box's height at the standard shapes (boxes 8-200 px at
// scale 1/4 are 2-50 rows), so a band's rois share most of their rows.
constexpr double kBandRows = 32;

// A permutation of 0..K-1 for rois [K, 5] (batch, x1, y1, x2, y2) and the kernels' spatial
// scale. Non-finite coordinates (a case may hold them) sort as band 0, column 0, so that the
// comparison stays a strict weak order.
inline std::vector<int32_t> roi_cache_order(const TensorF& rois, double scale) {
  const int64_t K = rois.shape.empty() ? 0 : rois.dim(0);
  auto finite_or_zero = [](double v) { return std::isfinite(v) ? v : 0.0; };
  using Key = std::tuple<double, int64_t, double>;
  std::vector<Key> keys(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) {
    const double yc = finite_or_zero((double(rois.at(k, 2)) + double(rois.at(k, 4))) * 0.5 * scale);
    const double xc = finite_or_zero((double(rois.at(k, 1)) + double(rois.at(k, 3))) * 0.5 * scale);
    // The band as an integer, clamped so that the conversion is defined for any box.
    const double band = std::clamp(std::floor(yc / kBandRows), -1e15, 1e15);
    keys[size_t(k)] = Key{finite_or_zero(rois.at(k, 0)), int64_t(band), xc};
  }
  std::vector<int32_t> order(static_cast<size_t>(K));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return keys[size_t(a)] < keys[size_t(b)]; });
  return order;
}

}  // namespace oplab::halide_glue
