#pragma once
// The largest per-roi sampling grid of roi_align and deform_roi_pool: the extent of the
// kernels' sample loops (each roi then runs only its own gy x gx samples).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/tensor.h"

namespace oplab::halide_glue {

// Upper bound of ceil(extent / pooled) over the rois, one more than the double computation
// gives because the kernel computes the grid in float and may round up past an integer; a
// larger bound only costs loop iterations that the kernel skips. min_extent_one: legacy
// roi_align (not aligned) makes every box at least one pixel.
inline int roi_max_grid(int64_t sampling_ratio, const Tensor& rois, double scale, int64_t PH, int64_t PW,
                        bool min_extent_one) {
  if (sampling_ratio > 0) return int(std::min<int64_t>(sampling_ratio, int64_t(1) << 30));
  double g = 0;
  for (int64_t k = 0; k < rois.dim(0); ++k) {
    double rw = (rois.at(k, 3) - rois.at(k, 1)) * scale, rh = (rois.at(k, 4) - rois.at(k, 2)) * scale;
    if (min_extent_one) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    g = std::max({g, std::ceil(rh / double(PH)), std::ceil(rw / double(PW))});
  }
  return int(std::min(g + 1, 1e9));
}

}  // namespace oplab::halide_glue
