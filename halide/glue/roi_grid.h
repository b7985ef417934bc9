#pragma once
// The sampling parameters of the RoIAlign-style kernels (roi_align, ps_roi_align,
// deform_roi_pool): the largest per-roi sampling grid, the extent of the kernels' sample loops
// (each roi then runs only its own gy x gx samples), and the scale and sampling ratio as the
// kernels take them.
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

// What the RoIAlign-style kernels take for their sampling: the scale in double (they form
// coordinates in double), the sampling ratio as an int (clamped into [-1, 2^30]: every value
// <= 0 means the adaptive grid, and no grid is larger than max_grid's own bound) and
// roi_max_grid.
struct RoiSampling {
  double scale = 1;
  int sr = 0, grid = 1;
};

inline RoiSampling roi_sampling(double spatial_scale, int64_t sampling_ratio, const Tensor& rois, int64_t PH,
                                int64_t PW, ref::RoiBoxRule rule) {
  return {spatial_scale, int(std::max<int64_t>(std::min<int64_t>(sampling_ratio, 1 << 30), -1)),
          roi_max_grid(sampling_ratio, rois, spatial_scale, PH, PW, rule)};
}

}  // namespace oplab::halide_glue
