#pragma once
// Where the samples of a RoI bin lie (SPEC §4, §5, §11): the box of a roi in feature-map
// pixels, its bins, its sampling grid (fixed or adaptive) and the sample coordinates. Written
// once, in double, for the reference and for everything that must find the very same
// coordinates (the kink finders, the study variants, the kernels' loop bounds): a sample the
// reference puts exactly on an integer must land exactly there for them too, so every caller
// goes through these functions and keeps their operation order. What a sample reads (the
// bilinear rule) is roi_bilinear.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/geometry_rounding.h"
#include "core/tensor.h"

namespace oplab::ref {

// How the corners of a roi become a box.
struct RoiBoxRule {
  // Shift by half a pixel (x*s - 0.5) so that pixel centres sit at integer + 0.5.
  bool half_pixel = false;
  // Raise the extent to at least one pixel. Without it a box may be empty or reversed
  // (x2 < x1 is no error in torchvision).
  bool min_one_pixel = false;
};
// roi_align with aligned=true, deform_roi_pool, ps_roi_align.
inline constexpr RoiBoxRule kAlignedBox{true, false};
// Legacy roi_align (aligned=false).
inline constexpr RoiBoxRule kLegacyBox{false, true};

// The adaptive sampling grid of one axis, ceil(extent / pooled) as an integer, or the fixed
// sampling_ratio. Saturated so that an absurd box cannot make the conversion undefined (a grid
// that large could not be evaluated anyway); NaN gives 0 (no samples).
inline int64_t roi_grid_size(int64_t sampling_ratio, double extent, int64_t pooled) {
  if (sampling_ratio > 0) return sampling_ratio;
  const double g = std::ceil(geom(extent / double(pooled)));
  if (!(g == g)) return 0;
  const double lim = double(std::numeric_limits<int32_t>::max());
  if (g > lim) return int64_t(lim);
  if (g < -lim) return -int64_t(lim);
  return int64_t(g);
}

// count = max(gh * gw, 1): the divisor of an average over the grid. Two negative grids give a
// positive product, but the sample loops (iy < gh) then run zero times, so the bin is still 0
// (as in torchvision); a grid without samples must not divide by 0 (torchvision's ps_roi_align
// does: a named divergence of the peer).
inline int64_t roi_grid_count(int64_t gh, int64_t gw) {
  const int64_t c = gh * gw;
  return c > 1 ? c : 1;
}

// One roi's box, bins and grid.
struct RoiBox {
  int64_t n = 0;               // batch index
  double sy = 0, sx = 0;       // top-left corner
  double rh = 0, rw = 0;       // extent, after the rule's minimum size (may be <= 0 when aligned)
  double bin_h = 0, bin_w = 0; // rh / PH, rw / PW
  int64_t gh = 0, gw = 0;      // samples per bin along y, x (<= 0: none)

  int64_t count() const { return roi_grid_count(gh, gw); }
};

// Box of roi r (rows: batch index, x1, y1, x2, y2) at spatial_scale `scale`, with PH x PW bins
// and the grid of `sampling_ratio` (> 0 fixed, <= 0 adaptive).
inline RoiBox roi_box(const Tensor& rois, int64_t r, double scale, RoiBoxRule rule, int64_t PH, int64_t PW,
                      int64_t sampling_ratio) {
  RoiBox b;
  b.n = int64_t(rois.at(r, 0));  // validated: an integer in [0, N)
  const double off = rule.half_pixel ? 0.5 : 0.0;
  // geom(): each operation as a kernel forming its geometry in another type rounds it
  // (core/geometry_rounding.h); the identity for the reference itself.
  b.sx = geom(geom_param(rois.at(r, 1) * scale) - off);
  b.sy = geom(geom_param(rois.at(r, 2) * scale) - off);
  const double ex = geom(geom_param(rois.at(r, 3) * scale) - off);
  const double ey = geom(geom_param(rois.at(r, 4) * scale) - off);
  b.rw = geom(ex - b.sx);
  b.rh = geom(ey - b.sy);
  if (rule.min_one_pixel) {
    b.rw = std::max(b.rw, 1.0);
    b.rh = std::max(b.rh, 1.0);
  }
  b.bin_h = geom(b.rh / double(PH));
  b.bin_w = geom(b.rw / double(PW));
  // The adaptive grid of a reversed aligned box is <= 0: no samples. A fixed grid on a
  // reversed box walks backwards (a mirrored box).
  b.gh = roi_grid_size(sampling_ratio, b.rh, PH);
  b.gw = roi_grid_size(sampling_ratio, b.rw, PW);
  return b;
}

// Where bin p of an axis starts, for a box starting at `start` with bins `bin` long. `start`
// is the box's corner, or (deform_roi_pool) the corner translated by the bin's offset.
inline double roi_bin_start(double start, int64_t p, double bin) { return geom(start + geom(double(p) * bin)); }

// Sample i of a grid of g over a bin that starts at `bin_start` and is `bin` long: the centre
// of the i-th of g equal parts, in torchvision's operation order.
inline double roi_sample(double bin_start, double bin, int64_t i, int64_t g) {
  return geom(bin_start + geom(geom((double(i) + 0.5) * bin) / double(g)));
}

}  // namespace oplab::ref
