#pragma once
// The sampling geometry of roi_align and deform_roi_pool (SPEC §4, §5), as the kink finders
// need it: the box of a roi, its grid, and the sample coordinates, computed in the same
// operation order as the reference, so that a sample the reference puts exactly on an integer
// lands exactly there here too (an on-kink point must be seen as one).
#include <cstdint>

#include "core/tensor.h"
#include "reference/roi_bilinear.h"

namespace oplab::gradcheck {

struct RoiBox {
  int64_t n = 0;
  double sy = 0, sx = 0, rh = 0, rw = 0, bin_h = 0, bin_w = 0;
  int64_t gh = 0, gw = 0;
};

// `aligned` shifts by half a pixel; `clamp` is legacy roi_align's minimum box of one pixel.
inline RoiBox roi_box(const Tensor& rois, int64_t r, double scale, bool aligned, bool clamp, int64_t PH, int64_t PW,
                      int64_t sampling_ratio) {
  RoiBox b;
  b.n = int64_t(rois.at(r, 0));
  const double off = aligned ? 0.5 : 0.0;
  b.sx = rois.at(r, 1) * scale - off;
  b.sy = rois.at(r, 2) * scale - off;
  const double ex = rois.at(r, 3) * scale - off, ey = rois.at(r, 4) * scale - off;
  b.rw = ex - b.sx;
  b.rh = ey - b.sy;
  if (clamp) {
    b.rw = b.rw > 1.0 ? b.rw : 1.0;
    b.rh = b.rh > 1.0 ? b.rh : 1.0;
  }
  b.bin_h = b.rh / double(PH);
  b.bin_w = b.rw / double(PW);
  b.gh = ref::roi_grid_size(sampling_ratio, b.rh, PH);
  b.gw = ref::roi_grid_size(sampling_ratio, b.rw, PW);
  return b;
}

// Sample i of g in a bin that starts at `origin` and spans `bin`.
inline double roi_sample(double origin, double bin, int64_t i, int64_t g) {
  return origin + (double(i) + 0.5) * bin / double(g);
}

}  // namespace oplab::gradcheck
