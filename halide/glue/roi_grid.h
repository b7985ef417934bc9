#pragma once
// The largest per-roi sampling grid of roi_align and deform_roi_pool: the extent of the
// kernels' sample loops (each roi then runs only its own gy x gx samples).
#include <algorithm>
#include <cstdint>

#include "core/tensor.h"
#include "reference/roi_geometry.h"

namespace oplab::halide_glue {

// Upper bound of the grid sizes over the rois. The kernels read the rois in float32 and then
// form the box in double with the reference's operations (box rule `rule`), so the grid is
// taken on the rois rounded to float32, exactly as the kernels see them; plus one as a margin,
// since a larger bound only costs loop iterations that the kernel skips.
inline int roi_max_grid(int64_t sampling_ratio, const Tensor& rois, double scale, int64_t PH, int64_t PW,
                        ref::RoiBoxRule rule) {
  if (sampling_ratio > 0) return int(std::min<int64_t>(sampling_ratio, int64_t(1) << 30));
  Tensor as_float = rois;
  for (double& v : as_float.data) v = double(float(v));
  int64_t g = 0;
  for (int64_t k = 0; k < rois.dim(0); ++k) {
    const ref::RoiBox b = ref::roi_box(as_float, k, scale, rule, PH, PW, sampling_ratio);
    g = std::max({g, b.gh, b.gw});
  }
  return int(std::min<int64_t>(g + 1, 1000000000));
}

}  // namespace oplab::halide_glue
