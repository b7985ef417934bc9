#pragma once
// The integer bins of the pooling RoI ops (SPEC §3 roi_pool, §11 ps_roi_pool): a box whose
// scaled corners are rounded (C round), cut into PH x PW bins with floor / ceil edges, each end
// clamped into the image. Written once, in double, for the references and for everything that
// must find the very same pixels (the kink finders); the two ops differ only in the rule.
#include <cmath>
#include <cstdint>

#include "core/geometry_rounding.h"
#include "core/tensor.h"

namespace oplab::ref {

struct PoolBoxRule {
  // Added to the rounded extent: roi_pool's end is inclusive (+1); ps_roi_pool's is not (0).
  double inclusive_end;
  // The largest index a bin end may take is size - last_index_margin: roi_pool clamps into
  // [0, size] (margin 0); torchvision's ps_roi_pool into [0, size - 1] (margin 1), so its last
  // row / column is never read.
  int64_t last_index_margin;
};
inline constexpr PoolBoxRule kRoiPoolBox{1.0, 0};
inline constexpr PoolBoxRule kPsRoiPoolBox{0.0, 1};

// One bin of one roi: the half-open pixel rectangle [hs, he) x [ws, we) of image n.
struct PoolBin {
  int64_t n = 0;
  int64_t hs = 0, he = 0, ws = 0, we = 0;
  bool empty() const { return he <= hs || we <= ws; }
  double area() const { return double(he - hs) * double(we - ws); }
};

// An index clamped into [0, hi], kept in double until then so that a huge box cannot overflow
// an integer. NaN (only from corners so large that scaling overflows, which the peers leave
// undefined) goes to 0; hi = -1 (an empty axis) makes every bin empty.
inline int64_t pool_clamp(double v, int64_t hi) {
  if (!(v >= 0.0)) v = 0.0;
  if (v > double(hi)) v = double(hi);
  return int64_t(v);
}

// Bin p of an axis whose scaled corners are a and b: start = round(a) (half away from zero,
// 2.5 -> 3; Python's round would give 2, SPEC §8), extent max(round(b) - start + inclusive_end,
// 1), bin [floor(p * extent / pooled) + start, ceil((p + 1) * extent / pooled) + start).
inline void pool_axis_bin(double a, double b, PoolBoxRule rule, int64_t pooled, int64_t p, int64_t size, int64_t& lo,
                          int64_t& hi) {
  const double start = std::round(a), end = std::round(b);
  double extent = end - start + rule.inclusive_end;
  if (!(extent >= 1.0)) extent = 1.0;  // also catches inf - inf
  const double bin = geom(extent / double(pooled));  // geom(): core/geometry_rounding.h
  lo = pool_clamp(std::floor(geom(double(p) * bin)) + start, size - rule.last_index_margin);
  hi = pool_clamp(std::ceil(geom(double(p + 1) * bin)) + start, size - rule.last_index_margin);
}

// Bin (ph, pw) of roi r (rows: batch index, x1, y1, x2, y2) at spatial_scale s on an H x W map.
inline PoolBin pool_bin(const Tensor& rois, int64_t r, double s, PoolBoxRule rule, int64_t PH, int64_t PW, int64_t ph,
                        int64_t pw, int64_t H, int64_t W) {
  PoolBin bin;
  bin.n = int64_t(rois.at(r, 0));  // validated: an integer in [0, N)
  pool_axis_bin(geom_param(rois.at(r, 2) * s), geom_param(rois.at(r, 4) * s), rule, PH, ph, H, bin.hs, bin.he);
  pool_axis_bin(geom_param(rois.at(r, 1) * s), geom_param(rois.at(r, 3) * s), rule, PW, pw, W, bin.ws, bin.we);
  return bin;
}

}  // namespace oplab::ref
